// The store holds the user's runs, models and data, and is the user's alone: every folder Trainpool
// creates in it is 0700 and every file 0600, whatever the umask (the mode is given at creation, and
// a umask can only narrow it), and what an older version left 0755/0644 is narrowed at start-up.
// The one home of those modes: the run store, writer locks, the data cache and uploads create
// through these helpers.
import { constants, createWriteStream, promises as fs, type WriteStream } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600
/** group and others' bits: a mode with any of them set is not private */
const SHARED_BITS = 0o077
// never through a link (one may lead out of the store), never blocking on a FIFO; O_NOFOLLOW and
// O_NONBLOCK do not exist on Windows
const OPEN_NO_FOLLOW = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

/**
 * mkdir -p: each folder it makes is private (an existing one is left as it is). One level at a
 * time: mkdir's recursive mode never returns on some paths (/proc/self/x).
 */
export async function makePrivateDir(path: string): Promise<void> {
  const missing: string[] = []
  for (
    let at = resolve(path);
    !(await fs.stat(at).then(
      () => true,
      () => false,
    ));
    at = dirname(at)
  ) {
    missing.unshift(at)
    if (dirname(at) === at) break
  }
  for (const folder of missing) {
    await fs.mkdir(folder, { mode: PRIVATE_DIR_MODE }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err
    })
  }
}

/** Creates a new private file and opens it for writing; fails if the name exists ('wx': no link followed). */
export function createPrivateFile(path: string): Promise<fs.FileHandle> {
  return fs.open(path, 'wx', PRIVATE_FILE_MODE)
}

/** Writes a new private file whole; fails if the name exists. */
export function writePrivateFile(path: string, data: string): Promise<void> {
  return fs.writeFile(path, data, { mode: PRIVATE_FILE_MODE, flag: 'wx' })
}

/** A write stream into a new private file; fails (as a stream error) if the name exists. */
export function privateWriteStream(path: string): WriteStream {
  return createWriteStream(path, { mode: PRIVATE_FILE_MODE, flags: 'wx' })
}

/**
 * Narrows `path` and what lies below it, `depth` levels down: folders to 0700, regular files to
 * 0600 (only those readable by others; other kinds of entries and links are left alone, links not
 * followed). What cannot be changed (a shared store that is not this user's) stays. Never throws.
 */
export async function narrowToPrivate(path: string, depth: number): Promise<void> {
  const stats = await fs.lstat(path).catch(() => null)
  if (!stats || (!stats.isDirectory() && !stats.isFile())) return
  if (stats.mode & SHARED_BITS) await chmodNoFollow(path, stats.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE)
  if (!stats.isDirectory() || depth <= 0) return
  const names = await fs.readdir(path).catch(() => [] as string[])
  for (const name of names) await narrowToPrivate(join(path, name), depth - 1)
}

/** chmod through a descriptor opened without following a link, so an entry swapped for a link since lstat is not followed. */
async function chmodNoFollow(path: string, mode: number): Promise<void> {
  const handle = await fs.open(path, OPEN_NO_FOLLOW).catch(() => null)
  if (!handle) return
  try {
    const stats = await handle.stat()
    const wanted = mode === PRIVATE_DIR_MODE ? stats.isDirectory() : stats.isFile()
    if (wanted) await handle.chmod(mode)
  } catch {
    /* not ours to change: it stays as it is */
  } finally {
    await handle.close()
  }
}
