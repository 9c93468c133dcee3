// GBDT engine benchmark: Trainpool's TypeScript engine (one model at a time, and a batched group)
// against real XGBoost 1.7 (tree_method=hist, nthread=1) on the same data.
//
//   npx tsx benchmarks/gbdt/engine-bench.mts [--rows 10000] [--features 100] [--models 50]
//        [--xgb-models 5] [--rounds 100] [--depth 6] [--no-sampling] [--skip-xgb] [--repeats 3]
//        [--objective regression|binary|multiclass] [--classes K] [--json FILE]
//
// --rows is the data set size before the article's 80/20 split (10 000 → 8 000 training rows).
// --objective binary|multiclass trains classifiers (XGBoost's binary:logistic / multi:softprob, K =
// --classes, default 5) on Trainpool's generated classification set (datasets/generated.ts, like
// make_classification) and scores test log loss; regression (the default) is unchanged.
// Times are per model; wall and CPU time are both reported (CPU time is the fairer number on a
// shared machine). Each repeat measures XGBoost, ours one at a time and ours batched back to back;
// the table has medians over repeats, the ratios are medians of per-repeat ratios. Prints a
// markdown table; --json writes the raw numbers.
import { writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import {
  gbdtMemory,
  meanSquaredError,
  predictGbdt,
  prepareGbdtData,
  trainGbdt,
  trainGbdtGroup,
  treeHash,
  type GbdtParams,
} from '../../src-main/engine/gbdt/index.ts'
import { generateDataset } from '../../src-main/engine/datasets/generated.ts'
import { type GbdtModel, type GbdtTask, predictGbdtOutputs } from '../../src-main/engine/gbdt/index.ts'
import { splitRows, syntheticRegression, type SyntheticData } from '../../src-main/engine/gbdt/synthetic.ts'
import { runXgboost, xgboostVersion } from '../../src-main/engine/gbdt/xgb-reference.ts'
import { scoreOutputs } from '../../src-shared/metrics.ts'

const args = process.argv.slice(2)
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : dflt
}
const flag = (name: string) => args.includes(`--${name}`)
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : null

const rows = opt('rows', 10_000)
const features = opt('features', 100)
const models = opt('models', 50)
const xgbModels = opt('xgb-models', 5)
const rounds = opt('rounds', 100)
const maxDepth = opt('depth', 6)
const sampling = !flag('no-sampling')
const seed = opt('seed', 1)
const repeats = opt('repeats', 3)
const objective = (args.includes('--objective') ? args[args.indexOf('--objective') + 1] : 'regression') as GbdtTask['objective']
const task: GbdtTask | undefined = objective === 'regression' ? undefined : { objective, classes: objective === 'binary' ? 2 : opt('classes', 5) }
const scoreName = task ? 'log loss' : 'MSE'
const params: Partial<GbdtParams> = {
  rounds,
  maxDepth,
  eta: 0.1,
  ...(sampling ? { subsample: 0.8, colsampleBytree: 0.8 } : { subsample: 1, colsampleBytree: 1 }),
}
const seeds = Array.from({ length: models }, (_, i) => seed + i + 1)

const clock = () => ({ wall: performance.now(), cpu: process.cpuUsage() })
const since = (t: ReturnType<typeof clock>) => {
  const c = process.cpuUsage(t.cpu)
  return { wall: (performance.now() - t.wall) / 1000, cpu: (c.user + c.system) / 1e6 }
}
const log = (s: string) => process.stderr.write(s + '\n')

/** the regression set (syntheticRegression), or the generated classification set with the task's K classes */
function dataOf(): [SyntheticData, SyntheticData] {
  if (!task) return splitRows(syntheticRegression({ rows, features, seed }), Math.round(rows * 0.8))
  const d = generateDataset({ size: rows, features, seed, target: 'teacher', testSplit: 0.2, task })
  return [
    { rows: d.train, features, x: d.xTrain, y: d.yTrain },
    { rows: d.test, features, x: d.xTest, y: d.yTest },
  ]
}
const [train, test] = dataOf()
/** test MSE, or a classifier's test log loss */
const score = (out: Float32Array) => (task ? scoreOutputs(task, out, test.y).logloss! : meanSquaredError(out, test.y))
const scoreOf = (m: GbdtModel) => score(task ? predictGbdtOutputs(m, test.x, test.rows) : predictGbdt(m, test.x, test.rows))
log(
  `data: ${rows} rows (${train.rows} train / ${test.rows} test) × ${features} features, ${task ? `${task.objective} (${task.classes} classes)` : 'regression'}; ${cpus()[0]?.model ?? ''}`,
)

const t = clock()
const data = prepareGbdtData(train.x, train.y, train.rows, features, 256)
const prep = since(t)
log(`binning: ${prep.wall.toFixed(2)} s`)

// warm-up (JIT) on a few rounds, not counted
trainGbdtGroup(data, { ...params, rounds: 3 }, seeds.slice(0, 2), { task })

// Repeats run the three measurements back to back, so that the ratios compare neighbours in time
// (on a shared machine the load drifts); medians are reported.
type Time = { wall: number; cpu: number }
const seqT: Time[] = []
const batT: Time[] = []
const xgbT: Time[] = []
let xgbMse = NaN
const version = flag('skip-xgb') || xgbModels === 0 ? null : xgboostVersion()
if (!flag('skip-xgb') && xgbModels > 0 && !version) log('python3 cannot import xgboost: XGBoost column skipped')
let single: ReturnType<typeof trainGbdt>[] = []
let batched: ReturnType<typeof trainGbdt>[] = []
for (let rep = 0; rep < repeats; rep++) {
  if (version) {
    const specs = seeds.slice(0, xgbModels).map((s) => ({ ...params, seed: s, ...(task ?? {}) }))
    const r = runXgboost(train, test, specs, 'none', undefined, task !== undefined)
    const n = r.models.length
    xgbT.push({ wall: r.models.reduce((a, m) => a + m.seconds, 0) / n, cpu: r.models.reduce((a, m) => a + m.cpuSeconds, 0) / n })
    xgbMse = r.models.reduce((a, m) => a + (task ? score(Float32Array.from(m.predictions!)) : m.mse), 0) / n
    log(`[${rep + 1}/${repeats}] xgboost ${version}: ${xgbT[rep].wall.toFixed(2)} s/model wall, ${xgbT[rep].cpu.toFixed(2)} s/model cpu`)
  }
  let t = clock()
  single = seeds.map((s) => trainGbdt(data, params, s, { task }))
  const st = since(t)
  seqT.push({ wall: st.wall / models, cpu: st.cpu / models })
  log(`[${rep + 1}/${repeats}] one at a time: ${seqT[rep].wall.toFixed(2)} s/model wall, ${seqT[rep].cpu.toFixed(2)} s/model cpu`)
  t = clock()
  batched = trainGbdtGroup(data, params, seeds, { task })
  const bt = since(t)
  batT.push({ wall: bt.wall / models, cpu: bt.cpu / models })
  log(`[${rep + 1}/${repeats}] batched: ${batT[rep].wall.toFixed(2)} s/model wall, ${batT[rep].cpu.toFixed(2)} s/model cpu`)
}
const median = (a: number[]) => {
  const s = a.slice().sort((x, y) => x - y)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const med = (ts: Time[]): Time => ({ wall: median(ts.map((t) => t.wall)), cpu: median(ts.map((t) => t.cpu)) })
const ratio = (a: Time[], b: Time[], k: 'wall' | 'cpu') => median(a.map((x, i) => x[k] / b[i][k]))
const seq = med(seqT)
const bat = med(batT)
const xgb = version ? { version, ...med(xgbT), mse: xgbMse } : null

const sameHashes = single.every((m, i) => treeHash(m) === treeHash(batched[i]))
const mses = single.map(scoreOf)
const msesB = batched.map(scoreOf)
const sameMse = mses.every((v, i) => v === msesB[i])
const meanMse = mses.reduce((a, b) => a + b, 0) / mses.length

const mem = gbdtMemory({ rows: train.rows, features, models, params, task })
const mib = (b: number) => (b / 2 ** 20).toFixed(0)
const f2 = (x: number) => x.toFixed(2)
const lines = [
  `GBDT engine, ${task ? `${task.objective}${task.objective === 'multiclass' ? ` (K = ${task.classes})` : ''}, ` : ''}${train.rows} training rows × ${features} features, depth ${maxDepth}, eta 0.1, ${rounds} rounds, ` +
    `subsample/colsample ${sampling ? '0.8' : '1'}, 1 thread, ${models} models; medians of ${repeats} repeats`,
  '',
  `| engine | per model, wall (s) | per model, CPU (s) | mean test ${scoreName} |`,
  '|---|---|---|---|',
  ...(xgb ? [`| XGBoost ${xgb.version} hist, nthread=1 (${xgbModels} models) | ${f2(xgb.wall)} | ${f2(xgb.cpu)} | ${xgb.mse.toFixed(5)} |`] : []),
  `| Trainpool TS, one at a time | ${f2(seq.wall)} | ${f2(seq.cpu)} | ${meanMse.toFixed(5)} |`,
  `| Trainpool TS, batched (${models} together) | ${f2(bat.wall)} | ${f2(bat.cpu)} | ${meanMse.toFixed(5)} |`,
  '',
  `batched vs one at a time: ${ratio(seqT, batT, 'wall').toFixed(2)}× (wall), ${ratio(seqT, batT, 'cpu').toFixed(2)}× (CPU); ` +
    `same trees: ${sameHashes ? 'yes' : 'NO'} (hashes), same test ${scoreName}: ${sameMse ? 'yes' : 'NO'}`,
  ...(xgb ? [`one at a time vs XGBoost: ${ratio(xgbT, seqT, 'wall').toFixed(2)}× (wall), ${ratio(xgbT, seqT, 'cpu').toFixed(2)}× (CPU) faster`] : []),
  `binning once: ${f2(prep.wall)} s; estimated memory for ${models} batched: ${mib(mem.totalBytes)} MiB ` +
    `(histograms ${mib(mem.histogramBytes)} MiB); peak RSS ${mib(process.resourceUsage().maxRSS * 1024)} MiB`,
]
console.log(lines.join('\n'))
if (jsonOut) {
  writeFileSync(
    jsonOut,
    JSON.stringify(
      {
        rows,
        trainRows: train.rows,
        features,
        models,
        rounds,
        maxDepth,
        sampling,
        task,
        prep,
        seqT,
        batT,
        xgbT,
        seq,
        bat,
        xgb,
        sameHashes,
        sameMse,
        meanMse,
        mem,
      },
      null,
      2,
    ),
  )
}
if (!sameHashes || !sameMse) process.exitCode = 1
