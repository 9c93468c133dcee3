// A finished model-set run for the leaderboard's and the views' tests: trees, eta 0.1,0.3 ×
// max-depth 3,5, 2 seeds (and optionally 3 folds), sequential and batched at one size, with scores
// that rank the configurations (eta 0.3 · max-depth 5 best) and a little spread between seeds.
import { type BenchConfig, type Measurement, type ModelSet, presetConfig, setMember, setSize } from '../contract'
import type { RunResult } from '../contract/result'
import { planFor, resultFor } from './fixtures'

/** configuration c's mean score: c = 3 (eta 0.3, depth 5) lowest */
const SCORE = [0.9, 0.8, 0.7, 0.6]

export function setConfig(folds: number | null = null): BenchConfig {
  const set: ModelSet = { grid: { maxDepth: [3, 5], eta: [0.1, 0.3] }, seeds: 2, folds }
  return presetConfig('smoke', {
    model: { kind: 'gbdt' } as never,
    backend: 'cpu',
    strategies: ['sequential', 'batched'],
    workers: [2],
    models: [setSize(set)],
    set,
  })
}

export function setResult(opts: { folds?: number | null; runId?: string } = {}): RunResult {
  const config = setConfig(opts.folds ?? null)
  const set = config.set!
  const measurements: Measurement[] = planFor(config).map((key) => {
    const fused = key.strategy === 'batched'
    const wallMs = fused ? 400 : 800
    return {
      ...key,
      status: 'ok',
      wallMs,
      startupMs: 0,
      warmupMs: 10,
      modelsTrained: key.models,
      work: 1e6,
      perModel: Array.from({ length: key.models }, (_, i) => {
        const m = setMember(set, i)
        const wobble = (m.replica === 0 ? -1 : 1) * 0.01 + (m.fold ?? 0) * 0.002
        return {
          index: i,
          seed: config.seed + i + 1,
          // deeper trees take longer
          trainMs: fused ? null : 100 * (m.configuration < 2 ? 1 : 2),
          groupTrainMs: fused ? 50 * key.models : null,
          testMse: SCORE[m.configuration] + wobble + 0.05,
          finalLoss: null,
          worker: fused ? (i < key.models / 2 ? 0 : 1) : 0,
          fingerprint: `tree-${i}`,
          configuration: m.configuration,
          ...(m.fold !== null ? { fold: m.fold, validationMse: SCORE[m.configuration] + wobble } : {}),
        }
      }),
      failures: [],
      peakRssBytes: [1e8],
    }
  })
  return resultFor(config, measurements, { runId: opts.runId ?? 'set-1' })
}
