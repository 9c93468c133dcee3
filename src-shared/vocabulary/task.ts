// What a run's models learn to predict: the objective (regression, binary or multiclass, XGBoost
// 1.7's reg:squarederror / binary:logistic / multi:softprob), the class names and order of a
// classifier, and the metric its models are ranked and compared by. One home for the words, limits
// and directions every layer uses (research/objectives.md).

export const OBJECTIVES = ['regression', 'binary', 'multiclass'] as const
export type Objective = (typeof OBJECTIVES)[number]
/** what a config may ask: an objective, or `auto` (read from the target) */
export const OBJECTIVE_CHOICES = ['auto', ...OBJECTIVES] as const
export type ObjectiveChoice = (typeof OBJECTIVE_CHOICES)[number]

/** multiclass takes 3 … MAX_CLASSES classes (a multiclass model is K trees a round, K outputs a net) */
export const CLASS_LIMITS = { min: 3, max: 32 } as const

export const METRICS = ['mse', 'logloss', 'accuracy', 'auc'] as const
export type MetricName = (typeof METRICS)[number]
export const METRIC_CHOICES = ['auto', ...METRICS] as const
export type MetricChoice = (typeof METRIC_CHOICES)[number]

export interface MetricSpec {
  /** "log loss" — what a column, an axis or a sentence calls it */
  label: string
  /** 'min': lower is better (mse, log loss); 'max': higher is better (accuracy, AUC) */
  better: 'min' | 'max'
  /** the objectives it is defined for */
  objectives: readonly Objective[]
}

export const METRIC_SPECS: Record<MetricName, MetricSpec> = {
  mse: { label: 'MSE', better: 'min', objectives: ['regression'] },
  logloss: { label: 'log loss', better: 'min', objectives: ['binary', 'multiclass'] },
  accuracy: { label: 'accuracy', better: 'max', objectives: ['binary', 'multiclass'] },
  auc: { label: 'ROC AUC', better: 'max', objectives: ['binary'] },
}

/** A model's scores in every metric its objective defines (test rows, or held-out rows). */
export type Metrics = Partial<Record<MetricName, number>>

/** The metrics an objective's models are scored in, primary-candidate order. */
export function metricsOf(objective: Objective): MetricName[] {
  return METRICS.filter((m) => METRIC_SPECS[m].objectives.includes(objective))
}

/** The primary metric when the config says `auto`: MSE for regression, log loss for classifiers. */
export function defaultMetric(objective: Objective): MetricName {
  return objective === 'regression' ? 'mse' : 'logloss'
}

/** Why a metric cannot rank an objective's models ("auc is for binary runs; accepted: logloss, accuracy"), or null. */
export function metricProblem(metric: MetricChoice, objective: Objective): string | null {
  if (metric === 'auto' || METRIC_SPECS[metric].objectives.includes(objective)) return null
  return `metric ${metric} does not apply to a ${objective} run; accepted: auto, ${metricsOf(objective).join(', ')}`
}

/** What a run's models learn, resolved before it starts and recorded with its result. */
export interface Task {
  objective: Objective
  /** a classifier's class names, in the order of the model's outputs (class k ↔ label k); [] for regression */
  classes: string[]
  /** the primary metric: compared across strategies, ranked by, charted */
  metric: MetricName
  /** the objective was read from the target (`auto`), not asked for */
  auto: boolean
}

/** The task of a run from before classifiers (a v2 file without one): regression ranked by MSE. */
export const REGRESSION_TASK: Task = { objective: 'regression', classes: [], metric: 'mse', auto: false }

/** Outputs per row of a model: 1 (regression, binary: p(class 1)), K for multiclass (one per class). */
export function outputsOf(task: { objective: Objective; classes: number }): number {
  return task.objective === 'multiclass' ? task.classes : 1
}

/** "binary (2 classes: no, yes)", "multiclass (5 classes: 0, 1, 2, 3, 4)", "regression". */
export function describeTask(task: Pick<Task, 'objective' | 'classes'>): string {
  if (task.objective === 'regression') return 'regression'
  const shown = task.classes.length > 8 ? [...task.classes.slice(0, 8), '…'] : task.classes
  return `${task.objective} (${task.classes.length} classes: ${shown.join(', ')})`
}

/** True when `a` is a better score than `b` in this metric (ties are not better). */
export function isBetter(metric: MetricName, a: number, b: number): boolean {
  return METRIC_SPECS[metric].better === 'min' ? a < b : a > b
}
