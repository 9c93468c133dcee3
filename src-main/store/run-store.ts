// Run store: one folder per run holding run.json (src-shared/contract/result.ts, versioned; docs/ARCHITECTURE.md), rewritten
// atomically (temp file, fsync, rename, fsync of the folder) after every finished measurement, so
// a crash or kill -9 loses at most the measurement in flight. Damaged or unknown-version files are
// listed as damaged with the reason; they never break the list. The process writing a live run
// holds a writer lock in its folder (writer-lock.ts), so a process starting on the same store marks
// a `running` run interrupted only when its writer is gone.
import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join, resolve, sep } from 'node:path'
import { z } from 'zod'
import {
  RUN_ID_PATTERN,
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
import { HEARTBEAT_MS, STALE_AFTER_MS, type WriterLock, readLock, removeLock, writeLock, writerState } from './writer-lock'

export const RUN_FILE = 'run.json'

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
   * rename, a tag, marking a dead writer's run interrupted) leave locks alone.
   */
  writer?: boolean
}

interface HeldLock {
  lock: WriterLock
  timer: NodeJS.Timeout
  /** the refresh being written, awaited before the lock is removed (so it cannot come back) */
  refreshing: Promise<void> | null
}

export class RunStore {
  readonly dir: string
  private readonly heartbeatMs: number
  private readonly staleAfterMs: number
  /** writer locks this store holds, by run id */
  private readonly held = new Map<string, HeldLock>()
  /** saves of one run are written in the order they were asked for */
  private readonly saving = new Map<string, Promise<void>>()

  constructor(dir: string = defaultStoreDir(), options: RunStoreOptions = {}) {
    this.dir = resolve(dir)
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
    this.staleAfterMs = options.staleAfterMs ?? STALE_AFTER_MS
  }

  /** The folder of a run; refuses ids that could escape the store (../, separators, …). */
  runDir(runId: string): string {
    if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) {
      throw new TrainpoolError('invalid-input', `runId ${JSON.stringify(runId)} is not valid: ${RUN_ID_RULE}`)
    }
    const dir = resolve(this.dir, runId)
    if (!dir.startsWith(this.dir + sep)) throw new TrainpoolError('invalid-input', `runId ${JSON.stringify(runId)} escapes the store`)
    return dir
  }

  /**
   * Writes a run atomically. Saves of the same run from this store are written one after the other,
   * in call order (a measurement's save cannot land after the final one). With `writer`, a running
   * run's lock is written before run.json, and released after the final save, even a failed one.
   */
  async save(run: RunResult, options: SaveOptions = {}): Promise<void> {
    const dir = this.runDir(run.runId)
    const previous = this.saving.get(run.runId) ?? Promise.resolve()
    const next = previous.then(async () => {
      if (!options.writer) return this.write(dir, run)
      if (run.status === 'running') {
        await this.holdLock(run.runId, dir)
        return this.write(dir, run)
      }
      try {
        await this.write(dir, run)
      } finally {
        await this.releaseLock(run.runId)
      }
    })
    const settled = next.catch(() => undefined)
    this.saving.set(run.runId, settled)
    void settled.then(() => {
      if (this.saving.get(run.runId) === settled) this.saving.delete(run.runId)
    })
    return next
  }

  private async write(dir: string, run: RunResult): Promise<void> {
    await fs.mkdir(dir, { recursive: true })
    const target = join(dir, RUN_FILE)
    const temp = join(dir, `.${RUN_FILE}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
    const handle = await fs.open(temp, 'w')
    try {
      await handle.writeFile(JSON.stringify(run, null, 1))
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

  async get(runId: string): Promise<RunResult> {
    const file = join(this.runDir(runId), RUN_FILE)
    let text: string
    try {
      text = await fs.readFile(file, 'utf8')
    } catch {
      throw new TrainpoolError('not-found', `no run ${runId} in ${this.dir}`)
    }
    return parseRun(text, runId)
  }

  async list(): Promise<RunListEntry[]> {
    let names: string[]
    try {
      names = await fs.readdir(this.dir)
    } catch {
      return []
    }
    const entries: RunListEntry[] = []
    for (const name of names) {
      if (!RUN_ID_PATTERN.test(name)) continue
      try {
        entries.push(listEntry(await this.get(name)))
      } catch (err) {
        if (err instanceof TrainpoolError && err.code === 'not-found') continue
        entries.push({
          runId: name,
          status: 'damaged',
          startedAt: null,
          preset: null,
          backend: null,
          device: null,
          sizes: [],
          models: [],
          bestSpeedup: null,
          problem: err instanceof Error ? err.message : String(err),
        })
      }
    }
    return entries.sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? '') || b.runId.localeCompare(a.runId))
  }

  /** Deletes a run's folder; an unknown id is 'not-found', an id that could escape the store is refused. */
  async delete(runId: string): Promise<void> {
    const dir = this.runDir(runId)
    try {
      await fs.access(dir)
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
   * Runs left `running` by a process that died are marked `interrupted` (their measurements stay).
   * A run whose writer lock shows a live writer (this process or another: the app, `trainpool bench`,
   * `trainpool serve` on the same store) is left alone.
   */
  async markInterrupted(activeRunId: string | null = null): Promise<string[]> {
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
      marked.push(entry.runId)
    }
    return marked
  }

  /** Writes this process's lock for a run (once) and keeps it fresh until releaseLock(). */
  private async holdLock(runId: string, dir: string): Promise<void> {
    if (this.held.has(runId)) return
    const now = Date.now()
    const lock: WriterLock = { pid: process.pid, host: os.hostname(), startedAt: now, heartbeatAt: now }
    await fs.mkdir(dir, { recursive: true })
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
