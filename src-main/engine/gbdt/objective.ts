// What the trees learn: XGBoost 1.7's reg:squarederror (the default), binary:logistic and
// multi:softprob — each row's gradient and hessian from its margins, the initial margin from
// base_score, and the output transform. Every step is float32 as XGBoost computes it (its
// regression_loss.h, multiclass_obj.cu, common/math.h): Math.fround after each operation, expf as
// fround(Math.exp), multi:softprob's sum of exponentials in float64 as XGBoost's `double wsum`.
// The hessians' floor is XGBoost 1.7's 1e-16f for both classifiers (checked with python3-xgboost
// 1.7.4: a class with p ≈ 2e-9 keeps its hessian 4e-9). Why and how: README.md, "Objectives".
import { CLASS_LIMITS, type Objective } from '@shared/vocabulary/task'
import type { WorkloadTask } from '@shared/vocabulary/workload-shape'

const f32 = Math.fround

/** What the trees learn, as a workload says it (objective, K classes); absent = regression. */
export type GbdtTask = WorkloadTask

/** XGBoost's hessian floor (eps = 1e-16f in binary:logistic and multi:softprob). */
const HESSIAN_FLOOR = f32(1e-16)
/** numeric_limits<float>::min(): multi:softprob's running maximum starts there */
const FLT_MIN = 2 ** -126

/** Trees per boosting round: K for multiclass (one per class, class k is tree t with t mod K = k), else 1. */
export function treesPerRound(task: GbdtTask | undefined): number {
  return task?.objective === 'multiclass' ? task.classes : 1
}

/** Why the engine cannot train `task` (a class count outside the objective's), or null. */
export function taskProblem(task: GbdtTask | undefined): string | null {
  if (!task || task.objective === 'regression') return null
  const K = task.classes
  if (task.objective === 'binary') return K === 2 ? null : `a binary task has 2 classes, got ${K}`
  return Number.isInteger(K) && K >= CLASS_LIMITS.min && K <= CLASS_LIMITS.max
    ? null
    : `a multiclass task has ${CLASS_LIMITS.min} to ${CLASS_LIMITS.max} classes, got ${K}`
}

/** Why baseScore cannot start an objective's trees (binary: XGBoost's base_score is a probability), or null. */
export function baseScoreProblem(objective: Objective, baseScore: number): string | null {
  if (objective !== 'binary' || (baseScore > 0 && baseScore < 1)) return null
  return `baseScore must be a probability in (0, 1) for a binary objective (XGBoost's base_score; its logit is the initial margin), got ${baseScore}`
}

/**
 * The margin every row starts from: f32(baseScore) for regression and multiclass (added to every
 * class's margin as is), logit(baseScore) for binary as XGBoost's ProbToMargin, −logf(1/b − 1).
 */
export function initialMargin(objective: Objective | undefined, baseScore: number): number {
  const b = f32(baseScore)
  if (objective !== 'binary') return b
  return f32(-f32(Math.log(f32(f32(1 / b) - 1))))
}

/** XGBoost 1.7's common::Sigmoid in float32: 1 / (1 + expf(−x)). */
export function sigmoidF32(x: number): number {
  return f32(1 / f32(1 + f32(Math.exp(-x))))
}

/** XGBoost 1.7's common::Softmax on out[at, at + K) in place: float32 exponentials of x − max, summed in float64, divided in float32. */
export function softmaxF32(out: Float32Array, at: number, K: number): void {
  let wmax = out[at]
  for (let k = 1; k < K; k++) wmax = Math.max(out[at + k], wmax)
  let wsum = 0
  for (let k = 0; k < K; k++) {
    const e = f32(Math.exp(f32(out[at + k] - wmax)))
    out[at + k] = e
    wsum += e
  }
  const s = f32(wsum)
  for (let k = 0; k < K; k++) out[at + k] = f32(out[at + k] / s)
}

/**
 * binary:logistic's gradient pair of rows `rows[0, count)` (margins m, labels y ∈ {0, 1}) into g and h
 * at the same positions: p = sigmoid(m), g = p − y, h = max(p·(1 − p), 1e-16).
 */
export function logisticGradients(m: Float32Array, y: Float32Array, rows: Int32Array, count: number, g: Float32Array, h: Float32Array): void {
  for (let i = 0; i < count; i++) {
    const r = rows[i]
    const p = sigmoidF32(m[r])
    g[i] = f32(p - y[r])
    h[i] = Math.max(f32(p * f32(1 - p)), HESSIAN_FLOOR)
  }
}

/**
 * multi:softprob's probabilities of every row: p[r·K + k] = expf(m_k − wmax) / f32(wsum), with
 * wmax = max(FLT_MIN, m_0 … m_{K−1}) and wsum the float64 sum of the K float32 exponentials, as
 * XGBoost's GetGradient (not its prediction's Softmax, whose maximum starts at m_0). `margins[k]`
 * are class k's margins.
 */
export function softprobOfRows(margins: readonly Float32Array[], rows: number, p: Float32Array): void {
  const K = margins.length
  for (let r = 0; r < rows; r++) {
    let wmax = FLT_MIN
    for (let k = 0; k < K; k++) wmax = Math.max(margins[k][r], wmax)
    const at = r * K
    let wsum = 0
    for (let k = 0; k < K; k++) {
      const e = f32(Math.exp(f32(margins[k][r] - wmax)))
      p[at + k] = e
      wsum += e
    }
    const s = f32(wsum)
    for (let k = 0; k < K; k++) p[at + k] = f32(p[at + k] / s)
  }
}

/**
 * multi:softprob's gradient pair of class k for rows `rows[0, count)` from the probabilities of
 * softprobOfRows: g = p_k − [y = k], h = max(2·p_k·(1 − p_k), 1e-16).
 */
export function softprobGradients(
  p: Float32Array,
  K: number,
  k: number,
  y: Float32Array,
  rows: Int32Array,
  count: number,
  g: Float32Array,
  h: Float32Array,
): void {
  for (let i = 0; i < count; i++) {
    const r = rows[i]
    const pk = p[r * K + k]
    h[i] = Math.max(f32(f32(2 * pk) * f32(1 - pk)), HESSIAN_FLOOR)
    g[i] = y[r] === k ? f32(pk - 1) : pk
  }
}
