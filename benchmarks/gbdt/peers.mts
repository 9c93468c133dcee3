// The trees' peers (issue 25): Trainpool's CPU trees engine against XGBoost (tree_method=hist) and
// scikit-learn's HistGradientBoostingRegressor, one thread each, same data, same shape, per model.
//
//   npx tsx benchmarks/gbdt/peers.mts [--rows 10000,50000,200000] [--repeats 3] [--rounds 100]
//        [--depth 6] [--features 100] [--target teacher|noise] [--objective regression|binary|multiclass]
//        [--classes 5] [--json FILE]
//
// --objective binary|multiclass: classifiers on Trainpool's generated classification set (its
// binary / K-class make_classification-like target): XGBoost 1.7 binary:logistic / multi:softprob
// (num_class K), scikit-learn's HistGradientBoostingClassifier (log loss, early stopping off), and the
// engine's same objectives; the score column is then the test log loss (scikit-learn's log_loss).
// Data: generated the Trainpool way (src-main/engine/datasets/generated.ts generateDataset, seed 42, the bench's
// default target and 80/20 split), so `--rows N` is `trainpool bench --sizes N`: all three train on
// the same 0.8·N rows. It is written once per size as float32 files that the Python helper
// (benchmarks/gbdt/peers.py, through /usr/bin/python3 or $TRAINPOOL_PYTHON) reads once.
// Settings: 1 thread (OMP_NUM_THREADS=1, XGBoost nthread=1), rounds 100, depth 6, no sampling,
// Trainpool's defaults for eta (0.1), lambda (1), min child weight (1), max_bin (256; sklearn's
// max_bins 255 plus its missing-value bin) and base score (0.5; sklearn starts from the mean).
// Time per model, the same definition for all three: binning + every round, from float features
// already in memory (Trainpool: prepareGbdtData + trainGbdt; XGBoost: xgb.train on a fresh DMatrix
// built outside the timer, which bins inside train; sklearn: fit, which bins). Trainpool's binning
// is also shown on its own. Data generation, file I/O, DMatrix construction and test prediction are
// not timed. Every repeat trains each engine once, in an order rotated per repeat (the machine is
// shared: neighbours in time); times are medians over repeats, ratios medians of per-repeat ratios.
// A peer that cannot be imported is said in the output, never an error.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { DEFAULT_CONFIG } from '../../src-shared/contract/config.ts'
import { GBDT_DEFAULTS, type GbdtParams } from '../../src-shared/families/gbdt.ts'
import { generateDataset } from '../../src-main/engine/datasets/generated.ts'
import { meanSquaredError, predictGbdt, predictGbdtOutputs, prepareGbdtData, trainGbdt } from '../../src-main/engine/gbdt/index.ts'
import { scoreOutputs } from '../../src-shared/metrics.ts'

const args = process.argv.slice(2)
const arg = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt
}
const sizes = arg('rows', '10000')
  .split(',')
  .map((s) => Number(s.replace(/_/g, '')))
  .filter((n) => n > 0)
const repeats = Math.max(1, Number(arg('repeats', '3')))
const features = Number(arg('features', String(DEFAULT_CONFIG.features)))
const objective = arg('objective', 'regression') as 'regression' | 'binary' | 'multiclass'
const task = objective === 'regression' ? undefined : { objective, classes: objective === 'binary' ? 2 : Number(arg('classes', '5')) }
const target = (task ? objective : arg('target', DEFAULT_CONFIG.target)) as 'teacher' | 'noise' | 'binary' | 'multiclass'
/** what the score column is: the test MSE of a regressor, the test log loss of a classifier */
const scoreName = task ? 'test log loss' : 'test MSE'
const jsonOut = arg('json', '')
const params: GbdtParams = { ...GBDT_DEFAULTS, rounds: Number(arg('rounds', '100')), maxDepth: Number(arg('depth', '6')), subsample: 1, colsampleBytree: 1 }
const seed = DEFAULT_CONFIG.seed
const modelSeed = seed + 1
const log = (s: string) => process.stderr.write(s + '\n')

type Engine = 'trainpool' | 'xgboost' | 'sklearn'
type Fit = { seconds: number; cpuSeconds: number; mse: number; binSeconds?: number; logloss?: number }
/** a fit's score: test MSE, or a classifier's test log loss */
const scoreOf = (f: Fit) => (task ? (f.logloss ?? NaN) : f.mse)

// ---- the Python side: one long-lived helper, JSON lines both ways
const python = process.env.TRAINPOOL_PYTHON ?? '/usr/bin/python3'
const script = fileURLToPath(new URL('./peers.py', import.meta.url))
let ask: ((req: object) => Promise<Record<string, unknown>>) | null = null
let close = () => {}
let versions: { xgboost: string | null; sklearn: string | null; errors: Record<string, string> } = { xgboost: null, sklearn: null, errors: {} }
let pythonNote = ''
if (!existsSync(python)) pythonNote = `${python} not found`
else {
  const child = spawn(python, [script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => {
    const r = await lines.next()
    if (r.done) throw new Error(`${script} ended`)
    return JSON.parse(r.value) as Record<string, unknown>
  }
  try {
    versions = (await next()) as typeof versions
    ask = async (req) => {
      child.stdin.write(JSON.stringify(req) + '\n')
      const r = await next()
      if (r.error) throw new Error(String(r.error))
      return r
    }
    close = () => {
      child.stdin.end(JSON.stringify({ cmd: 'quit' }) + '\n')
    }
  } catch (err) {
    pythonNote = `${script} failed: ${(err as Error).message}`
    child.kill()
  }
}
const missing = (name: 'xgboost' | 'sklearn', pkg: string) =>
  versions[name]
    ? null
    : `${name === 'xgboost' ? 'XGBoost' : 'scikit-learn'}: not available (${pythonNote || `${python} cannot import ${name}${versions.errors[name] ? `: ${versions.errors[name]}` : ''}`}; apt-get install ${pkg})`
const notes = [missing('xgboost', 'python3-xgboost'), missing('sklearn', 'python3-sklearn')].filter((s): s is string => !!s)
let engines: Engine[] = ['trainpool', ...(versions.xgboost ? (['xgboost'] as const) : []), ...(versions.sklearn ? (['sklearn'] as const) : [])]

/** A peer that fails is reported and left out from then on; the bench goes on without it. */
function dropPeers(note: string, only?: Engine) {
  log(note)
  notes.push(note)
  engines = engines.filter((e) => e === 'trainpool' || (only !== undefined && e !== only))
}

const peerParams = {
  rounds: params.rounds,
  maxDepth: params.maxDepth,
  eta: params.eta,
  lambda: params.lambda,
  alpha: params.alpha,
  gamma: params.gamma,
  minChildWeight: params.minChildWeight,
  maxBin: params.maxBin,
  baseScore: params.baseScore,
  seed: modelSeed,
  ...(task ? { objective: task.objective, classes: task.classes } : {}),
}

const median = (a: number[]) => {
  if (!a.length) return NaN
  const s = a.slice().sort((x, y) => x - y)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

type SizeResult = { rows: number; trainRows: number; repeats: number; fits: Record<Engine, Fit[]>; order: Engine[][] }
const results: SizeResult[] = []
const dir = mkdtempSync(join(tmpdir(), 'trainpool-peers-'))
try {
  for (const rows of sizes) {
    const data = generateDataset({ size: rows, features, seed, target, testSplit: DEFAULT_CONFIG.testSplit, ...(task ? { task } : {}) })
    const all = new Float32Array(data.xTrain.buffer, data.xTrain.byteOffset, rows * features)
    const ys = new Float32Array(data.yTrain.buffer, data.yTrain.byteOffset, rows)
    log(
      `\n== peers: ${rows} rows (${data.train} train / ${data.test} test) × ${features} features, ${params.rounds} rounds, depth ${params.maxDepth}, eta ${params.eta}, no sampling, 1 thread; engines ${engines.join(', ')}`,
    )
    if (ask) {
      writeFileSync(join(dir, 'x.f32'), Buffer.from(all.buffer, all.byteOffset, all.byteLength))
      writeFileSync(join(dir, 'y.f32'), Buffer.from(ys.buffer, ys.byteOffset, ys.byteLength))
      try {
        await ask({ cmd: 'load', x: join(dir, 'x.f32'), y: join(dir, 'y.f32'), rows, train: data.train, features, warmUp: peerParams })
      } catch (err) {
        dropPeers(`the Python peers failed at ${rows} rows and were skipped from there: ${(err as Error).message}`)
      }
    }
    // warm-up (JIT), not timed
    trainGbdt(prepareGbdtData(data.xTrain, data.yTrain, data.train, features, params.maxBin), { ...params, rounds: 3 }, modelSeed, { task })
    const fits: Record<Engine, Fit[]> = { trainpool: [], xgboost: [], sklearn: [] }
    const order: Engine[][] = []
    for (let rep = 0; rep < repeats; rep++) {
      const turn = engines.map((_, i) => engines[(i + rep) % engines.length])
      order.push(turn)
      for (const engine of turn) {
        let fit: Fit
        if (engine === 'trainpool') {
          const w0 = performance.now()
          const c0 = process.cpuUsage()
          const binned = prepareGbdtData(data.xTrain, data.yTrain, data.train, features, params.maxBin)
          const binSeconds = (performance.now() - w0) / 1000
          const model = trainGbdt(binned, params, modelSeed, { task })
          const seconds = (performance.now() - w0) / 1000
          const c = process.cpuUsage(c0)
          const scores = task ? scoreOutputs(task, predictGbdtOutputs(model, data.xTest, data.test), data.yTest) : null
          fit = {
            seconds,
            cpuSeconds: (c.user + c.system) / 1e6,
            binSeconds,
            mse: scores ? scores.mse! : meanSquaredError(predictGbdt(model, data.xTest, data.test), data.yTest),
            ...(scores ? { logloss: scores.logloss } : {}),
          }
        } else if (!engines.includes(engine)) continue
        else {
          try {
            fit = (await ask!({ cmd: 'fit', engine, params: peerParams })) as Fit
          } catch (err) {
            dropPeers(`${engine} failed at ${rows} rows and was skipped from there: ${(err as Error).message}`, engine)
            continue
          }
        }
        fits[engine].push(fit)
        log(
          `[${rows} rows, ${rep + 1}/${repeats}] ${engine}: ${fit.seconds.toFixed(2)} s wall, ${fit.cpuSeconds.toFixed(2)} s CPU${fit.binSeconds !== undefined ? ` (binning ${fit.binSeconds.toFixed(2)} s)` : ''}, ${scoreName} ${scoreOf(fit).toFixed(4)}`,
        )
      }
    }
    results.push({ rows, trainRows: data.train, repeats, fits, order })
  }
} finally {
  close()
  rmSync(dir, { recursive: true, force: true })
}

// ---- the table
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a')
const med = (fits: Fit[], k: keyof Fit = 'seconds') => median(fits.map((f) => f[k] as number))
const ratioOf = (r: SizeResult, peer: Engine, k: 'seconds' | 'cpuSeconds' = 'seconds') =>
  r.fits[peer].length ? median(r.fits[peer].map((p, i) => r.fits.trainpool[i][k] / p[k])) : NaN
const xgbObjective = task ? (task.objective === 'binary' ? 'binary:logistic' : `multi:softprob, ${task.classes} classes`) : 'hist'
const xgbName = versions.xgboost ? `XGBoost ${versions.xgboost} (${xgbObjective})` : `XGBoost (${xgbObjective})`
const sklKind = task ? 'HGB classifier' : 'HGB'
const sklName = versions.sklearn ? `scikit-learn ${versions.sklearn.split('.').slice(0, 2).join('.')} ${sklKind}` : `scikit-learn ${sklKind}`
const cell = (r: SizeResult, e: Engine) => (r.fits[e].length ? `${f2(med(r.fits[e]))} s` : 'not available')
const ratioCell = (r: SizeResult, e: Engine) => (r.fits[e].length ? `${f2(ratioOf(r, e))}×` : 'n/a')
const medScore = (r: SizeResult, e: Engine) => median(r.fits[e].map(scoreOf))
const scoreText = (r: SizeResult, e: Engine) => (r.fits[e].length ? medScore(r, e).toFixed(4) : 'n/a')
const load = loadavg()
const lines = [
  `Trees peers: per model, 1 thread, ${params.rounds} rounds, depth ${params.maxDepth}, eta ${params.eta}, no sampling, ${features} features, max_bin ${params.maxBin} (sklearn 255 + missing), lambda ${params.lambda}; same data for all three (Trainpool's generated set, seed ${seed}, ${task ? `${objective}${task.objective === 'multiclass' ? ` (K = ${task.classes})` : ''}` : target} target, rows = data set size, trained on the 80 % split); medians of ${repeats} repeat${repeats === 1 ? '' : 's'}, engines alternating`,
  '',
  `| rows | Trainpool cpu engine | ${xgbName} | ${sklName} | Trainpool ÷ XGBoost | Trainpool ÷ sklearn | Trainpool binning |`,
  '|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.rows.toLocaleString('en-US')} | ${cell(r, 'trainpool')} | ${cell(r, 'xgboost')} | ${cell(r, 'sklearn')} | ${ratioCell(r, 'xgboost')} | ${ratioCell(r, 'sklearn')} | ${f2(med(r.fits.trainpool, 'binSeconds'))} s |`,
  ),
  '',
  "time per model = binning + all rounds from float features in memory, for all three (Trainpool: prepareGbdtData + trainGbdt; XGBoost: xgb.train, which bins, on a fresh DMatrix built untimed; sklearn: fit, which bins); data generation, loading and test prediction untimed. Ratio = Trainpool's time ÷ the peer's (above 1: Trainpool slower), median of per-repeat ratios.",
  ...results.map(
    (r) =>
      `${r.rows} rows: CPU-time ratios Trainpool ÷ XGBoost ${r.fits.xgboost.length ? f2(ratioOf(r, 'xgboost', 'cpuSeconds')) + '×' : 'n/a'}, ÷ sklearn ${r.fits.sklearn.length ? f2(ratioOf(r, 'sklearn', 'cpuSeconds')) + '×' : 'n/a'}; ${scoreName} Trainpool ${scoreText(r, 'trainpool')}, XGBoost ${scoreText(r, 'xgboost')}, sklearn ${scoreText(r, 'sklearn')}${task && r.fits.xgboost.length ? ` (Trainpool ÷ XGBoost ${(medScore(r, 'trainpool') / medScore(r, 'xgboost')).toFixed(4)})` : ''}`,
  ),
  ...notes,
  `load average ${load.map((l) => l.toFixed(2)).join(', ')} on ${cpus().length} cores (${cpus()[0]?.model ?? ''})`,
]
console.log(lines.join('\n'))
if (jsonOut) {
  writeFileSync(
    jsonOut,
    JSON.stringify(
      {
        params,
        features,
        target,
        objective,
        ...(task ? { classes: task.classes } : {}),
        seed,
        repeats,
        versions,
        notes,
        loadavg: load,
        results: results.map((r) => ({
          ...r,
          median: Object.fromEntries(engines.map((e) => [e, med(r.fits[e])])),
          ratio: { xgboost: ratioOf(r, 'xgboost'), sklearn: ratioOf(r, 'sklearn') },
          score: Object.fromEntries(engines.map((e) => [e, medScore(r, e)])),
        })),
      },
      null,
      2,
    ),
  )
}
