// Builds the cached table from cells, whichever reader found them: one rule for what a cell means
// (number, missing, text), per-column counts, ranges and first text row, the preview, and the
// numeric columns as float32. A text column with few distinct values (class labels: yes/no) is kept
// too, as float32 codes of its sorted values (its `levels`), so it can be a classifier's target.
// Memory follows the rows actually read (chunks that start small and double), and a memory budget
// turns a file too large for this machine into a clean error, not swap. The rules: README.md, "Reading".
import os from 'node:os'
import { CLASS_LIMITS, COLUMN_NAME_MAX, type ColumnInfo, LEVEL_MAX_CHARS, sortedClasses, TrainpoolError } from '@shared/contract'
import { formatBytes } from '@shared/format'

/** A cell as a reader hands it over: CSV text, or a Parquet value (null = missing). */
export type Cell = unknown

/** The spellings of a missing value in text (besides the empty cell). */
export const MISSING_SPELLINGS: readonly string[] = ['NA', 'N/A', 'NaN', 'nan', 'null', 'NULL']
const MISSING = new Set(MISSING_SPELLINGS)

const FLOAT32_MAX = 3.4028234663852886e38
/** what cellValue says of a number no float32 can hold (1e308): never a value, since values are finite */
const BEYOND_FLOAT32 = Infinity

export const PREVIEW_ROWS = 10
const CHUNK_SHIFT = 16
const CHUNK_ROWS = 1 << CHUNK_SHIFT
const FIRST_CHUNK_ROWS = 16
/** All levels of a table together at most this many characters, so its info.json stays small whatever the file. */
const LEVELS_BUDGET_CHARS = 8 * 2 ** 20

/** What a cell is: a finite float32-range number, missing (NaN), text (undefined), or a number beyond float32 (BEYOND_FLOAT32). */
export function cellValue(cell: Cell): number | undefined {
  if (typeof cell === 'string') return textValue(cell)
  if (cell === null || cell === undefined) return NaN
  if (typeof cell === 'number') return Number.isNaN(cell) ? NaN : inFloat32Range(cell)
  if (typeof cell === 'bigint') return inFloat32Range(Number(cell), true)
  return undefined // booleans, dates, nested values: not numbers to train on
}

function textValue(text: string): number | undefined {
  // Number() is the fast path (most cells of a numeric table are plain numbers); it also accepts
  // what a data file does not mean as a number — hex/binary/octal literals and blanks — so those
  // are told apart after it
  const value = Number(text)
  if (Number.isFinite(value)) {
    const second = text.length > 1 && text.charCodeAt(0) === 48 ? text.charCodeAt(1) | 32 : 0 // '0x', '0b', '0o'
    if (second === 120 || second === 98 || second === 111) return undefined
    if (value === 0 && text.trim() === '') return NaN
    return inFloat32Range(value)
  }
  const trimmed = text.trim()
  if (MISSING.has(trimmed)) return NaN
  // 1e400 is a decimal number too large even for a double; the word Infinity is text
  if (!Number.isNaN(value) && !/infinity/i.test(trimmed)) return BEYOND_FLOAT32
  return undefined
}

/** A finite number within float32's range as it is; a larger one (or, `infiniteIsLarge`, an infinite one) BEYOND_FLOAT32; else text. */
function inFloat32Range(value: number, infiniteIsLarge = false): number | undefined {
  if (Number.isFinite(value)) return Math.abs(value) <= FLOAT32_MAX ? value : BEYOND_FLOAT32
  return infiniteIsLarge ? BEYOND_FLOAT32 : undefined
}

export function cellText(cell: Cell): string {
  if (cell === null || cell === undefined) return ''
  if (cell instanceof Date) return cell.toISOString()
  return String(cell)
}

/** A number as a level of a text column: the shortest decimal that reads back as the same float32 ("0.1", "3"). */
export function float32Text(value: number): string {
  for (let digits = 1; digits < 9; digits++) {
    const shorter = Number(value.toPrecision(digits))
    if (Math.fround(shorter) === value) return String(shorter)
  }
  return String(value)
}

class ColumnAccumulator {
  /** the values as read (numbers; codes once the column holds text); null: none kept (text that cannot be codes) */
  chunks: Float32Array[] | null = []
  missing = 0
  min = Infinity
  max = -Infinity
  firstTextRow: number | null = null
  /** the first number no float32 can hold: refused at the end unless the column turns out to be text anyway */
  beyondFloat32: { row: number; text: string } | null = null
  /** the distinct present numbers (as float32) while there are at most CLASS_LIMITS.max; null past that (an array: a wide file has a set per column, and few values are found as fast) */
  distinct: number[] | null = []
  /** once a cell is not a number: each distinct value's text → its code, in the order first read; null before (or once dropped) */
  levels: Map<string, number> | null = null

  constructor(readonly name: string) {}
}

export interface BuiltTable {
  rows: number
  columns: ColumnInfo[]
  preview: string[][]
  /**
   * the table's columns, in its order: the numeric columns, then the text columns kept as codes (each
   * in column order); as the chunks they were read into (concatenated, at least `rows` long; NaN =
   * missing): written out as they are, never copied into one array
   */
  stored: { name: string; chunks: Float32Array[] }[]
}

export class TableBuilder {
  private readonly columns: ColumnAccumulator[]
  private readonly preview: string[][] = []
  private rows = 0
  private heldBytes = 0
  private levelChars = 0

  /**
   * @param names the header, as read (a leading BOM already removed)
   * @param budgetBytes the most the numeric columns may take in memory
   */
  constructor(
    names: readonly string[],
    private readonly file: string,
    private readonly budgetBytes: number,
  ) {
    this.columns = checkedColumnNames(names, file).map((name) => new ColumnAccumulator(name))
  }

  get columnCount(): number {
    return this.columns.length
  }

  /** One row of cells, in header order (a row reader). */
  addRow(cells: readonly Cell[]): void {
    const row = this.rows
    if (row < PREVIEW_ROWS) this.preview.push(cells.map(cellText))
    for (let c = 0; c < cells.length; c++) this.set(c, row, cells[c])
    this.rows = row + 1
  }

  /** A run of one column's cells from `rowStart` (a columnar reader); rows already seen stay counted. */
  addColumnRun(column: number, rowStart: number, cells: ArrayLike<Cell>): void {
    for (let i = 0; i < cells.length; i++) {
      const row = rowStart + i
      if (row < PREVIEW_ROWS) {
        while (this.preview.length <= row) this.preview.push(new Array<string>(this.columns.length).fill(''))
        this.preview[row][column] = cellText(cells[i])
      }
      this.set(column, row, cells[i])
    }
    this.rows = Math.max(this.rows, rowStart + cells.length)
  }

  private set(column: number, row: number, cell: Cell): void {
    const acc = this.columns[column]
    const value = cellValue(cell)
    if (value === undefined || value === BEYOND_FLOAT32) {
      if (value === undefined && (acc.firstTextRow === null || row + 1 < acc.firstTextRow)) acc.firstTextRow = row + 1
      if (value === BEYOND_FLOAT32 && (acc.beyondFloat32 === null || row < acc.beyondFloat32.row)) acc.beyondFloat32 = { row, text: cellText(cell) }
      // a number beyond float32 is coded as its text too: its column is refused at the end unless it is text anyway
      this.setLevel(acc, row, cellText(cell).trim())
      return
    }
    if (Number.isNaN(value)) acc.missing++
    else {
      if (value < acc.min) acc.min = value
      if (value > acc.max) acc.max = value
    }
    if (!acc.chunks) return
    if (acc.levels && value === value) {
      this.setLevel(acc, row, float32Text(Math.fround(value)))
      return
    }
    const distinct = acc.distinct
    if (distinct !== null && value === value) {
      const fround = Math.fround(value)
      const stored = fround === 0 ? 0 : fround // -0 is the value 0 (listed once, as 0)
      if (!distinct.includes(stored)) {
        if (distinct.length === CLASS_LIMITS.max) acc.distinct = null
        else distinct.push(stored)
      }
    }
    this.chunkFor(acc.chunks, row, row)[row & (CHUNK_ROWS - 1)] = value
  }

  /** A text cell (or a number in a column that holds text): its value's code, a new one for a new value; the column's codes are dropped when it cannot be labels. */
  private setLevel(acc: ColumnAccumulator, row: number, text: string): void {
    if (!acc.chunks || (!acc.levels && !this.startLevels(acc))) return
    const levels = acc.levels!
    let code = levels.get(text)
    if (code === undefined) {
      if (!this.newLevel(acc, text)) return
      code = levels.size
      levels.set(text, code)
    }
    this.chunkFor(acc.chunks, row, row)[row & (CHUNK_ROWS - 1)] = code
  }

  /** Room for one more level of this column (at most CLASS_LIMITS.max, each a class name's length, within the table's budget); else the column's codes are dropped. */
  private newLevel(acc: ColumnAccumulator, text: string): boolean {
    if (acc.levels!.size < CLASS_LIMITS.max && text.length <= LEVEL_MAX_CHARS && this.levelChars + text.length <= LEVELS_BUDGET_CHARS) {
      this.levelChars += text.length
      return true
    }
    this.dropValues(acc)
    return false
  }

  /** A column's first cell that is not a number: the numbers read so far become codes of their text; too many distinct ones, and nothing is kept. */
  private startLevels(acc: ColumnAccumulator): boolean {
    const numbers = acc.distinct
    if (numbers === null) {
      this.dropValues(acc)
      return false
    }
    acc.levels = new Map()
    const codeOf = new Map<number, number>()
    for (const value of numbers) {
      const text = float32Text(value)
      if (!this.newLevel(acc, text)) return false
      codeOf.set(value, acc.levels.size)
      acc.levels.set(text, acc.levels.size)
    }
    acc.distinct = null
    for (const chunk of acc.chunks!) {
      for (let i = 0; i < chunk.length; i++) if (chunk[i] === chunk[i]) chunk[i] = codeOf.get(chunk[i])!
    }
    return true
  }

  /** A text column that cannot be labels keeps no values (it can be neither a feature nor the target). */
  private dropValues(acc: ColumnAccumulator): void {
    for (const chunk of acc.chunks ?? []) this.heldBytes -= chunk.byteLength
    acc.chunks = null
    acc.levels = null
    acc.distinct = null
  }

  /** The chunk that holds `row`, allocated (or the first one grown) when it does not yet reach it. */
  private chunkFor(chunks: Float32Array[], row: number, readingRow: number): Float32Array {
    const index = row >>> CHUNK_SHIFT
    const first = chunks[0] as Float32Array | undefined
    if (index === 0) {
      if (first && row < first.length) return first
      let rows = Math.max(FIRST_CHUNK_ROWS, first?.length ?? 0)
      while (rows <= row) rows *= 2
      chunks[0] = this.grown(first, Math.min(rows, CHUNK_ROWS), readingRow)
      return chunks[0]
    }
    // chunks after the first are whole CHUNK_ROWS, so the first is full before them
    if (!first || first.length < CHUNK_ROWS) chunks[0] = this.grown(first, CHUNK_ROWS, readingRow)
    while (chunks.length <= index) chunks.push(this.allocate(CHUNK_ROWS, readingRow))
    return chunks[index]
  }

  private grown(old: Float32Array | undefined, rows: number, readingRow: number): Float32Array {
    const next = this.allocate(rows, readingRow)
    if (old) {
      next.set(old)
      this.heldBytes -= old.byteLength
    }
    return next
  }

  private allocate(rows: number, readingRow: number): Float32Array {
    this.heldBytes += rows * 4
    if (this.heldBytes > this.budgetBytes) throw this.tooLarge(readingRow)
    return new Float32Array(rows).fill(NaN)
  }

  private tooLarge(row: number): TrainpoolError {
    const numeric = this.columns.filter((c) => c.chunks).length
    return new TrainpoolError(
      'insufficient-memory',
      `data: ${this.file} is too large to load on this machine: by row ${row + 1} its ${numeric} numeric columns need ${formatBytes(this.heldBytes)} as float32, over the ${formatBytes(this.budgetBytes)} a table may take while loading (by default a quarter of this machine's ${formatBytes(os.totalmem())} of memory); load a sample of the file's rows, or fewer columns`,
    )
  }

  private beyondFloat32(column: string, { row, text }: { row: number; text: string }): TrainpoolError {
    const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text
    return new TrainpoolError(
      'invalid-input',
      `data: ${this.file} column ${JSON.stringify(column)} row ${row + 1}: ${shown} is out of float32 range (±3.4e38), the precision every engine trains in; rescale that column (e.g. other units) or leave it out of the file`,
    )
  }

  finish(): BuiltTable {
    const rows = this.rows
    // a number column with a value float32 cannot hold would train on a wrong number: said, not guessed
    for (const acc of this.columns) if (acc.beyondFloat32 && acc.firstTextRow === null) throw this.beyondFloat32(acc.name, acc.beyondFloat32)
    const columns: ColumnInfo[] = this.columns.map((acc) => {
      const numeric = acc.firstTextRow === null
      const present = numeric && acc.min <= acc.max
      const info: ColumnInfo = {
        name: acc.name,
        type: numeric ? 'numeric' : 'text',
        missing: acc.missing,
        min: present ? acc.min : null,
        max: present ? acc.max : null,
        firstTextRow: acc.firstTextRow,
      }
      if (!numeric && acc.levels && acc.chunks) info.levels = sortedLevels(acc.levels, acc.chunks, rows)
      if (numeric && acc.distinct) info.distinct = acc.distinct.sort((a, b) => a - b)
      return info
    })
    const kept = this.columns.filter((acc) => acc.chunks)
    // numeric columns first, so a numeric column's place in the table is the same as in a cache of before (or without) codes
    const stored = [...kept.filter((acc) => !acc.levels), ...kept.filter((acc) => acc.levels)].map((acc) => {
      // a column read shorter than the table (a Parquet column chunk missing) is missing below
      if (rows > 0) this.chunkFor(acc.chunks!, rows - 1, rows - 1)
      return { name: acc.name, chunks: acc.chunks! }
    })
    return { rows, columns, preview: this.preview, stored }
  }
}

/** A text column's levels in class-name order (contract/task.ts sortedClasses), its codes renumbered to match. */
function sortedLevels(levels: Map<string, number>, chunks: Float32Array[], rows: number): string[] {
  const sorted = sortedClasses({ type: 'text', distinct: [...levels.keys()] })
  const renumber = new Float32Array(levels.size)
  sorted.forEach((text, code) => (renumber[levels.get(text)!] = code))
  let left = rows
  for (const chunk of chunks) {
    const n = Math.min(left, chunk.length)
    for (let i = 0; i < n; i++) if (chunk[i] === chunk[i]) chunk[i] = renumber[chunk[i]]
    left -= n
  }
  return sorted
}

/** Header names: trimmed, non-empty, at most COLUMN_NAME_MAX characters, each once. */
function checkedColumnNames(names: readonly string[], file: string): string[] {
  const seen = new Map<string, number>()
  return names.map((raw, i) => {
    const name = raw.trim()
    const where = `data: ${file} column ${i + 1}`
    if (name === '') throw new TrainpoolError('invalid-input', `${where} has no name: the first row must be a header naming every column`)
    if (name.length > COLUMN_NAME_MAX)
      throw new TrainpoolError('invalid-input', `${where}'s name is ${name.length} characters long; at most ${COLUMN_NAME_MAX} are accepted`)
    const before = seen.get(name)
    if (before !== undefined) {
      throw new TrainpoolError(
        'invalid-input',
        `data: ${file} names column ${JSON.stringify(name)} twice (columns ${before + 1} and ${i + 1}); every column needs its own name`,
      )
    }
    seen.set(name, i)
    return name
  })
}
