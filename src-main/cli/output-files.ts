// The files a command writes where its user asked (export-models --out DIR; report and bench --json,
// --csv, --pdf FILE): each created new under a temporary name beside its final one ('wx': no link
// followed, nothing written in place), then renamed over that name, so a link planted there is
// replaced, never written through, and a failed write leaves nothing. A path that cannot take them
// is an OutputError naming the flag: bad input (exit 2) or the disk failing (exit 1).
import { promises as fs, type Stats } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { tempName } from '../store/leftovers'
import { describeFileType, describeLink } from '../store/regular-file'

/** A path given on a flag cannot be written: `usage` when the path is the problem, `failed` when the disk is. */
export class OutputError extends Error {
  constructor(
    message: string,
    readonly exit: 'usage' | 'failed',
  ) {
    super(message)
  }
}

/** errors about the path itself (where, what, whose); any other (ENOSPC, EIO, EFBIG, EDQUOT) is the disk failing */
const PATH_ERRORS = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ELOOP', 'EACCES', 'EPERM', 'EROFS', 'ENAMETOOLONG', 'EEXIST', 'EINVAL', 'EXDEV'])

/** "ENOSPC: no space left on device" from Node's "ENOSPC: no space left on device, write" */
function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  return message.split(', ')[0]
}

function failure(flag: string, path: string, what: string, err: unknown): OutputError {
  const code = (err as NodeJS.ErrnoException).code
  return new OutputError(`${flag} ${path}: cannot ${what} (${reason(err)})`, code !== undefined && PATH_ERRORS.has(code) ? 'usage' : 'failed')
}

/** null when nothing is there, or a part of the path is no folder (which the caller then finds) */
async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await fs.lstat(path)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    throw err
  }
}

/**
 * The folder `path` names, made (with any missing parents) when it does not exist; refused when it
 * is a link (it could lead anywhere), a file, or lies under a file. `made` lists the folders this
 * call created, deepest last (removeFolders takes them away again after a failed write).
 */
export async function outputFolder(flag: string, path: string): Promise<{ dir: string; made: string[] }> {
  const dir = resolve(path)
  let stats: Stats | null
  try {
    stats = await lstatOrNull(dir)
  } catch (err) {
    throw failure(flag, path, 'use it as a folder', err)
  }
  if (stats?.isSymbolicLink())
    throw new OutputError(`${flag} ${path} is ${await describeLink(dir)}: a real folder is accepted (a link could lead the files anywhere)`, 'usage')
  if (stats && !stats.isDirectory()) throw new OutputError(`${flag} ${path} is ${describeFileType(stats)}: a folder is accepted`, 'usage')
  if (stats) return { dir, made: [] }
  // one level at a time: mkdir's recursive mode never returns on some paths (/proc/self/x)
  const missing: string[] = []
  for (let at = dir; ; at = dirname(at)) {
    const found = await fs.stat(at).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ENOTDIR' ? null : err))
    if (found instanceof Error) throw failure(flag, path, `make the folder (${at})`, found)
    if (found && !found.isDirectory()) throw new OutputError(`${flag} ${path}: ${at} is ${describeFileType(found)}, not a folder`, 'usage')
    if (found) break
    missing.unshift(at)
    if (dirname(at) === at) break
  }
  const made: string[] = []
  for (const folder of missing) {
    try {
      await fs.mkdir(folder)
      made.push(folder)
    } catch (err) {
      await removeFolders(made)
      throw failure(flag, path, `make the folder ${folder}`, err)
    }
  }
  return { dir, made }
}

/** Takes away folders outputFolder made, deepest first, each only while empty. */
export async function removeFolders(made: readonly string[]): Promise<void> {
  for (const folder of [...made].reverse()) await fs.rmdir(folder).catch(() => undefined)
}

/**
 * Refuses, before any work, a file path whose folder does not exist or is not a folder, or that
 * names a folder; the write itself can still fail (writeOutputFile says so).
 */
export async function checkOutputFile(flag: string, path: string): Promise<void> {
  const file = resolve(path)
  const folder = await fs.stat(dirname(file)).catch((err: unknown) => err as NodeJS.ErrnoException)
  if (folder instanceof Error) throw failure(flag, path, 'write there', folder)
  if (!folder.isDirectory()) throw new OutputError(`${flag} ${path}: ${dirname(file)} is ${describeFileType(folder)}, not a folder`, 'usage')
  const stats = await lstatOrNull(file).catch(() => null)
  if (stats?.isDirectory()) throw new OutputError(`${flag} ${path} is a folder: a file name is accepted`, 'usage')
}

/** Writes `content` as the file `path` (see the header); returns the path written. */
export async function writeOutputFile(flag: string, path: string, content: string | Uint8Array): Promise<string> {
  await checkOutputFile(flag, path)
  const file = resolve(path)
  const temp = join(dirname(file), tempName(basename(file)))
  try {
    const handle = await fs.open(temp, 'wx')
    try {
      await handle.writeFile(content)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.rename(temp, file)
  } catch (err) {
    await fs.rm(temp, { force: true }).catch(() => undefined)
    throw failure(flag, path, 'write the file', err)
  }
  return file
}

/** Writes `name` (a plain file name: nothing outside `dir`) in the folder outputFolder gave. */
export async function writeInFolder(flag: string, dir: string, name: string, content: string | Uint8Array): Promise<string> {
  if (name !== basename(name) || name === '.' || name === '..') throw new Error(`${name} is not a plain file name`)
  return writeOutputFile(flag, join(dir, name), content)
}
