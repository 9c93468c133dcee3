// Pure run fixtures: a realistic scripted RunEvent stream (what the service emits, coalesced), the
// measurements, summary, verification and RunResult it ends with, the capabilities of a GPU machine,
// and a toy model family registered only by the tests that use it. Used by the renderer's component
// tests, the FakeService (fake-service.ts), the shells' tests and the UI jank benchmark.
import type { BenchConfig, Strategy } from '../contract/config'
import { presetConfig } from '../contract/config'
import type { Capabilities, ModelCell, RunEvent, WorkerLane } from '../contract/events'
import type { Measurement, MeasurementKey, RunResult, SummaryEntry, Verification } from '../contract/result'
import { SCHEMA_VERSION } from '../contract/result'
import { resolveTask } from '../contract/task'
import { workloadFor } from '../contract/workload'
import { METRIC_SPECS, type Metrics, type Objective, type Task } from '../vocabulary/task'
import { familyOf, type ModelFamily, paramsSchemaFrom, type ParamField, workRate } from '../families'
import { expandPlan } from '../plan'

/**
 * A toy model family, registered only by the tests that use it (registerFamily): one field of each
 * input type, its own progress words and work unit. The renderer must show it with no change to a view.
 */
export interface ToyParams {
  kind: 'toy'
  rounds: number
  shrink: number
  widths: number[]
}
const TOY_FIELDS = [
  { key: 'rounds', label: 'Rounds', flag: '--rounds', help: 'boosting rounds', type: 'int', range: { min: 1, max: 500 } },
  { key: 'shrink', label: 'Shrinkage', flag: '--shrink', help: 'step size of each round', type: 'real', range: { min: 0, max: 1, exclusiveMin: true } },
  {
    key: 'widths',
    label: 'Leaf widths',
    flag: '--widths',
    help: 'leaves per level, e.g. 8 or 8,4',
    type: 'intList',
    range: { min: 1, max: 64 },
    count: { min: 1, max: 3 },
  },
] as const satisfies readonly ParamField[]
export const toyFamily: ModelFamily<ToyParams> = {
  kind: 'toy',
  label: 'toy rounds model',
  shortLabel: 'Toy',
  fields: TOY_FIELDS,
  paramsSchema: paramsSchemaFrom<ToyParams>('toy', TOY_FIELDS),
  defaults: { kind: 'toy', rounds: 100, shrink: 0.1, widths: [8, 4] },
  backends: (['cpu', 'wasm'] as const).map((name) => ({
    name,
    gpu: false,
    auto: true,
    batched: { why: 'the toy family trains one model at a time' },
    speed: { workPerSecond: 1e7, stepMs: 1, jobMs: 5, poolStartMs: 400, sharedDevice: false },
  })),
  progressTotal: (w) => w.model.rounds,
  describeProgress: (p) => `round ${p.done}/${p.total}`,
  work: { unit: 'row', rateLabel: 'Mrow/s', rateScale: 1e6 },
  workCount: (w, models, rowShare = 1) => w.size * rowShare * w.model.rounds * models,
  workerPeakBytes: (w, n) => 100 * 2 ** 20 + n * w.size * 8,
  sameWorkTolerance: 0,
  crossBackend: () => ({ fingerprints: false, tolerance: 0 }),
  presets: {},
  notes: () => [],
  describe: (p) => `${p.rounds} rounds, shrinkage ${p.shrink}, leaves ${p.widths.join('/')}`,
}

export interface ScriptOptions {
  sizes?: number[]
  models?: number
  workers?: number[]
  strategies?: Strategy[]
  /** the MLP's epochs (the family derives the batches per epoch from the size and batch size) */
  epochs?: number
  repeats?: number
  /** progress events per measurement (coalesced upstream at ≤ 20 Hz) */
  progressPerMeasurement?: number
  runId?: string
  /** make batched disagree: verification fails */
  disagree?: boolean
  /** a classifier run on generated classification data (target binary or multiclass): its task, and every metric of the objective per model */
  objective?: Exclude<Objective, 'regression'>
}

/** Synthetic but plausible wall time: sequential ∝ N, pool ∝ N/W, batched ∝ groups. */
export function fakeWallMs(size: number, models: number, workers: number, strategy: Strategy, repeat: number): number {
  const perModel = 20 + size / 200
  const jitter = 1 + ((repeat * 7) % 5) / 100
  if (strategy === 'sequential') return perModel * models * jitter
  if (strategy === 'pool') return ((perModel * models) / Math.min(workers, models)) * 1.15 * jitter
  return perModel * Math.ceil(models / workers) * 0.12 * workers * jitter + 30
}

export function mse(index: number, size: number): number {
  return 0.08 + index * 0.001 + 100 / size
}

/** A classifier model's test metrics: model i a little worse than model i − 1, all better with more rows (binary adds ROC AUC). */
export function classifierMetrics(objective: Objective, index: number, size: number): Metrics {
  const loss = 0.3 + index * 0.01 + 50 / size
  const metrics: Metrics = { logloss: loss, accuracy: 0.9 - index * 0.005 - 20 / size, mse: loss / 3 }
  if (objective === 'binary') metrics.auc = 0.95 - index * 0.004 - 10 / size
  return metrics
}

/** Lanes and model cells `step + 1` of `steps` through a measurement whose jobs take `total` progress steps each. */
function lanesFor(
  strategy: Strategy,
  models: number,
  workers: number,
  step: number,
  steps: number,
  epochs: number,
  total: number,
): { lanes: WorkerLane[]; cells: ModelCell[]; done: number } {
  const cells: ModelCell[] = Array.from({ length: models }, () => ({ fraction: 0, loss: null, done: false }))
  const lanes: WorkerLane[] = []
  const t = (step + 1) / steps // 0..1 of the measurement
  const lossAt = (f: number, i: number) => (f < 1 / epochs ? null : 0.5 * Math.exp(-3 * f) + 0.08 + i * 0.001)
  const lane = (worker: number, indices: number[], f: number, loss: number | null): WorkerLane => ({
    worker,
    modelIndices: indices,
    // null: the job was handed out and has not finished its first step
    progress: f <= 0 ? null : { done: Math.max(1, Math.min(total, Math.round(f * total))), total, unit: 'batch', loss },
  })
  if (strategy === 'batched') {
    const W = Math.min(workers, models)
    const per = Math.ceil(models / W)
    for (let w = 0; w < W; w++) {
      const idx = Array.from({ length: models }, (_, i) => i).slice(w * per, (w + 1) * per)
      for (const i of idx) cells[i] = { fraction: t, loss: lossAt(t, i), done: t >= 1 }
      lanes.push(lane(w, t >= 1 ? [] : idx, t, lossAt(t, idx[0] ?? 0)))
    }
  } else {
    const W = strategy === 'sequential' ? 1 : Math.min(workers, models)
    // models progress in FIFO order over W lanes; total progress t spread over ceil(N/W) rounds
    const rounds = Math.ceil(models / W)
    const pos = t * rounds
    for (let i = 0; i < models; i++) {
      const round = Math.floor(i / W)
      const f = Math.max(0, Math.min(1, pos - round))
      cells[i] = { fraction: f, loss: f > 0 ? lossAt(f, i) : null, done: f >= 1 }
    }
    for (let w = 0; w < W; w++) {
      const round = Math.min(rounds - 1, Math.floor(pos))
      const i = round * W + w
      const f = i < models ? cells[i].fraction : 1
      lanes.push(lane(w, i < models && f < 1 ? [i] : [], f, i < models ? lossAt(f, i) : null))
    }
  }
  return { lanes, cells, done: cells.filter((c) => c.done).length }
}

/**
 * One finished measurement; its work is the family's count for the workload (the smoke preset's
 * model unless `config` says). With a classifier `task`, each model has every metric of its objective
 * (its test MSE the Brier score).
 */
export function measurementFor(key: MeasurementKey, disagree = false, config: BenchConfig = presetConfig('smoke'), task?: Task): Measurement {
  const wallMs = fakeWallMs(key.size, key.models, key.workers, key.strategy, key.repeat)
  const W = key.strategy === 'sequential' ? 1 : Math.min(key.workers, key.models)
  const fused = key.strategy === 'batched'
  return {
    ...key,
    status: 'ok',
    wallMs,
    startupMs: key.repeat === 0 ? 400 : 0,
    warmupMs: 120,
    modelsTrained: key.models,
    work: familyOf(config.model).workCount(workloadFor(config, key.size), key.models),
    perModel: Array.from({ length: key.models }, (_, i) => {
      const off = disagree && key.strategy === 'batched' ? 1.01 : 1 + 1e-7
      const metrics = task && task.objective !== 'regression' ? classifierMetrics(task.objective, i, key.size) : null
      return {
        index: i,
        seed: 42 + i + 1,
        trainMs: fused ? null : wallMs / key.models,
        groupTrainMs: fused ? wallMs : null,
        testMse: metrics ? metrics.mse! * off : mse(i, key.size) * off,
        ...(metrics ? { metrics: { ...metrics, logloss: metrics.logloss! * off, mse: metrics.mse! * off } } : {}),
        finalLoss: 0.09,
        worker: i % W,
      }
    }),
    failures: [],
    peakRssBytes: Array.from({ length: W }, () => 300 * 1024 * 1024),
  }
}

/** The real plan (sequential once per size and model count, whatever W). */
export function planFor(config: BenchConfig): MeasurementKey[] {
  return expandPlan(config)
}

export function summarize(ms: Measurement[], config: BenchConfig = presetConfig('smoke')): SummaryEntry[] {
  const family = familyOf(config.model)
  const groups = new Map<string, Measurement[]>()
  for (const m of ms) {
    const k = `${m.backend ?? ''}|${m.size}|${m.models}|${m.workers}|${m.strategy}`
    groups.set(k, [...(groups.get(k) ?? []), m])
  }
  const med = (v: number[]) => {
    const s = [...v].sort((a, b) => a - b)
    return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
  }
  const out: SummaryEntry[] = []
  for (const g of groups.values()) {
    const m0 = g[0]
    const walls = g.map((m) => m.wallMs)
    const seq = ms.filter((m) => m.strategy === 'sequential' && m.size === m0.size && m.models === m0.models && m.backend === m0.backend)
    const medianMs = med(walls)
    const speedup = seq.length ? med(seq.map((m) => m.wallMs)) / medianMs : null
    out.push({
      size: m0.size,
      models: m0.models,
      workers: m0.workers,
      strategy: m0.strategy,
      ...(m0.backend ? { backend: m0.backend } : {}),
      repeats: g.length,
      medianMs,
      minMs: Math.min(...walls),
      maxMs: Math.max(...walls),
      speedupVsSequential: speedup,
      efficiency: speedup == null ? null : speedup / m0.workers,
      workRate: workRate(family, m0.work, medianMs),
      warnings: [],
    })
  }
  return out
}

export function verificationFor(config: BenchConfig, disagree = false, task?: Task): Verification {
  const compared = `test ${METRIC_SPECS[task?.metric ?? 'mse'].label}`
  return {
    sameWork: !disagree,
    maxRelMseDiff: disagree ? 0.0099 : 2.1e-7,
    tolerance: 1e-4,
    modelsTrained: Object.fromEntries(config.strategies.map((s) => [s, Math.min(...config.models)])),
    problems: disagree ? [`model 3: batched ${compared} 0.0931 differs from sequential 0.0922 by 9.9e-3 (tolerance 1e-4)`] : [],
  }
}

export const ENVIRONMENT = {
  backend: 'webgpu' as const,
  device: 'NVIDIA H200 (Vulkan)',
  cpu: 'AMD EPYC 9654',
  cpuCount: 16,
  memoryBytes: 128 * 1024 ** 3,
  os: 'Linux 6.8 x64',
  node: 'v20.20.2',
  versions: { '@tensorflow/tfjs-core': '4.22.0', electron: '45.5.0' },
  backendFlags: { WEBGPU_CPU_FORWARD: true },
}

export function resultFor(
  config: BenchConfig,
  measurements: Measurement[],
  opts: { runId?: string; status?: RunResult['status']; disagree?: boolean; task?: Task } = {},
): RunResult {
  return {
    schemaVersion: SCHEMA_VERSION,
    runId: opts.runId ?? 'run-1',
    status: opts.status ?? (opts.disagree ? 'failed' : 'ok'),
    startedAt: '2026-12-02T09:00:00.000Z',
    finishedAt: '2026-12-02T09:01:00.000Z',
    config,
    environment: ENVIRONMENT,
    measurements,
    summary: summarize(measurements, config),
    verification: verificationFor(config, opts.disagree, opts.task),
    warnings: [],
    error: null,
    ...(opts.task ? { task: opts.task } : {}),
  }
}

/** The whole stream of one run: run-started, phases, progress (coalesced), measurements, run-finished. */
export function scriptedRun(opts: ScriptOptions = {}): RunEvent[] {
  const runId = opts.runId ?? 'run-1'
  const models = opts.models ?? 4
  const epochs = opts.epochs ?? 2
  const steps = opts.progressPerMeasurement ?? 6
  const config: BenchConfig = presetConfig('smoke', {
    sizes: opts.sizes ?? [2000],
    models: [models],
    workers: opts.workers ?? [2],
    strategies: opts.strategies ?? ['sequential', 'pool', 'batched'],
    repeats: opts.repeats ?? 1,
    model: { epochs },
    ...(opts.objective ? { target: opts.objective } : {}),
  })
  const task = opts.objective ? resolveTask(config) : undefined
  const family = familyOf(config.model)
  const plan = planFor(config)
  const events: RunEvent[] = [
    { type: 'run-started', runId, config, plan, startedAt: '2026-12-02T09:00:00.000Z', ...(task ? { task } : {}) },
    { type: 'phase', runId, phase: 'probing', index: null, key: null, message: 'probing backends' },
  ]
  const measurements: Measurement[] = []
  plan.forEach((key, index) => {
    events.push({ type: 'phase', runId, phase: 'starting', index, key, message: `starting ${key.workers} worker(s)` })
    events.push({ type: 'phase', runId, phase: 'warming', index, key, message: 'compiling kernels' })
    events.push({ type: 'phase', runId, phase: 'measuring', index, key, message: `${key.strategy}: training` })
    const wall = fakeWallMs(key.size, key.models, key.workers, key.strategy, key.repeat)
    for (let s = 0; s < steps; s++) {
      const total = family.progressTotal(workloadFor(config, key.size))
      const { lanes, cells, done } = lanesFor(key.strategy, models, key.workers, s, steps, epochs, total)
      events.push({
        type: 'progress',
        runId,
        index,
        key,
        elapsedMs: (wall * (s + 1)) / steps,
        modelsDone: done,
        lanes,
        models: cells,
      })
    }
    const m = measurementFor(key, opts.disagree, config, task)
    measurements.push(m)
    events.push({ type: 'measurement', runId, index, measurement: m })
  })
  events.push({ type: 'phase', runId, phase: 'finishing', index: null, key: null, message: 'verifying' })
  events.push({ type: 'run-finished', runId, result: resultFor(config, measurements, { runId, disagree: opts.disagree, task }) })
  return events
}

export const CAPABILITIES: Capabilities = {
  backends: [
    { name: 'tensorflow', available: false, detail: 'libcudnn.so.8 not found (needs CUDA 11.2 + cuDNN 8.1)' },
    { name: 'webgpu', available: true, detail: 'NVIDIA H200 (Vulkan)' },
    { name: 'wasm', available: true, detail: 'AMD EPYC 9654 (SIMD, 16 threads)' },
    { name: 'cpu', available: true, detail: 'AMD EPYC 9654' },
  ],
  autoBackends: { mlp: 'webgpu', gbdt: 'cpu' },
  cpu: 'AMD EPYC 9654',
  cpuCount: 16,
  memoryBytes: 128 * 1024 ** 3,
  freeMemoryBytes: 100 * 1024 ** 3,
  os: 'Linux 6.8 x64',
  versions: { node: 'v20.20.2' },
  shell: 'electron',
  gpus: [],
  launchers: { slurm: { available: false, detail: 'sbatch --version failed: not found on PATH' } },
  // not calibrated yet: the first run with auto would calibrate
  calibration: { rule: 'calibrated', families: {} },
}

/**
 * Backends side by side (issue 25): the smoke preset on wasm and cpu (config.backend a list), every
 * measurement and summary entry naming its backend, cpu `cpuFactor` times slower than wasm, the
 * environment listing both backends' devices, the cross-backend Δ, and `notes` when given.
 */
export function sideBySideResult(opts: { sizes?: number[]; workers?: number[]; cpuFactor?: number; notes?: string[]; runId?: string } = {}): RunResult {
  const config: BenchConfig = presetConfig('smoke', { backend: ['wasm', 'cpu'], sizes: opts.sizes ?? [2000], workers: opts.workers ?? [2], repeats: 1 })
  const factor = opts.cpuFactor ?? 3
  const measurements = planFor(config).map((key) => {
    const m = measurementFor(key, false, config)
    return key.backend === 'cpu' ? { ...m, wallMs: m.wallMs * factor } : m
  })
  const result = resultFor(config, measurements, { runId: opts.runId ?? 'run-sbs' })
  return {
    ...result,
    environment: {
      ...ENVIRONMENT,
      backend: 'wasm',
      device: 'AMD EPYC 9654 (SIMD, 16 threads)',
      backendFlags: { WASM_HAS_SIMD_SUPPORT: true },
      backends: [
        {
          backend: 'wasm',
          device: 'AMD EPYC 9654 (SIMD, 16 threads)',
          versions: { '@tensorflow/tfjs-backend-wasm': '4.22.0' },
          backendFlags: { WASM_HAS_SIMD_SUPPORT: true },
        },
        { backend: 'cpu', device: 'AMD EPYC 9654', versions: { '@tensorflow/tfjs-backend-cpu': '4.22.0' }, backendFlags: {} },
      ],
    },
    verification: { ...result.verification, maxCrossBackendRelMseDiff: 3.2e-5, ...(opts.notes ? { notes: opts.notes } : {}) },
  }
}
