// The one data check, on a data set's info alone: each rule refuses with its field and what is
// accepted, and a choice that passes says what the run will use (columns, usable rows, impute).
import { describe, expect, it } from 'vitest'
import type { ColumnInfo, DataSource } from './contract/dataset'
import { checkDataChoice } from './data-check'
import { gbdtFamily } from './families/gbdt'
import { mlpFamily } from './families/mlp'

const numeric = (name: string, missing = 0): ColumnInfo => ({ name, type: 'numeric', missing, min: 0, max: 1, firstTextRow: null })
// 100 rows: x (complete), gaps (7 missing), note (text), blank (all missing), y (target, 10 missing)
const info = {
  name: 'plants.csv',
  rows: 100,
  columns: [
    numeric('x'),
    numeric('gaps', 7),
    { name: 'note', type: 'text' as const, missing: 0, min: null, max: null, firstTextRow: 3 },
    numeric('blank', 100),
    numeric('y', 10),
  ],
}
const data = (overrides: Partial<DataSource> = {}) => ({ target: 'y', features: null, exclude: ['blank'], impute: 'none' as const, ...overrides })

describe('checkDataChoice', () => {
  it('a choice that passes: the columns used, the rows with a target, what applies', () => {
    const check = checkDataChoice({ info, data: data(), family: gbdtFamily, sizes: [50, 90] })
    expect(check.refusals).toEqual([])
    expect(check.choice?.features.map((c) => c.name)).toEqual(['x', 'gaps'])
    expect(check.usableRows).toBe(90)
    expect(check.withMissing.map((c) => c.name)).toEqual(['gaps'])
    expect(check).toMatchObject({ impute: 'none', standardise: false })
  })

  it('the column choice refused: its one refusal, and nothing else is judged', () => {
    const check = checkDataChoice({ info, data: data({ target: 'note' }), family: mlpFamily, sizes: [1000] })
    expect(check.choice).toBeNull()
    expect(check.refusals).toEqual([
      {
        field: 'data.target',
        message:
          'target column "note" of plants.csv is not numeric: row 3 is not a number (Trainpool does not encode text categories); choose a numeric column',
      },
    ])
  })

  it('sizes beyond the rows with a target: one refusal per size, naming it', () => {
    const check = checkDataChoice({ info, data: data(), family: gbdtFamily, sizes: [50, 91, NaN, 200] })
    expect(check.refusals).toEqual([
      { field: 'sizes.1', message: 'sizes must be at most 90: plants.csv has 100 rows, 90 of them with a target value (got 91)' },
      { field: 'sizes.3', message: 'sizes must be at most 90: plants.csv has 100 rows, 90 of them with a target value (got 200)' },
    ])
    const complete = checkDataChoice({ info, data: data({ target: 'x', exclude: ['blank', 'y'] }), family: gbdtFamily, sizes: [101] })
    expect(complete.refusals).toEqual([{ field: 'sizes.0', message: 'sizes must be at most 100: plants.csv has 100 rows (got 101)' }])
  })

  it('a target with no values, a feature with no values', () => {
    const check = checkDataChoice({ info, data: data({ target: 'blank', exclude: [] }), family: gbdtFamily, sizes: [10] })
    expect(check.refusals).toEqual([{ field: 'data.target', message: 'target column "blank" of plants.csv has no values: all 100 rows are missing it' }])
    const feature = checkDataChoice({ info, data: data({ exclude: [] }), family: gbdtFamily, sizes: [10] })
    expect(feature.refusals).toEqual([
      { field: 'data.features', message: 'feature column "blank" of plants.csv has no values (all 100 rows are missing); exclude it' },
    ])
  })

  it('missing values: the MLP refuses them unless imputed (then standardised); trees take them, impute does not apply', () => {
    const refused = checkDataChoice({ info, data: data(), family: mlpFamily, sizes: [10] })
    expect(refused.refusals).toEqual([
      {
        field: 'data.impute',
        message:
          'the neural network (MLP) cannot train on missing values, and plants.csv has some in its features: "gaps" has 7 (of 100 rows); impute them with the training rows\' mean (impute: mean), exclude those columns, or train gradient-boosted trees, which take them as they are',
      },
    ])
    expect(checkDataChoice({ info, data: data({ impute: 'mean' }), family: mlpFamily, sizes: [10] })).toMatchObject({
      refusals: [],
      impute: 'mean',
      standardise: true,
    })
    expect(checkDataChoice({ info, data: data({ exclude: ['blank', 'gaps'] }), family: mlpFamily, sizes: [10] }).refusals).toEqual([])
    expect(checkDataChoice({ info, data: data({ impute: 'mean' }), family: gbdtFamily, sizes: [10] })).toMatchObject({ refusals: [], impute: 'none' })
  })

  it('several problems at once: all of them, in the order the fields are read', () => {
    const check = checkDataChoice({ info, data: data({ exclude: [] }), family: mlpFamily, sizes: [95] })
    expect(check.refusals.map((r) => r.field)).toEqual(['sizes.0', 'data.features', 'data.impute'])
    // the MLP's refusal names the columns with gaps: "gaps" and the empty "blank"
    expect(check.refusals[2].message).toMatch(/"gaps" has 7, "blank" has 100 \(of 100 rows\)/)
  })
})
