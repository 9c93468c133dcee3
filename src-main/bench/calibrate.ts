// `auto`'s calibration measured (issue 32): each backend of a family that `auto` may pick and the
// probe found available gets a one-worker pool, warmed, and its jobs timed as the runner times a
// measurement (dispatch to last result, again on the warm worker until MEASUREMENT_FLOOR, the median
// run): one model alone, then the calibration's models fused — the latter skipped once one model's
// step is already slower than the best backend's batched step: it cannot win.
import os from 'node:os'
import { batchedStep, batchedStepLowerBound, calibrationWorkload, familyCalibration, unmeasuredTiming } from '@shared/calibration'
import { type BackendCapability, type BackendTiming, type CalibrationWorkload, type FamilyCalibration, MEASUREMENT_FLOOR, type Workload } from '@shared/contract'
import { type ModelFamily, whyNoBatched } from '@shared/families'
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

/** Times a family's calibration workload on each backend `auto` may pick here (see the header). */
export async function calibrateFamily(launcher: WorkerLauncher, family: ModelFamily, probed: readonly BackendCapability[], hooks: CalibrationHooks = {}, now = new Date()): Promise<FamilyCalibration> {
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
    const step = batchedStep(family, timing, record)
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
  const pool = new WorkerPool(launcher, { size: 1, family: family.kind, backend: backend as never })
  let device: string | null = null
  let oneModelStepMs: number | null = null
  try {
    await pool.start()
    device = pool.workerInfo?.device ?? null
    await pool.warmup(workload, [[0]])
    oneModelStepMs = (await medianRunMs(pool, [{ workload, modelIndices: [0], fused: false }], shouldStop)) / record.steps
    const timed = { backend, device, oneModelStepMs }
    const noBatched = whyNoBatched(family, backend)
    if (noBatched) return { ...timed, fusedStepMs: null, note: `no fused program: ${noBatched}` }
    const bound = batchedStepLowerBound({ ...timed, fusedStepMs: null, note: null })!
    if (best && bound >= best.ms) return { ...timed, fusedStepMs: null, note: `fused not measured: one model's step is already slower than ${best.backend}'s batched step` }
    const all = [...Array(record.models).keys()]
    await pool.warmup(workload, [all])
    const fusedStepMs = (await medianRunMs(pool, [{ workload, modelIndices: all, fused: true }], shouldStop)) / record.steps
    return { ...timed, fusedStepMs, note: null }
  } catch (err) {
    if (err instanceof CalibrationStopped) throw err
    return { backend, device, oneModelStepMs, fusedStepMs: null, note: `could not be measured: ${err instanceof Error ? err.message : String(err)}` }
  } finally {
    await pool.shutdown()
  }
}

/** The runner's clock: one run from dispatch to the last result, again until the runs last MEASUREMENT_FLOOR; the median run. */
async function medianRunMs(pool: WorkerPool, jobs: JobSpec[], shouldStop: () => boolean): Promise<number> {
  const runs: number[] = []
  let total = 0
  while (runs.length === 0 || (total < MEASUREMENT_FLOOR.minMs && runs.length < MEASUREMENT_FLOOR.maxRuns)) {
    if (shouldStop()) throw new CalibrationStopped()
    const started = performance.now()
    const outcomes = await pool.run(jobs)
    const failed = outcomes.find((o) => o.status !== 'done')
    if (failed) throw new Error(failed.failure?.reason ?? `a job ended ${failed.status}`)
    runs.push(performance.now() - started)
    total += runs[runs.length - 1]
  }
  return median(runs)
}
