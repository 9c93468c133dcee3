// A finished model-count sweep (N = 1, 2, 4, 8, 16 at one size; W = 1, 2, 4 for pool and batched),
// for the advice views' tests (the Run view's and the report's advice sections, the FakeService's
// advise/verifyAdvice): fixtures.ts's plausible times with a small deterministic wobble, so the
// lines fit well (R² > 0.9) but not exactly (non-zero residuals and intervals). With `poor`, pool's
// and batched's times jump about, so those fits are refused (R² < 0.9) and only sequential is ranked.
import type { Strategy } from '../contract/config'
import { presetConfig } from '../contract/config'
import type { RunResult } from '../contract/result'
import { expandPlan } from '../plan'
import { measurementFor, resultFor } from './fixtures'

export interface SweepOptions {
  runId?: string
  counts?: number[]
  workers?: number[]
  size?: number
  strategies?: Strategy[]
  /** pool and batched times scattered: their cost models are refused */
  poor?: boolean
}

export const SWEEP_COUNTS = [1, 2, 4, 8, 16]

export function sweepResult(opts: SweepOptions = {}): RunResult {
  const config = presetConfig('smoke', {
    sizes: [opts.size ?? 2000],
    models: opts.counts ?? SWEEP_COUNTS,
    workers: opts.workers ?? [1, 2, 4],
    strategies: opts.strategies ?? ['sequential', 'pool', 'batched'],
    repeats: 1,
  })
  const measurements = expandPlan(config).map((k, i) => {
    const m = measurementFor(k, false, config)
    const wobble = 1 + 0.04 * Math.sin(1.7 * i + k.models)
    const scatter = opts.poor && k.strategy !== 'sequential' ? [3, 0.4, 2.5, 0.6, 1.8][SWEEP_COUNTS.indexOf(k.models) % 5] : 1
    return { ...m, wallMs: m.wallMs * wobble * scatter }
  })
  return resultFor(config, measurements, { runId: opts.runId ?? 'sweep-1' })
}
