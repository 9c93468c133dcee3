// Fuzzing the CSV reader with generated files (fixed seeds, so a failure replays): a table model —
// column names, cells that are numbers, missing spellings or text with delimiters, quotes and line
// ends — is written out as CSV in one of the dialects (delimiter, BOM, CRLF, final line end), then
// either read back and compared with what the model says the parse must be (an independent,
// obvious model: no parsing involved; a text column's values are codes of its sorted distinct
// values, numbers among them written as the shortest float32 decimal), or broken first (a dropped field, a stray quote, a zero
// byte, an invalid UTF-8 byte, a repeated name, a cut) and then it must give a TrainpoolError —
// never another error — or a well-formed DataSetInfo; and never leave a partial cache folder.
import { mkdtempSync, promises as fs, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { type ColumnInfo, DataSetInfoSchema, TrainpoolError } from '@shared/contract'
import { tableColumns } from '@shared/data-columns'
import { DATASETS_DIR, tablePath } from './cache'
import { loadDataFile } from './load-data-file'
import { float32Text, MISSING_SPELLINGS } from './table-builder'
import { readTableColumns } from './table-file'

const root = mkdtempSync(join(os.tmpdir(), 'trainpool-fuzz-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

type ModelCell = { kind: 'number'; value: number; text: string } | { kind: 'missing'; text: string } | { kind: 'text'; text: string }

const numberCell: fc.Arbitrary<ModelCell> = fc
  .oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.double({ min: -1e30, max: 1e30, noNaN: true, noDefaultInfinity: true }))
  .map((v) => (Object.is(v, -0) ? 0 : v))
  .map((value) => ({ kind: 'number', value, text: String(value) }))
const missingCell: fc.Arbitrary<ModelCell> = fc.constantFrom('', ...MISSING_SPELLINGS).map((text) => ({ kind: 'missing', text }))
// text always holds a letter no number or missing spelling has, and may hold every CSV special
const textCell: fc.Arbitrary<ModelCell> = fc
  .array(fc.constantFrom('q', 'é', ' ', ',', ';', '\t', '"', '\n', '\r\n', '1', '€'), { maxLength: 6 })
  .map((parts) => ({ kind: 'text', text: `q${parts.join('')}` }))

const table = fc
  .record({
    columns: fc.integer({ min: 1, max: 6 }),
    rows: fc.integer({ min: 1, max: 14 }),
    textColumns: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    seedCells: fc.array(fc.oneof(numberCell, missingCell, textCell), { minLength: 84, maxLength: 84 }),
    numbers: fc.array(fc.oneof({ weight: 4, arbitrary: numberCell }, { weight: 1, arbitrary: missingCell }), { minLength: 84, maxLength: 84 }),
    delimiter: fc.constantFrom(',', ';', '\t'),
    bom: fc.boolean(),
    crlf: fc.boolean(),
    finalNewline: fc.boolean(),
  })
  .map((t) => {
    const names = Array.from({ length: t.columns }, (_, c) => (c % 2 ? `col ${c}` : `x${c}`))
    // a "text" column mixes anything; the others hold numbers and missing values only
    const cells: ModelCell[][] = Array.from({ length: t.rows }, (_, r) =>
      names.map((_, c) => {
        const cell = (t.textColumns[c] ? t.seedCells : t.numbers)[r * 6 + c]
        // one column with an empty cell is an empty line, which CSV readers skip: spell it NA
        return t.columns === 1 && cell.text === '' ? { kind: 'missing', text: 'NA' } : cell
      }),
    )
    return { ...t, names, cells }
  })

type Table = typeof table extends fc.Arbitrary<infer T> ? T : never

function quote(text: string): string {
  return /[,;\t"\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text
}

function writeCsv(t: Table): string {
  const eol = t.crlf ? '\r\n' : '\n'
  const lines = [t.names.map(quote).join(t.delimiter), ...t.cells.map((row) => row.map((c) => quote(c.text)).join(t.delimiter))]
  return (t.bom ? '\uFEFF' : '') + lines.join(eol) + (t.finalNewline ? eol : '')
}

/** A cell of a text column as its level: the text trimmed, a number as its shortest float32 decimal; null when missing. */
function levelOf(cell: ModelCell): string | null {
  if (cell.kind === 'missing') return null
  return cell.kind === 'text' ? cell.text.trim() : float32Text(Math.fround(cell.value))
}

/** What the parse must be, from the model alone (at most 14 rows: every column has few enough values to list). */
function expectedColumns(t: Table): ColumnInfo[] {
  return t.names.map((name, c) => {
    const column = t.cells.map((row) => row[c])
    const firstText = column.findIndex((cell) => cell.kind === 'text')
    const values = column.flatMap((cell) => (cell.kind === 'number' ? [cell.value] : []))
    const numeric = firstText < 0
    const levels = [...new Set(column.map(levelOf).filter((l) => l !== null))].sort()
    return {
      name,
      type: numeric ? 'numeric' : 'text',
      missing: column.filter((cell) => cell.kind === 'missing').length,
      min: numeric && values.length ? Math.min(...values) : null,
      max: numeric && values.length ? Math.max(...values) : null,
      firstTextRow: numeric ? null : firstText + 1,
      ...(numeric ? { distinct: [...new Set(values.map(Math.fround))].sort((a, b) => a - b) } : { levels }),
    }
  })
}

/** The stored column the model says: numbers as float32, a text column's codes (a level's place among the sorted levels); NaN when missing. */
function expectedStored(t: Table, c: number, levels: string[] | undefined): number[] {
  return t.cells.map((row) => {
    const cell = row[c]
    if (cell.kind === 'missing') return NaN
    return levels ? levels.indexOf(levelOf(cell)!) : Math.fround((cell as { value: number }).value)
  })
}

type Break = 'drop-field' | 'stray-quote' | 'zero-byte' | 'bad-utf8' | 'repeat-name' | 'cut'
const BREAKS: Break[] = ['drop-field', 'stray-quote', 'zero-byte', 'bad-utf8', 'repeat-name', 'cut']

function broken(t: Table, how: Break, at: number): { bytes: Buffer; mustFail: boolean } {
  const text = writeCsv(t)
  const bytes = Buffer.from(text, 'utf8')
  const pos = at % Math.max(1, bytes.length)
  switch (how) {
    case 'drop-field': {
      // a row with one field fewer than the header (a one-column row would become an empty line)
      if (t.columns < 2) return { bytes, mustFail: false }
      const cells = t.cells.map((row, r) => (r === at % t.rows ? row.slice(0, -1) : row))
      return { bytes: Buffer.from(writeCsv({ ...t, cells })), mustFail: true }
    }
    case 'stray-quote':
      return { bytes: Buffer.concat([bytes.subarray(0, pos), Buffer.from('"'), bytes.subarray(pos)]), mustFail: false }
    case 'zero-byte':
      return { bytes: Buffer.concat([bytes.subarray(0, pos), Buffer.from([0]), bytes.subarray(pos)]), mustFail: true }
    case 'bad-utf8':
      return { bytes: Buffer.concat([bytes.subarray(0, pos), Buffer.from([0xff]), bytes.subarray(pos)]), mustFail: true }
    case 'repeat-name':
      return t.columns < 2
        ? { bytes, mustFail: false }
        : { bytes: Buffer.from(writeCsv({ ...t, names: [t.names[0], ...t.names.slice(1, -1), t.names[0]] })), mustFail: true }
    case 'cut':
      return { bytes: bytes.subarray(0, pos), mustFail: false }
  }
}

let n = 0
function paths(): { file: string; store: string } {
  const k = n++
  return { file: join(root, `f${k}.csv`), store: join(root, `store${k}`) }
}

async function leftovers(store: string): Promise<string[]> {
  const names = await fs.readdir(join(store, DATASETS_DIR)).catch(() => [] as string[])
  return names.filter((name) => !/^[0-9a-f]{64}$/.test(name))
}

describe('the CSV reader, fuzzed', () => {
  it('reads every well-formed file as the table model says (150 files)', async () => {
    await fc.assert(
      fc.asyncProperty(table, async (t) => {
        const { file, store } = paths()
        writeFileSync(file, writeCsv(t))
        const info = await loadDataFile(file, store)
        expect(DataSetInfoSchema.parse(info)).toEqual(info)
        expect(info.rows).toBe(t.rows)
        const columns = expectedColumns(t)
        expect(info.columns).toEqual(columns)
        expect(info.preview).toEqual(t.cells.slice(0, 10).map((row) => row.map((c) => c.text)))
        const places = tableColumns(info)
        const stored = readTableColumns(tablePath(store, info.sha256), [...places.values()]).values
        ;[...places.keys()].forEach((name, k) => {
          const c = t.names.indexOf(name)
          expect([...stored[k]]).toEqual(expectedStored(t, c, columns[c].levels))
        })
      }),
      { seed: 20261202, numRuns: 150 },
    )
  })

  it('a broken file gives a TrainpoolError (always, where it must) or a well-formed parse, never a partial cache (150 files)', async () => {
    await fc.assert(
      fc.asyncProperty(table, fc.constantFrom(...BREAKS), fc.nat(), async (t, how, at) => {
        const { file, store } = paths()
        const { bytes, mustFail } = broken(t, how, at)
        writeFileSync(file, bytes)
        const outcome = await loadDataFile(file, store).then(
          (info) => ({ info }),
          (error: unknown) => ({ error }),
        )
        if ('error' in outcome) {
          expect(outcome.error).toBeInstanceOf(TrainpoolError)
          expect((outcome.error as TrainpoolError).code).toBe('invalid-input')
          expect((outcome.error as Error).message).toMatch(/^data: /)
          expect(await fs.readdir(join(store, DATASETS_DIR)).catch(() => [])).toEqual([])
        } else {
          expect(mustFail, `${how} should have been refused`).toBe(false)
          expect(DataSetInfoSchema.parse(outcome.info)).toEqual(outcome.info)
        }
        expect(await leftovers(store)).toEqual([])
      }),
      { seed: 14, numRuns: 150 },
    )
  })
})
