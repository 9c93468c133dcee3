// Browser mode's data-file upload (POST /api/upload?name=FILE): streamed to a fresh folder under
// the store's .uploads, counted against the cap and hashed on the way, moved to
// .uploads/<sha256>/<name>, then loaded into the data cache by the service. Bytes the store already
// holds are compared as they arrive, not written (ArrivingFile): a re-upload needs no room. A body
// cut off, over the cap, or a file that does not load leaves nothing behind; a full disk is
// answered 507. The token, Host and Origin checks come first (server.ts). Details: README.md, "Uploads".
import { createHash, randomUUID } from 'node:crypto'
import { constants, promises as fs } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { basename, dirname, join } from 'node:path'
import { Transform, Writable } from 'node:stream'
import { finished, pipeline } from 'node:stream/promises'
import type { DataSetInfo, TrainpoolErrorShape } from '@shared/contract'
import { toErrorShape } from '@shared/contract'
import { DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_UPLOAD_IDLE_SECONDS, UPLOAD_NAME_QUERY, uploadNameProblem } from '@shared/contract/upload'
import { formatBytes } from '@shared/format'
import { makePrivateDir, privateWriteStream } from '../store/private-files'

export interface UploadOptions {
  /** where uploads arrive: one new folder per upload (the service's uploadDir(): <store>/.uploads) */
  dir: string
  /** bytes; larger bodies are refused with 413 (default 2 GiB) */
  maxBytes?: number
  /** ms without a byte arriving before an upload is given up (default DEFAULT_UPLOAD_IDLE_SECONDS) */
  idleTimeoutMs?: number
  /** loads the arrived file into the data cache (the service's importDataFile) */
  load: (path: string) => Promise<DataSetInfo>
  /** opens the file the bytes stream into (default a new private file; a test gives one whose disk fills) */
  openArriving?: (path: string) => Writable
}

/** What a service offers uploads (BenchService: uploadDir, importDataFile). */
export interface UploadingService {
  uploadDir(): string | null
  importDataFile(path: string): Promise<DataSetInfo>
}

/** The upload options over a service (serve and the e2e server); undefined when it has no store. */
export function serviceUploads(service: UploadingService, maxBytes?: number, idleTimeoutMs?: number): UploadOptions | undefined {
  const dir = service.uploadDir()
  if (dir === null) return undefined
  return {
    dir,
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
    load: (path) => service.importDataFile(path),
  }
}

class TooLarge extends Error {}
class Stalled extends Error {}
class ClientGone extends Error {}

/** A .part file unwritten for this long belongs to an upload whose server is gone. */
export const ABANDONED_PART_MS = 10 * 60 * 1000

/** Removes the abandoned .part files in the uploads folder; returns their names. Never throws. */
export async function removeAbandonedUploads(dir: string, now = Date.now()): Promise<string[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[])
  const removed: string[] = []
  for (const name of names.filter((n) => n.endsWith('.part'))) {
    const path = join(dir, name)
    const stat = await fs.stat(path).catch(() => null)
    if (!stat?.isFile() || now - stat.mtimeMs < ABANDONED_PART_MS) continue
    await fs.rm(path, { force: true }).then(
      () => removed.push(name),
      () => undefined,
    )
  }
  return removed
}

/** Answers one upload request; never throws (every failure is an HTTP answer, or a dropped socket). */
export async function handleUpload(req: IncomingMessage, res: ServerResponse, url: URL, options: UploadOptions | undefined): Promise<void> {
  const name = url.searchParams.get(UPLOAD_NAME_QUERY) ?? ''
  if (refusedBeforeBody(req, res, name, options) || !options) return
  const stored = await receive(req, res, name, options)
  if (!stored) return
  try {
    const info = await options.load(stored.file)
    return answer(res, 200, info)
  } catch (err) {
    // bytes that do not load never will; the file goes, and its folder once empty (a concurrent
    // upload of the same bytes under another name keeps its own)
    await fs.rm(stored.file, { force: true })
    await fs.rmdir(stored.folder).catch(() => undefined)
    const shape = toErrorShape(err)
    return answer(res, shape.code === 'internal' ? 500 : 400, shape)
  }
}

const maxBytesOf = (options: UploadOptions) => options.maxBytes ?? DEFAULT_MAX_UPLOAD_BYTES
const tooLarge = (what: string, max: number) =>
  `the file is ${what}, over this server's upload limit of ${formatBytes(max)} (${max} bytes; trainpool serve --max-upload BYTES raises it)`

/** What can be refused before any byte is read: the method, no store, the file's name, a declared size over the cap. */
function refusedBeforeBody(req: IncomingMessage, res: ServerResponse, name: string, options: UploadOptions | undefined): boolean {
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST')
    refuse(req, res, 405, { code: 'invalid-input', message: 'method not allowed: POST the file as the body' })
    return true
  }
  if (!options) {
    refuse(req, res, 503, { code: 'invalid-input', message: 'uploads are off: this server has no run store to keep data sets in' })
    return true
  }
  const problem = uploadNameProblem(name)
  if (problem) {
    refuse(req, res, 400, { code: 'invalid-input', message: problem, issues: [{ field: 'name', message: problem }] })
    return true
  }
  const declared = req.headers['content-length']
  const max = maxBytesOf(options)
  if (declared !== undefined && Number(declared) > max) {
    refuse(req, res, 413, { code: 'invalid-input', message: tooLarge(`${formatBytes(Number(declared))}`, max) })
    return true
  }
  return false
}

/**
 * Streams the body to a private temporary file, hashing and counting it, then links it into its
 * content-addressed folder; bytes the store already holds are linked from where they lie, never
 * written again. Returns where it lies, or null once the request has been answered (too large,
 * stalled, the disk full) or its client is gone.
 */
async function receive(req: IncomingMessage, res: ServerResponse, name: string, options: UploadOptions): Promise<{ folder: string; file: string } | null> {
  const max = maxBytesOf(options)
  const arriving = join(options.dir, `${randomUUID()}.part`)
  const count = { received: 0 }
  let folder: string | undefined
  try {
    await makePrivateDir(options.dir)
    watchForStall(req, res, options)
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        count.received += chunk.length
        if (count.received > max) return done(new TooLarge())
        done(null, chunk)
      },
    })
    const declared = req.headers['content-length']
    const stored = declared === undefined ? [] : await storedUploadsOfSize(options.dir, Number(declared))
    const target = new ArrivingFile(stored, () => (options.openArriving ?? privateWriteStream)(arriving))
    // the request is piped in, not part of the pipeline: a failed write (the disk filling mid-stream)
    // must not destroy the socket, which still owes the client its answer
    const written = pipeline(counter, target)
    req.on('error', (err) => counter.destroy(err))
    req.on('close', () => {
      if (!req.complete) counter.destroy(new ClientGone())
    })
    req.pipe(counter)
    await written
    folder = join(options.dir, target.sha256())
    const file = join(folder, name)
    await makePrivateDir(folder)
    // into place without replacing: a file there already holds these very bytes (the folder is their
    // sha256), maybe being loaded by a concurrent upload of them, so ours is simply dropped
    await fs.link(target.duplicateOf ?? arriving, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err
    })
    await fs.rm(arriving, { force: true })
    return { folder, file }
  } catch (err) {
    req.unpipe()
    await fs.rm(arriving, { force: true })
    await answerFailedReceive(req, res, err, folder, max, count.received)
    return null
  }
}

const STORED_FOLDER = /^[0-9a-f]{64}$/

/** One file of each stored upload (<dir>/<sha256>/NAME, its names are links to the same bytes) of exactly `size` bytes, opened for reading. */
async function storedUploadsOfSize(dir: string, size: number): Promise<StoredUpload[]> {
  if (!Number.isSafeInteger(size) || size <= 0) return []
  const found: StoredUpload[] = []
  for (const sha256 of (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => STORED_FOLDER.test(n))) {
    for (const name of await fs.readdir(join(dir, sha256)).catch(() => [] as string[])) {
      const path = join(dir, sha256, name)
      const listed = await fs.lstat(path).catch(() => null)
      if (!listed?.isFile() || listed.size !== size) continue
      // never through a link, never blocking on a FIFO: only a regular file of ours is compared
      const handle = await fs.open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)).catch(() => null)
      const stats = await handle?.stat().catch(() => null)
      if (handle && stats?.isFile() && stats.size === size) {
        found.push({ path, handle })
        break
      }
      await handle?.close()
    }
  }
  return found
}

interface StoredUpload {
  path: string
  handle: fs.FileHandle
}

/** read a stored upload's matching bytes back this much at a time when a body turns out to differ */
const COPY_BLOCK_BYTES = 2 ** 20

/**
 * Where an upload's bytes go. While they are, byte for byte, those of a stored upload of the same
 * size, nothing is written (the file is not even created): a re-upload needs no room, also on a
 * full disk, and ends as `duplicateOf` that file once its sha256 (the folder's name) agrees. At the
 * first byte that differs (or a body shorter or longer than the file), the prefix that matched is
 * copied from that file into the arriving one and the body is written on from there, so a new
 * file is stored whole as before, and a full disk still fails it (507).
 */
class ArrivingFile extends Writable {
  /** the stored upload holding exactly these bytes, once they have all arrived; null when they were written */
  duplicateOf: string | null = null
  private readonly hash = createHash('sha256')
  private digest: string | null = null
  /** bytes taken so far; while `out` is null, each stored upload left matched them all */
  private taken = 0
  private out: Writable | null = null
  private outError: Error | null = null

  constructor(
    private matching: StoredUpload[],
    private readonly open: () => Writable,
  ) {
    super()
  }

  /** the bytes' sha256, in hex, once they have all arrived */
  sha256(): string {
    if (this.digest === null) throw new Error('the upload has not all arrived')
    return this.digest
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.hash.update(chunk)
    this.take(chunk).then(() => done(), done)
  }

  override _final(done: (err?: Error | null) => void): void {
    this.digest = this.hash.digest('hex')
    this.finish().then(() => done(), done)
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.out?.destroy()
    this.releaseAll().then(() => done(err), done)
  }

  private async take(chunk: Buffer): Promise<void> {
    if (this.out === null && this.matching.length > 0) {
      const still: StoredUpload[] = []
      for (const stored of this.matching) if (await sameBytes(stored, this.taken, chunk)) still.push(stored)
      if (still.length > 0) {
        await this.release(this.matching.filter((s) => !still.includes(s)))
        this.matching = still
        this.taken += chunk.length
        return
      }
      await this.writeMatchedPrefix()
    }
    await this.writeOut(chunk)
    this.taken += chunk.length
  }

  private async finish(): Promise<void> {
    const whole = this.matching.find((s) => basename(dirname(s.path)) === this.digest)
    if (this.out === null && whole) {
      this.duplicateOf = whole.path
      return this.releaseAll()
    }
    // a body shorter than the stored file, or one whose stored copy no longer holds its folder's bytes
    if (this.out === null) await this.writeMatchedPrefix()
    const out = this.output()
    out.end()
    await finished(out)
    if (this.outError) throw this.outError
  }

  /** Opens the arriving file and copies into it the bytes taken so far, from a stored upload that matched them. */
  private async writeMatchedPrefix(): Promise<void> {
    const [source] = this.matching
    this.output()
    const block = Buffer.alloc(Math.min(COPY_BLOCK_BYTES, Math.max(1, this.taken)))
    for (let at = 0; at < this.taken;) {
      const { bytesRead } = await source.handle.read(block, 0, Math.min(block.length, this.taken - at), at)
      if (bytesRead === 0) throw new Error(`the stored upload ${source.path} shrank while a copy of its bytes was arriving`)
      // a copy: the write may hold the buffer until it is flushed
      await this.writeOut(Buffer.from(block.subarray(0, bytesRead)))
      at += bytesRead
    }
    await this.releaseAll()
  }

  private output(): Writable {
    if (this.out) return this.out
    const out = this.open()
    out.on('error', (err) => (this.outError ??= err))
    this.out = out
    return out
  }

  private writeOut(bytes: Buffer): Promise<void> {
    const out = this.output()
    return new Promise((resolve, reject) => {
      if (this.outError) return reject(this.outError)
      out.write(bytes, (err) => (err ? reject(err) : resolve()))
    })
  }

  private async release(stored: StoredUpload[]): Promise<void> {
    for (const s of stored) await s.handle.close().catch(() => undefined)
  }

  private async releaseAll(): Promise<void> {
    const all = this.matching
    this.matching = []
    await this.release(all)
  }
}

/** Whether the stored upload holds `chunk` at `at`. */
async function sameBytes(stored: StoredUpload, at: number, chunk: Buffer): Promise<boolean> {
  const there = Buffer.alloc(chunk.length)
  const { bytesRead } = await stored.handle.read(there, 0, chunk.length, at)
  return bytesRead === chunk.length && there.equals(chunk)
}

/** Bounded by silence, not by total time (the server's own requestTimeout is off: server.ts). */
function watchForStall(req: IncomingMessage, res: ServerResponse, options: UploadOptions): void {
  const idleMs = options.idleTimeoutMs ?? DEFAULT_UPLOAD_IDLE_SECONDS * 1000
  req.setTimeout(idleMs, () => {
    // the answer first (a stalled client may still read), then the connection goes
    const message = `the upload stalled: no bytes for ${idleMs / 1000} s (trainpool serve --upload-idle-timeout SECONDS allows longer pauses)`
    answer(res, 408, { code: 'invalid-input', message }, { Connection: 'close' }, () => req.destroy(new Stalled()))
  })
}

async function answerFailedReceive(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  folder: string | undefined,
  max: number,
  received: number,
): Promise<void> {
  if (err instanceof TooLarge) return refuse(req, res, 413, { code: 'invalid-input', message: tooLarge(`larger than ${formatBytes(max)}`, max) })
  if (err instanceof Stalled) return // answered when it stalled
  // the client went away halfway (aborted, reset): nobody to answer; whatever arrived is gone. A
  // request read to its end is destroyed too (autoDestroy): its client still waits for the answer
  if (err instanceof ClientGone || req.readableAborted || (req.destroyed && !req.complete)) return void res.destroy()
  // an empty folder of ours goes; one holding another upload's file stays (rmdir refuses it)
  if (folder) await fs.rmdir(folder).catch(() => undefined)
  const code = (err as NodeJS.ErrnoException)?.code
  const status = code === 'ENOSPC' || code === 'EDQUOT' ? 507 : 500
  const error: TrainpoolErrorShape = {
    code: 'internal',
    message: `could not store the upload${status === 507 ? ' (the disk is full)' : ''}: ${(err as Error)?.message ?? String(err)}`,
  }
  // a body still arriving (the disk filled mid-stream) is read to its end and dropped, still
  // counted against the cap, so the client reads the answer instead of a reset connection
  if (!req.complete) return discardRest(req, res, status, error, max, received)
  return answer(res, status, error)
}

function answer(res: ServerResponse, status: number, body: DataSetInfo | TrainpoolErrorShape, headers: Record<string, string> = {}, sent?: () => void): void {
  const text = JSON.stringify(status === 200 ? body : { error: body })
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    ...headers,
  })
  res.end(text, sent)
}

/** An answer before (or instead of) reading the body: the connection closes after it, so no unread bytes linger. */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, error: TrainpoolErrorShape): void {
  answer(res, status, error, { Connection: 'close' })
  req.resume()
}

/** Answers now and reads the rest of the body without keeping it; past the cap the connection goes. */
function discardRest(req: IncomingMessage, res: ServerResponse, status: number, error: TrainpoolErrorShape, max: number, received: number): void {
  let total = received
  req.on('data', (chunk: Buffer) => {
    total += chunk.length
    if (total > max) req.destroy()
  })
  answer(res, status, error, { Connection: 'close' })
  req.resume()
}
