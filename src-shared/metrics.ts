// A model's scores from its outputs on some rows: MSE for a regressor; log loss, accuracy and (binary)
// ROC AUC for a classifier, with scikit-learn 1.2's definitions (log_loss clips probabilities to
// [ε, 1 − ε] with ε float64's machine epsilon (1.2's eps='auto'); roc_auc_score is the Mann–Whitney statistic, ties counted as half). Every engine
// scores through here, so every backend's numbers mean the same thing (research/objectives.md).
import { type Metrics, type Objective, type MetricName, outputsOf, type Task, METRIC_SPECS } from './vocabulary/task'

const EPS = Number.EPSILON

/**
 * Scores of outputs `out` against labels `y` (a class index for a classifier): regression `out[r]` is
 * the prediction; binary `out[r]` = p(class 1); multiclass `out[r·K + k]` = p(class k).
 */
export function scoreOutputs(task: { objective: Objective; classes: number }, out: ArrayLike<number>, y: ArrayLike<number>): Metrics {
  return scores(task, out, y, true)
}

/**
 * One metric of outputs `out` (scoreOutputs' value for it): what early stopping reads every round, so
 * the ROC AUC sort runs only when AUC is the metric watched.
 */
export function scoreMetric(task: { objective: Objective; classes: number }, out: ArrayLike<number>, y: ArrayLike<number>, metric: MetricName): number {
  return scores(task, out, y, metric === 'auc')[metric] ?? NaN
}

function scores(task: { objective: Objective; classes: number }, out: ArrayLike<number>, y: ArrayLike<number>, withAuc: boolean): Metrics {
  const rows = y.length
  if (task.objective === 'regression') {
    let s = 0
    for (let r = 0; r < rows; r++) s += (out[r] - y[r]) ** 2
    return { mse: rows ? s / rows : NaN }
  }
  const K = outputsOf(task)
  if (task.objective === 'binary') {
    let loss = 0
    let right = 0
    let brier = 0
    for (let r = 0; r < rows; r++) {
      const p = Math.min(Math.max(out[r], EPS), 1 - EPS)
      loss -= y[r] === 1 ? Math.log(p) : Math.log(1 - p)
      if ((out[r] > 0.5 ? 1 : 0) === y[r]) right++
      brier += (out[r] - y[r]) ** 2
    }
    const auc = withAuc ? rocAuc(out, y) : NaN // NaN when the rows hold one class only: left out, never stored as NaN
    return { logloss: loss / rows, accuracy: right / rows, ...(Number.isFinite(auc) ? { auc } : {}), mse: brier / rows }
  }
  let loss = 0
  let right = 0
  let brier = 0
  for (let r = 0; r < rows; r++) {
    const label = y[r]
    // scikit-learn renormalises each row after clipping; a softmax row already sums to 1 (to rounding)
    let sum = 0
    let best = 0
    for (let k = 0; k < K; k++) {
      const p = out[r * K + k]
      sum += Math.min(Math.max(p, EPS), 1 - EPS)
      if (p > out[r * K + best]) best = k
      brier += (p - (k === label ? 1 : 0)) ** 2
    }
    loss -= Math.log(Math.min(Math.max(out[r * K + label], EPS), 1 - EPS) / sum)
    if (best === label) right++
  }
  return { logloss: loss / rows, accuracy: right / rows, mse: brier / rows }
}

/**
 * ROC AUC of scores against 0/1 labels: P(a positive outscores a negative), ties half (the
 * Mann–Whitney U over positives × negatives); NaN with one class. The two classes' scores sorted as
 * typed arrays (no comparator) and merged: O(n log n) without a per-pair callback.
 */
export function rocAuc(score: ArrayLike<number>, y: ArrayLike<number>): number {
  const rows = y.length
  let positives = 0
  for (let r = 0; r < rows; r++) if (y[r] === 1) positives++
  const negatives = rows - positives
  if (positives === 0 || negatives === 0) return NaN
  const pos = new Float64Array(positives)
  const neg = new Float64Array(negatives)
  for (let r = 0, i = 0, j = 0; r < rows; r++) {
    if (y[r] === 1) pos[i++] = score[r]
    else neg[j++] = score[r]
  }
  pos.sort()
  neg.sort()
  // for each positive: the negatives below it, and half of those equal to it
  let wins = 0
  let below = 0
  let upTo = 0
  for (let i = 0; i < positives; i++) {
    const s = pos[i]
    while (below < negatives && neg[below] < s) below++
    if (upTo < below) upTo = below
    while (upTo < negatives && neg[upTo] === s) upTo++
    wins += below + (upTo - below) / 2
  }
  return wins / (positives * negatives)
}

/** A model's value in a metric: its `metrics`, or (MSE) its testMse, which a run from before classifiers has alone. */
export function metricValue(scores: { testMse: number; metrics?: Metrics }, metric: MetricName): number {
  if (metric === 'mse') return scores.metrics?.mse ?? scores.testMse
  return scores.metrics?.[metric] ?? NaN
}

/** A model's held-out value in a metric: its validationMetrics, or (MSE) its validationMse. */
export function validationMetricValue(scores: { validationMse?: number; validationMetrics?: Metrics }, metric: MetricName): number {
  if (metric === 'mse') return scores.validationMetrics?.mse ?? scores.validationMse ?? NaN
  return scores.validationMetrics?.[metric] ?? NaN
}

/** "log loss", "MSE" — the words for a task's primary metric. */
export function metricLabel(task: Pick<Task, 'metric'>): string {
  return METRIC_SPECS[task.metric].label
}

/** The sigmoid of a margin (a binary model's probability of class 1). */
export function sigmoid(margin: number): number {
  return 1 / (1 + Math.exp(-margin))
}

/** Softmax of K margins in place, from `at` (a multiclass model's class probabilities). */
export function softmaxInPlace(m: Float32Array | Float64Array, at: number, K: number): void {
  let max = -Infinity
  for (let k = 0; k < K; k++) max = Math.max(max, m[at + k])
  let sum = 0
  for (let k = 0; k < K; k++) {
    const e = Math.exp(m[at + k] - max)
    m[at + k] = e
    sum += e
  }
  for (let k = 0; k < K; k++) m[at + k] /= sum
}
