// Reads a Parquet file into a TableBuilder with hyparquet, one row group at a time (so only a row
// group's decoded columns are in memory besides the table), all compressions hyparquet-compressors
// knows (snappy, gzip, zstd, brotli, lz4). Flat columns only: a nested column (list, struct, map)
// becomes a text column, like any other column Trainpool cannot train on. Any failure inside the
// library means the file is not a Parquet file it can read: said with the library's reason.
import { asyncBufferFromFile, parquetMetadataAsync, parquetRead, parquetSchema, type FileMetaData } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { TrainpoolError } from '@shared/contract'
import type { ReadOptions } from './csv-reader'
import { type Cell, TableBuilder } from './table-builder'

/** The 4 bytes a Parquet file starts (and ends) with. */
export const PARQUET_MAGIC = 'PAR1'

export async function readParquet(path: string, options: ReadOptions): Promise<TableBuilder> {
  const file = await asyncBufferFromFile(path)
  let metadata: FileMetaData
  let fields: ReturnType<typeof parquetSchema>['children']
  try {
    metadata = await parquetMetadataAsync(file)
    // the schema tree is built from the footer's counts: a damaged footer throws here too
    fields = parquetSchema(metadata).children
  } catch (err) {
    throw unreadable(options.name, err)
  }
  if (fields.length === 0) throw new TrainpoolError('invalid-input', `data: ${options.name} has no columns`)
  const names = fields.map((f) => f.element.name)
  const nameless = names.findIndex((name) => typeof name !== 'string')
  if (nameless >= 0) throw unreadable(options.name, new Error(`column ${nameless + 1} has no name`))
  const builder = new TableBuilder(names, options.name, options.budgetBytes)
  const flat = fields.map((f) => f.children.length === 0)
  const index = new Map(names.map((name, i) => [name, i]))
  let rowStart = 0
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows)
    const start = rowStart
    try {
      await parquetRead({
        file,
        metadata,
        compressors,
        rowStart: start,
        rowEnd,
        onChunk: ({ columnName, columnData, rowStart: chunkStart, rowEnd: chunkEnd }) => {
          const column = index.get(columnName)
          if (column === undefined) return
          // chunks may reach outside the rows asked for: keep only this group's, so nothing counts twice
          const from = Math.max(chunkStart, start)
          const to = Math.min(chunkEnd, rowEnd)
          if (to <= from) return
          const [a, b] = [from - chunkStart, to - chunkStart]
          // numeric columns often come as typed arrays: a view, not a copy
          const cells: ArrayLike<Cell> = ArrayBuffer.isView(columnData) ? (columnData as Float64Array).subarray(a, b) : (columnData as Cell[]).slice(a, b)
          builder.addColumnRun(
            column,
            from,
            flat[column] ? cells : Array.from(cells, (c) => (c === null || c === undefined ? c : JSON.stringify(c, bigintAsText))),
          )
        },
      })
    } catch (err) {
      if (err instanceof TrainpoolError) throw err
      throw unreadable(options.name, err)
    }
    rowStart = rowEnd
  }
  return builder
}

function bigintAsText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}

function unreadable(name: string, err: unknown): TrainpoolError {
  const reason = err instanceof Error ? err.message : String(err)
  return new TrainpoolError('invalid-input', `data: ${name} starts like a Parquet file but Trainpool cannot read it (${reason})`)
}
