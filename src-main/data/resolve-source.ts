// Before a run on the user's data starts, the service turns config.data into what workers read and
// what the result records, checking everything that can be known before any worker starts: the set
// is in the cache and its table intact, the data choice passes the one check the config panel
// shows too (src-shared/data-check.ts: columns, the target's values, sizes within the rows that
// have a target, missing values per family, the task), and a classifier's every size trains on
// every class its test rows hold (the same seeded sample the workers draw, row-sample.ts). So bad
// data is refused at start, never mid-run.
import {
  type BenchConfig,
  CLASS_LIMITS,
  type ColumnInfo,
  type DataSetInfo,
  type DataSetRecord,
  type DataSource,
  resolveTask,
  type TargetValues,
  type Task,
  TrainpoolError,
  type WorkloadData,
} from '@shared/contract'
import { checkDataChoice } from '@shared/data-check'
import { dataRefusal, targetValuesOf } from '@shared/data-columns'
import { familyOf } from '@shared/families'
import { datasetsDir, readCachedInfo, tablePath } from './cache'
import { classesOnlyInTest } from './row-sample'
import { readTableColumns } from './table-file'

export interface ResolvedData {
  info: DataSetInfo
  /** the config with `features` set to the number of feature columns */
  config: BenchConfig
  /** with a classifier's `classValues` (the stored value of each class) */
  workload: WorkloadData
  record: DataSetRecord
  /** the target column's type and distinct values, what `objective auto` reads (contract/task.ts); a text target's distinct values are its levels, in code order */
  target: TargetValues
  /** the run's task, from the config's objective and metric and the target (resolveTask) */
  task: Task
}

function refuse(field: string, message: string, code: 'invalid-input' | 'not-found' = 'invalid-input'): TrainpoolError {
  return new TrainpoolError(code, `data: ${message}`, [{ field, message }])
}

export async function resolveDataSource(storeDir: string | null, config: BenchConfig & { data: DataSource }): Promise<ResolvedData> {
  const source = config.data
  if (storeDir === null) {
    throw refuse('data', 'a run on your own data needs a run store (the data cache lives in it); this service keeps runs in memory only')
  }
  const info = await readCachedInfo(storeDir, source.sha256)
  if (!info) {
    throw refuse(
      'data.sha256',
      `${source.name} (sha256 ${source.sha256.slice(0, 12)}…) is not in the data cache (${datasetsDir(storeDir)}): load the file again`,
      'not-found',
    )
  }
  const check = checkDataChoice({
    info,
    data: source,
    family: familyOf(config.model),
    sizes: config.sizes,
    objective: config.objective,
    metric: config.metric,
  })
  if (!check.choice || check.refusals.length > 0) throw dataRefusal(check.refusals)
  const { choice, impute, withMissing, standardise } = check

  const table = tablePath(storeDir, info.sha256)
  const [stored] = readTableColumns(table, [choice.targetColumn]).values
  // a text target's values are its levels; a numeric one's are read from the table (a set cached by an older version lists none)
  const target = choice.target.levels ? targetValuesOf(info, choice.target)! : numericTargetValues(choice.target.name, stored)
  const task = resolveTask(config, target)
  const classValues = task.objective === 'regression' ? null : classValuesOf(task, target)
  if (classValues) refuseClassesOnlyInTest(info, choice.target, task, stored, classValues, config)
  const workload: WorkloadData = {
    table,
    sha256: info.sha256,
    targetColumn: choice.targetColumn,
    featureColumns: choice.featureColumns,
    impute,
    standardise,
    ...(classValues ? { classValues } : {}),
  }
  const imputed = impute === 'mean' && withMissing.length > 0 ? Object.fromEntries(withMissing.map((c) => [c.name, c.missing])) : undefined
  const record: DataSetRecord = {
    name: info.name,
    sha256: info.sha256,
    rows: info.rows,
    columns: info.columns.length,
    target: choice.target.name,
    features: choice.features.map((c) => c.name),
    targetStats: presentStats(stored),
    ...(choice.target.levels ? { targetLevels: choice.target.levels } : {}),
    impute,
    ...(imputed ? { imputed } : {}),
    standardised: standardise,
    sampleSeed: config.seed,
  }
  return { info, config: { ...config, features: choice.features.length }, workload, record, target, task }
}

/** A numeric target column's distinct present values (as shortest decimals; null past CLASS_LIMITS.max) and whether all are integers. */
function numericTargetValues(column: string, values: Float32Array): TargetValues {
  const distinct = new Set<number>()
  let integers = true
  for (const v of values) {
    if (v !== v) continue
    if (!Number.isInteger(v)) integers = false
    if (distinct.size <= CLASS_LIMITS.max) distinct.add(v)
  }
  return { column, type: 'numeric', distinct: distinct.size > CLASS_LIMITS.max ? null : [...distinct].map(String), integers }
}

/** A classifier's stored target value of each class, in the task's class order (what the worker maps labels by): the number itself, or a text class's code. */
export function classValuesOf(task: Task, target: TargetValues): number[] {
  if (target.type === 'numeric') return task.classes.map(Number)
  return task.classes.map((name) => {
    const code = target.distinct?.indexOf(name) ?? -1
    if (code < 0) throw new Error(`classValuesOf: class ${JSON.stringify(name)} is not a value of ${target.column}`)
    return code
  })
}

/** A size whose test rows hold a class its training rows do not is refused on data.target: its models could never learn that class. */
function refuseClassesOnlyInTest(
  info: DataSetInfo,
  column: ColumnInfo,
  task: Task,
  stored: Float32Array,
  classValues: readonly number[],
  config: Pick<BenchConfig, 'sizes' | 'seed' | 'testSplit'>,
): void {
  const found = classesOnlyInTest(stored, classValues, config.sizes, config.seed, config.testSplit)
  if (!found) return
  const names = found.classes.map((k) => JSON.stringify(task.classes[k]))
  const one = names.length === 1
  throw refuse(
    'data.target',
    `target column ${JSON.stringify(column.name)} of ${info.name}: at size ${found.size}, class${one ? '' : 'es'} ${names.join(', ')} ${one ? 'is' : 'are'} in the ${found.test} test rows only, in none of the ${found.train} training rows (the rows sampled with seed ${config.seed}), so the models could never learn ${one ? 'it' : 'them'}; accepted: sizes whose training rows hold every class (a larger size, or another seed)`,
  )
}

/** Mean, population std, min and max of the values that are present (NaN = missing). */
function presentStats(values: Float32Array): DataSetRecord['targetStats'] {
  let n = 0
  let sum = 0
  let min = Infinity
  let max = -Infinity
  for (const v of values) {
    if (v !== v) continue
    n++
    sum += v
    if (v < min) min = v
    if (v > max) max = v
  }
  const mean = sum / n
  let sq = 0
  for (const v of values) if (v === v) sq += (v - mean) ** 2
  return { mean, std: Math.sqrt(sq / n), min, max }
}
