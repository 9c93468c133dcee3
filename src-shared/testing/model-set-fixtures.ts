// A finished model-set run for the leaderboard's and the views' tests: trees, eta 0.1,0.3 ×
// max-depth 3,5, 2 seeds (and optionally 3 folds), sequential and batched at one size, with scores
// that rank the configurations (eta 0.3 · max-depth 5 best) and a little spread between seeds.
// With `objective` (binary, multiclass) it is a classifier run on generated classification data: its
// task, and per model every metric of the objective, chosen so that each metric ranks the
// configurations in its own order — log loss 3, 2, 1, 0 (lower first), accuracy 2, 3, 1, 0 and ROC
// AUC 3, 1, 2, 0 (higher first) — so a ranking in the wrong direction, or by the wrong metric, shows.
import { type BenchConfig, type Measurement, type MetricChoice, type ModelSet, presetConfig, resolveTask, setMember, setSize } from '../contract'
import type { PerModel, RunResult } from '../contract/result'
import type { Metrics, Objective } from '../vocabulary/task'
import { planFor, resultFor } from './fixtures'

/** configuration c's mean score: c = 3 (eta 0.3, depth 5) lowest */
const SCORE = [0.9, 0.8, 0.7, 0.6]

/** A classifier's mean scores by configuration (see the header). */
export const CLASSIFIER_SCORES = {
  logloss: [0.6, 0.5, 0.4, 0.3],
  accuracy: [0.7, 0.8, 0.9, 0.85],
  auc: [0.75, 0.85, 0.8, 0.95],
  /** the Brier score (a classifier's test MSE) */
  mse: [0.2, 0.18, 0.16, 0.14],
} as const

export interface SetOptions {
  folds?: number | null
  runId?: string
  /** a classifier run (generated target binary or multiclass); absent: regression, as before classifiers */
  objective?: Exclude<Objective, 'regression'>
  /** the primary metric (the config's `metric`); absent: auto */
  metric?: MetricChoice
}

export function setConfig(folds: number | null = null, classifier: Pick<SetOptions, 'objective' | 'metric'> = {}): BenchConfig {
  const set: ModelSet = { grid: { maxDepth: [3, 5], eta: [0.1, 0.3] }, seeds: 2, folds }
  return presetConfig('smoke', {
    model: { kind: 'gbdt' } as never,
    backend: 'cpu',
    strategies: ['sequential', 'batched'],
    workers: [2],
    models: [setSize(set)],
    set,
    ...(classifier.objective ? { target: classifier.objective, ...(classifier.metric ? { metric: classifier.metric } : {}) } : {}),
  })
}

/** A classifier model's metrics: its configuration's means, moved by `wobble` in each metric's worse direction or better. */
function classifierMetrics(objective: Objective, configuration: number, wobble: number): Metrics {
  const m: Metrics = {
    logloss: CLASSIFIER_SCORES.logloss[configuration] + wobble,
    accuracy: CLASSIFIER_SCORES.accuracy[configuration] - wobble,
    mse: CLASSIFIER_SCORES.mse[configuration] + wobble / 2,
  }
  if (objective === 'binary') m.auc = CLASSIFIER_SCORES.auc[configuration] - wobble
  return m
}

export function setResult(opts: SetOptions = {}): RunResult {
  const config = setConfig(opts.folds ?? null, opts)
  const set = config.set!
  const task = opts.objective ? resolveTask(config) : undefined
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
      perModel: Array.from({ length: key.models }, (_, i): PerModel => {
        const m = setMember(set, i)
        const wobble = (m.replica === 0 ? -1 : 1) * 0.01 + (m.fold ?? 0) * 0.002
        const model = {
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
        if (!task) return model
        // the test rows' scores a little worse than the held-out rows' (0.05), as a regressor's are
        const test = classifierMetrics(task.objective, m.configuration, wobble + 0.05)
        const held = classifierMetrics(task.objective, m.configuration, wobble)
        return {
          ...model,
          testMse: test.mse!,
          metrics: test,
          ...(m.fold !== null ? { validationMse: held.mse!, validationMetrics: held } : {}),
        }
      }),
      failures: [],
      peakRssBytes: [1e8],
    }
  })
  return resultFor(config, measurements, { runId: opts.runId ?? 'set-1', task })
}

/**
 * The set run above (3 folds) searched by successive halving, factor 2 from a first rung of 2 of its
 * 10 rounds: rungs 4 configurations × 2 rounds → 2 × 4 rounds → 1 × 10 rounds, the scores' order
 * promoting configurations 2 and 3, then 3. Each model records its last rung and its rounds; each
 * measurement its rungs, with each configuration's mean validation MSE a little lower rung by rung.
 */
export function halvingResult(): RunResult {
  const run = setResult({ folds: 3, runId: 'halving-1' })
  run.config.search = { method: 'halving', factor: 2, minRounds: 2 }
  const rungOf = [0, 0, 1, 2]
  const roundsOf = [2, 2, 4, 10]
  const rungs = [
    { rounds: 2, configurations: [0, 1, 2, 3], models: 24, validation: SCORE.map((s) => s + 0.1) },
    { rounds: 4, configurations: [2, 3], models: 12, validation: [SCORE[2] + 0.02, SCORE[3] + 0.05] },
    { rounds: 10, configurations: [3], models: 6, validation: [SCORE[3]] },
  ]
  for (const m of run.measurements) {
    m.rungs = rungs
    m.perModel = m.perModel.map((p) => ({ ...p, rung: rungOf[p.configuration!], roundsTrained: roundsOf[p.configuration!] }))
  }
  return run
}
