// The one check of a run's data choice on the user's data set, written once: the service refuses a
// run with these words (data/resolve-source.ts) and the config panel shows them before Run. Pure: it
// reads the set's info (columns, types, missing counts, rows), the config's data choice, the model
// family and the data sizes. Each refusal names its field (data.target, data.features, data.exclude,
// data.impute, sizes.<i>) and says what is accepted.
import type { ColumnInfo, DataSetInfo, DataSource, ImputeMode } from './contract/dataset'
import type { FieldIssue } from './vocabulary/errors'
import { type ColumnChoice, featuresWithMissing, pickColumns, usableRows } from './data-columns'
import { allFamilies } from './families'
import type { ModelFamily } from './families/family'

export interface DataCheckInput {
  info: Pick<DataSetInfo, 'name' | 'columns' | 'rows'>
  data: Pick<DataSource, 'target' | 'features' | 'exclude' | 'impute'>
  family: Pick<ModelFamily, 'label' | 'userData'>
  /** the config's data sizes; a size that is not a number yet (a box being typed in) is the schema's to refuse */
  sizes: readonly number[]
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
}

/** At most this many columns are named in the missing-values refusal. */
const NAMED_COLUMNS = 6

export function checkDataChoice({ info, data, family, sizes }: DataCheckInput): DataCheck {
  const needs = family.userData ?? { missingValues: 'refuse', standardise: false }
  // impute applies where missing values are not handled natively: trees keep theirs as NaN
  const impute: ImputeMode = needs.missingValues === 'native' ? 'none' : data.impute
  const picked = pickColumns(info, data)
  if ('field' in picked) return { choice: null, usableRows: null, withMissing: [], impute, standardise: needs.standardise, refusals: [picked] }

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
  return { choice, usableRows: usable, withMissing, impute, standardise: needs.standardise, refusals }
}
