// Which columns of a loaded data set a run uses: the target, and the features (the ones named, else
// every numeric column but the target and the excluded ones). Pure: it reads only the set's
// DataSetInfo. Every refusal names the field (data.target, data.features, data.exclude) and what
// is accepted; data-check.ts adds the rules on rows, sizes and missing values, and is what the
// service and the config panel both call.
import type { ColumnInfo, DataSetInfo, DataSource } from './contract/dataset'
import { LIMITS } from './contract/config'
import { type FieldIssue, TrainpoolError } from './vocabulary/errors'

export interface ColumnChoice {
  target: ColumnInfo
  features: ColumnInfo[]
  /** positions among the set's numeric columns (the cached table's column order) */
  targetColumn: number
  featureColumns: number[]
}

type ColumnRequest = Pick<DataSource, 'target' | 'features' | 'exclude'>

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

function quoted(names: readonly string[], max = 8): string {
  const shown = names.slice(0, max).map((n) => JSON.stringify(n))
  return names.length > max ? `${shown.join(', ')} and ${names.length - max} more` : shown.join(', ')
}

/** The target and features a run on this data set would use; throws the first problem (dataRefusal). */
export function chooseColumns(info: Pick<DataSetInfo, 'name' | 'columns'>, request: ColumnRequest): ColumnChoice {
  const picked = pickColumns(info, request)
  if ('field' in picked) throw dataRefusal([picked])
  return picked
}

/** The target and features a run on this data set would use, or the first problem with the request. */
export function pickColumns(info: Pick<DataSetInfo, 'name' | 'columns'>, request: ColumnRequest): ColumnChoice | FieldIssue {
  const byName = new Map(info.columns.map((c) => [c.name, c]))
  const numericIndex = new Map(info.columns.filter((c) => c.type === 'numeric').map((c, k) => [c.name, k]))
  const numericNames = [...numericIndex.keys()]

  const target = byName.get(request.target)
  if (!target) {
    return refuse('data.target', `target column ${JSON.stringify(request.target)} is not in ${info.name}; its numeric columns are ${quoted(numericNames)}`)
  }
  if (target.type !== 'numeric') return refuse('data.target', `${textColumnProblem(info, target, 'target')}; choose a numeric column`)

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
    targetColumn: numericIndex.get(target.name)!,
    featureColumns: features.map((c) => numericIndex.get(c.name)!),
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
