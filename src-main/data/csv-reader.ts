// Streams a CSV file into a TableBuilder: bytes → (sha256, binary check, UTF-8 check) → csv-parse
// → rows. csv-parse owns the CSV grammar (quotes, escaped quotes, CRLF, ragged rows) and
// reports where the file breaks it; this file owns what csv-parse does not: the delimiter (comma,
// semicolon or tab, detected from the header line), refusing binary and non-UTF-8 bytes (csv-parse
// would read them as replacement characters), and errors that name the file, the line and the fix.
import { createHash } from 'node:crypto'
import { isUtf8 } from 'node:buffer'
import { createReadStream } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import { CsvError, parse } from 'csv-parse'
import { TrainpoolError } from '@shared/contract'
import { TableBuilder } from './table-builder'

export const CSV_DELIMITERS = [',', ';', '\t'] as const
/** a row longer than this is refused (a 100 MB "row" is not a table) */
export const MAX_ROW_CHARS = 8 * 2 ** 20
const READ_CHUNK = 1 << 20

export interface ReadOptions {
  /** the file's name in messages */
  name: string
  budgetBytes: number
}

export interface ReadResult {
  builder: TableBuilder
  /** the sha256 of the bytes actually read (the caller compares it with the one it hashed first) */
  sha256: string
}

/** The delimiter the header line uses most, outside quotes (comma when it has none: one column). */
export function detectDelimiter(headerLine: string): (typeof CSV_DELIMITERS)[number] {
  const counts = new Map<string, number>(CSV_DELIMITERS.map((d) => [d, 0]))
  let quoted = false
  for (const ch of headerLine) {
    if (ch === '"') quoted = !quoted
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1)
  }
  let best: (typeof CSV_DELIMITERS)[number] = ','
  for (const d of CSV_DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d
  return best
}

/**
 * The file's bytes for csv-parse (which decodes them itself), hashed, checked to be text (no zero
 * byte) and valid UTF-8 on the way. A chunk ending inside a multi-byte character carries those bytes
 * over to the next check, so only a file that really breaks UTF-8 is refused.
 */
async function* checkedBytes(path: string, name: string, hash: ReturnType<typeof createHash>): AsyncGenerator<Buffer> {
  let offset = 0
  let lines = 1
  let carry: Buffer = Buffer.alloc(0)
  let lineBytes = 0
  for await (const chunk of createReadStream(path, { highWaterMark: READ_CHUNK }) as AsyncIterable<Buffer>) {
    hash.update(chunk)
    const nul = chunk.indexOf(0)
    if (nul >= 0) {
      throw new TrainpoolError(
        'invalid-input',
        `data: ${name} is not a text file (a zero byte at byte ${offset + nul + 1}): Trainpool reads CSV (UTF-8 text) or Parquet`,
      )
    }
    const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk
    const complete = completeUtf8Length(bytes)
    if (!isUtf8(bytes.subarray(0, complete))) {
      const bad = firstInvalidUtf8(bytes)
      throw notUtf8(name, lines + countNewlines(bytes.subarray(0, bad)), offset - carry.length + bad)
    }
    carry = Buffer.from(bytes.subarray(complete))
    // csv-parse measures a record only once it ends: a file with no line ends would be read whole first
    const lastNewline = chunk.lastIndexOf(10)
    lineBytes = lastNewline >= 0 ? chunk.length - lastNewline - 1 : lineBytes + chunk.length
    const newlines = countNewlines(chunk)
    if (lineBytes > MAX_ROW_CHARS) throw lineTooLong(name, lines + newlines)
    lines += newlines
    offset += chunk.length
    yield chunk
  }
  if (carry.length) throw notUtf8(name, lines, offset - carry.length)
}

/** How many leading bytes end on a character boundary (a trailing, possibly partial, sequence excluded). */
function completeUtf8Length(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]
    if (b < 0x80) return bytes.length // ASCII: nothing pending
    if (b >= 0xc0) {
      const needs = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2
      return needs > back ? bytes.length - back : bytes.length
    }
  }
  return bytes.length // continuation bytes only: let the check judge them
}

function countNewlines(bytes: Uint8Array): number {
  let n = 0
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++
  return n
}

/** The offset of the first byte that breaks UTF-8 (only called once isUtf8 said one does: to name where). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]
    const length = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0
    if (length === 0) return i
    for (let k = 1; k < length; k++) if (i + k >= bytes.length || (bytes[i + k] & 0xc0) !== 0x80) return i
    if (length > 1 && !isUtf8(bytes.subarray(i, i + length))) return i // overlong or surrogate forms
    i += length
  }
  return bytes.length
}

function notUtf8(name: string, line: number, byte: number): TrainpoolError {
  return new TrainpoolError(
    'invalid-input',
    `data: ${name} is not UTF-8 text (line ${line}, byte ${byte + 1} is not part of a UTF-8 character): save it as UTF-8 (most spreadsheet programs offer "CSV UTF-8")`,
  )
}

function lineTooLong(name: string, line: number): TrainpoolError {
  return new TrainpoolError(
    'invalid-input',
    `data: ${name} line ${line} is longer than ${MAX_ROW_CHARS / 2 ** 20} MiB: a row that long is not a table row (is the file one line, or are its line ends missing?)`,
  )
}

/** Reads the whole file; throws a TrainpoolError naming the line for every way a CSV can be broken. */
export async function readCsv(path: string, options: ReadOptions): Promise<ReadResult> {
  const hash = createHash('sha256')
  const bytes = checkedBytes(path, options.name, hash)
  // the header line decides the delimiter: gather bytes until it is complete (or a row's worth)
  const head: Buffer[] = []
  let headBytes = 0
  for (;;) {
    const next = await bytes.next()
    if (next.done) break
    head.push(next.value)
    headBytes += next.value.length
    if (next.value.includes(10) || headBytes > MAX_ROW_CHARS) break
  }
  const headText = Buffer.concat(head).toString('utf8')
  if (headText.replace(/^\uFEFF/, '').trim() === '')
    throw new TrainpoolError('invalid-input', `data: ${options.name} is empty: a CSV needs a header row naming the columns, then one row per example`)
  const newline = headText.indexOf('\n')
  const delimiter = detectDelimiter(headText.slice(0, newline >= 0 ? newline : MAX_ROW_CHARS))
  async function* all(): AsyncGenerator<Buffer> {
    yield* head
    yield* bytes
  }
  let builder: TableBuilder | null = null
  // seen as csv-parse parses (a broken row can stop the stream before the header reaches the builder)
  let headerFields = 0
  const onRecord = (record: string[]) => {
    if (headerFields === 0) headerFields = record.length
    return record
  }
  try {
    await pipeline(
      all(),
      parse({ delimiter, bom: true, skip_empty_lines: true, max_record_size: MAX_ROW_CHARS, on_record: onRecord }),
      async (records: AsyncIterable<string[]>) => {
        for await (const record of records) {
          if (!builder) builder = new TableBuilder(record, options.name, options.budgetBytes)
          else builder.addRow(record)
        }
      },
    )
  } catch (err) {
    if (err instanceof CsvError) throw csvProblem(err, options.name, headerFields)
    throw err
  }
  if (!builder)
    throw new TrainpoolError('invalid-input', `data: ${options.name} is empty: a CSV needs a header row naming the columns, then one row per example`)
  return { builder, sha256: hash.digest('hex') }
}

function csvProblem(err: CsvError, name: string, headerFields: number): TrainpoolError {
  const line = (err as CsvError & { lines?: number }).lines
  const at = `data: ${name} line ${line ?? '?'}`
  switch (err.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH': {
      const got = (err as CsvError & { record?: unknown[] }).record?.length
      return new TrainpoolError(
        'invalid-input',
        `${at} has ${got ?? 'a different number of'} fields but the header has ${headerFields}: every row needs one value per column (an empty value is written as nothing between two delimiters)`,
      )
    }
    case 'CSV_QUOTE_NOT_CLOSED':
      return new TrainpoolError(
        'invalid-input',
        `data: ${name} ends inside a quoted field: a " opened on line ${line ?? '?'} or before is never closed (a quote inside a quoted field is written "")`,
      )
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_CLOSING_QUOTE':
      return new TrainpoolError(
        'invalid-input',
        `${at} has a " inside a field that is not quoted as a whole: quote the whole field and double the quote inside it (e.g. "6"" pipe")`,
      )
    case 'CSV_MAX_RECORD_SIZE':
      return lineTooLong(name, line ?? 0)
    default:
      return new TrainpoolError('invalid-input', `${at}: not a CSV Trainpool can read: ${err.message}`)
  }
}
