// What a workload's objective changes in a fused MLP, the same for every MLP engine: the output
// layer's units (one: a regressor's prediction or a binary classifier's logit; K logits for
// multiclass), the loss (squared error; binary cross-entropy from the logit; softmax cross-entropy),
// and how each model is scored. A classifier is scored from its logits, through @shared/metrics'
// sigmoid / softmax and scores, so every engine's numbers mean the same thing (research/objectives.md).
import { type Metrics, outputsOf, type Objective, type WorkloadTask } from '@shared/contract'
import { scoreOutputs, sigmoid, softmaxInPlace } from '@shared/metrics'

/** The objective a workload trains: its task's, regression without one. */
export function objectiveOf(task: WorkloadTask | undefined): Objective {
  return task?.objective ?? 'regression'
}

/** Units of the output layer: 1 for a regressor and a binary classifier (its logit), K for multiclass. */
export function outputUnits(task: WorkloadTask | undefined): number {
  return task ? outputsOf(task) : 1
}

/** The objective as the engines' kernels and graphs switch on it. */
export const OBJECTIVE_CODE: Record<Objective, number> = { regression: 0, binary: 1, multiclass: 2 }

/** A model's scores on some rows: its MSE (a classifier's Brier score) and, for a classifier, every metric of its objective. */
export interface ModelScores {
  mse: number
  metrics?: Metrics
}

/** Each model's scores from its MSE alone (a regressor: the engines compute it where they train). */
export function mseScores(mse: ArrayLike<number>): ModelScores[] {
  return Array.from(mse, (m) => ({ mse: m }))
}

/**
 * Each of n fused classifiers' scores from its logits on `rows` rows, laid out rows first ([rows,
 * n, K]: row r, model i, class k at (r·n + i)·K + k; K = 1 for binary), against the rows' labels
 * (class indices). The probabilities are the sigmoid / softmax of the logits in float64 here, one
 * transform for every engine (a float32 sigmoid rounds p to 1 from a logit of 17 on, and the log
 * loss of such a row would be the clip's, not the model's).
 */
export function classifierScores(task: WorkloadTask, logits: Float32Array, rows: number, n: number, labels: ArrayLike<number>): ModelScores[] {
  const K = outputUnits(task)
  const p = new Float64Array(rows * K)
  return Array.from({ length: n }, (_, i) => {
    for (let r = 0; r < rows; r++) {
      for (let k = 0; k < K; k++) p[r * K + k] = logits[(r * n + i) * K + k]
      if (K === 1) p[r] = sigmoid(p[r])
      else softmaxInPlace(p, r * K, K)
    }
    const metrics = scoreOutputs(task, p, labels)
    return { mse: metrics.mse!, metrics }
  })
}
