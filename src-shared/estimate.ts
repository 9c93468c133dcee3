// The one estimator of a run's cost before it starts: memory (checked by the service, shown by the
// renderer) and time (shown by the renderer), both from the real plan (plan.ts: `sequential` is
// measured once per size and model count, not once per W) and from the run's model family: its work
// count, its steps per job (progressTotal) and its memory model (workerPeakBytes). Pure; no I/O.
import type { BenchConfig, ConcreteBackend } from './contract/config'
import type { MeasurementKey } from './contract/result'
import { type Workload, workloadFor } from './contract/workload'
import { familyOf, type ModelFamily } from './families'
import { contiguousGroups, expandPlan, groupKey } from './plan'

/** Models each worker of a measurement holds at once: a fused group (batched) or one model. */
export function modelsPerWorker(strategy: string, models: number, workers: number): number[] {
  if (strategy === 'batched') return contiguousGroups(models, workers).map((g) => g.length)
  return new Array(strategy === 'sequential' ? 1 : Math.min(workers, models)).fill(1)
}

// ---- memory ----

export interface MemoryEstimate {
  /** the most one worker process needs, bytes */
  peakWorkerBytes: number
  /** the most all workers of one measurement need together, bytes (what the service checks) */
  peakTotalBytes: number
}

/** Peak memory over the plan: each warmed pool once (repeats reuse it), each worker by its family's model. */
export function estimateMemory(config: BenchConfig): MemoryEstimate {
  const family = familyOf(config.model)
  let peakWorkerBytes = 0
  let peakTotalBytes = 0
  const seen = new Set<string>()
  for (const key of expandPlan(config)) {
    if (seen.has(groupKey(key))) continue
    seen.add(groupKey(key))
    const workload = workloadFor(config, key.size)
    const perWorker = modelsPerWorker(key.strategy, key.models, key.workers).map((n) => family.workerPeakBytes(workload, n))
    peakWorkerBytes = Math.max(peakWorkerBytes, ...perWorker)
    peakTotalBytes = Math.max(peakTotalBytes, perWorker.reduce((a, b) => a + b, 0))
  }
  return { peakWorkerBytes, peakTotalBytes }
}

/** Peak bytes of the whole run: the largest measurement, all its workers together. */
export function estimateRunPeakBytes(config: BenchConfig): number {
  return estimateMemory(config).peakTotalBytes
}

// ---- time ----

/**
 * Assumed speed of each backend: the one table of it. Rough on purpose (the UI says "rough
 * estimate"); fitted to wasm runs on a 2-core machine (smoke ≈ 1.5 s, quick ≈ 7 s, 2 000/5 000 rows ×
 * 8 models × W 1,2 × 3 strategies ≈ 13 s), the GPU rows scaled from the MLP benchmarks. A family whose
 * work is counted in another unit adds its rate under that unit; without one only the fixed costs count.
 */
export interface BackendSpeed {
  /** work one worker does per second, by the family's work unit (FLOP for the MLP) */
  workPerSecond: Readonly<Record<string, number>>
  /** fixed cost of one training step (one progress unit): dispatch, kernel launches, JS */
  stepMs: number
  /** fixed cost of one job: model set-up, test-set evaluation, the result message */
  jobMs: number
  /** starting and warming one pool of workers, paid once per pool (repeats reuse it), before the clock */
  poolStartMs: number
  /** all workers share one device (a GPU): W workers do not add compute, only overlap fixed costs */
  sharedDevice: boolean
}

export const ASSUMED_SPEED: Readonly<Record<ConcreteBackend, BackendSpeed>> = {
  tensorflow: { workPerSecond: { FLOP: 2e11 }, stepMs: 0.6, jobMs: 10, poolStartMs: 5000, sharedDevice: true },
  // histogram updates: rough, not yet measured — the CPU engine's rate, as on lavapipe (the WGSL kernels
  // running on the CPU); a hardware GPU is faster, so this errs long
  webgpu: { workPerSecond: { FLOP: 5e10, 'histogram update': 4e7 }, stepMs: 1.5, jobMs: 20, poolStartMs: 3000, sharedDevice: true },
  // onnxruntime: ONNX Runtime's CPU provider, 1 thread per worker; measured (benchmarks/onnx/step-bench.mts) ~7–14 ms per
  // step of 50 fused models (0.66 GFLOP: GEMMs plus elementwise passes), ~0.5 ms per one-model step (mostly fixed cost)
  onnxruntime: { workPerSecond: { FLOP: 5e10 }, stepMs: 0.4, jobMs: 5, poolStartMs: 500, sharedDevice: false },
  wasm: { workPerSecond: { FLOP: 8e9 }, stepMs: 1, jobMs: 5, poolStartMs: 400, sharedDevice: false },
  cpu: { workPerSecond: { FLOP: 1e9, 'histogram update': 4e7 }, stepMs: 1, jobMs: 5, poolStartMs: 400, sharedDevice: false },
  // xgboost: measured 2.2 s CPU per model at 10 000 rows × 100 features, 100 rounds, depth 6, sampling 0.8, nthread 1 (3.1e8 updates)
  xgboost: { workPerSecond: { 'histogram update': 1.3e8 }, stepMs: 0.5, jobMs: 20, poolStartMs: 600, sharedDevice: false },
}

/** Paid once per run: probing the backend, verifying, saving. */
export const RUN_OVERHEAD_MS = 200

export interface TimeOptions {
  /** CPU cores here (capabilities.cpuCount): CPU backends run at most this many workers at once; default 1 */
  cpuCount?: number
}

/** Estimated wall time of one measurement (the clock's part: training only), ms. */
export function estimateMeasurementMs(
  family: ModelFamily,
  workload: Workload,
  key: Pick<MeasurementKey, 'strategy' | 'models' | 'workers'>,
  backend: ConcreteBackend,
  opts: TimeOptions = {},
): number {
  const speed = ASSUMED_SPEED[backend]
  const lanes = key.strategy === 'sequential' ? 1 : Math.min(key.workers, key.models)
  // jobs one lane trains in turn: every model (sequential), its share of the queue (pool), one fused group (batched)
  const jobsPerLane = key.strategy === 'sequential' ? key.models : key.strategy === 'pool' ? Math.ceil(key.models / lanes) : 1
  const cores = Math.max(1, opts.cpuCount ?? 1)
  const parallel = speed.sharedDevice ? 1 : Math.min(lanes, cores)
  // on a CPU backend, lanes beyond the cores take turns: their fixed costs do not overlap either
  const crowding = speed.sharedDevice ? 1 : lanes / parallel
  const rate = speed.workPerSecond[family.work.unit]
  const computeMs = rate ? (family.workCount(workload, key.models) / rate / parallel) * 1000 : 0
  const fixedMs = jobsPerLane * (family.progressTotal(workload) * speed.stepMs + speed.jobMs) * crowding
  return computeMs + fixedMs
}

export interface RunEstimate extends MemoryEstimate {
  /** measurements the plan holds: exactly expandPlan(config).length */
  measurements: number
  /** warmed pools the plan starts (one per size, models, strategy and W) */
  pools: number
  /** work of the whole plan, in the family's unit */
  work: number
  workUnit: string
  /** the backend the time is estimated for; null while it is not known (capabilities not arrived) */
  backend: ConcreteBackend | null
  /** estimated wall time of the whole run, ms; null without a backend */
  totalMs: number | null
}

/**
 * The estimate of a whole run. `backend` is the concrete backend it will run on (what `auto`
 * resolves to here); pass null while that is unknown: memory and counts are estimated, time is not.
 */
export function estimateRun(config: BenchConfig, backend: ConcreteBackend | null, opts: TimeOptions = {}): RunEstimate {
  const family = familyOf(config.model)
  const plan = expandPlan(config)
  const pools = new Set(plan.map(groupKey))
  const cores = Math.max(1, opts.cpuCount ?? 1)
  let work = 0
  let totalMs = backend ? RUN_OVERHEAD_MS : 0
  const started = new Set<string>()
  for (const key of plan) {
    const workload = workloadFor(config, key.size)
    work += family.workCount(workload, key.models)
    if (!backend) continue
    totalMs += estimateMeasurementMs(family, workload, key, backend, opts)
    if (!started.has(groupKey(key))) {
      started.add(groupKey(key))
      const lanes = key.strategy === 'sequential' ? 1 : Math.min(key.workers, key.models)
      // workers start in parallel, as many at once as there are cores
      totalMs += ASSUMED_SPEED[backend].poolStartMs * Math.max(1, lanes / cores)
    }
  }
  return {
    ...estimateMemory(config),
    measurements: plan.length,
    pools: pools.size,
    work,
    workUnit: family.work.unit,
    backend,
    totalMs: backend ? totalMs : null,
  }
}
