// Resolving config.data before a run: the column choice (shared with the config panel), every
// refusal the service gives before anything starts — each naming the field — and what the result
// records (features, target statistics, impute, standardised, the seed).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BenchConfig, type DataSetInfo, type DataSource, presetConfig, TrainpoolError } from '@shared/contract'
import { chooseColumns, skippedTextColumns } from '@shared/data-columns'
import { gbdtFamily } from '@shared/families/gbdt'
import { cacheDir } from './cache'
import { loadDataFile } from './load-data-file'
import { resolveDataSource } from './resolve-source'

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
    [{ target: 'city' }, 'data.target', /target column "city" of houses\.csv is not numeric: row 1 is not a number .*choose a numeric column/],
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
