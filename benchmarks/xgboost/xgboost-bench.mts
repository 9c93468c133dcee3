// XGBoost through Trainpool (koffi FFI) against XGBoost's own Python package, on the same library,
// data and parameters, and the `xgboost` backend's pool against sequential.
//
//   npm run build && node --import tsx benchmarks/xgboost/xgboost-bench.mts
//        [--rows 10000] [--features 100] [--rounds 100] [--depth 6] [--eta 0.1]
//        [--per-batch 5] [--batches 3]          FFI vs Python: models per batch, alternating batches
//        [--models 50] [--workers 2]            pool vs sequential through `trainpool bench`
//        [--skip-python] [--skip-pool] [--json FILE]
//
// 1. FFI vs Python, nthread = 1: the same boosters (seed = 42 + i + 1, the family's defaults: hist,
//    depth 6, eta 0.1, subsample/colsample 0.8, max_bin 256) trained from /usr/bin/python3's xgboost
//    (benchmarks/gbdt/xgb_reference.py: DMatrix once, xgb.train per model) and through
//    engine/xgboost's trainXgbModel in this process (DMatrix once, the worker's own loop: one
//    XGBoosterUpdateOneIter per round, a yield between rounds). Batches alternate so both see the
//    same machine load; per-model wall and CPU time, medians. Test MSE must agree to the last bits
//    of the mean's summation (same library, data and parameters: the same predictions).
// 2. Pool vs sequential: `trainpool bench --model gbdt --backend xgboost --strategies sequential,pool
//    --workers W` with TRAINPOOL_XGBOOST_NTHREAD=1 (one thread per worker), its per-model trainMs and
//    the wall-time ratio.
// Functions ffiVsPython() and poolVsSequential() return the numbers for `npm run bench`.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { splitRows } from '../../src-shared/vocabulary/split.ts'
import { modelSeed } from '../../src-shared/contract/workload.ts'
import { GBDT_DEFAULTS, type GbdtParams } from '../../src-shared/families/gbdt.ts'
import { generateDataset } from '../../src-main/engine/datasets/generated.ts'
import { runXgboost, xgboostVersion, type XgbModelSpec } from '../../src-main/engine/gbdt/xgb-reference.ts'
import { createXgbData, freeXgbData, loadXgboost, trainXgbModel, xgbParams } from '../../src-main/engine/xgboost/index.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

export interface FfiVsPythonOptions {
  rows?: number
  features?: number
  params?: Partial<GbdtParams>
  perBatch?: number
  batches?: number
  seed?: number
}

export interface PerModelTimes {
  wallMs: number[]
  cpuMs: number[]
  mse: number[]
  medianWallMs: number
  medianCpuMs: number
}

export interface FfiVsPythonResult {
  library: string
  xgboostPython: string | null
  rows: number
  features: number
  params: GbdtParams
  python: PerModelTimes
  ffi: PerModelTimes
  /** FFI ÷ Python, medians */
  wallRatio: number
  cpuRatio: number
  maxRelMseDiff: number
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const times = (wallMs: number[], cpuMs: number[], mse: number[]): PerModelTimes => ({
  wallMs,
  cpuMs,
  mse,
  medianWallMs: median(wallMs),
  medianCpuMs: median(cpuMs),
})

/** Part 1: per-model time of the same boosters from Python's xgboost and through Trainpool's FFI, nthread 1. */
export async function ffiVsPython(o: FfiVsPythonOptions = {}): Promise<FfiVsPythonResult> {
  const rows = o.rows ?? 10_000
  const features = o.features ?? 100
  const seed = o.seed ?? 42
  const perBatch = o.perBatch ?? 5
  const batches = o.batches ?? 3
  const params: GbdtParams = { ...GBDT_DEFAULTS, ...o.params }
  const testSplit = 0.2
  const data = generateDataset({ size: rows, features, seed, target: 'teacher', testSplit })
  const { train, test } = splitRows(rows, testSplit)
  const lib = loadXgboost()
  const api = lib.api
  const d = createXgbData(api, data, features, 1)
  const { kind: _kind, rounds, ...rest } = params
  const py = { wall: [] as number[], cpu: [] as number[], mse: [] as number[] }
  const ffi = { wall: [] as number[], cpu: [] as number[], mse: [] as number[] }
  try {
    // warm both: XGBoost builds its bins of the DMatrix on the first booster (Python pays it on its first model of every batch, too: dropped below)
    await trainXgbModel(api, d, xgbParams(rest, modelSeed(seed, 0), 1, { kind: 'cpu' }, lib.major), 1)
    for (let b = 0; b < batches; b++) {
      const indices = Array.from({ length: perBatch + 1 }, (_, k) => b * perBatch + k)
      const specs: XgbModelSpec[] = indices.map((i) => ({ ...rest, rounds, seed: modelSeed(seed, i) }))
      const ref = runXgboost({ rows: train, features, x: data.xTrain, y: data.yTrain }, { rows: test, features, x: data.xTest, y: data.yTest }, specs, 'none')
      ref.models.slice(1).forEach((m) => {
        py.wall.push(m.seconds * 1000)
        py.cpu.push(m.cpuSeconds * 1000)
        py.mse.push(m.mse)
      })
      for (const i of indices.slice(1)) {
        const c0 = process.cpuUsage()
        const t = await trainXgbModel(api, d, xgbParams(rest, modelSeed(seed, i), 1, { kind: 'cpu' }, lib.major), rounds)
        const c = process.cpuUsage(c0)
        ffi.wall.push(t.trainMs)
        // CPU time of the whole process over the model (training, predict, fingerprint): an upper bound
        ffi.cpu.push((c.user + c.system) / 1000)
        ffi.mse.push(t.testMse)
      }
    }
  } finally {
    freeXgbData(api, d)
  }
  const python = times(py.wall, py.cpu, py.mse)
  const through = times(ffi.wall, ffi.cpu, ffi.mse)
  let maxRel = 0
  python.mse.forEach((m, k) => (maxRel = Math.max(maxRel, Math.abs(m - through.mse[k]) / Math.abs(m))))
  return {
    library: `${lib.path} (XGBoost ${lib.version}, ${lib.cuda ? 'CUDA' : 'CPU'} build)`,
    xgboostPython: xgboostVersion(),
    rows,
    features,
    params,
    python,
    ffi: through,
    wallRatio: through.medianWallMs / python.medianWallMs,
    cpuRatio: through.medianCpuMs / python.medianCpuMs,
    maxRelMseDiff: maxRel,
  }
}

export interface PoolVsSequentialResult {
  rows: number
  models: number
  workers: number
  sequentialMs: number
  poolMs: number
  /** sequential ÷ pool wall time */
  speedup: number
  /** per-model trainMs in the sequential worker (median) */
  sequentialPerModelMs: number
  poolPerModelMs: number
  sameWork: boolean
  flags: Record<string, string | number | boolean>
  loadAverage: number[]
}

/** Part 2: `trainpool bench --backend xgboost`, sequential vs pool W, one thread per worker (needs `npm run build`). */
export function poolVsSequential(o: { rows?: number; models?: number; workers?: number; rounds?: number; features?: number } = {}): PoolVsSequentialResult {
  const rows = o.rows ?? 10_000
  const models = o.models ?? 50
  const workers = o.workers ?? 2
  const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-xgb-pool-'))
  const json = join(dir, 'run.json')
  try {
    const loadBefore = os.loadavg()
    const args = ['bench', '--model', 'gbdt', '--backend', 'xgboost', '--sizes', String(rows), '--models', String(models), '--workers', String(workers)]
    args.push(
      '--strategies',
      'sequential,pool',
      '--repeats',
      '1',
      '--rounds',
      String(o.rounds ?? 100),
      '--features',
      String(o.features ?? 100),
      '--no-save',
      '--json',
      json,
    )
    const r = spawnSync(process.execPath, [join(root, 'bin/trainpool.js'), ...args], {
      cwd: root,
      env: { ...process.env, TRAINPOOL_XGBOOST_NTHREAD: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    if (r.status !== 0 || !existsSync(json)) throw new Error(`trainpool bench exited ${r.status}:\n${r.stdout}`)
    const run = JSON.parse(readFileSync(json, 'utf8'))
    const m = (strategy: string) => run.measurements.find((x: { strategy: string }) => x.strategy === strategy)
    const perModel = (x: { perModel: { trainMs: number }[] }) => median(x.perModel.map((p) => p.trainMs))
    const seq = m('sequential')
    const pool = m('pool')
    return {
      rows,
      models,
      workers,
      sequentialMs: seq.wallMs,
      poolMs: pool.wallMs,
      speedup: seq.wallMs / pool.wallMs,
      sequentialPerModelMs: perModel(seq),
      poolPerModelMs: perModel(pool),
      sameWork: run.verification.sameWork,
      flags: run.environment.backendFlags,
      loadAverage: [...loadBefore, ...os.loadavg()],
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const opt = (name: string, dflt: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : dflt)
  const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : null
  const rows = opt('rows', 10_000)
  const features = opt('features', 100)
  const params = { rounds: opt('rounds', 100), maxDepth: opt('depth', 6), eta: opt('eta', 0.1) }
  const out: { ffiVsPython?: FfiVsPythonResult; poolVsSequential?: PoolVsSequentialResult; cores: number; cpu: string } = {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? os.arch(),
  }
  const ms = (x: number) => `${x.toFixed(0)} ms`
  if (!args.includes('--skip-python')) {
    process.stderr.write(
      `FFI vs Python: ${rows} rows × ${features} features, ${params.rounds} rounds, depth ${params.maxDepth}, eta ${params.eta}, nthread 1…\n`,
    )
    const f = await ffiVsPython({ rows, features, params, perBatch: opt('per-batch', 5), batches: opt('batches', 3) })
    out.ffiVsPython = f
    console.log(
      `XGBoost per model, ${rows} rows (${f.params.rounds} rounds, depth ${f.params.maxDepth}, eta ${f.params.eta}, subsample ${f.params.subsample}, colsample ${f.params.colsampleBytree}), nthread 1, ${f.library}`,
    )
    console.log('| path | models | median wall | median CPU |')
    console.log('|---|---|---|---|')
    console.log(`| Python xgboost ${f.xgboostPython} (xgb.train) | ${f.python.wallMs.length} | ${ms(f.python.medianWallMs)} | ${ms(f.python.medianCpuMs)} |`)
    console.log(`| Trainpool FFI (koffi, trainXgbModel) | ${f.ffi.wallMs.length} | ${ms(f.ffi.medianWallMs)} | ${ms(f.ffi.medianCpuMs)} |`)
    console.log(
      `FFI ÷ Python: wall ${f.wallRatio.toFixed(3)}, CPU ${f.cpuRatio.toFixed(3)} (target ≤ 1.05); test MSE max rel. Δ ${f.maxRelMseDiff.toExponential(1)}`,
    )
  }
  if (!args.includes('--skip-pool')) {
    const models = opt('models', 50)
    const workers = opt('workers', 2)
    process.stderr.write(`pool W=${workers} vs sequential: ${rows} rows × ${models} models through trainpool bench, nthread 1 per worker…\n`)
    const p = poolVsSequential({ rows, models, workers, rounds: params.rounds, features })
    out.poolVsSequential = p
    console.log(
      `trainpool bench --backend xgboost, ${rows} rows × ${models} models, nthread 1: sequential ${(p.sequentialMs / 1000).toFixed(1)} s (${ms(p.sequentialPerModelMs)}/model), ` +
        `pool W=${workers} ${(p.poolMs / 1000).toFixed(1)} s (${ms(p.poolPerModelMs)}/model): ${p.speedup.toFixed(2)}× (target ≥ 1.7×); same work ${p.sameWork}; load average before/after ${p.loadAverage.map((x) => x.toFixed(1)).join(' ')}`,
    )
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(out, null, 2))
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}
