// Which columns of a loaded data set a run uses: the target (a numeric column, or a text column of
// class labels kept as codes), and the features (the ones named, else every numeric column but the
// target and the excluded ones). Pure: it reads only the set's DataSetInfo. Every refusal names the
// field (data.target, data.features, data.exclude) and what is accepted; data-check.ts adds the
// rules on rows, sizes, missing values and the task, and is what the service and the config panel both call.
import { type ColumnInfo, DATA_CACHE_VERSION, type DataSetInfo, type DataSource, LEVEL_MAX_CHARS } from './contract/dataset'
import { LIMITS } from './contract/config'
import type { TargetValues } from './contract/task'
import { type FieldIssue, TrainpoolError } from './vocabulary/errors'
import { CLASS_LIMITS } from './vocabulary/task'

export interface ColumnChoice {
  target: ColumnInfo
  features: ColumnInfo[]
  /** places in the cached table (tableColumns) */
  targetColumn: number
  featureColumns: number[]
}

type ColumnRequest = Pick<DataSource, 'target' | 'features' | 'exclude'>

/** The cached table's columns by name → place: the numeric columns, then the text columns kept as codes (those with levels), each in file order. */
export function tableColumns(info: Pick<DataSetInfo, 'columns'>): Map<string, number> {
  const stored = [...info.columns.filter((c) => c.type === 'numeric'), ...info.columns.filter((c) => c.type === 'text' && c.levels)]
  return new Map(stored.map((c, k) => [c.name, k]))
}

/** The set was cached before text labels were kept (an older Trainpool): its info cannot say what a text column holds. */
function cachedBeforeLabels(info: Pick<DataSetInfo, 'cacheVersion'>): boolean {
  return (info.cacheVersion ?? 1) < DATA_CACHE_VERSION
}

/**
 * What `objective auto` reads of a target column (contract/task.ts resolveTask), from the set's info
 * alone: its type and distinct values (null past CLASS_LIMITS.max; a text column's are its levels,
 * in code order). `integers` is only known where the values are listed (false past that, where
 * resolveTask does not read it). Null where the info does not list them (a set cached by an older version).
 */
export function targetValuesOf(info: Pick<DataSetInfo, 'cacheVersion'>, column: ColumnInfo): TargetValues | null {
  if (cachedBeforeLabels(info)) return null
  if (column.type === 'text') return { column: column.name, type: 'text', distinct: column.levels ?? null, integers: false }
  const values = column.distinct
  return { column: column.name, type: 'numeric', distinct: values ? values.map(String) : null, integers: values ? values.every(Number.isInteger) : false }
}

/** The error a refused data choice is thrown as: "data: " and the first refusal; all of them as issues. */
export function dataRefusal(refusals: readonly FieldIssue[]): TrainpoolError {
  return new TrainpoolError('invalid-input', `data: ${refusals[0]?.message ?? 'the data choice is refused'}`, [...refusals])
}

function refuse(field: string, message: string): FieldIssue {
  return { field, message }
}

function textColumnProblem(info: Pick<DataSetInfo, 'name'>, c: ColumnInfo, role: string): string {
  return `${role} column ${JSON.stringify(c.name)} of ${info.name} is not numeric: row ${c.firstTextRow} is not a number (Trainpool does not encode text categories)`
}

/** Why a text column without levels cannot be the target: too many values for class labels, or a cache that kept none. */
function textTargetProblem(info: Pick<DataSetInfo, 'name' | 'cacheVersion'>, c: ColumnInfo): string {
  const column = `target column ${JSON.stringify(c.name)} of ${info.name}`
  if (cachedBeforeLabels(info)) {
    return `${column} is text, and this data set was cached by an older version of Trainpool, which kept no text values; load the file again to train a classifier on it, or choose a numeric column`
  }
  return `${column} is text with more than ${CLASS_LIMITS.max} distinct values (row ${c.firstTextRow} is not a number): a text target is a classifier's class labels, 2 to ${CLASS_LIMITS.max} of them, each at most ${LEVEL_MAX_CHARS} characters; choose a numeric column or a column of labels`
}

function quoted(names: readonly string[], max = 8): string {
  const shown = names.slice(0, max).map((n) => JSON.stringify(n))
  return names.length > max ? `${shown.join(', ')} and ${names.length - max} more` : shown.join(', ')
}

/** The target and features a run on this data set would use; throws the first problem (dataRefusal). */
export function chooseColumns(info: Pick<DataSetInfo, 'name' | 'columns' | 'cacheVersion'>, request: ColumnRequest): ColumnChoice {
  const picked = pickColumns(info, request)
  if ('field' in picked) throw dataRefusal([picked])
  return picked
}

/** The target and features a run on this data set would use, or the first problem with the request. */
export function pickColumns(info: Pick<DataSetInfo, 'name' | 'columns' | 'cacheVersion'>, request: ColumnRequest): ColumnChoice | FieldIssue {
  const byName = new Map(info.columns.map((c) => [c.name, c]))
  const tableIndex = tableColumns(info)
  const numericNames = info.columns.filter((c) => c.type === 'numeric').map((c) => c.name)
  const labelNames = info.columns.filter((c) => c.type === 'text' && c.levels).map((c) => c.name)

  const target = byName.get(request.target)
  if (!target) {
    const labels = labelNames.length > 0 ? `; its text columns of class labels are ${quoted(labelNames)}` : ''
    return refuse(
      'data.target',
      `target column ${JSON.stringify(request.target)} is not in ${info.name}; its numeric columns are ${quoted(numericNames)}${labels}`,
    )
  }
  if (target.type !== 'numeric' && !target.levels) return refuse('data.target', textTargetProblem(info, target))

  for (const name of request.exclude) {
    if (!byName.has(name))
      return refuse(
        'data.exclude',
        `excluded column ${JSON.stringify(name)} is not in ${info.name}; its columns are ${quoted(info.columns.map((c) => c.name))}`,
      )
  }
  let features: ColumnInfo[]
  if (request.features) {
    features = []
    const seen = new Set<string>()
    for (const name of request.features.filter((n) => !request.exclude.includes(n))) {
      const column = byName.get(name)
      if (!column)
        return refuse('data.features', `feature column ${JSON.stringify(name)} is not in ${info.name}; its numeric columns are ${quoted(numericNames)}`)
      if (name === target.name) return refuse('data.features', `column ${JSON.stringify(name)} is the target; it cannot also be a feature`)
      if (seen.has(name)) return refuse('data.features', `feature column ${JSON.stringify(name)} is named twice`)
      seen.add(name)
      if (column.type !== 'numeric') {
        return refuse('data.features', `${textColumnProblem(info, column, 'feature')}; leave it out of the features`)
      }
      features.push(column)
    }
  } else {
    const excluded = new Set([target.name, ...request.exclude])
    features = info.columns.filter((c) => c.type === 'numeric' && !excluded.has(c.name))
  }
  if (features.length === 0) {
    return refuse(
      'data.features',
      `no feature columns are left in ${info.name}: besides the target ${JSON.stringify(target.name)} it needs at least one numeric column that is not excluded`,
    )
  }
  if (features.length > LIMITS.features.max) {
    return refuse(
      'data.features',
      `${features.length} feature columns are more than a run takes (at most ${LIMITS.features.max}); name the features, or exclude some columns`,
    )
  }
  return {
    target,
    features,
    targetColumn: tableIndex.get(target.name)!,
    featureColumns: features.map((c) => tableIndex.get(c.name)!),
  }
}

/** Rows a run can use: those with a target value (a data size may be at most this many). */
export function usableRows(info: Pick<DataSetInfo, 'rows'>, choice: Pick<ColumnChoice, 'target'>): number {
  return info.rows - choice.target.missing
}

/** The feature columns with missing values (a family that refuses them needs them imputed). */
export function featuresWithMissing(choice: Pick<ColumnChoice, 'features'>): ColumnInfo[] {
  return choice.features.filter((c) => c.missing > 0)
}

/** Text columns a default feature choice leaves out (the config panel says so; the CLI prints it). */
export function skippedTextColumns(info: Pick<DataSetInfo, 'columns'>, request: ColumnRequest): ColumnInfo[] {
  if (request.features) return []
  return info.columns.filter((c) => c.type === 'text' && c.name !== request.target && !request.exclude.includes(c.name))
}
