// The files a command writes where its user asked (export-models --out DIR; report and bench --json,
// --csv, --pdf FILE): each created new under a temporary name beside its final one ('wx': no link
// followed, nothing written in place), then renamed over that name, so a link planted there is
// replaced, never written through, and a failed write leaves nothing. Two things are not files and
// are written as they are, never replaced: a character device (/dev/null, a terminal), and standard
// output — `-`, or a link to it such as /dev/stdout — on the flags that take it (elsewhere such a
// link is refused). A link to anything else that is no regular file is refused rather than
// replaced, as is a FIFO (it would block until a reader came), a socket or a block device. A path
// that cannot take the file is an OutputError naming the flag: bad input (exit 2) or the disk failing (exit 1).
import { constants, fstatSync, promises as fs, type Stats } from 'node:fs'
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

export function failure(flag: string, path: string, what: string, err: unknown): OutputError {
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

/** `-` on a flag that takes it: standard output */
export const STDOUT_PATH = '-'

export interface OutputAccepts {
  /** `-` is standard output (else a file named -) */
  dashIsStdout?: boolean
}

/**
 * Refuses, before any work, a path that cannot take the file (see the header): a folder that does
 * not exist or is not a folder, a path that names a folder, a FIFO, a link to anything but a regular
 * file; the write itself can still fail (writeOutputFile says so).
 */
export async function checkOutputFile(flag: string, path: string, accepts: OutputAccepts = {}): Promise<void> {
  if (accepts.dashIsStdout && path === STDOUT_PATH) return
  await outputKind(flag, path, accepts)
}

/** Writes `content` to `path` (see the header); returns the path written (`-` for standard output). */
export async function writeOutputFile(flag: string, path: string, content: string | Uint8Array, accepts: OutputAccepts = {}): Promise<string> {
  const kind = accepts.dashIsStdout && path === STDOUT_PATH ? 'stdout' : await outputKind(flag, path, accepts)
  if (kind === 'stdout') {
    await new Promise<void>((done, fail) => process.stdout.write(content, (err) => (err ? fail(failure(flag, path, 'write to standard output', err)) : done())))
    return STDOUT_PATH
  }
  if (kind === 'device') return writeDevice(flag, path, content)
  return replaceFile(flag, path, content)
}

/** A character device is written as such, a link to this process's standard output (/dev/stdout) is it; anything else becomes a new file (see the header). */
async function outputKind(flag: string, path: string, accepts: OutputAccepts): Promise<'stdout' | 'device' | 'file'> {
  await checkFolderOf(flag, path)
  const file = resolve(path)
  const stats = await lstatOrNull(file).catch(() => null)
  if (!stats || stats.isFile()) return 'file'
  if (stats.isCharacterDevice()) return 'device'
  if (stats.isDirectory()) throw new OutputError(`${flag} ${path} is a folder: a file name is accepted`, 'usage')
  const accepted = `a file${accepts.dashIsStdout ? ', a character device such as /dev/null, or - for standard output' : ' or a character device such as /dev/null'} is accepted`
  if (!stats.isSymbolicLink()) throw new OutputError(`${flag} ${path} is ${describeFileType(stats)}: ${accepted}`, 'usage')
  // a link is replaced by the file, never written through; one that leads to no regular file is not replaced either
  const target = await fs.stat(file).catch(() => null)
  if (target && isStandardOutput(target)) {
    if (accepts.dashIsStdout) return 'stdout'
    throw new OutputError(
      `${flag} ${path} is ${await describeLink(file)}, this process's standard output: a file or a character device such as /dev/null is accepted`,
      'usage',
    )
  }
  if (!target || target.isFile()) return 'file'
  throw new OutputError(
    `${flag} ${path} is ${await describeLink(file)}, which is ${describeFileType(target)}: links are never written through; ${accepted}`,
    'usage',
  )
}

/** The same file as this process's standard output (what /dev/stdout leads to: a terminal, a pipe, a file it was redirected to) */
function isStandardOutput(stats: Stats): boolean {
  try {
    const stdout = fstatSync(1)
    return stdout.dev === stats.dev && stdout.ino === stats.ino
  } catch {
    return false
  }
}

/** The folder a file path names must exist and be a folder. */
async function checkFolderOf(flag: string, path: string): Promise<void> {
  const file = resolve(path)
  const folder = await fs.stat(dirname(file)).catch((err: unknown) => err as NodeJS.ErrnoException)
  if (folder instanceof Error) throw failure(flag, path, 'write there', folder)
  if (!folder.isDirectory()) throw new OutputError(`${flag} ${path}: ${dirname(file)} is ${describeFileType(folder)}, not a folder`, 'usage')
}

/** Writes into the character device at `path`: opened without following a link or creating anything, checked on the opened file. */
async function writeDevice(flag: string, path: string, content: string | Uint8Array): Promise<string> {
  const file = resolve(path)
  let handle: fs.FileHandle
  try {
    handle = await fs.open(file, constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NOCTTY ?? 0))
  } catch (err) {
    throw failure(flag, path, 'write to the device', err)
  }
  try {
    const stats = await handle.stat()
    // replaced since it was looked at: not what was checked
    if (!stats.isCharacterDevice()) throw new OutputError(`${flag} ${path} changed while being written: it is ${describeFileType(stats)} now`, 'usage')
    await handle.writeFile(content)
  } catch (err) {
    throw err instanceof OutputError ? err : failure(flag, path, 'write to the device', err)
  } finally {
    await handle.close()
  }
  return file
}

/** The file written new beside `path` and renamed over it: nothing written in place, a link replaced. */
async function replaceFile(flag: string, path: string, content: string | Uint8Array): Promise<string> {
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
