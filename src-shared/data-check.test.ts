// The one data check, on a data set's info alone: each rule refuses with its field and what is
// accepted, and a choice that passes says what the run will use (columns, usable rows, impute) and
// what its models learn (the task, in words for the config panel).
import { describe, expect, it } from 'vitest'
import { type ColumnInfo, DATA_CACHE_VERSION, type DataSource } from './contract/dataset'
import { checkDataChoice } from './data-check'
import { gbdtFamily } from './families/gbdt'
import { mlpFamily } from './families/mlp'

const numeric = (name: string, missing = 0): ColumnInfo => ({ name, type: 'numeric', missing, min: 0, max: 1, firstTextRow: null })
// 100 rows: x (complete), gaps (7 missing), note (text), blank (all missing), y (target, 10 missing); cached by a version before text labels
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
    expect(check.task).toBeNull()
    expect(check.refusals).toEqual([
      {
        field: 'data.target',
        message:
          'target column "note" of plants.csv is text, and this data set was cached by an older version of Trainpool, which kept no text values; load the file again to train a classifier on it, or choose a numeric column',
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

describe('the task a target gives, from the info alone (the config panel says it once the data is read)', () => {
  // cached in the current layout: the few-valued columns list their values, text labels are levels
  const labels = (name: string, levels: string[] | undefined, missing = 0): ColumnInfo => ({
    name,
    type: 'text',
    missing,
    min: null,
    max: null,
    firstTextRow: 1,
    levels,
  })
  const churn = {
    name: 'churn.csv',
    rows: 200,
    cacheVersion: DATA_CACHE_VERSION,
    columns: [
      { ...numeric('tenure'), min: 0, max: 72 },
      { ...numeric('flag'), distinct: [0, 1] },
      { ...numeric('grade'), min: 1, max: 3, distinct: [1, 2, 3] },
      labels('churn', ['no', 'yes'], 5),
      labels('plan', ['basic', 'plus', 'pro']),
      labels('comment', undefined),
    ],
  }
  const on = (target: string, objective?: 'auto' | 'regression' | 'binary' | 'multiclass', metric?: 'auto' | 'mse' | 'logloss' | 'accuracy' | 'auc') =>
    checkDataChoice({ info: churn, data: data({ target, exclude: [] }), family: gbdtFamily, sizes: [100], objective, metric })

  it('a yes/no text target: binary, classes no, yes — said as describeTask says it', () => {
    const check = on('churn')
    expect(check.refusals).toEqual([])
    expect(check.task).toEqual({ objective: 'binary', classes: ['no', 'yes'], metric: 'logloss', auto: true })
    expect(check.taskText).toBe('binary (2 classes: no, yes)')
    // text columns stay out of the features; the coded ones come after the numeric columns in the table
    expect(check.choice?.features.map((c) => c.name)).toEqual(['tenure', 'flag', 'grade'])
    expect(check.choice).toMatchObject({ targetColumn: 3, featureColumns: [0, 1, 2] })
    expect(check.usableRows).toBe(195)
  })

  it('numbers read as classes where objective auto reads them so; other numbers are regression', () => {
    expect(on('flag').taskText).toBe('binary (2 classes: 0, 1)')
    expect(on('grade').taskText).toBe('multiclass (3 classes: 1, 2, 3)')
    expect(on('plan').taskText).toBe('multiclass (3 classes: basic, plus, pro)')
    // tenure lists no values: more than 32 of them
    expect(on('tenure')).toMatchObject({ refusals: [], taskText: 'regression', task: { objective: 'regression', metric: 'mse' } })
    expect(on('grade', 'regression').taskText).toBe('regression')
    expect(on('churn', 'auto', 'auc').task).toMatchObject({ metric: 'auc', auto: true })
  })

  it('a task the target cannot give is refused on its field, and no task is said', () => {
    const cases = [
      [on('churn', 'regression'), 'objective', /objective regression needs a numeric target; churn is text \(2 classes\)/],
      [on('plan', 'binary'), 'objective', /objective binary needs exactly 2 classes; plan has 3 \(basic, plus, pro\)/],
      [on('tenure', 'binary'), 'data.target', /tenure has more than 32 distinct values/],
      [on('plan', 'auto', 'auc'), 'metric', /metric auc does not apply to a multiclass run/],
    ] as const
    for (const [check, field, message] of cases) {
      expect(check.task).toBeNull()
      expect(check.taskText).toBeNull()
      expect(check.refusals).toHaveLength(1)
      expect(check.refusals[0].field).toBe(field)
      expect(check.refusals[0].message).toMatch(message)
    }
  })

  it('a text column with too many values is no target, naming the column and the limit; a text column is never a feature', () => {
    expect(on('comment').refusals).toEqual([
      {
        field: 'data.target',
        message:
          'target column "comment" of churn.csv is text with more than 32 distinct values (row 1 is not a number): a text target is a classifier\'s class labels, 2 to 32 of them, each at most 256 characters; choose a numeric column or a column of labels',
      },
    ])
    const feature = checkDataChoice({
      info: churn,
      data: data({ target: 'churn', features: ['tenure', 'plan'], exclude: [] }),
      family: gbdtFamily,
      sizes: [100],
    })
    expect(feature.refusals).toEqual([
      {
        field: 'data.features',
        message:
          'feature column "plan" of churn.csv is not numeric: row 1 is not a number (Trainpool does not encode text categories); leave it out of the features',
      },
    ])
  })

  it('a set cached by an older version lists no values: no task is said (the service reads them when the run starts)', () => {
    const check = checkDataChoice({ info, data: data(), family: gbdtFamily, sizes: [50] })
    expect(check.refusals).toEqual([])
    expect(check).toMatchObject({ task: null, taskText: null })
  })
})
