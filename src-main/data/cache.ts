// The store's data cache: one folder per loaded data set, named by the file's content sha256, so the
// same bytes are parsed once whatever they are called and wherever they lie. A folder appears whole
// or not at all: it is written under a temporary name and renamed into place, so a failed or killed
// load leaves nothing a reader could mistake for a data set. The run store's listing skips it (its
// name starts with '.', which no run id may contain).
//
//   <storeDir>/.datasets/<sha256>/info.json   DataSetInfo (src-shared/contract/dataset.ts)
//   <storeDir>/.datasets/<sha256>/table.f32   the numeric columns (table-file.ts)
import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { type DataSetInfo, DataSetInfoSchema, SHA256_PATTERN, TrainpoolError } from '@shared/contract'
import { writeTable } from './table-file'

export const DATASETS_DIR = '.datasets'
export const INFO_FILE = 'info.json'
export const TABLE_FILE = 'table.f32'
const PARTIAL_PREFIX = '.partial-'

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
  let text: string
  try {
    text = await fs.readFile(join(dir, INFO_FILE), 'utf8')
    await fs.access(join(dir, TABLE_FILE))
  } catch {
    return null
  }
  try {
    const info = DataSetInfoSchema.parse(JSON.parse(text))
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
  return join(datasetsDir(storeDir), `${PARTIAL_PREFIX}${randomBytes(6).toString('hex')}`)
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
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TrainpoolError('not-found', `data set ${sha256} is not in the data cache (${datasetsDir(storeDir)})`)
    throw err
  }
  await fs.rm(aside, { recursive: true, force: true })
}

/** Puts a parsed table in the cache, whole or not at all (an existing entry with the same sha wins). */
export async function installInCache(storeDir: string, info: DataSetInfo, columns: readonly (readonly Float32Array[])[]): Promise<void> {
  const root = datasetsDir(storeDir)
  await fs.mkdir(root, { recursive: true })
  const partial = partialDir(storeDir)
  await fs.mkdir(partial)
  try {
    const handle = await fs.open(join(partial, TABLE_FILE), 'w')
    try {
      await writeTable(handle, info.rows, columns)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await writeFileSynced(join(partial, INFO_FILE), JSON.stringify(info, null, 2))
    try {
      await fs.rename(partial, cacheDir(storeDir, info.sha256))
    } catch (err) {
      // another load of the same bytes finished first: its folder is as good as ours
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err
    }
  } finally {
    await fs.rm(partial, { recursive: true, force: true })
  }
}

/** Rewrites a cached set's info.json (a new path, name or load time) atomically. */
export async function updateCachedInfo(storeDir: string, info: DataSetInfo): Promise<void> {
  const file = join(cacheDir(storeDir, info.sha256), INFO_FILE)
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`
  try {
    await writeFileSynced(temp, JSON.stringify(info, null, 2))
    await fs.rename(temp, file)
  } finally {
    await fs.rm(temp, { force: true })
  }
}

async function writeFileSynced(path: string, text: string): Promise<void> {
  const handle = await fs.open(path, 'w')
  try {
    await handle.writeFile(text, 'utf8')
    await handle.sync()
  } finally {
    await handle.close()
  }
}
