// Before a run on the user's data starts, the service turns config.data into what workers read and
// what the result records, checking everything that can be known before any worker starts: the set
// is in the cache and its table intact, the columns exist and are numeric (data-columns.ts), the
// target has values, every size fits in the rows that have a target, and a family that cannot take
// missing values gets none (or imputes them). So bad data is refused at start, never mid-run.
import {
  type BenchConfig,
  type DataSetInfo,
  type DataSetRecord,
  type DataSource,
  type ImputeMode,
  TrainpoolError,
  type WorkloadData,
} from '@shared/contract'
import { chooseColumns, featuresWithMissing, usableRows } from '@shared/data-columns'
import { familyOf } from '@shared/families'
import { datasetsDir, readCachedInfo, tablePath } from './cache'
import { readTableColumns } from './table-file'

export interface ResolvedData {
  info: DataSetInfo
  /** the config with `features` set to the number of feature columns */
  config: BenchConfig
  workload: WorkloadData
  record: DataSetRecord
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
    throw refuse('data.sha256', `${source.name} (sha256 ${source.sha256.slice(0, 12)}…) is not in the data cache (${datasetsDir(storeDir)}): load the file again`, 'not-found')
  }
  const choice = chooseColumns(info, source)
  const usable = usableRows(info, choice)
  if (usable === 0) {
    throw refuse('data.target', `target column ${JSON.stringify(choice.target.name)} of ${info.name} has no values: all ${info.rows} rows are missing it`)
  }
  for (const [i, size] of config.sizes.entries()) {
    if (size > usable) {
      const withTarget = usable === info.rows ? '' : ` (${usable} of them with a target value)`
      throw refuse(`sizes.${i}`, `sizes ${size} is more rows than ${info.name} has: the file has ${info.rows} rows${withTarget}; use sizes up to ${usable}`)
    }
  }
  for (const feature of choice.features) {
    if (feature.missing === info.rows) {
      throw refuse('data.features', `feature column ${JSON.stringify(feature.name)} of ${info.name} has no values (all ${info.rows} rows are missing); exclude it`)
    }
  }
  const family = familyOf(config.model)
  const needs = family.userData ?? { missingValues: 'refuse', standardise: false }
  // impute applies where missing values are not handled natively: trees keep theirs as NaN
  const impute: ImputeMode = needs.missingValues === 'native' ? 'none' : source.impute
  const withMissing = featuresWithMissing(choice)
  if (needs.missingValues === 'refuse' && impute === 'none' && withMissing.length > 0) {
    const counts = withMissing.slice(0, 6).map((c) => `${JSON.stringify(c.name)} has ${c.missing}`)
    const more = withMissing.length > 6 ? ` and ${withMissing.length - 6} more columns` : ''
    throw refuse(
      'data.impute',
      `the ${family.label} cannot train on missing values, and ${info.name} has some in its features: ${counts.join(', ')}${more} (of ${info.rows} rows); impute them with the training rows' mean (impute: mean, --impute mean), exclude those columns, or train trees (--model gbdt), which handle them`,
    )
  }

  const table = tablePath(storeDir, info.sha256)
  const [target] = readTableColumns(table, [choice.targetColumn]).values
  const workload: WorkloadData = {
    table,
    sha256: info.sha256,
    targetColumn: choice.targetColumn,
    featureColumns: choice.featureColumns,
    impute,
    standardise: needs.standardise,
  }
  const imputed = impute === 'mean' && withMissing.length > 0 ? Object.fromEntries(withMissing.map((c) => [c.name, c.missing])) : undefined
  const record: DataSetRecord = {
    name: info.name,
    sha256: info.sha256,
    rows: info.rows,
    columns: info.columns.length,
    target: choice.target.name,
    features: choice.features.map((c) => c.name),
    targetStats: presentStats(target),
    impute,
    ...(imputed ? { imputed } : {}),
    standardised: needs.standardise,
    sampleSeed: config.seed,
  }
  return { info, config: { ...config, features: choice.features.length }, workload, record }
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
