// loadDataFile on good and bad files: what a CSV or Parquet file becomes (columns, types, missing
// counts, ranges, preview, the cached table's values), the cache (a second load skips the parse,
// recent first, the run store's listing ignores it), and every bad file refused with a message that
// names the problem, leaving nothing in the cache.
import { mkdirSync, mkdtempSync, promises as fs, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { afterAll, describe, expect, it } from 'vitest'
import { DATA_CACHE_VERSION, DataSetInfoSchema, TrainpoolError } from '@shared/contract'
import { RunStore } from '../store/run-store'
import { DATASETS_DIR, tablePath } from './cache'
import { dataSetInfo, listDataSets, loadDataFile } from './index'
import { readTableColumns } from './table-file'

const root = mkdtempSync(join(os.tmpdir(), 'trainpool-data-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let n = 0

function fresh(): { store: string; file: (name: string, content: string | Uint8Array) => string } {
  const dir = join(root, `case-${n++}`)
  mkdirSync(dir)
  const store = join(dir, 'store')
  return {
    store,
    file: (name, content) => {
      const path = join(dir, name)
      writeFileSync(path, content)
      return path
    },
  }
}

async function cacheEntries(store: string): Promise<string[]> {
  return fs.readdir(join(store, DATASETS_DIR)).catch(() => [])
}

/** The load is refused with a TrainpoolError matching `pattern`, and the cache holds nothing. */
async function refused(content: string | Uint8Array, pattern: RegExp, name = 'bad.csv'): Promise<TrainpoolError> {
  const { store, file } = fresh()
  const error = await loadDataFile(file(name, content), store).then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TrainpoolError)
  expect((error as Error).message).toMatch(pattern)
  expect(await cacheEntries(store)).toEqual([])
  return error as TrainpoolError
}

describe('reading a CSV', () => {
  it('detects comma, semicolon and tab; reads quotes, CRLF, a BOM, missing spellings and text columns', async () => {
    for (const d of [',', ';', '\t']) {
      const { store, file } = fresh()
      const csv = `\uFEFFa${d}"b ${d} x"${d}label${d}y\r\n1.5${d}2${d}"say ""hi""${d} ok"${d}10\r\n-3${d}${d}plain${d}NA\r\n4e2${d}NaN${d}"two\nlines"${d}30\r\n`
      const info = await loadDataFile(file('t.csv', csv), store)
      expect(DataSetInfoSchema.parse(info)).toEqual(info)
      expect(info).toMatchObject({ format: 'csv', rows: 3, name: 't.csv' })
      // few values: a numeric column lists them, a text column keeps its sorted values as levels (codes in the table)
      expect(info.columns).toEqual([
        { name: 'a', type: 'numeric', missing: 0, min: -3, max: 400, firstTextRow: null, distinct: [-3, 1.5, 400] },
        { name: `b ${d} x`, type: 'numeric', missing: 2, min: 2, max: 2, firstTextRow: null, distinct: [2] },
        { name: 'label', type: 'text', missing: 0, min: null, max: null, firstTextRow: 1, levels: ['plain', `say "hi"${d} ok`, 'two\nlines'] },
        { name: 'y', type: 'numeric', missing: 1, min: 10, max: 30, firstTextRow: null, distinct: [10, 30] },
      ])
      expect(info.cacheVersion).toBe(DATA_CACHE_VERSION)
      expect(info.preview).toEqual([
        ['1.5', '2', `say "hi"${d} ok`, '10'],
        ['-3', '', 'plain', 'NA'],
        ['4e2', 'NaN', 'two\nlines', '30'],
      ])
      // the table holds the numeric columns (a, b, y) as float32, NaN where missing, then the text column's codes
      const { rows, values } = readTableColumns(tablePath(store, info.sha256), [0, 1, 2, 3])
      expect(rows).toBe(3)
      expect(values.map((v) => [...v])).toEqual([
        [1.5, -3, 400],
        [2, NaN, NaN],
        [10, NaN, 30],
        [1, 0, 2],
      ])
    }
  })

  it('a column is text from its first non-number on; hex, Infinity and 1,5 are not numbers', async () => {
    const { store, file } = fresh()
    const rows = ['a;b;c;d', ...Array.from({ length: 12 }, (_, i) => `${i};${i === 7 ? '0x1F' : i};${i === 11 ? 'Infinity' : i};${i === 3 ? '1,5' : i}`)]
    const info = await loadDataFile(file('t.csv', rows.join('\n')), store)
    expect(info.columns.map((c) => [c.name, c.type, c.firstTextRow])).toEqual([
      ['a', 'numeric', null],
      ['b', 'text', 8],
      ['c', 'text', 12],
      ['d', 'text', 4],
    ])
    expect(info.preview).toHaveLength(10)
    expect(info.columns[0]).toMatchObject({ min: 0, max: 11 })
  })

  it('a second load of the same bytes skips the parse, under any name; the list is newest first', async () => {
    const { store, file } = fresh()
    const first = await loadDataFile(file('one.csv', 'x,y\n1,2\n3,4\n'), store)
    const other = await loadDataFile(file('other.csv', 'x,y\n5,6\n'), store)
    const again = await loadDataFile(file('renamed.csv', 'x,y\n1,2\n3,4\n'), store)
    expect(again.sha256).toBe(first.sha256)
    expect(again).toMatchObject({ loadMs: 0, name: 'renamed.csv', rows: 2 })
    expect((await listDataSets(store)).map((i) => i.name)).toEqual(['renamed.csv', 'other.csv'])
    expect(await dataSetInfo(store, other.sha256)).toEqual(other)
    await expect(dataSetInfo(store, 'f'.repeat(64))).rejects.toMatchObject({ code: 'not-found' })
    expect(await listDataSets(join(root, 'no-store-here'))).toEqual([])
  })

  it('the run store lists runs only: the data cache in its folder is not a run', async () => {
    const { store, file } = fresh()
    await loadDataFile(file('t.csv', 'x,y\n1,2\n'), store)
    expect(await new RunStore(store).list()).toEqual([])
  })
})

describe('reading Parquet', () => {
  it('reads numbers of every width, nulls and strings, over several row groups', async () => {
    const { store, file } = fresh()
    const rows = 2500
    const buffer = parquetWriteBuffer({
      rowGroupSize: 1000,
      columnData: [
        { name: 'i32', data: Array.from({ length: rows }, (_, i) => i), type: 'INT32' },
        { name: 'i64', data: Array.from({ length: rows }, (_, i) => BigInt(i * 2)), type: 'INT64' },
        { name: 'f', data: Array.from({ length: rows }, (_, i) => (i % 10 === 0 ? null : i / 4)), type: 'DOUBLE' },
        { name: 's', data: Array.from({ length: rows }, (_, i) => `city ${i % 3}`), type: 'STRING' },
      ],
    })
    const info = await loadDataFile(file('t.parquet', new Uint8Array(buffer)), store)
    expect(info).toMatchObject({ format: 'parquet', rows })
    expect(info.columns).toEqual([
      { name: 'i32', type: 'numeric', missing: 0, min: 0, max: rows - 1, firstTextRow: null },
      { name: 'i64', type: 'numeric', missing: 0, min: 0, max: 2 * (rows - 1), firstTextRow: null },
      { name: 'f', type: 'numeric', missing: rows / 10, min: 0.25, max: (rows - 1) / 4, firstTextRow: null },
      // a string column of 3 values, kept as codes over the row groups
      { name: 's', type: 'text', missing: 0, min: null, max: null, firstTextRow: 1, levels: ['city 0', 'city 1', 'city 2'] },
    ])
    expect(info.preview[0]).toEqual(['0', '0', '', 'city 0'])
    const { values } = readTableColumns(tablePath(store, info.sha256), [0, 2, 3])
    expect(values[0][2345]).toBe(2345)
    expect(values[1][1001]).toBe(1001 / 4)
    expect(values[1][2000]).toBeNaN()
    expect([...values[2]]).toEqual(Array.from({ length: rows }, (_, i) => i % 3))
  })

  it('reads compressed pages beyond snappy (gzip here)', async () => {
    const { store, file } = fresh()
    const buffer = parquetWriteBuffer({
      codec: 'GZIP',
      compressors: { GZIP: (bytes: Uint8Array) => new Uint8Array(gzipSync(bytes)) },
      columnData: [
        { name: 'x', data: [1.5, 2.5, null], type: 'DOUBLE' },
        { name: 'y', data: [1, 2, 3], type: 'INT32' },
      ],
    })
    const info = await loadDataFile(file('t.parquet', new Uint8Array(buffer)), store)
    expect(info.columns.map((c) => [c.name, c.missing, c.min, c.max])).toEqual([
      ['x', 1, 1.5, 2.5],
      ['y', 0, 1, 3],
    ])
  })

  it("a file that starts like Parquet but is not is refused with the reader's reason", async () => {
    await refused('PAR1 and then nothing a Parquet reader can use', /starts like a Parquet file but Trainpool cannot read it/, 'fake.parquet')
  })
})

describe('bad files are refused, and nothing is left in the cache', () => {
  it('empty file', () => refused('', /bad\.csv is empty: a CSV needs a header row/))
  it('only blank lines', () => refused('\n\n  \n', /is empty/))
  it('header only', () => refused('a,b,y\n', /has a header but no rows/))
  it('ragged rows', () => refused('a,b,y\n1,2,3\n4,5\n6,7,8\n', /bad\.csv line 3 has 2 fields but the header has 3/))
  it('unbalanced quote', () => refused('a,b,y\n1,2,3\n4,"5,6\n7,8,9\n', /ends inside a quoted field: a " opened on line \d+ or before is never closed/))
  it('a stray quote inside a field', () => refused('a,b\n1,2"x\n', /line 2 has a " inside a field that is not quoted as a whole/))
  it('a 100 MB single line', () => refused(Buffer.alloc(100 * 2 ** 20, '1'), /line 1 is longer than 8 MiB/))
  it('binary garbage', () => {
    const bytes = new Uint8Array(4096)
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) % 256
    return refused(bytes, /is not a text file \(a zero byte at byte \d+\)/)
  })
  it('non-UTF-8 text', () =>
    refused(Buffer.from('name,y\ncaf\xe9,1\n', 'latin1'), /bad\.csv is not UTF-8 text \(line 2, byte 11 is not part of a UTF-8 character\): save it as UTF-8/))
  it('a UTF-8 character split across read chunks is fine', async () => {
    const { store, file } = fresh()
    // 'é' (2 bytes) straddles the reader's 1 MiB chunk boundary
    const head = 'a,y\n'
    const filler = 'x'.repeat(2 ** 20 - head.length - 1)
    const info = await loadDataFile(file('t.csv', `${head}${filler}é,1\n`), store)
    expect(info.columns[0]).toMatchObject({ type: 'text' })
  })
  it('duplicate column name', () => refused('a,b,a\n1,2,3\n', /names column "a" twice \(columns 1 and 3\)/))
  it('a column without a name', () => refused('a,,y\n1,2,3\n', /column 2 has no name/))
  it('a file larger than the memory allowed fails cleanly', async () => {
    const { store, file } = fresh()
    const csv = `a,b\n${Array.from({ length: 70_000 }, (_, i) => `${i},${i}`).join('\n')}\n`
    const error = await loadDataFile(file('big.csv', csv), store, { budgetBytes: 2 ** 19 }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'insufficient-memory' })
    // the real size (32 768 rows × 2 columns, one of them being doubled: 128 + 256 + 256 KiB) and the real limit
    expect((error as Error).message).toMatch(
      /big\.csv is too large to load on this machine: by row 32769 its 2 numeric columns need 640 KiB as float32, over the 512 KiB a table may take while loading \(by default a quarter of this machine's [\d.]+ GiB of memory\)/,
    )
    expect(await cacheEntries(store)).toEqual([])
  })
  it('a file that is not there (moved or deleted after it was chosen)', async () => {
    const { store } = fresh()
    await expect(loadDataFile(join(root, 'gone.csv'), store)).rejects.toMatchObject({
      code: 'not-found',
      message: expect.stringMatching(/there is no file .*gone\.csv \(was it moved or deleted\?\)/),
    })
  })
  it('a folder', async () => {
    const { store } = fresh()
    await expect(loadDataFile(root, store)).rejects.toThrow(/is not a file; choose a CSV or Parquet file/)
  })
})
