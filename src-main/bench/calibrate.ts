// `auto`'s calibration measured: each backend `auto` may pick gets a warm one-worker pool, its jobs
// timed as the runner times a measurement: one model, the calibration's models fused, and for a CPU
// backend one worker per core. A job too short to time its steps is timed again with more
// (CALIBRATION_JOB). A backend that can no longer win is skipped or cut off, so calibrating takes
// seconds per backend. The steps: ../README.md, "bench/".
import os from 'node:os'
import {
  batchedStep,
  batchedStepLowerBound,
  calibrationWorkload,
  familyCalibration,
  lengthenedWorkload,
  lengthening,
  spreadsOverCores,
  unmeasuredTiming,
} from '@shared/calibration'
import {
  type BackendCapability,
  type BackendTiming,
  type CalibrationWorkload,
  type FamilyCalibration,
  MEASUREMENT_FLOOR,
  type Workload,
} from '@shared/contract'
import { stepsOf } from '@shared/contract/model-set'
import { type ModelFamily, whyNoBatched } from '@shared/families'
import { formatDuration } from '@shared/format'
import { contiguousGroups } from '@shared/plan'
import type { WorkerLauncher } from '../pool/launcher'
import { type JobSpec, WorkerPool } from '../pool/worker-pool'
import { median } from './stats'

export interface CalibrationHooks {
  /** before each backend is measured: its name, its place among those measured, and how many */
  onBackend?(backend: string, index: number, count: number): void
  /** checked before every timed run: true stops the calibration (CalibrationStopped) */
  shouldStop?(): boolean
}

export class CalibrationStopped extends Error {
  constructor() {
    super('calibration stopped')
    this.name = 'CalibrationStopped'
  }
}

/** A timed run of `steps` steps outlasted what could still win; it was cancelled after `ms`. */
class RunCutOff extends Error {
  constructor(
    readonly ms: number,
    readonly steps: number,
  ) {
    super(`cut off after ${Math.round(ms)} ms`)
    this.name = 'RunCutOff'
  }
}

/** A run of the fused shapes is cut off past twice the best backend's whole run (at least a second: a first run's own costs). */
const CUT_OFF = { factor: 2, minMs: 1000 } as const

/** Times a family's calibration workload on each backend `auto` may pick here (see the header). */
export async function calibrateFamily(
  launcher: WorkerLauncher,
  family: ModelFamily,
  probed: readonly BackendCapability[],
  hooks: CalibrationHooks = {},
  now = new Date(),
): Promise<FamilyCalibration> {
  const { workload, record } = calibrationWorkload(family, os.cpus().length)
  const skipped = family.backends.flatMap((spec) => unmeasuredTiming(family, spec.name, probed) ?? [])
  // the assumed fastest first, so a slow backend meets a best step to be cut off by; a GPU backend
  // the probe found on no GPU (lavapipe, a CPU fallback) is not as fast as assumed: last
  const assumedCost = (name: string) => {
    const spec = family.backends.find((b) => b.name === name)!
    const offGpu = spec.gpu && probed.find((p) => p.name === name)?.gpu !== true
    return (offGpu ? Number.MAX_SAFE_INTEGER : 0) + spec.speed.stepMs + (record.fusedWork / spec.speed.workPerSecond) * 1000
  }
  const toMeasure = family.backends.map((b) => b.name).filter((name) => !skipped.some((s) => s.backend === name))
  toMeasure.sort((a, b) => assumedCost(a) - assumedCost(b))
  const measured: BackendTiming[] = []
  let best: { backend: string; ms: number } | null = null
  for (const [i, backend] of toMeasure.entries()) {
    hooks.onBackend?.(backend, i, toMeasure.length)
    const timing = await timeBackend(launcher, family, backend, workload, record, best, hooks.shouldStop ?? (() => false))
    measured.push(timing)
    const step = batchedStep(timing, record)
    if (step !== null && (best === null || step.ms < best.ms)) best = { backend, ms: step.ms }
  }
  return familyCalibration(family, [...skipped, ...measured], record, now.toISOString())
}

async function timeBackend(
  launcher: WorkerLauncher,
  family: ModelFamily,
  backend: string,
  workload: Workload,
  record: CalibrationWorkload,
  best: { backend: string; ms: number } | null,
  shouldStop: () => boolean,
): Promise<BackendTiming> {
  const timing: BackendTiming = { backend, device: null, oneModelStepMs: null, fusedStepMs: null, spreadStepMs: null, atLeastStepMs: null, note: null }
  const pools: WorkerPool[] = []
  /** a warm pool of `size` workers, each warmed on its own models */
  const warmPool = async (size: number, shapes: number[][]) => {
    const pool = new WorkerPool(launcher, { size, family: family.kind, backend: backend as never })
    pools.push(pool)
    await pool.start()
    timing.device ??= pool.workerInfo?.device ?? null
    await pool.warmup(workload, shapes)
    return pool
  }
  const cutOffMs = (steps: number) => (best ? Math.max(CUT_OFF.minMs, CUT_OFF.factor * best.ms * steps) : undefined)
  // ms a step: the median run ÷ its steps, a run too short for that timed again with more (CALIBRATION_JOB)
  const stepMs = async (pool: WorkerPool, groups: number[][], fused: boolean) => {
    const run = (w: Workload, steps: number) =>
      medianRunMs(
        pool,
        groups.map((modelIndices) => ({ workload: w, modelIndices, fused })),
        steps,
        shouldStop,
        fused ? cutOffMs(steps) : undefined,
      )
    const shortMs = await run(workload, record.steps)
    const factor = lengthening(shortMs)
    const longer = factor > 1 ? lengthenedWorkload(family, workload, factor) : null
    if (!longer) return shortMs / record.steps
    const steps = stepsOf(family, longer)
    return (await run(longer, steps)) / steps
  }
  const cutOff = (what: string, err: RunCutOff): BackendTiming => ({
    ...timing,
    atLeastStepMs: err.ms / err.steps,
    note: `${what} cut off after ${formatDuration(err.ms)}: slower than ${best?.backend}'s batched ${record.step}`,
  })
  let stage = 'fused run' // what a cut-off stopped (only fused runs have one)
  try {
    const one = await warmPool(1, [[0]])
    timing.oneModelStepMs = await stepMs(one, [[0]], false)
    const noFusedRun = whyNoFusedRun(family, backend, timing, best)
    if (noFusedRun) return { ...timing, note: noFusedRun }
    const all = [...Array(record.models).keys()]
    await one.warmup(workload, [all])
    timing.fusedStepMs = await stepMs(one, [all], true)
    await one.shutdown()
    if (spreadsOverCores(family, backend, record)) {
      const groups = contiguousGroups(record.models, record.workers)
      stage = `run over ${groups.length} workers`
      timing.spreadStepMs = await stepMs(await warmPool(groups.length, groups), groups, true)
    }
    return timing
  } catch (err) {
    if (err instanceof RunCutOff) return cutOff(stage, err)
    if (err instanceof CalibrationStopped) throw err
    return { ...timing, note: `could not be measured: ${err instanceof Error ? err.message : String(err)}` }
  } finally {
    for (const pool of pools) await pool.shutdown()
  }
}

/** Why a backend's fused run is not timed: it has none, or one model's step already loses to the best batched step. */
function whyNoFusedRun(family: ModelFamily, backend: string, timing: BackendTiming, best: { backend: string; ms: number } | null): string | null {
  const noBatched = whyNoBatched(family, backend)
  if (noBatched) return `no fused program: ${noBatched}`
  if (best && batchedStepLowerBound(timing)! >= best.ms) return `fused not measured: one model's step is already slower than ${best.backend}'s batched step`
  return null
}

/**
 * The runner's clock: one run (of `steps` steps) from dispatch to the last result, again until the
 * runs last MEASUREMENT_FLOOR; the median run. A run past `cutOffMs` is cancelled (RunCutOff).
 */
async function medianRunMs(pool: WorkerPool, jobs: JobSpec[], steps: number, shouldStop: () => boolean, cutOffMs?: number): Promise<number> {
  const runs: number[] = []
  let total = 0
  while (runs.length === 0 || (total < MEASUREMENT_FLOOR.minMs && runs.length < MEASUREMENT_FLOOR.maxRuns)) {
    if (shouldStop()) throw new CalibrationStopped()
    const started = performance.now()
    const run = pool.run(jobs)
    let timer: NodeJS.Timeout | undefined
    const cutOff = cutOffMs === undefined ? null : new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), cutOffMs)))
    const outcomes = cutOff ? await Promise.race([run, cutOff]) : await run
    clearTimeout(timer)
    if (outcomes === null) {
      await pool.cancel()
      await run
      throw new RunCutOff(performance.now() - started, steps)
    }
    const failed = outcomes.find((o) => o.status !== 'done')
    if (failed) throw new Error(failed.failure?.reason ?? `a job ended ${failed.status}`)
    runs.push(performance.now() - started)
    total += runs[runs.length - 1]
  }
  return median(runs)
}
