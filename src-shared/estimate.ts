// The one estimator of a run's cost before it starts: memory (checked by the service, shown by the
// renderer) and time, from the real plan (plan.ts), the family's work count, steps and memory model,
// and the backend's assumed speed (families/backend.ts) or this machine's calibrated one
// (calibration.ts). Pure; no I/O.
import { calibratedSpeed } from './calibration'
import type { FamilyCalibration } from './contract/calibration'
import type { BenchConfig, ConcreteBackend } from './contract/config'
import { MEASUREMENT_FLOOR, type MeasurementKey } from './contract/result'
import { type Workload, workloadFor } from './contract/workload'
import { searchShare } from './contract/halving'
import { modelWorks, peakBytesOf, stepsOf, workOf } from './contract/model-set'
import { backendSpec, familyOf, type ModelFamily } from './families'
import { balancedGroups, contiguousGroups, expandPlan, groupKey } from './plan'

/** Models each worker of a measurement holds at once: a fused group (batched: balanced by each model's work, `works`, as the runner splits them) or one model. */
export function modelsPerWorker(strategy: string, models: number, workers: number, works?: readonly number[]): number[] {
  if (strategy === 'batched') return (works ? balancedGroups(works, workers) : contiguousGroups(models, workers)).map((g) => g.length)
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
    const works = modelWorks(
      family,
      workload,
      Array.from({ length: key.models }, (_, i) => i),
    )
    const perWorker = modelsPerWorker(key.strategy, key.models, key.workers, works).map((n) => peakBytesOf(family, workload, n))
    peakWorkerBytes = Math.max(peakWorkerBytes, ...perWorker)
    peakTotalBytes = Math.max(
      peakTotalBytes,
      perWorker.reduce((a, b) => a + b, 0),
    )
  }
  return { peakWorkerBytes, peakTotalBytes }
}

/** Peak bytes of the whole run: the largest measurement, all its workers together. */
export function estimateRunPeakBytes(config: BenchConfig): number {
  return estimateMemory(config).peakTotalBytes
}

// ---- time ----

/** Paid once per run: probing the backend, verifying, saving. */
export const RUN_OVERHEAD_MS = 200

export interface TimeOptions {
  /** CPU cores here (capabilities.cpuCount): CPU backends run at most this many workers at once; default 1 */
  cpuCount?: number
  /** this machine's calibration per family (capabilities.calibration.families): measured speeds replace the assumed ones */
  calibration?: Record<string, FamilyCalibration>
}

/** The speed the estimate uses for a backend: calibrated here when timed, else the family's assumed one; undefined for a backend the family lacks. */
function speedOf(family: ModelFamily, backend: string, opts: TimeOptions) {
  const assumed = backendSpec(family, backend)?.speed
  return assumed && calibratedSpeed(opts.calibration?.[family.kind], backend, assumed)
}

/** Whether the estimate's speed for a backend was measured by this machine's calibration. */
export function speedIsCalibrated(family: ModelFamily, backend: string, opts: TimeOptions): boolean {
  return opts.calibration?.[family.kind]?.backends.some((b) => b.backend === backend && b.oneModelStepMs !== null) ?? false
}

/** Estimated wall time of one measurement (the clock's part: training only), ms. */
export function estimateMeasurementMs(
  family: ModelFamily,
  workload: Workload,
  key: Pick<MeasurementKey, 'strategy' | 'models' | 'workers'>,
  backend: ConcreteBackend,
  opts: TimeOptions = {},
  /** the share of the grid's rounds the search trains (contract/halving.ts searchShare): 1 for a grid */
  share = 1,
): number {
  const speed = speedOf(family, backend, opts)
  if (!speed) throw new Error(`no time estimate: a ${family.label} has no backend ${backend}`)
  const lanes = key.strategy === 'sequential' ? 1 : Math.min(key.workers, key.models)
  // jobs one lane trains in turn: every model (sequential), its share of the queue (pool), one fused group (batched)
  const jobsPerLane = key.strategy === 'sequential' ? key.models : key.strategy === 'pool' ? Math.ceil(key.models / lanes) : 1
  const cores = Math.max(1, opts.cpuCount ?? 1)
  const parallel = speed.sharedDevice ? 1 : Math.min(lanes, cores)
  // on a CPU backend, lanes beyond the cores take turns: their fixed costs do not overlap either
  const crowding = speed.sharedDevice ? 1 : lanes / parallel
  const computeMs = (workOf(family, workload, key.models) / speed.workPerSecond / parallel) * 1000
  const fixedMs = jobsPerLane * (stepsOf(family, workload) * speed.stepMs + speed.jobMs) * crowding
  // halving: every step and its work fewer by the share (a rung's extra jobs and its sync are not counted)
  return (computeMs + fixedMs) * share
}

/** A measurement's whole time once the runner's floor applies (MEASUREMENT_FLOOR): a short one runs again until it has lasted the floor. */
export function flooredMeasurementMs(runMs: number): number {
  if (runMs >= MEASUREMENT_FLOOR.minMs || runMs <= 0) return runMs
  return Math.min(MEASUREMENT_FLOOR.maxRuns, Math.ceil(MEASUREMENT_FLOOR.minMs / runMs)) * runMs
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
  /** measurements estimated shorter than MEASUREMENT_FLOOR.minMs (each repeated until it lasts that long); 0 without a backend */
  shortMeasurements: number
  /** where the time's speed comes from: this machine's calibration, or the family's assumed speed; null without a backend */
  speed: 'calibrated' | 'assumed' | null
}

/**
 * The estimate of a whole run. `backend` is the concrete backend it will run on (what `auto`
 * resolves to here); pass null while that is unknown: memory and counts are estimated, time is not.
 */
export function estimateRun(config: BenchConfig, backendIn: ConcreteBackend | null, opts: TimeOptions = {}): RunEstimate {
  const family = familyOf(config.model)
  // a backend the family does not have (a config the schema refuses) gets no time, only memory and counts
  const speed = backendIn ? speedOf(family, backendIn, opts) : undefined
  const backend = speed ? backendIn : null
  const plan = expandPlan(config)
  const pools = new Set(plan.map(groupKey))
  const cores = Math.max(1, opts.cpuCount ?? 1)
  let work = 0
  let totalMs = backend ? RUN_OVERHEAD_MS : 0
  let shortMeasurements = 0
  const started = new Set<string>()
  const share = searchShare(family, config)
  for (const key of plan) {
    const workload = workloadFor(config, key.size)
    work += workOf(family, workload, key.models) * share
    if (!backend || !speed) continue
    const runMs = estimateMeasurementMs(family, workload, key, backend, opts, share)
    if (runMs < MEASUREMENT_FLOOR.minMs) shortMeasurements++
    totalMs += flooredMeasurementMs(runMs)
    if (!started.has(groupKey(key))) {
      started.add(groupKey(key))
      const lanes = key.strategy === 'sequential' ? 1 : Math.min(key.workers, key.models)
      // workers start in parallel, as many at once as there are cores
      totalMs += speed.poolStartMs * Math.max(1, lanes / cores)
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
    shortMeasurements,
    speed: backend ? (speedIsCalibrated(family, backend, opts) ? 'calibrated' : 'assumed') : null,
  }
}

/**
 * Before a run: its measurements that will be too short alone for the fits it asks for (a
 * model-count sweep: the advice's lines), said with what happens and what to change; null when none.
 * One sentence for the CLI and the config panel.
 */
export function shortMeasurementsNote(config: Pick<BenchConfig, 'models'>, estimate: Pick<RunEstimate, 'shortMeasurements' | 'measurements'>): string | null {
  if (estimate.shortMeasurements === 0 || config.models.length < 3) return null
  return `${estimate.shortMeasurements} of ${estimate.measurements} measurements are estimated under ${MEASUREMENT_FLOOR.minMs} ms: each runs again until its runs have lasted ${MEASUREMENT_FLOOR.minMs} ms and its median run is its time; for the sweep's fits (advice), more rows or more epochs/rounds make each run long enough on its own`
}
