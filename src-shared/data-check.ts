// The one check of a run's data choice on the user's data set, written once: the service refuses a
// run with these words (data/resolve-source.ts) and the config panel shows them before Run. Pure: it
// reads the set's info (columns, types, missing counts, rows, the target's recorded values), the
// config's data choice, objective and metric, the model family and the data sizes. Each refusal
// names its field (data.target, data.features, data.exclude, data.impute, sizes.<i>, objective,
// metric) and says what is accepted; the task the target gives is said in words for the panel.
import type { ColumnInfo, DataSetInfo, DataSource, ImputeMode } from './contract/dataset'
import { resolveTask } from './contract/task'
import { type FieldIssue, TrainpoolError } from './vocabulary/errors'
import { describeTask, type MetricChoice, type ObjectiveChoice, type Task } from './vocabulary/task'
import { type ColumnChoice, featuresWithMissing, pickColumns, targetValuesOf, usableRows } from './data-columns'
import { allFamilies } from './families'
import type { ModelFamily } from './families/family'

export interface DataCheckInput {
  info: Pick<DataSetInfo, 'name' | 'columns' | 'rows' | 'cacheVersion'>
  data: Pick<DataSource, 'target' | 'features' | 'exclude' | 'impute'>
  family: Pick<ModelFamily, 'label' | 'userData'>
  /** the config's data sizes; a size that is not a number yet (a box being typed in) is the schema's to refuse */
  sizes: readonly number[]
  /** the config's objective and metric (absent: auto): the task the target gives is resolved and checked with them */
  objective?: ObjectiveChoice
  metric?: MetricChoice
}

export interface DataCheck {
  /** the target and features the run uses; null when the column choice itself is refused */
  choice: ColumnChoice | null
  /** rows with a target value: the most a data size may be (null without a column choice) */
  usableRows: number | null
  /** the feature columns used that have missing values */
  withMissing: ColumnInfo[]
  /** the impute that applies: none where the family takes missing values as they are */
  impute: ImputeMode
  /** features standardised with the training rows' statistics (the family asks for it) */
  standardise: boolean
  /** empty when a run on this choice may start */
  refusals: FieldIssue[]
  /**
   * what the models would learn, read from the target as the service reads it when the run starts
   * (contract/task.ts resolveTask): objective, class names in output order, metric. Null when the
   * column choice or the task is refused (said in `refusals`), or when the set's info does not list
   * the target's values (a set cached by an older version: the service reads them at the start)
   */
  task: Task | null
  /** `task` in words, for the config panel and the CLI: "binary (2 classes: no, yes)", "multiclass (3 classes: a, b, c)", "regression"; null with it */
  taskText: string | null
}

/** At most this many columns are named in the missing-values refusal. */
const NAMED_COLUMNS = 6

export function checkDataChoice({ info, data, family, sizes, objective, metric }: DataCheckInput): DataCheck {
  const needs = family.userData ?? { missingValues: 'refuse', standardise: false }
  // impute applies where missing values are not handled natively: trees keep theirs as NaN
  const impute: ImputeMode = needs.missingValues === 'native' ? 'none' : data.impute
  const picked = pickColumns(info, data)
  if ('field' in picked) {
    return { choice: null, usableRows: null, withMissing: [], impute, standardise: needs.standardise, refusals: [picked], task: null, taskText: null }
  }

  const choice = picked
  const usable = usableRows(info, choice)
  const withMissing = featuresWithMissing(choice)
  const refusals: FieldIssue[] = []
  if (usable === 0) {
    refusals.push({
      field: 'data.target',
      message: `target column ${JSON.stringify(choice.target.name)} of ${info.name} has no values: all ${info.rows} rows are missing it`,
    })
  } else {
    for (const [i, size] of sizes.entries()) {
      if (!Number.isFinite(size) || size <= usable) continue
      const rows = usable === info.rows ? `${info.rows} rows` : `${info.rows} rows, ${usable} of them with a target value`
      refusals.push({ field: `sizes.${i}`, message: `sizes must be at most ${usable}: ${info.name} has ${rows} (got ${size})` })
    }
  }
  for (const feature of choice.features) {
    if (feature.missing === info.rows) {
      refusals.push({
        field: 'data.features',
        message: `feature column ${JSON.stringify(feature.name)} of ${info.name} has no values (all ${info.rows} rows are missing); exclude it`,
      })
    }
  }
  if (needs.missingValues === 'refuse' && impute === 'none' && withMissing.length > 0) {
    const counts = withMissing.slice(0, NAMED_COLUMNS).map((c) => `${JSON.stringify(c.name)} has ${c.missing}`)
    const more = withMissing.length > NAMED_COLUMNS ? ` and ${withMissing.length - NAMED_COLUMNS} more columns` : ''
    const native = allFamilies()
      .filter((f) => f.userData?.missingValues === 'native')
      .map((f) => f.label)
    const orTrain = native.length ? `, or train ${native.join(' or ')}, which take them as they are` : ''
    refusals.push({
      field: 'data.impute',
      message: `the ${family.label} cannot train on missing values, and ${info.name} has some in its features: ${counts.join(', ')}${more} (of ${info.rows} rows); impute them with the training rows' mean (impute: mean), exclude those columns${orTrain}`,
    })
  }
  const task = usable === 0 ? null : targetTask(info, choice.target, data, objective, metric, refusals)
  return { choice, usableRows: usable, withMissing, impute, standardise: needs.standardise, refusals, task, taskText: task && describeTask(task) }
}

/** The task the target's recorded values give (a refusal joins `refusals`); null when refused or not recorded. */
function targetTask(
  info: DataCheckInput['info'],
  target: ColumnInfo,
  data: DataCheckInput['data'],
  objective: ObjectiveChoice | undefined,
  metric: MetricChoice | undefined,
  refusals: FieldIssue[],
): Task | null {
  const values = targetValuesOf(info, target)
  if (!values) return null
  try {
    // the user's data: resolveTask reads the objective, the metric and the target's values (`target` and `classes` are generated data's)
    return resolveTask({ objective, metric, data } as Parameters<typeof resolveTask>[0], values)
  } catch (err) {
    if (!(err instanceof TrainpoolError) || !err.issues) throw err
    refusals.push(...err.issues)
    return null
  }
}
