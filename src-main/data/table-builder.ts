// Builds the cached table from cells, whichever reader found them (CSV rows, Parquet column chunks):
// one rule for what a cell means (a number, missing, or text), per-column missing counts, ranges and
// the first text row, the preview's first rows, and the numeric columns' values as float32 (what
// every engine trains on). Cells are placed by (column, row), so a columnar reader can fill column
// by column and a row reader row by row. Values live in fixed-size chunks, so growing never copies,
// and a memory budget turns a file larger than this machine can hold into a clean error, not swap.
import { COLUMN_NAME_MAX, type ColumnInfo, TrainpoolError } from '@shared/contract'

/** A cell as a reader hands it over: CSV text, or a Parquet value (null = missing). */
export type Cell = unknown

/** The spellings of a missing value in text (besides the empty cell). */
export const MISSING_SPELLINGS: readonly string[] = ['NA', 'N/A', 'NaN', 'nan', 'null', 'NULL']
const MISSING = new Set(MISSING_SPELLINGS)

const FLOAT32_MAX = 3.4028234663852886e38

export const PREVIEW_ROWS = 10
const CHUNK_ROWS = 1 << 16
const CHUNK_BYTES = CHUNK_ROWS * 4

/** What a cell is: a finite float32-range number, missing (NaN), or text (undefined). */
export function cellValue(cell: Cell): number | undefined {
  if (typeof cell === 'string') return textValue(cell)
  if (cell === null || cell === undefined) return NaN
  if (typeof cell === 'number') return Number.isNaN(cell) ? NaN : inFloat32Range(cell)
  if (typeof cell === 'bigint') return inFloat32Range(Number(cell))
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
  return undefined
}

function inFloat32Range(value: number): number | undefined {
  return Number.isFinite(value) && Math.abs(value) <= FLOAT32_MAX ? value : undefined
}

export function cellText(cell: Cell): string {
  if (cell === null || cell === undefined) return ''
  if (cell instanceof Date) return cell.toISOString()
  return String(cell)
}

class ColumnAccumulator {
  chunks: Float32Array[] | null = []
  missing = 0
  min = Infinity
  max = -Infinity
  firstTextRow: number | null = null

  constructor(readonly name: string) {}
}

export interface BuiltTable {
  rows: number
  columns: ColumnInfo[]
  preview: string[][]
  /**
   * the numeric columns' values, in column order, as the chunks they were read into (concatenated,
   * at least `rows` long; NaN = missing): written out as they are, never copied into one array
   */
  numeric: { name: string; chunks: Float32Array[] }[]
}

export class TableBuilder {
  private readonly columns: ColumnAccumulator[]
  private readonly preview: string[][] = []
  private rows = 0
  private heldBytes = 0

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
    if (value === undefined) {
      if (acc.firstTextRow === null || row + 1 < acc.firstTextRow) acc.firstTextRow = row + 1
      if (acc.chunks) {
        this.heldBytes -= acc.chunks.length * CHUNK_BYTES
        acc.chunks = null // a text column keeps no values: Trainpool does not encode categories
      }
      return
    }
    if (Number.isNaN(value)) acc.missing++
    else {
      if (value < acc.min) acc.min = value
      if (value > acc.max) acc.max = value
    }
    if (!acc.chunks) return
    const chunk = row >>> 16
    while (acc.chunks.length <= chunk) {
      this.heldBytes += CHUNK_BYTES
      if (this.heldBytes > this.budgetBytes) throw this.tooLarge(row)
      acc.chunks.push(new Float32Array(CHUNK_ROWS).fill(NaN))
    }
    acc.chunks[chunk][row & (CHUNK_ROWS - 1)] = value
  }

  private tooLarge(row: number): TrainpoolError {
    const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`
    return new TrainpoolError(
      'insufficient-memory',
      `data: ${this.file} is too large to load on this machine: by row ${row + 1} its numeric columns already take ${mib(this.heldBytes)}, over the ${mib(this.budgetBytes)} Trainpool allows itself for a table (a quarter of this machine's memory); load a sample of the file's rows, or fewer columns`,
    )
  }

  finish(): BuiltTable {
    const rows = this.rows
    const columns: ColumnInfo[] = this.columns.map((acc) => {
      const present = acc.firstTextRow === null && acc.min <= acc.max
      return {
        name: acc.name,
        type: acc.firstTextRow === null ? 'numeric' : 'text',
        missing: acc.missing,
        min: present ? acc.min : null,
        max: present ? acc.max : null,
        firstTextRow: acc.firstTextRow,
      }
    })
    const numeric = this.columns.flatMap((acc) => {
      if (!acc.chunks) return []
      while (acc.chunks.length * CHUNK_ROWS < rows) acc.chunks.push(new Float32Array(CHUNK_ROWS).fill(NaN))
      return [{ name: acc.name, chunks: acc.chunks }]
    })
    return { rows, columns, preview: this.preview, numeric }
  }
}

/** Header names: trimmed, non-empty, at most COLUMN_NAME_MAX characters, each once. */
function checkedColumnNames(names: readonly string[], file: string): string[] {
  const seen = new Map<string, number>()
  return names.map((raw, i) => {
    const name = raw.trim()
    const where = `data: ${file} column ${i + 1}`
    if (name === '') throw new TrainpoolError('invalid-input', `${where} has no name: the first row must be a header naming every column`)
    if (name.length > COLUMN_NAME_MAX) throw new TrainpoolError('invalid-input', `${where}'s name is ${name.length} characters long; at most ${COLUMN_NAME_MAX} are accepted`)
    const before = seen.get(name)
    if (before !== undefined) {
      throw new TrainpoolError('invalid-input', `data: ${file} names column ${JSON.stringify(name)} twice (columns ${before + 1} and ${i + 1}); every column needs its own name`)
    }
    seen.set(name, i)
    return name
  })
}
