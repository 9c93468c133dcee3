// loadDataFile: the one way a user's file becomes a data set. Hash the bytes (the cache key); if
// they were loaded before, return the cached info (parse skipped); else read Parquet by its magic
// bytes, anything else as CSV, and install the table in the cache. A set cached in an older layout
// (DATA_CACHE_VERSION) is read again and replaced, so loading a file again gives it what this
// version keeps (text labels as codes). Every refusal names the file and comes before the cache is
// touched; a caller learns if this load added the set (loadIntoCache).
import { createHash } from 'node:crypto'
import { createReadStream, promises as fs, type Stats } from 'node:fs'
import os from 'node:os'
import { basename, resolve } from 'node:path'
import { DATA_CACHE_VERSION, type DataFormat, type DataSetInfo, TrainpoolError } from '@shared/contract'
import { installInCache, readCachedInfo, updateCachedInfo } from './cache'
import { readCsv } from './csv-reader'
import { PARQUET_MAGIC, readParquet } from './parquet-reader'
import type { TableBuilder } from './table-builder'

export interface LoadOptions {
  /** the most a table's numeric columns may take in memory while loading (default: a quarter of RAM) */
  budgetBytes?: number
  /** the name shown and stored (default: the file's base name; an upload passes the name it was given) */
  name?: string
}

export function defaultBudgetBytes(): number {
  return Math.floor(os.totalmem() / 4)
}

export async function loadDataFile(path: string, storeDir: string, options: LoadOptions = {}): Promise<DataSetInfo> {
  return (await loadIntoCache(path, storeDir, options)).info
}

/** loadDataFile, and whether this call added the set to the cache (false: those bytes were cached already). */
export async function loadIntoCache(path: string, storeDir: string, options: LoadOptions = {}): Promise<{ info: DataSetInfo; added: boolean }> {
  const file = resolve(path)
  const name = options.name ?? basename(file)
  const before = await statDataFile(file, name)
  const sha256 = await readingFile(file, () => sha256File(file))
  const cached = await readCachedInfo(storeDir, sha256)
  const current = cached !== null && (cached.cacheVersion ?? 1) >= DATA_CACHE_VERSION
  if (cached && current) {
    const info: DataSetInfo = { ...cached, name, path: file, loadedAt: new Date().toISOString(), loadMs: 0 }
    // the table is there whole: a store that cannot take the new name and time (read-only, full)
    // still serves it; the recent list keeps the old ones
    await updateCachedInfo(storeDir, info).catch(() => undefined)
    return { info, added: false }
  }

  const started = performance.now()
  const format = await readingFile(file, () => formatOf(file))
  const budgetBytes = options.budgetBytes ?? defaultBudgetBytes()
  let builder: TableBuilder
  if (format === 'parquet') builder = await readingFile(file, () => readParquet(file, { name, budgetBytes }))
  else {
    const read = await readingFile(file, () => readCsv(file, { name, budgetBytes }))
    if (read.sha256 !== sha256) throw changedWhileReading(name)
    builder = read.builder
  }
  const after = await statDataFile(file, name)
  if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw changedWhileReading(name)
  const table = builder.finish()
  if (table.rows === 0) {
    throw new TrainpoolError('invalid-input', `data: ${name} has a header but no rows: a data set needs one row per example under the header`)
  }
  const info: DataSetInfo = {
    sha256,
    name,
    path: file,
    format,
    bytes: before.size,
    rows: table.rows,
    columns: table.columns,
    preview: table.preview,
    loadedAt: new Date().toISOString(),
    loadMs: Math.round(performance.now() - started),
    cacheVersion: DATA_CACHE_VERSION,
  }
  await installInCache(
    storeDir,
    info,
    table.stored.map((c) => c.chunks),
    { replace: cached !== null },
  )
  // a set re-read in the current layout was cached before: this load did not add it
  return { info, added: cached === null }
}

/** A read of the user's file that fails for the file's sake (permissions, an I/O error) says so, naming it. */
async function readingFile<T>(file: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (err) {
    if (err instanceof TrainpoolError) throw err
    const code = (err as NodeJS.ErrnoException).code
    if (code === undefined) throw err
    throw new TrainpoolError('invalid-input', `data: ${file} cannot be read (${code}: ${(err as Error).message.replace(/^\w+: /, '')})`)
  }
}

async function statDataFile(file: string, name: string): Promise<Stats> {
  let stats: Stats
  try {
    stats = await fs.stat(file)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new TrainpoolError('not-found', `data: there is no file ${file} (was it moved or deleted?); choose the file again`)
    throw new TrainpoolError('invalid-input', `data: ${file} cannot be read: ${(err as Error).message}`)
  }
  if (!stats.isFile()) throw new TrainpoolError('invalid-input', `data: ${file} is not a file; choose a CSV or Parquet file`)
  if (stats.size === 0)
    throw new TrainpoolError('invalid-input', `data: ${name} is empty: a CSV needs a header row naming the columns, then one row per example`)
  return stats
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) hash.update(chunk)
  return hash.digest('hex')
}

async function formatOf(file: string): Promise<DataFormat> {
  const handle = await fs.open(file, 'r')
  try {
    const head = Buffer.alloc(4)
    const { bytesRead } = await handle.read(head, 0, 4, 0)
    return bytesRead === 4 && head.toString('latin1') === PARQUET_MAGIC ? 'parquet' : 'csv'
  } finally {
    await handle.close()
  }
}

function changedWhileReading(name: string): TrainpoolError {
  return new TrainpoolError('invalid-input', `data: ${name} changed while it was being read; load it again once it is no longer being written`)
}
