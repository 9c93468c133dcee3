// The table builder's text labels: a text column of few values is kept as codes of its sorted values
// (numbers read before its first text included), one of too many values — or a value too long to be
// a label — keeps nothing; a numeric column lists its values while they are few. Rows and columns
// arrive either way (a CSV row at a time, a Parquet column run at a time): the same table.
import { describe, expect, it } from 'vitest'
import { CLASS_LIMITS, LEVEL_MAX_CHARS } from '@shared/contract'
import { type Cell, float32Text, TableBuilder } from './table-builder'

function concat(chunks: Float32Array[], rows: number): number[] {
  return chunks.flatMap((c) => [...c]).slice(0, rows)
}

/** The same cells by row and by column: both builders' tables, which must agree. */
function build(columns: Record<string, Cell[]>) {
  const names = Object.keys(columns)
  const rows = columns[names[0]].length
  const byRow = new TableBuilder(names, 't.csv', 2 ** 30)
  for (let r = 0; r < rows; r++) byRow.addRow(names.map((n) => columns[n][r]))
  const byColumn = new TableBuilder(names, 't.parquet', 2 ** 30)
  names.forEach((n, c) => {
    byColumn.addColumnRun(c, 0, columns[n].slice(0, 3))
    byColumn.addColumnRun(c, 3, columns[n].slice(3))
  })
  const [a, b] = [byRow.finish(), byColumn.finish()]
  expect(b.columns).toEqual(a.columns)
  expect(b.stored.map((s) => [s.name, concat(s.chunks, rows)])).toEqual(a.stored.map((s) => [s.name, concat(s.chunks, rows)]))
  return { columns: a.columns, stored: Object.fromEntries(a.stored.map((s) => [s.name, concat(s.chunks, rows)])), order: a.stored.map((s) => s.name) }
}

describe('text labels as codes', () => {
  it('codes follow the sorted levels; missing cells stay NaN; numbers before the first text become levels; the table keeps numeric columns first', () => {
    const t = build({
      grade: ['1', '2.5', 'NA', ' x', '1', 'b', '2.50'],
      label: ['yes', 'no', '', 'no', 'yes', 'no', 'yes'],
      n: ['3', '4', '3', '', '4', '4', '3'],
    })
    expect(t.columns.map((c) => [c.name, c.type, c.levels, c.distinct, c.missing])).toEqual([
      ['grade', 'text', ['1', '2.5', 'b', 'x'], undefined, 1],
      ['label', 'text', ['no', 'yes'], undefined, 1],
      ['n', 'numeric', undefined, [3, 4], 1],
    ])
    expect(t.order).toEqual(['n', 'grade', 'label'])
    expect(t.stored.grade).toEqual([0, 1, NaN, 3, 0, 2, 1])
    expect(t.stored.label).toEqual([1, 0, NaN, 0, 1, 0, 1])
    expect(t.stored.n).toEqual([3, 4, 3, NaN, 4, 4, 3])
  })

  it(`more than ${CLASS_LIMITS.max} distinct values, or one over ${LEVEL_MAX_CHARS} characters: a text column keeps nothing, a numeric one lists no values`, () => {
    const many = Array.from({ length: 40 }, (_, i) => `v${i % (CLASS_LIMITS.max + 1)}`)
    const exact = Array.from({ length: 40 }, (_, i) => `v${i % CLASS_LIMITS.max}`)
    const long = Array.from({ length: 40 }, (_, i) => (i === 30 ? 'x'.repeat(LEVEL_MAX_CHARS + 1) : 'short'))
    const numbers = Array.from({ length: 40 }, (_, i) => String(i))
    // 33 distinct numbers read first: the column cannot be labels once it turns text
    const numbersThenText = [...numbers.slice(0, 39), 'text']
    const t = build({ many, exact, long, numbers, numbersThenText })
    const byName = Object.fromEntries(t.columns.map((c) => [c.name, c]))
    expect(byName.many.levels).toBeUndefined()
    expect(byName.exact.levels).toHaveLength(CLASS_LIMITS.max)
    expect(byName.long.levels).toBeUndefined()
    expect(byName.numbers.distinct).toBeUndefined()
    expect(byName.numbersThenText).toMatchObject({ type: 'text', firstTextRow: 40 })
    expect(byName.numbersThenText.levels).toBeUndefined()
    expect(t.order).toEqual(['numbers', 'exact'])
  })

  it('a number beyond float32 still refuses its column unless the column is text (then it is a label like any text)', () => {
    const refused = new TableBuilder(['x'], 'big.csv', 2 ** 20)
    for (const cell of ['1', 'yes', '2']) refused.addRow([cell === 'yes' ? '1e39' : cell])
    expect(() => refused.finish()).toThrow(/big\.csv column "x" row 2: 1e39 is out of float32 range/)
    const text = build({ x: ['1', '1e39', 'yes', '1'] })
    expect(text.columns[0].levels).toEqual(['1', '1e39', 'yes'])
    expect(text.stored.x).toEqual([0, 1, 2, 0])
  })

  it('a number as a level is its shortest float32 decimal', () => {
    expect([0.1, 3, -2.5, 1e-7, 16777217].map((v) => float32Text(Math.fround(v)))).toEqual(['0.1', '3', '-2.5', '1e-7', '16777216'])
  })
})
