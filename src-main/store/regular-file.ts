// Reading a file Trainpool wrote (run.json, a writer lock, a data set's info.json) from a folder
// anyone on this machine may have put anything in: only a regular file, never more than a cap,
// opened without following a link and without blocking, judged by fstat before a byte is read
// (a FIFO would block, /dev/zero never ends, a link may point anywhere or loop).
import { constants, promises as fs, type Stats } from 'node:fs'

/** A regular file's text; or nothing there; or why what is there cannot be used (words after "run.json …"). */
export type RegularFileRead = { kind: 'file'; text: string; stats: Stats } | { kind: 'missing' } | { kind: 'unusable'; why: string }

// O_NOFOLLOW and O_NONBLOCK do not exist on Windows (no FIFOs or links to fear there in the same way)
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

/** The words for what a non-regular file is ("a FIFO (named pipe)", "a folder", …). */
export function describeFileType(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder'
  if (stats.isFIFO()) return 'a FIFO (named pipe)'
  if (stats.isCharacterDevice()) return 'a character device'
  if (stats.isBlockDevice()) return 'a block device'
  if (stats.isSocket()) return 'a socket'
  if (stats.isSymbolicLink()) return 'a symbolic link'
  return 'a regular file'
}

/** "a symbolic link to /dev/zero", "a symbolic link that loops (to a)": what a link is, without reading through it. */
export async function describeLink(path: string): Promise<string> {
  const target = await fs.readlink(path).catch(() => '?')
  const loops = await fs.stat(path).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ELOOP',
  )
  return loops ? `a symbolic link that loops (to ${target})` : `a symbolic link to ${target}`
}

/** An opened regular file (the caller closes it); or nothing there; or why what is there cannot be used. */
export type RegularFileOpen = { kind: 'file'; handle: fs.FileHandle; stats: Stats } | { kind: 'missing' } | { kind: 'unusable'; why: string }

/**
 * Opens a regular file of at most maxBytes, judged by fstat before a byte is read, for a reader that
 * takes it in pieces (models.json, one model at a time). A missing file is `missing`; anything else
 * that is not such a file is `unusable` with the reason; other open errors (permissions) too.
 */
export async function openRegularFile(path: string, maxBytes: number, options: { followLinks?: boolean } = {}): Promise<RegularFileOpen> {
  const followLinks = options.followLinks === true
  const onlyOurs = followLinks ? '' : '; Trainpool reads only regular files it wrote'
  let handle: fs.FileHandle
  try {
    handle = await fs.open(path, followLinks ? OPEN_FLAGS & ~(constants.O_NOFOLLOW ?? 0) : OPEN_FLAGS)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' }
    if (code === 'ELOOP') return { kind: 'unusable', why: `is ${await describeLink(path)}${onlyOurs}` }
    if (code === 'EISDIR') return { kind: 'unusable', why: 'is a folder, not a file' }
    return { kind: 'unusable', why: `cannot be read (${code ?? (err as Error).message})` }
  }
  let why: string
  try {
    const stats = await handle.stat()
    if (stats.isFile() && stats.size <= maxBytes) return { kind: 'file', handle, stats }
    why = stats.isFile() ? tooLarge(stats.size, maxBytes) : `is ${describeFileType(stats)}, not a file${onlyOurs}`
  } catch (err) {
    why = `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`
  }
  await handle.close()
  return { kind: 'unusable', why }
}

/**
 * Reads a regular file of at most maxBytes as UTF-8 (openRegularFile, then the whole text). A path the
 * user named (`report F.json`) may be a link to their file: `followLinks` reads through it, and
 * what it leads to is judged the same way.
 */
export async function readRegularFile(path: string, maxBytes: number, options: { followLinks?: boolean } = {}): Promise<RegularFileRead> {
  const opened = await openRegularFile(path, maxBytes, options)
  if (opened.kind !== 'file') return opened
  const { handle, stats } = opened
  try {
    // one byte more than the cap tells a file that grew since fstat from one that fits
    const buffer = Buffer.alloc(stats.size + 1)
    let length = 0
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
      if (bytesRead === 0) break
      length += bytesRead
    }
    if (length > maxBytes) return { kind: 'unusable', why: tooLarge(length, maxBytes) }
    return { kind: 'file', text: buffer.toString('utf8', 0, length), stats }
  } catch (err) {
    return { kind: 'unusable', why: `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` }
  } finally {
    await handle.close()
  }
}

function tooLarge(bytes: number, maxBytes: number): string {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`
  return `is ${mib(bytes)}, over the ${mib(maxBytes)} Trainpool reads for such a file`
}
