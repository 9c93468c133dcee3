// Run store: one folder per run holding run.json (src-shared/contract/result.ts), rewritten
// atomically after every finished measurement, so a crash loses at most the one in flight. An entry
// that could be a run but cannot be used is listed as damaged with the reason, never dropped, never
// blocking. Writer locks (writer-lock.ts), leftovers (leftovers.ts), privacy (private-files.ts):
// README.md here.
import { randomBytes } from 'node:crypto'
import { promises as fs, type Stats } from 'node:fs'
import os from 'node:os'
import { join, resolve, sep } from 'node:path'
import { z } from 'zod'
import {
  KEPT_MODELS_LIST_BOUNDS,
  type KeptModel,
  KeptModelSchema,
  type KeptModels,
  KeptModelsSchema,
  keptTwice,
  ListBoundsScan,
  RUN_ID_PATTERN,
  echoValue,
  RUN_ID_RULE,
  RunNameSchema,
  RunTagsSchema,
  listEntry,
  parseRunResult,
  TrainpoolError,
  invalidInput,
  type RunListEntry,
  type RunResult,
} from '@shared/contract'
import { removeAbandonedTemps, tempName } from './leftovers'
import { createPrivateFile, makePrivateDir, narrowToPrivate } from './private-files'
import { describeFileType, describeLink, openRegularFile, readRegularFile } from './regular-file'
import { HEARTBEAT_MS, STALE_AFTER_MS, type WriterLock, readLock, removeLock, writeLock, writerState } from './writer-lock'

export const RUN_FILE = 'run.json'
/**
 * The most a run.json may weigh to be read (a larger one is listed as damaged, not parsed). A run at
 * the API's limits (1 000 models, every size, strategy, W and repeat, hours of telemetry) stays
 * under a quarter of it.
 */
export const MAX_RUN_FILE_BYTES = 128 * 2 ** 20
/** a run's kept models (beside run.json) */
export const MODELS_FILE = 'models.json'
/** 1000 models of 10 000 trees (× K classes) would not fit; a run's kept models above this are refused as damaged */
export const MAX_MODELS_FILE_BYTES = 2 * 2 ** 30
/** read a megabyte at a time while models.json's lists are bounded */
const SCAN_CHUNK_BYTES = 2 ** 20

/**
 * models.json (opened) streamed through ListBoundsScan (model-artifact-bounds.ts), holding one chunk
 * at a time: the first list past its bound, and where the models list and each model lie in it.
 */
async function scanModelsFile(handle: fs.FileHandle): Promise<ListBoundsScan> {
  const scan = new ListBoundsScan(KEPT_MODELS_LIST_BOUNDS, 'models')
  const chunk = Buffer.alloc(SCAN_CHUNK_BYTES)
  for (let at = 0; ;) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, at)
    if (bytesRead === 0 || scan.feed(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead))) break
    at += bytesRead
  }
  return scan
}

/** A zod issue in the words the export prints: "models.2.artifact: tree 0, node 3: …". */
function firstIssue(issues: readonly { path: PropertyKey[]; message: string }[], under?: string): string {
  const first = issues[0]
  if (!first) return 'wrong shape'
  const path = [...(under ? [under] : []), ...first.path.map(String)].join('.')
  return `${path || 'file'}: ${first.message}`
}

/** the most models.json may hold outside its models list (a run's holds its measurement's size, strategy and W: well under 1 KiB) */
const MAX_MODELS_ENVELOPE_BYTES = 64 * 2 ** 10

async function readRange(handle: fs.FileHandle, start: number, end: number): Promise<string> {
  const bytes = Buffer.alloc(end - start)
  for (let at = 0; at < bytes.length;) {
    const { bytesRead } = await handle.read(bytes, at, bytes.length - at, start + at)
    if (bytesRead === 0) throw new Error('the file is shorter than when it was scanned')
    at += bytesRead
  }
  return bytes.toString('utf8')
}

/**
 * A run's kept models as models.json holds them, read one model at a time: the measurement that
 * trained them and each model's index are known up front, each model's artifact is read from its
 * own bytes when asked for, so a reader holds one model, never the whole file parsed.
 */
export interface KeptModelsReader extends Omit<KeptModels, 'models'> {
  /** each kept model's index, in the file's order */
  readonly indexes: readonly number[]
  /** model `index` (one of `indexes`), read and checked (KeptModelSchema) alone */
  model(index: number): Promise<KeptModel>
}

/** where browser mode's uploads arrive: <store>/.uploads/<sha256>/FILE */
export const UPLOADS_DIR = '.uploads'
/** The fields a user edits on a run (rename, tag), from any process, also while it is live. */
const USER_EDITED = ['name', 'tags'] as const

export function defaultStoreDir(): string {
  return process.env.TRAINPOOL_STORE ?? join(os.homedir(), '.trainpool', 'runs')
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  return `${stamp}-${randomBytes(3).toString('hex')}`
}

export interface RunStoreOptions {
  /** how often this store refreshes the writer lock of a run it writes (ms) */
  heartbeatMs?: number
  /** a writer lock older than this no longer keeps a `running` run from being marked interrupted (ms) */
  staleAfterMs?: number
}

export interface SaveOptions {
  /**
   * This process is the run's writer (the service saving its live run): while the run is `running`
   * its writer lock is held and refreshed; saving any other status releases it. Other saves (a
   * rename, a tag, marking a dead writer's run interrupted) leave locks alone. A writer's save keeps
   * a name or tags another process gave the run since the writer's last save (see keepEditsMadeElsewhere).
   */
  writer?: boolean
}

interface HeldLock {
  lock: WriterLock
  timer: NodeJS.Timeout
  /** the refresh being written, awaited before the lock is removed (so it cannot come back) */
  refreshing: Promise<void> | null
}

/** What a writer last wrote of its run: run.json's identity after that write, and the user-edited fields in it. */
interface LastWrite {
  fileKey: string
  edits: Record<(typeof USER_EDITED)[number], string>
}

/** Another process writing a run on this machine right now (its writer lock is live). */
export interface LiveWriter {
  runId: string
  pid: number
}

export class RunStore {
  readonly dir: string
  private readonly heartbeatMs: number
  private readonly staleAfterMs: number
  /** writer locks this store holds, by run id */
  private readonly held = new Map<string, HeldLock>()
  /** saves of one run are written in the order they were asked for */
  private readonly saving = new Map<string, Promise<void>>()
  /** list entries by run id, kept while their run.json is the same file (fileKey) */
  private readonly listed = new Map<string, { fileKey: string; entry: RunListEntry }>()
  /** runs this store writes: what it last wrote of them */
  private readonly lastWrites = new Map<string, LastWrite>()

  constructor(dir: string = defaultStoreDir(), options: RunStoreOptions = {}) {
    this.dir = resolve(dir)
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
    this.staleAfterMs = options.staleAfterMs ?? STALE_AFTER_MS
  }

  /** The folder of a run; refuses ids that could escape the store (../, separators, …). */
  runDir(runId: string): string {
    if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) {
      throw new TrainpoolError('invalid-input', `runId ${echoValue(runId)} is not valid: ${RUN_ID_RULE}`)
    }
    const dir = resolve(this.dir, runId)
    if (!dir.startsWith(this.dir + sep)) throw new TrainpoolError('invalid-input', `runId ${echoValue(runId)} escapes the store`)
    return dir
  }

  /**
   * Writes a run atomically. Saves of the same run from this store are written one after the other,
   * in call order (a measurement's save cannot land after the final one). With `writer`, a running
   * run's lock is written before run.json, and released after the final save, even a failed one;
   * a name or tags set by another process since the writer's last save are put into `run` first.
   */
  async save(run: RunResult, options: SaveOptions = {}): Promise<void> {
    const dir = this.runDir(run.runId)
    const previous = this.saving.get(run.runId) ?? Promise.resolve()
    const next = previous
      .then(async () => {
        if (!options.writer) return this.write(dir, run)
        if (run.status === 'running') {
          await this.holdLock(run.runId, dir)
          return this.writeAsWriter(dir, run)
        }
        try {
          await this.writeAsWriter(dir, run)
        } finally {
          this.lastWrites.delete(run.runId)
          await this.releaseLock(run.runId)
        }
      })
      .catch(async (err: unknown) => {
        // a run never saved (a full disk) leaves no empty folder behind; rmdir takes only an empty one
        await fs.rmdir(dir).catch(() => undefined)
        throw err
      })
    const settled = next.catch(() => undefined)
    this.saving.set(run.runId, settled)
    void settled.then(() => {
      if (this.saving.get(run.runId) === settled) this.saving.delete(run.runId)
    })
    return next
  }

  private async writeAsWriter(dir: string, run: RunResult): Promise<void> {
    await this.keepEditsMadeElsewhere(dir, run)
    await this.write(dir, run)
    const fileKey = await identity(join(dir, RUN_FILE)).catch(() => '')
    this.lastWrites.set(run.runId, { fileKey, edits: userEdits(run) })
  }

  /**
   * Issue 22: a rename or re-tag of a live run from another process (the app while `trainpool
   * bench` writes it) must survive the writer's next save. When run.json changed since this
   * writer's last save, every user-edited field this writer has not changed itself since then is
   * taken from the file (into `run`, the live result, so this process shows it too).
   */
  private async keepEditsMadeElsewhere(dir: string, run: RunResult): Promise<void> {
    const last = this.lastWrites.get(run.runId)
    if (!last) return
    const fileKey = await identity(join(dir, RUN_FILE)).catch(() => null)
    if (fileKey === null || fileKey === last.fileKey) return
    let stored: RunResult
    try {
      stored = await this.get(run.runId)
    } catch {
      return // gone or damaged: this save writes it whole again
    }
    const mine = userEdits(run)
    const theirs = userEdits(stored)
    for (const field of USER_EDITED) {
      if (mine[field] !== last.edits[field] || theirs[field] === last.edits[field]) continue
      if (stored[field] === undefined) delete run[field]
      else (run as Record<string, unknown>)[field] = stored[field]
    }
  }

  private async write(dir: string, run: RunResult): Promise<void> {
    await writeAtomic(dir, RUN_FILE, JSON.stringify(run, null, 1))
  }

  /** Keeps a run's trained models (models.json beside run.json), written atomically. */
  async saveModels(runId: string, kept: KeptModels): Promise<void> {
    await writeAtomic(this.runDir(runId), MODELS_FILE, JSON.stringify(kept))
  }

  /** The models a run kept, all of them in memory (withModels holds one at a time): not-found when it kept none; damaged when the file cannot be used. */
  async getModels(runId: string): Promise<KeptModels> {
    return this.withModels(runId, async ({ indexes, model, ...measurement }) => {
      const models: KeptModel[] = []
      for (const index of indexes) models.push(await model(index))
      return { ...measurement, models }
    })
  }

  /**
   * Calls `use` with the models a run kept, read one model at a time (KeptModelsReader), while
   * models.json is held open (a save meanwhile renames a new file in; this one is read to the end).
   * Before `use` the whole file is checked, one model at a time: every list bounded on the raw bytes
   * (one of 150 M numbers killed the process in JSON.parse), then each model parsed from its own
   * bytes and checked. Not-found when the run kept none; damaged when the file cannot be used.
   */
  async withModels<T>(runId: string, use: (kept: KeptModelsReader) => Promise<T>): Promise<T> {
    const path = join(this.runDir(runId), MODELS_FILE)
    const unsound = (why: string) => new TrainpoolError('damaged', `run ${runId}: ${MODELS_FILE} does not hold kept models that can be exported (${why})`)
    const notJson = (why: string) => new TrainpoolError('damaged', `run ${runId}: ${MODELS_FILE} is not valid JSON (${why})`)
    const opened = await openRegularFile(path, MAX_MODELS_FILE_BYTES)
    if (opened.kind === 'missing')
      throw new TrainpoolError(
        'not-found',
        `run ${runId} kept no trained models (a run saved to a store keeps the models of its first measurement at the largest size; older runs kept none)`,
      )
    if (opened.kind === 'unusable') throw new TrainpoolError('damaged', `run ${runId}: ${MODELS_FILE} ${opened.why}`)
    const { handle, stats } = opened
    try {
      const read = (start: number, end: number) =>
        readRange(handle, start, end).catch((err: NodeJS.ErrnoException) => {
          throw new TrainpoolError('damaged', `run ${runId}: ${MODELS_FILE} cannot be read (${err.code ?? err.message})`)
        })
      const parse = (text: string): unknown => {
        try {
          return JSON.parse(text)
        } catch (err) {
          throw notJson((err as Error).message)
        }
      }
      const scan = await scanModelsFile(handle)
      if (scan.problem) throw unsound(scan.problem)
      // everything but the models list's entries: the measurement, and an empty list where the models were
      const list = scan.noted && scan.noted.end > 0 ? scan.noted : null
      const cut = list ? { start: list.start + 1, end: list.end - 1 } : { start: stats.size, end: stats.size }
      if (stats.size - (cut.end - cut.start) > MAX_MODELS_ENVELOPE_BYTES)
        throw unsound(`${stats.size - (cut.end - cut.start)} bytes outside the models list, where a run keeps under ${MAX_MODELS_ENVELOPE_BYTES}`)
      const envelope = KeptModelsSchema.safeParse(parse((await read(0, cut.start)) + (await read(cut.end, stats.size))))
      if (!envelope.success) throw unsound(firstIssue(envelope.error.issues))
      const { size, strategy, workers } = envelope.data
      const entries = list?.entries ?? []
      // between the entries only white space and one comma each: anything else (a number, a missing comma) is not a list of models
      const gapProblem = (gap: string, where: string, comma: boolean) =>
        gap.trim() !== (comma ? ',' : '') ? notJson(`unexpected ${JSON.stringify(gap.trim().slice(0, 20))} ${where} in the models list`) : null
      const modelAt = async (position: number): Promise<KeptModel> => {
        const { start, end } = entries[position]
        const parsed = KeptModelSchema.safeParse(parse(await read(start, end)))
        if (!parsed.success) throw unsound(firstIssue(parsed.error.issues, `models.${position}`))
        return parsed.data
      }
      const indexes: number[] = []
      for (let position = 0; position < entries.length; position++) {
        const gap = await read(position === 0 ? cut.start : entries[position - 1].end, entries[position].start)
        const problem = gapProblem(gap, position === 0 ? 'before model 0' : `between models ${position - 1} and ${position}`, position > 0)
        if (problem) throw problem
        const { index } = await modelAt(position)
        if (indexes.includes(index)) throw unsound(`models: ${keptTwice(index)}`)
        indexes.push(index)
      }
      const tail = gapProblem(await read(entries.at(-1)?.end ?? cut.start, cut.end), entries.length ? 'after the last model' : 'before any model', false)
      if (tail) throw tail
      const model = async (index: number) => {
        if (!indexes.includes(index)) throw new TrainpoolError('not-found', `run ${runId} kept no model ${index}`)
        return modelAt(indexes.indexOf(index))
      }
      return await use({ size, strategy, workers, indexes, model })
    } finally {
      await handle.close()
    }
  }

  async get(runId: string): Promise<RunResult> {
    return parseRun(await this.readRunFile(runId), runId)
  }

  /** A run's run.json text: not-found when there is none; damaged when what is there is not a regular file within the cap. */
  private async readRunFile(runId: string): Promise<string> {
    const dir = this.runDir(runId)
    let folder: Stats
    try {
      folder = await fs.lstat(dir)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new TrainpoolError('not-found', `no run ${runId} in ${this.dir}`)
      throw new TrainpoolError('damaged', `run ${runId}: its folder cannot be read (${code ?? (err as Error).message})`)
    }
    if (!folder.isDirectory()) {
      const what = folder.isSymbolicLink() ? await describeLink(dir) : describeFileType(folder)
      throw new TrainpoolError(
        'damaged',
        `run ${runId}: the store holds ${what} by this name, not a run folder; Trainpool writes each run in a folder of its own`,
      )
    }
    const read = await readRegularFile(join(dir, RUN_FILE), MAX_RUN_FILE_BYTES)
    if (read.kind === 'missing') throw new TrainpoolError('not-found', `no run ${runId} in ${this.dir}`)
    if (read.kind === 'unusable') throw new TrainpoolError('damaged', `run ${runId}: ${RUN_FILE} ${read.why}`)
    return read.text
  }

  /**
   * Every run in the store, and every entry named like a run that cannot be used, as damaged with
   * the reason. A folder without run.json yet (a save in progress) is not listed. An entry whose
   * run.json is the same file as at the last list (inode, size, times) is not read again.
   */
  async list(): Promise<RunListEntry[]> {
    let names: string[]
    try {
      names = await fs.readdir(this.dir)
    } catch {
      return []
    }
    const runIds = names.filter((name) => RUN_ID_PATTERN.test(name))
    const present = new Set(runIds)
    for (const runId of this.listed.keys()) if (!present.has(runId)) this.listed.delete(runId)
    const entries: RunListEntry[] = []
    for (const runId of runIds) {
      const entry = await this.listEntryOf(runId)
      if (entry) entries.push(entry)
    }
    return entries.sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? '') || b.runId.localeCompare(a.runId))
  }

  private async listEntryOf(runId: string): Promise<RunListEntry | null> {
    // the folder by what it is (not its times: the writer lock's heartbeat touches those), then run.json;
    // anything else (a link, a file, no run.json) is judged again by get(), which costs no read
    const folder = await fs.lstat(join(this.dir, runId)).catch(() => null)
    const file = folder?.isDirectory() ? await identity(join(this.dir, runId, RUN_FILE)).catch(() => null) : null
    const fileKey = folder && file ? `${folder.dev}:${folder.ino}/${file}` : null
    const cached = this.listed.get(runId)
    if (fileKey !== null && cached?.fileKey === fileKey) return cached.entry
    let entry: RunListEntry
    try {
      // by its folder: a copied folder's run.json names another run, and both are listed
      entry = listEntry(await this.get(runId), runId)
    } catch (err) {
      if (err instanceof TrainpoolError && err.code === 'not-found') return null
      entry = damagedEntry(runId, err instanceof Error ? err.message : String(err))
    }
    if (fileKey !== null) this.listed.set(runId, { fileKey, entry })
    return entry
  }

  /** Deletes a run's folder; an unknown id is 'not-found', an id that could escape the store is refused. */
  async delete(runId: string): Promise<void> {
    const dir = this.runDir(runId)
    try {
      // lstat: a damaged entry (a link that loops or leads nowhere) can be deleted too
      await fs.lstat(dir)
    } catch {
      throw new TrainpoolError('not-found', `no run ${runId} in ${this.dir}`)
    }
    await fs.rm(dir, { recursive: true, force: true })
  }

  /** Gives a run a display name (trimmed; empty removes it). Rewritten atomically like every save. */
  async rename(runId: string, name: string): Promise<RunResult> {
    const clean = cleanName(name)
    const run = await this.get(runId)
    const next: RunResult = { ...run }
    if (clean) next.name = clean
    else delete next.name
    await this.save(next)
    return next
  }

  /** Replaces a run's tags (trimmed, de-duplicated, empty ones dropped). */
  async tag(runId: string, tags: readonly string[]): Promise<RunResult> {
    const clean = cleanTags(tags)
    const run = await this.get(runId)
    const next: RunResult = { ...run }
    if (clean.length) next.tags = clean
    else delete next.tags
    await this.save(next)
    return next
  }

  /**
   * The start-up check of every shell. Runs left `running` by a process that died are marked
   * `interrupted` (their measurements stay). A run whose writer lock shows a live writer (this
   * process or another: the app, `trainpool bench`, `trainpool serve` on the same store) is left
   * alone. What killed writers left in run folders is removed; what an older version left readable
   * by others is made private.
   * `onInterrupted` hears each run so marked (the shells cancel its scheduler jobs: none outlives its run).
   */
  async markInterrupted(activeRunId: string | null = null, onInterrupted?: (run: RunResult) => Promise<void>): Promise<string[]> {
    await this.tidyStore()
    const marked: string[] = []
    for (const entry of await this.list()) {
      if (entry.status !== 'running' || entry.runId === activeRunId || this.held.has(entry.runId)) continue
      const dir = this.runDir(entry.runId)
      const writer = writerState(await readLock(dir), Date.now(), this.staleAfterMs)
      if (writer.alive) continue
      const run = await this.get(entry.runId)
      const why = writer.why === 'no writer lock' ? '' : ` (${writer.why})`
      await this.save({ ...run, status: 'interrupted', error: run.error ?? `the process running it stopped before it finished${why}` })
      await removeLock(dir)
      await onInterrupted?.(run).catch(() => {})
      marked.push(entry.runId)
    }
    return marked
  }

  /**
   * Other runs a live process on this machine is writing right now (by their writer locks): runs
   * measured at the same time compete for the same cores and GPU. Writers on other hosts sharing the
   * store do not count.
   */
  async otherLiveWriters(runId: string): Promise<LiveWriter[]> {
    const writers: LiveWriter[] = []
    for (const entry of await this.list()) {
      if (entry.status !== 'running' || entry.runId === runId || this.held.has(entry.runId)) continue
      const lock = await readLock(this.runDir(entry.runId))
      if (lock && lock.host === os.hostname() && writerState(lock, Date.now(), this.staleAfterMs).alive) writers.push({ runId: entry.runId, pid: lock.pid })
    }
    return writers
  }

  /**
   * Removes temp files of writers killed mid-save in every run folder; narrows to private what an
   * older version left readable by others: the store folder, run folders and their files, uploads
   * (nothing else of the user's in it).
   */
  private async tidyStore(): Promise<void> {
    await narrowToPrivate(this.dir, 0)
    const names = await fs.readdir(this.dir).catch(() => [] as string[])
    for (const runId of names) {
      if (!RUN_ID_PATTERN.test(runId)) continue
      const folder = join(this.dir, runId)
      const stats = await fs.lstat(folder).catch(() => null)
      if (!stats?.isDirectory()) continue
      await removeAbandonedTemps(folder)
      await narrowToPrivate(folder, 1)
    }
    // <sha256>/FILE (the data cache is tidied by its own module: data/cache.ts tidyDataCache)
    await narrowToPrivate(join(this.dir, UPLOADS_DIR), 2)
  }

  /** Writes this process's lock for a run (once) and keeps it fresh until releaseLock(). */
  private async holdLock(runId: string, dir: string): Promise<void> {
    if (this.held.has(runId)) return
    const now = Date.now()
    const lock: WriterLock = { pid: process.pid, host: os.hostname(), startedAt: now, heartbeatAt: now }
    await makePrivateDir(dir)
    await writeLock(dir, lock)
    const held: HeldLock = {
      lock,
      refreshing: null,
      timer: setInterval(() => {
        if (held.refreshing) return
        held.refreshing = writeLock(dir, { ...lock, heartbeatAt: Date.now() })
          .catch(() => undefined) // a folder deleted or a full disk: the next save reports it
          .finally(() => (held.refreshing = null))
      }, this.heartbeatMs),
    }
    // the heartbeat never keeps a process alive on its own
    held.timer.unref()
    this.held.set(runId, held)
  }

  private async releaseLock(runId: string): Promise<void> {
    const held = this.held.get(runId)
    if (!held) return
    this.held.delete(runId)
    clearInterval(held.timer)
    await held.refreshing
    await removeLock(this.runDir(runId)).catch(() => undefined)
  }
}

/** A display name as the API accepts it (contract RunNameSchema: squeezed, trimmed, RUN_LIMITS.nameLength). */
export function cleanName(name: string): string {
  return parseField('name', RunNameSchema, name)
}

/** Tags as the API accepts them (contract RunTagsSchema: squeezed, de-duplicated, empty ones dropped, RUN_LIMITS). */
export function cleanTags(tags: readonly string[]): string[] {
  return parseField('tags', RunTagsSchema, tags)
}

function parseField<T>(field: string, schema: z.ZodType<T>, value: unknown): T {
  const input = { [field]: value }
  const parsed = z.object({ [field]: schema }).safeParse(input)
  if (!parsed.success) throw invalidInput(parsed.error, input, field)
  return parsed.data[field] as T
}

export function parseRun(text: string, runId = '?'): RunResult {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new TrainpoolError('damaged', `run ${runId}: not valid JSON (${(err as Error).message})`)
  }
  return parseRunResult(raw, runId)
}

/** A file's identity for "has it changed since": inode, size, change and modification times (lstat: a link is judged as itself). */
async function identity(path: string): Promise<string> {
  const s = await fs.lstat(path)
  return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.mode}`
}

function userEdits(run: RunResult): LastWrite['edits'] {
  return { name: JSON.stringify(run.name ?? null), tags: JSON.stringify(run.tags ?? null) }
}

function damagedEntry(runId: string, problem: string): RunListEntry {
  return { runId, status: 'damaged', startedAt: null, preset: null, backend: null, device: null, sizes: [], models: [], bestSpeedup: null, problem }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const h = await fs.open(dir, 'r')
    try {
      await h.sync()
    } finally {
      await h.close()
    }
  } catch {
    /* some filesystems refuse fsync on directories; the rename is still atomic */
  }
}

/** Writes `name` in `dir` atomically: a temp file, fsync, rename, fsync of the folder; no partial file is ever left. */
export async function writeAtomic(dir: string, name: string, text: string): Promise<void> {
  await makePrivateDir(dir)
  const target = join(dir, name)
  const temp = join(dir, tempName(name))
  const handle = await createPrivateFile(temp)
  try {
    await handle.writeFile(text)
    await handle.sync()
  } catch (err) {
    // disk full / file too large: leave no partial temp file behind (run.json is untouched)
    await handle.close().catch(() => undefined)
    await fs.rm(temp, { force: true })
    throw err
  }
  await handle.close()
  try {
    await fs.rename(temp, target)
  } catch (err) {
    await fs.rm(temp, { force: true })
    throw err
  }
  await syncDir(dir)
}
