// The store's data cache: one folder per loaded data set, named by the file's content sha256, so the
// same bytes are parsed once whatever they are called. A folder appears whole or not at all (written
// under a temporary name, then renamed); its name starts with '.', so the run store skips it. It is
// private like the whole store (store/private-files.ts). Layout: README.md, "The cache".
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { type DataSetInfo, DataSetInfoSchema, SHA256_PATTERN, TrainpoolError } from '@shared/contract'
import { removeAbandonedTemps, tempName } from '../store/leftovers'
import { createPrivateFile, makePrivateDir, narrowToPrivate, PRIVATE_DIR_MODE } from '../store/private-files'
import { readRegularFile } from '../store/regular-file'
import { writeTable } from './table-file'

export const DATASETS_DIR = '.datasets'
export const INFO_FILE = 'info.json'
export const TABLE_FILE = 'table.f32'
/**
 * The most an info.json may weigh to be read: its preview holds up to 10 rows, each at most
 * MAX_ROW_CHARS (csv-reader.ts, 8 MiB), besides one entry per column.
 */
const MAX_INFO_BYTES = 96 * 2 ** 20
/** partial folders named by versions before their writer's pid was in the name: removed once this old */
const LEGACY_PARTIAL_PREFIX = '.partial-'
const LEGACY_PARTIAL_ABANDONED_MS = 10 * 60_000
/** the cache could not be written for one of these: the store's folder is not one this user can write */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ELOOP', 'EEXIST'])

export function datasetsDir(storeDir: string): string {
  return join(storeDir, DATASETS_DIR)
}

export function cacheDir(storeDir: string, sha256: string): string {
  if (!SHA256_PATTERN.test(sha256)) throw new TrainpoolError('invalid-input', `sha256 ${JSON.stringify(sha256)} is not valid: 64 lowercase hex digits`)
  return join(datasetsDir(storeDir), sha256)
}

/** The table file a worker reads. */
export function tablePath(storeDir: string, sha256: string): string {
  return join(cacheDir(storeDir, sha256), TABLE_FILE)
}

/** A cached set's info, or null when it is not cached (or its folder is damaged: it is then loaded again). */
export async function readCachedInfo(storeDir: string, sha256: string): Promise<DataSetInfo | null> {
  const dir = cacheDir(storeDir, sha256)
  // a FIFO or a link in the cache is not read (nor waited on): the set is then loaded again
  const read = await readRegularFile(join(dir, INFO_FILE), MAX_INFO_BYTES)
  if (read.kind !== 'file') return null
  const table = await fs.lstat(join(dir, TABLE_FILE)).catch(() => null)
  if (!table?.isFile()) return null
  try {
    const info = DataSetInfoSchema.parse(JSON.parse(read.text))
    return info.sha256 === sha256 ? info : null
  } catch {
    return null
  }
}

/** The cached set's info; a not-found error that says what to do when it is not cached. */
export async function dataSetInfo(storeDir: string, sha256: string): Promise<DataSetInfo> {
  const info = await readCachedInfo(storeDir, sha256)
  if (!info) throw new TrainpoolError('not-found', `data set ${sha256} is not in the data cache (${datasetsDir(storeDir)}): load its file again`)
  return info
}

/** Every cached set, the most recently loaded first; damaged folders are left out. */
export async function listDataSets(storeDir: string): Promise<DataSetInfo[]> {
  let names: string[]
  try {
    names = await fs.readdir(datasetsDir(storeDir))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  const infos = await Promise.all(names.filter((n) => SHA256_PATTERN.test(n)).map((n) => readCachedInfo(storeDir, n)))
  return infos.filter((i): i is DataSetInfo => i !== null).sort((a, b) => b.loadedAt.localeCompare(a.loadedAt))
}

/** A fresh name beside the cached sets for a folder in the making or on its way out (never listed: not a sha256). */
function partialDir(storeDir: string): string {
  return join(datasetsDir(storeDir), tempName('partial'))
}

/**
 * Removes the partial folders of loads killed halfway (their writer's pid is gone from this
 * machine; an older version's, named without a pid, once unchanged for 10 minutes) and info.json
 * temp files left in cached sets. A live load's folder stays.
 */
async function removeAbandonedPartials(storeDir: string): Promise<void> {
  const root = datasetsDir(storeDir)
  await removeAbandonedTemps(root)
  const names = await fs.readdir(root).catch(() => [] as string[])
  for (const name of names) {
    const path = join(root, name)
    if (SHA256_PATTERN.test(name)) {
      if ((await fs.lstat(path).catch(() => null))?.isDirectory()) await removeAbandonedTemps(path)
    } else if (name.startsWith(LEGACY_PARTIAL_PREFIX)) {
      const stats = await fs.lstat(path).catch(() => null)
      if (stats && Date.now() - stats.mtimeMs > LEGACY_PARTIAL_ABANDONED_MS) await fs.rm(path, { recursive: true, force: true }).catch(() => undefined)
    }
  }
}

/**
 * Removes a cached set, whole: its folder is renamed aside first (a reader sees the set or nothing),
 * then deleted. A worker that already opened its table keeps reading it (POSIX). Not cached: not-found.
 */
export async function removeFromCache(storeDir: string, sha256: string): Promise<void> {
  const dir = cacheDir(storeDir, sha256)
  const aside = partialDir(storeDir)
  try {
    await fs.rename(dir, aside)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TrainpoolError('not-found', `data set ${sha256} is not in the data cache (${datasetsDir(storeDir)})`)
    throw err
  }
  await fs.rm(aside, { recursive: true, force: true })
}

/**
 * Puts a parsed table in the cache, whole or not at all. An existing entry with the same sha wins,
 * unless `replace` (one cached in an older layout, read again): it is removed just before this one
 * is renamed into place.
 */
export async function installInCache(
  storeDir: string,
  info: DataSetInfo,
  columns: readonly (readonly Float32Array[])[],
  { replace = false }: { replace?: boolean } = {},
): Promise<void> {
  const root = datasetsDir(storeDir)
  const partial = partialDir(storeDir)
  try {
    await makePrivateDir(root)
    // made by an older version (0755): the cache holds the user's data (best effort: a shared store may not be ours)
    await narrowToPrivate(root, 0)
    await fs.mkdir(partial, { mode: PRIVATE_DIR_MODE })
  } catch (err) {
    throw cacheNotWritable(storeDir, err)
  }
  try {
    const handle = await createPrivateFile(join(partial, TABLE_FILE))
    try {
      await writeTable(handle, info.rows, columns)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await writeFileSynced(join(partial, INFO_FILE), JSON.stringify(info, null, 2))
    if (replace) await removeFromCache(storeDir, info.sha256).catch(unlessNotCached)
    try {
      await fs.rename(partial, cacheDir(storeDir, info.sha256))
    } catch (err) {
      // another load of the same bytes finished first: its folder is as good as ours
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err
    }
  } catch (err) {
    throw cacheNotWritable(storeDir, err)
  } finally {
    await fs.rm(partial, { recursive: true, force: true })
  }
}

/** A removal's error, unless the set was not cached (any more): nothing to remove. */
function unlessNotCached(err: unknown): void {
  if (!(err instanceof TrainpoolError && err.code === 'not-found')) throw err
}

/** Rewrites a cached set's info.json (a new path, name or load time) atomically. */
export async function updateCachedInfo(storeDir: string, info: DataSetInfo): Promise<void> {
  const dir = cacheDir(storeDir, info.sha256)
  const temp = join(dir, tempName(INFO_FILE))
  try {
    await writeFileSynced(temp, JSON.stringify(info, null, 2))
    await fs.rename(temp, join(dir, INFO_FILE))
  } catch (err) {
    throw cacheNotWritable(storeDir, err)
  } finally {
    await fs.rm(temp, { force: true })
  }
}

async function writeFileSynced(path: string, text: string): Promise<void> {
  const handle = await createPrivateFile(path)
  try {
    await handle.writeFile(text, 'utf8')
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * A store folder this user cannot write (read-only, a plain file, a link that loops, no permission):
 * said naming the path, as an error on the store (field `store`). Other failures (a full disk) pass as they are.
 */
function cacheNotWritable(storeDir: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code
  if (code === undefined || !NOT_WRITABLE.has(code)) return err
  const message = `the data cache ${datasetsDir(storeDir)} cannot be written (${code}: ${describeCode(code)}): the run store must be a folder this user can write`
  return new TrainpoolError('invalid-input', message, [{ field: 'store', message }])
}

function describeCode(code: string): string {
  switch (code) {
    case 'EROFS':
      return 'a read-only file system'
    case 'ENOTDIR':
    case 'EEXIST':
      return 'a part of the path is a file, not a folder'
    case 'ELOOP':
      return 'a symbolic link in the path loops'
    default:
      return 'permission denied'
  }
}

/** The data cache's start-up check (service/open-service.ts): what killed loads left removed, what an older version left readable by others made private. */
export async function tidyDataCache(storeDir: string): Promise<void> {
  await removeAbandonedPartials(storeDir)
  // <sha256>/FILE
  await narrowToPrivate(datasetsDir(storeDir), 2)
}
