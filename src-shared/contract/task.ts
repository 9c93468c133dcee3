// A run's task resolved from its config before anything starts: `auto` read from the target, the
// class names and order fixed, the primary metric chosen — or a refusal naming the field, the value and
// what is accepted. The service resolves it once; the workers get its objective and class count in the
// workload, the result records it whole (vocabulary/task.ts Task).
import { TrainpoolError } from '../vocabulary/errors'
import type { WorkloadTask } from '../vocabulary/workload-shape'
import { CLASS_LIMITS, defaultMetric, metricProblem, type Objective, type Task } from '../vocabulary/task'
import { type BenchConfig, DEFAULT_GENERATED_CLASSES, generatedObjective } from './config'

/** What a worker is told of a task (its objective and class count); undefined for regression, which a workload leaves out. */
export function workloadTaskOf(task: Pick<Task, 'objective' | 'classes'>): WorkloadTask | undefined {
  return task.objective === 'regression' ? undefined : { objective: task.objective, classes: task.classes.length }
}

/** What the service read of the user's target column: its type and its distinct present values (null when there are more than `CLASS_LIMITS.max`). */
export interface TargetValues {
  column: string
  type: 'numeric' | 'text'
  /** the distinct present values as written (numbers as their shortest decimal); null: more than CLASS_LIMITS.max */
  distinct: string[] | null
  /** a numeric column whose present values are all integers */
  integers: boolean
}

const refuse = (field: string, message: string) => new TrainpoolError('invalid-input', message, [{ field, message }])

/** The task of a run: generated data's from its target; the user's from `target` (read by the service). Throws invalid-input. */
export function resolveTask(config: Pick<BenchConfig, 'objective' | 'metric' | 'target' | 'classes' | 'data'>, target?: TargetValues): Task {
  const asked = config.objective ?? 'auto'
  let objective: Objective
  let classes: string[]
  if (!config.data) {
    objective = generatedObjective(config.target)
    const k = objective === 'binary' ? 2 : objective === 'multiclass' ? (config.classes ?? DEFAULT_GENERATED_CLASSES) : 0
    classes = Array.from({ length: k }, (_, i) => String(i))
  } else {
    if (!target) throw new Error('resolveTask: the user data target was not read')
    ;({ objective, classes } = userTask(asked, target))
  }
  if (asked !== 'auto' && asked !== objective) {
    throw refuse('objective', `objective ${asked} does not fit the target, a ${objective} target; accepted: auto, ${objective}`)
  }
  const why = metricProblem(config.metric ?? 'auto', objective)
  if (why) throw refuse('metric', why)
  const metric = config.metric && config.metric !== 'auto' ? config.metric : defaultMetric(objective)
  return { objective, classes, metric, auto: asked === 'auto' }
}

/** The user's target: two values → binary; text, or integers with ≤ CLASS_LIMITS.max values → multiclass; other numbers → regression. */
function userTask(asked: string, t: TargetValues): { objective: Objective; classes: string[] } {
  const field = 'data.target'
  const count = t.distinct?.length
  const wantsClasses = asked === 'binary' || asked === 'multiclass'
  if (t.type === 'numeric' && (asked === 'regression' || (asked === 'auto' && (count === undefined || !t.integers))))
    return { objective: 'regression', classes: [] }
  if (t.type === 'text' && asked === 'regression') {
    throw refuse(
      'objective',
      `objective regression needs a numeric target; ${t.column} is text (${t.distinct ? `${t.distinct.length} classes` : 'many values'}); accepted: auto, binary, multiclass`,
    )
  }
  if (count === undefined) {
    throw refuse(
      field,
      `${t.column} has more than ${CLASS_LIMITS.max} distinct values: too many classes for ${asked === 'auto' ? 'a classifier' : `objective ${asked}`}; accepted: a target with 2 to ${CLASS_LIMITS.max} classes${t.type === 'numeric' ? ', or objective regression' : ''}`,
    )
  }
  if (count < 2)
    throw refuse(
      field,
      `${t.column} has ${count === 0 ? 'no values' : `one class only (${t.distinct![0]})`}: a classifier needs 2 or more classes${t.type === 'numeric' ? ', a regressor a varying target' : ''}`,
    )
  if (t.type === 'numeric' && !t.integers && wantsClasses) {
    throw refuse(
      field,
      `${t.column} holds non-integer numbers: objective ${asked} needs class labels (text, or integers); accepted: objective regression or auto`,
    )
  }
  const classes = sortedClasses(t)
  if (count === 2) {
    if (asked === 'multiclass')
      throw refuse(
        'objective',
        `objective multiclass needs ${CLASS_LIMITS.min} to ${CLASS_LIMITS.max} classes; ${t.column} has 2 (${classes.join(', ')}): accepted: auto, binary`,
      )
    return { objective: 'binary', classes }
  }
  if (asked === 'binary')
    throw refuse(
      'objective',
      `objective binary needs exactly 2 classes; ${t.column} has ${count} (${classes.slice(0, 8).join(', ')}${count > 8 ? ', …' : ''}): accepted: auto, multiclass`,
    )
  // a numeric target of 3+ integers is a regression target unless asked: `auto` takes integers as classes only when they are few and small
  if (t.type === 'numeric' && asked === 'auto' && !smallIntegerLabels(classes)) return { objective: 'regression', classes: [] }
  return { objective: 'multiclass', classes }
}

/** Integers 0 … 31 (or −1 … ) read as labels by `auto`; larger integers (years, counts) stay a regression target. */
function smallIntegerLabels(classes: string[]): boolean {
  return classes.every((c) => Math.abs(Number(c)) <= CLASS_LIMITS.max)
}

/** Class order: numbers ascending, text in code-point order (said in the UI as "sorted"). */
export function sortedClasses(t: Pick<TargetValues, 'type' | 'distinct'>): string[] {
  const d = [...(t.distinct ?? [])]
  return t.type === 'numeric' ? d.sort((a, b) => Number(a) - Number(b)) : d.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}
