// The cached table's binary file: the numeric columns, then the text columns kept as codes, as
// little-endian float32, one column after another, so a worker reads only the target and its
// features (one positioned read each, never the whole file, never the CSV). NaN marks a missing
// value. A 16-byte header (magic "TPTABLE1", rows, columns) lets a reader refuse a truncated or
// foreign file. Which column is where: src-shared/data-columns.ts tableColumns. The layout: README.md, "The cache".
import { closeSync, constants, openSync, readSync, fstatSync } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { TrainpoolError } from '@shared/contract'

export const TABLE_MAGIC = 'TPTABLE1'
export const TABLE_HEADER_BYTES = 16

export function tableHeader(rows: number, columns: number): Buffer {
  const header = Buffer.alloc(TABLE_HEADER_BYTES)
  header.write(TABLE_MAGIC, 0, 'latin1')
  header.writeUInt32LE(rows, 8)
  header.writeUInt32LE(columns, 12)
  return header
}

/**
 * Writes the table to an open file (the cache writes it into a folder it renames into place). Each
 * column comes as the chunks it was read into, together at least `rows` long; the first `rows`
 * values are written.
 */
export async function writeTable(handle: FileHandle, rows: number, columns: readonly (readonly Float32Array[])[]): Promise<void> {
  await handle.write(tableHeader(rows, columns.length), 0, TABLE_HEADER_BYTES, 0)
  let position = TABLE_HEADER_BYTES
  for (const chunks of columns) {
    let left = rows
    for (const chunk of chunks) {
      if (left === 0) break
      const part = chunk.subarray(0, Math.min(left, chunk.length))
      await handle.write(Buffer.from(part.buffer, part.byteOffset, part.byteLength), 0, part.byteLength, position)
      position += part.byteLength
      left -= part.length
    }
    if (left > 0) throw new Error(`a table column has ${rows - left} values, expected ${rows}`)
  }
}

/**
 * Reads some columns of a cached table (synchronously: a worker's prepare step is synchronous).
 * `columns` are indices among the table's columns (src-shared/data-columns.ts tableColumns); the result is in the same order.
 */
export function readTableColumns(path: string, columns: readonly number[]): { rows: number; values: Float32Array[] } {
  let fd: number
  try {
    // never blocks on a FIFO nor follows a link put in the cache's place
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0))
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'it is no longer there (was the data cache cleared?)' : (err as Error).message
    throw new TrainpoolError('not-found', `data: the cached table ${path} cannot be read: ${why}; load the data file again`)
  }
  try {
    const header = Buffer.alloc(TABLE_HEADER_BYTES)
    const stats = fstatSync(fd)
    if (!stats.isFile()) throw damaged(path, 'it is not a regular file')
    const size = stats.size
    if (readSync(fd, header, 0, TABLE_HEADER_BYTES, 0) !== TABLE_HEADER_BYTES || header.toString('latin1', 0, 8) !== TABLE_MAGIC) {
      throw damaged(path, 'it does not start with a Trainpool table header')
    }
    const rows = header.readUInt32LE(8)
    const count = header.readUInt32LE(12)
    if (size !== TABLE_HEADER_BYTES + rows * count * 4)
      throw damaged(path, `it has ${size} bytes, expected ${TABLE_HEADER_BYTES + rows * count * 4} for ${rows} rows × ${count} columns`)
    const values = columns.map((k) => {
      if (!Number.isInteger(k) || k < 0 || k >= count) throw damaged(path, `column ${k} was asked for, it has ${count}`)
      const out = new Float32Array(rows)
      const bytes = new Uint8Array(out.buffer)
      const offset = TABLE_HEADER_BYTES + k * rows * 4
      for (let done = 0; done < bytes.length;) {
        const n = readSync(fd, bytes, done, bytes.length - done, offset + done)
        if (n === 0) throw damaged(path, 'it ended early')
        done += n
      }
      return out
    })
    return { rows, values }
  } finally {
    closeSync(fd)
  }
}

function damaged(path: string, why: string): TrainpoolError {
  return new TrainpoolError('damaged', `data: the cached table ${path} is damaged (${why}); load the data file again`)
}
