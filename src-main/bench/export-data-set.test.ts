// A run on the user's data says which data set in its exports (the Markdown document, the CLI
// summary share formatDataSet; the CSV has its name, hash and target on every row), and result files without a data set stay valid.
import { describe, expect, it } from 'vitest'
import { type DataSetRecord, parseRunResult } from '@shared/contract'
import { formatDataSet } from '@shared/format'
import { summaryTable } from '../cli/bench-command'
import { fakeRun } from '../testing/run-fixtures'
import { CSV_COLUMNS, parseCsv, toCsv, toMarkdownDocument } from './export'

const record: DataSetRecord = {
  name: 'houses.csv',
  sha256: '3f2a9c01b2d4'.padEnd(64, '0'),
  rows: 1200,
  columns: 5,
  target: 'price',
  features: ['area', 'rooms', 'age'],
  targetStats: { mean: 300_000, std: 90_000, min: 52_000, max: 1_900_000 },
  impute: 'mean',
  imputed: { rooms: 4 },
  standardised: true,
  sampleSeed: 42,
}

describe('the data set in exports', () => {
  it('one line says the file, its hash, shape, target, features, impute and seed', () => {
    expect(formatDataSet(record)).toBe(
      'houses.csv (sha256 3f2a9c01b2d4…) · 1200 rows × 5 columns · target price · 3 features, standardised, missing values imputed (mean) in 1 column · rows sampled with seed 42',
    )
    expect(formatDataSet({ ...record, features: ['area'], imputed: undefined, impute: 'none', standardised: false })).toMatch(/· 1 feature, raw · rows sampled/)
  })

  it('the Markdown document and the CLI summary name it; a run on generated data does not', () => {
    const run = { ...fakeRun(), dataset: record }
    expect(toMarkdownDocument(run)).toContain(`\n\nData: ${formatDataSet(record)}\n\n|`)
    expect(summaryTable(run)).toContain(`\ndata: ${formatDataSet(record)}\n`)
    expect(toMarkdownDocument(fakeRun())).not.toContain('Data:')
    expect(summaryTable(fakeRun())).not.toContain('data:')
  })

  it('the CSV names the file, its sha256 and the target on every row; empty on generated data', () => {
    const col = (rows: string[][], name: (typeof CSV_COLUMNS)[number]) => rows.slice(1).map((r) => r[CSV_COLUMNS.indexOf(name)])
    const own = parseCsv(toCsv({ ...fakeRun(), dataset: record }))
    expect(own.length).toBeGreaterThan(1)
    expect(new Set(col(own, 'dataset'))).toEqual(new Set(['houses.csv']))
    expect(new Set(col(own, 'datasetSha256'))).toEqual(new Set([record.sha256]))
    expect(new Set(col(own, 'target'))).toEqual(new Set(['price']))
    const generated = parseCsv(toCsv(fakeRun()))
    expect(new Set([...col(generated, 'dataset'), ...col(generated, 'datasetSha256'), ...col(generated, 'target')])).toEqual(new Set(['']))
  })

  it('result files with and without a data set are valid; a damaged one is refused', () => {
    const run = fakeRun()
    expect(parseRunResult(JSON.parse(JSON.stringify(run))).dataset).toBeUndefined()
    expect(parseRunResult(JSON.parse(JSON.stringify({ ...run, dataset: record }))).dataset).toEqual(record)
    expect(() => parseRunResult(JSON.parse(JSON.stringify({ ...run, dataset: { ...record, sha256: 'nope' } })))).toThrow()
  })
})
