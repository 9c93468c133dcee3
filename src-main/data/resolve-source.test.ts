// Resolving config.data before a run: the column choice (shared with the config panel), every
// refusal the service gives before anything starts — each naming the field — and what the result
// records (features, target statistics, impute, standardised, the seed). A text target of class
// labels: its task, the class values a worker maps labels by, a set cached by an older version, and
// a class the seeded sample leaves in the test rows only.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BenchConfig, DATA_CACHE_VERSION, type DataSetInfo, type DataSource, presetConfig, resolveTask, splitRows, TrainpoolError } from '@shared/contract'
import { checkDataChoice } from '@shared/data-check'
import { chooseColumns, skippedTextColumns, tableColumns } from '@shared/data-columns'
import { gbdtFamily } from '@shared/families/gbdt'
import { cacheDir, tablePath } from './cache'
import { loadDataFile, loadIntoCache } from './load-data-file'
import { classValuesOf, resolveDataSource } from './resolve-source'
import { classesOnlyInTest, sampleRows } from './row-sample'
import { readTableColumns, tableHeader } from './table-file'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-resolve-'))
const store = join(dir, 'store')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// 40 rows: a (complete), b (3 missing), city (text from row 1), empty (all missing), y (target, 2 missing)
let info: DataSetInfo
beforeAll(async () => {
  const lines = ['a,b,city,empty,y']
  for (let i = 0; i < 40; i++) lines.push(`${i},${i % 13 === 0 ? 'NA' : i * 2},${i % 2 ? 'Lyon' : 'Nice'},,${i === 5 || i === 6 ? '' : i * 10}`)
  writeFileSync(join(dir, 'houses.csv'), lines.join('\n'))
  info = await loadDataFile(join(dir, 'houses.csv'), store)
})

function source(overrides: Partial<DataSource> = {}): DataSource {
  return { sha256: info.sha256, name: info.name, target: 'y', features: null, exclude: ['empty'], impute: 'none', ...overrides }
}

function config(data: DataSource, overrides: Partial<BenchConfig> = {}, model: 'mlp' | 'gbdt' = 'gbdt'): BenchConfig & { data: DataSource } {
  const base = presetConfig('smoke', model === 'gbdt' ? { model: { kind: 'gbdt' } } : {})
  return { ...base, sizes: [20], ...overrides, data }
}

async function refusal(c: BenchConfig & { data: DataSource }): Promise<TrainpoolError> {
  const error = await resolveDataSource(store, c).then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TrainpoolError)
  return error as TrainpoolError
}

describe('the column choice', () => {
  it('defaults to every other numeric column; text columns are left out and said so', () => {
    const choice = chooseColumns(info, source({ exclude: [] }))
    expect(choice.target.name).toBe('y')
    expect(choice.features.map((c) => c.name)).toEqual(['a', 'b', 'empty'])
    // positions among the numeric columns (a, b, empty, y) = the cached table's columns
    expect(choice.targetColumn).toBe(3)
    expect(choice.featureColumns).toEqual([0, 1, 2])
    expect(skippedTextColumns(info, source()).map((c) => c.name)).toEqual(['city'])
    expect(chooseColumns(info, source({ features: ['b'] })).featureColumns).toEqual([1])
    expect(chooseColumns(info, source({ features: ['a', 'city'], exclude: ['city'] })).features.map((c) => c.name)).toEqual(['a'])
  })

  it('more feature columns than a run takes are refused, naming the limit', () => {
    const wide = {
      name: 'wide.csv',
      columns: Array.from({ length: 4098 }, (_, i) => ({ name: `c${i}`, type: 'numeric' as const, missing: 0, min: 0, max: 1, firstTextRow: null })),
    }
    expect(() => chooseColumns(wide, { target: 'c0', features: null, exclude: [] })).toThrow(/4097 feature columns are more than a run takes \(at most 4096\)/)
    expect(chooseColumns(wide, { target: 'c0', features: null, exclude: ['c1'] }).features).toHaveLength(4096)
  })

  it.each([
    [{ target: 'price' }, 'data.target', /target column "price" is not in houses\.csv; its numeric columns are "a", "b", "empty", "y"/],
    [{ features: ['a', 'city'] }, 'data.features', /feature column "city" of houses\.csv is not numeric: row 1 is not a number/],
    [{ features: ['a', 'zip'] }, 'data.features', /feature column "zip" is not in houses\.csv/],
    [{ features: ['a', 'y'] }, 'data.features', /column "y" is the target; it cannot also be a feature/],
    [{ features: ['a', 'a'] }, 'data.features', /feature column "a" is named twice/],
    [{ exclude: ['zip'] }, 'data.exclude', /excluded column "zip" is not in houses\.csv/],
    [{ exclude: ['a', 'b', 'empty'] }, 'data.features', /no feature columns are left in houses\.csv/],
  ] as const)('%j is refused on %s', (overrides, field, message) => {
    let error: unknown
    try {
      chooseColumns(info, source(overrides as Partial<DataSource>))
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(TrainpoolError)
    expect((error as TrainpoolError).issues?.[0]?.field).toBe(field)
    expect((error as Error).message).toMatch(message)
  })
})

describe('resolving config.data before a run', () => {
  it('trees: raw features with their missing values, the result record, features counted in the config', async () => {
    const resolved = await resolveDataSource(store, config(source(), { seed: 7 }))
    expect(resolved.config.features).toBe(2)
    expect(resolved.workload).toMatchObject({ sha256: info.sha256, targetColumn: 3, featureColumns: [0, 1], impute: 'none', standardise: false })
    expect(resolved.workload.table).toBe(join(cacheDir(store, info.sha256), 'table.f32'))
    const ys = Array.from({ length: 40 }, (_, i) => i * 10).filter((_, i) => i !== 5 && i !== 6)
    const mean = ys.reduce((s, v) => s + v, 0) / ys.length
    expect(resolved.record).toEqual({
      name: 'houses.csv',
      sha256: info.sha256,
      rows: 40,
      columns: 5,
      target: 'y',
      features: ['a', 'b'],
      targetStats: { mean, std: expect.closeTo(Math.sqrt(ys.reduce((s, v) => s + (v - mean) ** 2, 0) / ys.length), 6), min: 0, max: 390 },
      impute: 'none',
      standardised: false,
      sampleSeed: 7,
    })
  })

  it('the MLP refuses missing values, naming the column and count, unless impute is mean (recorded)', async () => {
    const error = await refusal(config(source(), {}, 'mlp'))
    expect(error.issues?.[0]?.field).toBe('data.impute')
    expect(error.message).toMatch(
      /the neural network \(MLP\) cannot train on missing values, and houses\.csv has some in its features: "b" has 4 \(of 40 rows\); impute them .*\(impute: mean\)/,
    )
    const resolved = await resolveDataSource(store, config(source({ impute: 'mean' }), {}, 'mlp'))
    expect(resolved.workload).toMatchObject({ impute: 'mean', standardise: true })
    expect(resolved.record).toMatchObject({ impute: 'mean', imputed: { b: 4 }, standardised: true })
    // without missing values among its features the MLP needs no impute
    expect((await resolveDataSource(store, config(source({ features: ['a'] }), {}, 'mlp'))).record.imputed).toBeUndefined()
    // trees keep theirs: impute does not apply
    expect((await resolveDataSource(store, config(source({ impute: 'mean' })))).workload.impute).toBe('none')
    expect(gbdtFamily.userData?.missingValues).toBe('native')
  })

  it('a size larger than the rows with a target is refused, saying how many the file has', async () => {
    const error = await refusal(config(source(), { sizes: [20, 39] }))
    expect(error.issues?.[0]?.field).toBe('sizes.1')
    expect(error.message).toBe('data: sizes must be at most 38: houses.csv has 40 rows, 38 of them with a target value (got 39)')
  })

  it('a target with no values, a feature with no values', async () => {
    const lines = ['a,y', ...Array.from({ length: 10 }, (_, i) => `${i},NA`)]
    writeFileSync(join(dir, 'no-target.csv'), lines.join('\n'))
    const noTarget = await loadDataFile(join(dir, 'no-target.csv'), store)
    const error = await refusal(config({ ...source(), sha256: noTarget.sha256, name: noTarget.name, exclude: [] }, { sizes: [4] }))
    expect(error.message).toMatch(/target column "y" of no-target\.csv has no values: all 10 rows are missing it/)
    const empty = await refusal(config(source({ exclude: [] })))
    expect(empty.issues?.[0]?.field).toBe('data.features')
    expect(empty.message).toMatch(/feature column "empty" of houses\.csv has no values \(all 40 rows are missing\); exclude it/)
  })

  it('a data set no longer in the cache, and a service without a store', async () => {
    const gone = await refusal(config(source({ sha256: 'e'.repeat(64), name: 'old.csv' })))
    expect(gone.code).toBe('not-found')
    expect(gone.message).toMatch(/old\.csv \(sha256 eeeeeeeeeeee…\) is not in the data cache .*: load the file again/)
    await expect(resolveDataSource(null, config(source()))).rejects.toThrow(/needs a run store/)
  })
})

describe('a text target: class labels', () => {
  // 60 rows: id, tenure (numbers), plan (3 text values), churn (yes/no; rows 10 and 20 missing), note (60 distinct texts)
  let churn: DataSetInfo
  const churnOf = (i: number) => (i === 10 || i === 20 ? '' : i % 3 === 0 ? 'yes' : 'no')
  beforeAll(async () => {
    const lines = ['id,tenure,plan,churn,note']
    for (let i = 0; i < 60; i++) lines.push(`${i},${(i * 7) % 50},${['basic', 'plus', 'pro'][i % 3]},${churnOf(i)},note ${i}`)
    writeFileSync(join(dir, 'churn.csv'), lines.join('\n'))
    churn = await loadDataFile(join(dir, 'churn.csv'), store)
  })
  const churnSource = (overrides: Partial<DataSource> = {}): DataSource => ({
    sha256: churn.sha256,
    name: churn.name,
    target: 'churn',
    features: null,
    exclude: [],
    impute: 'none',
    ...overrides,
  })

  it('a yes/no column is kept as codes and resolves to binary, classes no, yes; the worker gets their codes', async () => {
    expect(churn.columns.find((c) => c.name === 'churn')).toMatchObject({ type: 'text', missing: 2, levels: ['no', 'yes'] })
    expect(churn.columns.find((c) => c.name === 'plan')).toMatchObject({ type: 'text', levels: ['basic', 'plus', 'pro'] })
    expect(churn.columns.find((c) => c.name === 'note')?.levels).toBeUndefined()
    // the table: the numeric columns first (as before codes), then the coded text columns
    expect([...tableColumns(churn)]).toEqual([
      ['id', 0],
      ['tenure', 1],
      ['plan', 2],
      ['churn', 3],
    ])
    const resolved = await resolveDataSource(store, config(churnSource(), { sizes: [50], seed: 3 }))
    expect(resolved.target).toEqual({ column: 'churn', type: 'text', distinct: ['no', 'yes'], integers: false })
    expect(resolved.task).toEqual({ objective: 'binary', classes: ['no', 'yes'], metric: 'logloss', auto: true })
    expect(resolved.task).toEqual(resolveTask(resolved.config, resolved.target))
    expect(resolved.workload).toMatchObject({ targetColumn: 3, featureColumns: [0, 1], classValues: [0, 1] })
    // text columns are never features: plan is left out, said so
    expect(resolved.record.features).toEqual(['id', 'tenure'])
    expect(skippedTextColumns(churn, churnSource()).map((c) => c.name)).toEqual(['plan', 'note'])
    // the codes as stored: no = 0, yes = 1, missing labels NaN
    const [codes] = readTableColumns(resolved.workload.table, [3]).values
    expect([...codes]).toEqual(Array.from({ length: 60 }, (_, i) => (churnOf(i) === '' ? NaN : churnOf(i) === 'yes' ? 1 : 0)))
    const yes = Array.from({ length: 60 }, (_, i) => churnOf(i)).filter((c) => c === 'yes').length
    expect(resolved.record).toMatchObject({ target: 'churn', targetLevels: ['no', 'yes'], targetStats: { min: 0, max: 1, mean: expect.closeTo(yes / 58, 6) } })
    // the panel's words for it, from the info alone
    const check = checkDataChoice({ info: churn, data: churnSource(), family: gbdtFamily, sizes: [50] })
    expect(check.taskText).toBe('binary (2 classes: no, yes)')
    expect(check.task).toEqual(resolved.task)
  })

  it('Parquet: a string column (nulls missing) and a boolean column are class labels too', async () => {
    const rows = 300
    const buffer = parquetWriteBuffer({
      rowGroupSize: 128,
      columnData: [
        { name: 'x', data: Array.from({ length: rows }, (_, i) => i / 3), type: 'DOUBLE' },
        { name: 'churn', data: Array.from({ length: rows }, (_, i) => (i % 50 === 0 ? null : i % 3 ? 'no' : 'yes')), type: 'STRING' },
        { name: 'active', data: Array.from({ length: rows }, (_, i) => i % 2 === 0), type: 'BOOLEAN' },
      ],
    })
    writeFileSync(join(dir, 'churn.parquet'), new Uint8Array(buffer))
    const info = await loadDataFile(join(dir, 'churn.parquet'), store)
    expect(info.columns.map((c) => [c.name, c.type, c.missing, c.levels])).toEqual([
      ['x', 'numeric', 0, undefined],
      ['churn', 'text', 6, ['no', 'yes']],
      ['active', 'text', 0, ['false', 'true']],
    ])
    const parquetSource: DataSource = { sha256: info.sha256, name: info.name, target: 'churn', features: null, exclude: [], impute: 'none' }
    const resolved = await resolveDataSource(store, config(parquetSource, { sizes: [294] }))
    expect(resolved.task).toMatchObject({ objective: 'binary', classes: ['no', 'yes'] })
    expect(resolved.workload).toMatchObject({ targetColumn: 1, featureColumns: [0], classValues: [0, 1] })
    const [codes] = readTableColumns(resolved.workload.table, [1]).values
    expect([...codes]).toEqual(Array.from({ length: rows }, (_, i) => (i % 50 === 0 ? NaN : i % 3 ? 0 : 1)))
    const active = await resolveDataSource(store, config({ ...parquetSource, target: 'active', exclude: ['churn'] }, { sizes: [100] }))
    expect(active.task.classes).toEqual(['false', 'true'])
  })

  it('classValuesOf follows the task’s class order: a code per text class, the number per numeric class', () => {
    const text = { column: 'churn', type: 'text' as const, distinct: ['no', 'yes'], integers: false }
    expect(classValuesOf({ objective: 'binary', classes: ['yes', 'no'], metric: 'logloss', auto: false }, text)).toEqual([1, 0])
    const numeric = { column: 'grade', type: 'numeric' as const, distinct: ['3', '1', '2'], integers: true }
    expect(classValuesOf({ objective: 'multiclass', classes: ['1', '2', '3'], metric: 'logloss', auto: true }, numeric)).toEqual([1, 2, 3])
    expect(() => classValuesOf({ objective: 'binary', classes: ['no', 'maybe'], metric: 'logloss', auto: false }, text)).toThrow(
      /"maybe" is not a value of churn/,
    )
  })

  it('a three-valued text target is multiclass; rows with a missing label are dropped and counted', async () => {
    const plan = await resolveDataSource(store, config(churnSource({ target: 'plan', exclude: ['churn'] }), { sizes: [60] }))
    expect(plan.task).toMatchObject({ objective: 'multiclass', classes: ['basic', 'plus', 'pro'] })
    expect(plan.workload).toMatchObject({ targetColumn: 2, classValues: [0, 1, 2] })
    // churn has 2 rows without a label: 58 usable
    const error = await refusal(config(churnSource(), { sizes: [59] }))
    expect(error.issues?.[0]?.field).toBe('sizes.0')
    expect(error.message).toBe('data: sizes must be at most 58: churn.csv has 60 rows, 58 of them with a target value (got 59)')
  })

  it.each([
    [{ target: 'note' }, {}, 'data.target', /target column "note" of churn\.csv is text with more than 32 distinct values .*2 to 32 of them/],
    [
      { features: ['tenure', 'plan'] },
      {},
      'data.features',
      /feature column "plan" of churn\.csv is not numeric: row 1 is not a number \(Trainpool does not encode text categories\)/,
    ],
    [{}, { objective: 'regression' }, 'objective', /objective regression needs a numeric target; churn is text \(2 classes\)/],
    [{}, { objective: 'multiclass' }, 'objective', /objective multiclass needs 3 to 32 classes; churn has 2 \(no, yes\)/],
    [{}, { metric: 'mse' }, 'metric', /metric mse does not apply to a binary run/],
  ] as const)('%j %j is refused on %s', async (overrides, configOverrides, field, message) => {
    const error = await refusal(config(churnSource(overrides as Partial<DataSource>), { sizes: [50], ...(configOverrides as Partial<BenchConfig>) }))
    expect(error.issues?.[0]?.field).toBe(field)
    expect(error.message).toMatch(message)
  })

  it('a class the seeded sample leaves in the test rows only is refused on data.target, naming the class and the size', async () => {
    // one 'rare' label among 40
    const lines = ['x,label', ...Array.from({ length: 40 }, (_, i) => `${i},${i === 17 ? 'rare' : i % 2 ? 'a' : 'b'}`)]
    writeFileSync(join(dir, 'rare.csv'), lines.join('\n'))
    const rare = await loadDataFile(join(dir, 'rare.csv'), store)
    const [codes] = readTableColumns(tablePath(store, rare.sha256), [tableColumns(rare).get('label')!]).values
    // the seeds that put row 17 among the 10 test rows of size 30, and one that trains on it
    const testSplit = 0.2
    const where = (seed: number) => sampleRows(codes, 30, seed).indexOf(17)
    const { train } = splitRows(30, testSplit)
    const testOnly = Array.from({ length: 200 }, (_, s) => s + 1).find((s) => where(s) >= train)!
    const trains = Array.from({ length: 200 }, (_, s) => s + 1).find((s) => where(s) >= 0 && where(s) < train)!
    expect(testOnly).toBeDefined()
    expect(trains).toBeDefined()
    expect(classesOnlyInTest(codes, [0, 1, 2], [30], testOnly, testSplit)).toEqual({ size: 30, classes: [2], train: 24, test: 6 })
    expect(classesOnlyInTest(codes, [0, 1, 2], [30], trains, testSplit)).toBeNull()

    const rareSource: DataSource = { sha256: rare.sha256, name: rare.name, target: 'label', features: null, exclude: [], impute: 'none' }
    const error = await refusal(config(rareSource, { sizes: [30], seed: testOnly, testSplit }))
    expect(error.issues?.[0]?.field).toBe('data.target')
    expect(error.message).toBe(
      `data: target column "label" of rare.csv: at size 30, class "rare" is in the 6 test rows only, in none of the 24 training rows (the rows sampled with seed ${testOnly}), so the models could never learn it; accepted: sizes whose training rows hold every class (a larger size, or another seed)`,
    )
    await expect(resolveDataSource(store, config(rareSource, { sizes: [30], seed: trains, testSplit }))).resolves.toMatchObject({
      workload: { classValues: [0, 1, 2] },
    })
    // every size is checked: size 20's sample (the first 20 of size 30's) stops before row 17, size 30 is named
    await expect(resolveDataSource(store, config(rareSource, { sizes: [20, 30], seed: testOnly, testSplit }))).rejects.toThrow(/at size 30, class "rare"/)
  })

  it('a set cached by an older version (numeric columns only, no levels) still trains on numeric targets; loading its file again re-reads it', async () => {
    const lines = ['x,y,label', ...Array.from({ length: 30 }, (_, i) => `${i},${i * 1.5},${i % 2 ? 'on' : 'off'}`)]
    writeFileSync(join(dir, 'old.csv'), lines.join('\n'))
    const current = await loadDataFile(join(dir, 'old.csv'), store)
    // what the version before text codes wrote: no cacheVersion, no levels or distinct values, a table of the numeric columns
    const folder = cacheDir(store, current.sha256)
    const old = JSON.parse(readFileSync(join(folder, 'info.json'), 'utf8')) as DataSetInfo & Record<string, unknown>
    delete old.cacheVersion
    for (const c of old.columns) {
      delete c.levels
      delete c.distinct
    }
    writeFileSync(join(folder, 'info.json'), JSON.stringify(old))
    const numeric = readTableColumns(join(folder, 'table.f32'), [0, 1]).values
    writeFileSync(join(folder, 'table.f32'), Buffer.concat([tableHeader(30, 2), ...numeric.map((v) => Buffer.from(v.buffer))]))

    const oldSource: DataSource = { sha256: current.sha256, name: current.name, target: 'y', features: null, exclude: [], impute: 'none' }
    const regression = await resolveDataSource(store, config(oldSource, { sizes: [20] }))
    expect(regression.task.objective).toBe('regression')
    expect(regression.workload).toMatchObject({ targetColumn: 1, featureColumns: [0] })
    // the panel cannot say the task from an old info (its values are not listed): the service reads them at the start
    expect(checkDataChoice({ info: old, data: oldSource, family: gbdtFamily, sizes: [20] }).task).toBeNull()
    const text = await refusal(config({ ...oldSource, target: 'label' }, { sizes: [20] }))
    expect(text.issues?.[0]?.field).toBe('data.target')
    expect(text.message).toMatch(
      /target column "label" of old\.csv is text, and this data set was cached by an older version of Trainpool, which kept no text values; load the file again/,
    )

    // loading the same bytes again reads them in the current layout, in place (not a new set)
    const again = await loadIntoCache(join(dir, 'old.csv'), store)
    expect(again.added).toBe(false)
    expect(again.info.cacheVersion).toBe(DATA_CACHE_VERSION)
    expect(again.info.columns.find((c) => c.name === 'label')?.levels).toEqual(['off', 'on'])
    const binary = await resolveDataSource(store, config({ ...oldSource, target: 'label' }, { sizes: [20] }))
    expect(binary.task).toMatchObject({ objective: 'binary', classes: ['off', 'on'] })
    expect(binary.workload).toMatchObject({ targetColumn: 2, classValues: [0, 1] })
  })
})
