// The shape of a workload, apart from the configuration it is made from (contract/workload.ts): the
// model families' shared half reads it, and the configuration's schema reads the families, so this
// shape imports neither.
import type { ModelSet } from './model-set-shape'
import type { Target } from './names'
import type { MetricName, Objective } from './task'

/** What a worker's models learn: the objective and (classifiers) the class count; absent in a workload: regression. */
export interface WorkloadTask {
  objective: Objective
  /** K: 2 for binary, 3 … CLASS_LIMITS.max for multiclass, 0 for regression */
  classes: number
}

/**
 * Early stopping as a worker applies it (contract/early-stopping.ts): a model stops once its held-out
 * value of `metric` (the run's primary metric) has not improved for `rounds` rounds (trees) or epochs (MLP).
 */
export interface WorkloadEarlyStopping {
  rounds: number
  metric: MetricName
}

/** MLP only: what to do with missing values (trees handle them natively, the default direction learned). */
export const IMPUTE_MODES = ['none', 'mean'] as const
export type ImputeMode = (typeof IMPUTE_MODES)[number]

/** The user's data set as a worker reads it (resolved and checked by the service before the run). */
export interface WorkloadData {
  /** the cached table file (src-main/data/table-file.ts) */
  table: string
  sha256: string
  /** positions among the table's stored columns (the numeric ones first, then text columns kept as class codes: data-columns.ts tableColumns) */
  targetColumn: number
  featureColumns: number[]
  /** missing feature values: left NaN for the family to handle ('none'), or the training rows' mean */
  impute: ImputeMode
  /** features scaled to mean 0, std 1 with the training rows' statistics (the MLP), else raw */
  standardise: boolean
  /** a classifier's target: the stored value of class k at position k (the column's numbers, or a text column's codes); absent: regression */
  classValues?: number[]
}

export interface WorkloadOf<P extends { kind: string }> {
  size: number
  /** with `data`: the number of feature columns */
  features: number
  seed: number
  /** generated data only */
  target: Target
  testSplit: number
  model: P
  /** the user's data set; absent: generated data */
  data?: WorkloadData
  /** what the models learn (resolved from `auto` before the run); absent: regression */
  task?: WorkloadTask
  /** a model set: model i's parameters and fold come from it and `model` (contract/model-set.ts); absent: every model is `model` */
  set?: ModelSet
  /** stop each model when its validation metric stops improving; absent: every model trains every round */
  earlyStopping?: WorkloadEarlyStopping
  /** without folds: every model holds out the last ⌈validation · train⌉ training rows as its validation rows; absent: none */
  validation?: number
}
