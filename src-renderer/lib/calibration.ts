// The time estimate calibrated on this machine's measured speed: the shared estimator's assumed
// speeds (src-shared/estimate.ts) are one table for every machine, so the config panel scales its
// time by how long the last finished run on the same backend and model family really took, against
// what the same estimator (on the same calibrated speeds, src-shared/calibration.ts) says for that run. Pure.
import type { ConcreteBackend } from '@shared/contract/config'
import type { RunResult } from '@shared/contract/result'
import { estimateRun, type TimeOptions } from '@shared/estimate'
import { findFamily } from '@shared/families'

export interface Calibration {
  backend: ConcreteBackend
  /** the model family it was measured on */
  kind: string
  /** measured / estimated wall time of that run (> 1: this machine is slower than assumed) */
  factor: number
  runId: string
}

/** The factor is kept within these bounds: a run disturbed by something else must not make the estimate absurd. */
export const CALIBRATION_BOUNDS = { min: 0.1, max: 20 } as const

/** A calibration from a finished run, or null when the run cannot give one (not ok, no timing, unknown family). */
export function calibrationFrom(run: RunResult | null | undefined, opts: Pick<TimeOptions, 'calibration'> = {}): Calibration | null {
  if (!run || run.status !== 'ok' || !run.environment || !run.finishedAt || !findFamily(run.config.model.kind)) return null
  const took = Date.parse(run.finishedAt) - Date.parse(run.startedAt)
  if (!Number.isFinite(took) || took <= 0) return null
  let estimated: number | null
  try {
    estimated = estimateRun(run.config, run.environment.backend, { cpuCount: run.environment.cpuCount, calibration: opts.calibration }).totalMs
  } catch {
    return null
  }
  if (estimated == null || !(estimated > 0)) return null
  const factor = Math.min(CALIBRATION_BOUNDS.max, Math.max(CALIBRATION_BOUNDS.min, took / estimated))
  return { backend: run.environment.backend, kind: run.config.model.kind, factor, runId: run.runId }
}
