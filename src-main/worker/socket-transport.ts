// The worker's side of the worker socket (contract/worker-socket.ts), for a worker on another
// machine (`trainpool worker --connect URL`, a Slurm task): it dials the coordinator, proves who it
// is with its one-time token, then serves the same messages as over IPC. Who it is comes from the
// environment, never the command line; the data table is read from a shared store or fetched by
// its sha256. Its variables: ../README.md, "worker/".
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import {
  type CoordinatorFrame,
  CoordinatorFrameSchema,
  type TableChunk,
  type ToWorker,
  WORKER_SOCKET,
  type WorkerHello,
  type FromWorker,
} from '@shared/contract'
import { workerToken } from '../pool/remote/token'
import type { ParentChannel } from './transport'

type Env = Record<string, string | undefined>

/** Which worker this process is, from its environment (a clear error naming the variable when not). */
export function workerIdentity(env: Env): Omit<WorkerHello, 'type' | 'host' | 'pid'> {
  const indexText = env.TRAINPOOL_WORKER_INDEX ?? env.SLURM_ARRAY_TASK_ID
  const worker = Number(indexText)
  if (indexText === undefined || !Number.isInteger(worker) || worker < 0)
    throw new Error('trainpool worker: TRAINPOOL_WORKER_INDEX (or SLURM_ARRAY_TASK_ID) must be the worker index, a whole number ≥ 0')
  const submission = Number(env.TRAINPOOL_WORKER_SUBMISSION ?? '0')
  if (!Number.isInteger(submission) || submission < 0) throw new Error('trainpool worker: TRAINPOOL_WORKER_SUBMISSION must be a whole number ≥ 0')
  const token = env.TRAINPOOL_WORKER_TOKEN ?? (env.TRAINPOOL_RUN_SECRET ? workerToken(env.TRAINPOOL_RUN_SECRET, worker, submission) : undefined)
  if (!token) throw new Error('trainpool worker: no token: the coordinator passes TRAINPOOL_WORKER_TOKEN or TRAINPOOL_RUN_SECRET in the environment')
  return { worker, submission, token }
}

/** Dials the coordinator and resolves once it has welcomed this worker. */
export async function connectToCoordinator(url: string, env: Env = process.env): Promise<ParentChannel> {
  if (!/^wss?:\/\//.test(url)) throw new Error(`trainpool worker: --connect ${JSON.stringify(url)} is not valid: a ws:// URL the coordinator printed`)
  const identity = workerIdentity(env)
  const dataMode = env.TRAINPOOL_WORKER_DATA ?? 'auto'
  if (dataMode !== 'auto' && dataMode !== 'fetch')
    throw new Error(
      `trainpool worker: TRAINPOOL_WORKER_DATA ${JSON.stringify(dataMode)} is not valid: auto (read the store when this machine has it, else fetch) or fetch`,
    )
  const link = new CoordinatorLink(
    new WebSocket(url, { maxPayload: WORKER_SOCKET.maxFrameBytes }),
    env.TRAINPOOL_WORKER_CACHE || join(tmpdir(), 'trainpool-worker-cache'),
    dataMode,
  )
  await link.welcomed(identity)
  return {
    post: (m) => link.post(m),
    onMessage: (l) => void link.listeners.push(l),
    onParentGone: (l) => void link.goneListeners.push(l),
  }
}

/** The socket to the coordinator: frames checked against the contract, messages delivered in order, tables fetched on demand. */
class CoordinatorLink {
  readonly listeners: ((m: ToWorker) => void)[] = []
  readonly goneListeners: (() => void)[] = []
  private readonly chunkWaiters = new Map<string, (frame: CoordinatorFrame) => void>()
  private deliveries: Promise<void> = Promise.resolve()
  // one handler from the start: the coordinator may send its first job in the same read as the welcome
  private onWelcome: (() => void) | null = null
  private onRefused: ((err: Error) => void) | null = null

  constructor(
    private readonly socket: WebSocket,
    private readonly cacheDir: string,
    private readonly dataMode: 'auto' | 'fetch',
  ) {
    socket.on('error', (err) => process.stderr.write(`trainpool worker: socket error: ${err.message}\n`))
    socket.on('message', (data) => this.onFrame(data.toString()))
    socket.on('close', (code, reason) => {
      this.onRefused?.(new Error(`trainpool worker: the coordinator closed the connection (${code}${reason.length ? `: ${reason.toString()}` : ''})`))
      this.goneListeners.forEach((l) => l())
    })
  }

  /** Says hello with this worker's identity and one-time token; resolves on the welcome, rejects when refused. */
  async welcomed(identity: Omit<WorkerHello, 'type' | 'host' | 'pid'>): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.onWelcome = resolve
      this.onRefused = reject
      this.socket.once('open', () => {
        const hello: WorkerHello = { type: 'hello', ...identity, host: hostname(), pid: process.pid }
        this.socket.send(JSON.stringify(hello))
      })
      this.socket.once('error', reject)
    })
    this.onWelcome = null
    this.onRefused = null
  }

  post(frame: FromWorker | { type: 'fetch-table'; sha256: string; offset: number }): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame))
  }

  private onFrame(text: string): void {
    const parsed = CoordinatorFrameSchema.safeParse(parseJson(text))
    if (!parsed.success) {
      process.stderr.write(`trainpool worker: the coordinator sent a frame outside the contract (${parsed.error.issues[0]?.message}): closing\n`)
      this.socket.close(WORKER_SOCKET.invalidCode, 'frame outside the contract')
      return
    }
    const frame = parsed.data
    if (frame.type === 'welcome') return this.onWelcome?.()
    if (frame.type === 'table-chunk' || frame.type === 'table-missing') {
      const waiter = this.chunkWaiters.get(frame.sha256)
      this.chunkWaiters.delete(frame.sha256)
      waiter?.(frame)
      return
    }
    // cancel and shutdown act now (as over IPC); the rest in order, after any table they need
    if (frame.type === 'cancel' || frame.type === 'shutdown') return this.listeners.forEach((l) => l(frame))
    this.deliveries = this.deliveries
      .then(() => this.deliver(frame))
      .then((m) => this.listeners.forEach((l) => l(m)))
      .catch((err: Error) => this.post({ type: 'job-failed', jobId: frame.type === 'job' ? frame.jobId : -1, message: err.message }))
  }

  private async deliver(message: ToWorker): Promise<ToWorker> {
    if ((message.type === 'warmup' || message.type === 'job') && message.workload.data) {
      const table = await this.localTable(message.workload.data)
      return { ...message, workload: { ...message.workload, data: { ...message.workload.data, table } } }
    }
    return message
  }

  /** The table a workload names, made readable here (fetched when this machine does not have it). */
  private async localTable(data: { table: string; sha256: string }): Promise<string> {
    if (this.dataMode === 'auto' && existsSync(data.table)) return data.table
    const path = join(this.cacheDir, data.sha256, 'table.f32')
    if (existsSync(path)) return path
    await mkdir(join(this.cacheDir, data.sha256), { recursive: true })
    const partial = `${path}.${process.pid}.partial`
    const expected = await this.fetchTable(data.sha256, partial)
    if (expected.digest !== expected.wanted) {
      await rm(partial, { force: true })
      throw new Error(`data set ${data.sha256}: the fetched table does not match the coordinator's digest`)
    }
    await rename(partial, path)
    return path
  }

  /** Fetches a table chunk by chunk into `partial`; returns its digest and the one the coordinator gave. */
  private async fetchTable(sha256: string, partial: string): Promise<{ digest: string; wanted: string }> {
    const file = await open(partial, 'w')
    const hash = createHash('sha256')
    let wanted = ''
    try {
      for (let offset = 0; ;) {
        const frame = await new Promise<CoordinatorFrame>((resolve) => {
          this.chunkWaiters.set(sha256, resolve)
          this.post({ type: 'fetch-table', sha256, offset })
        })
        if (frame.type === 'table-missing') throw new Error(`the coordinator did not send data set ${sha256}: ${frame.reason}`)
        const chunk = frame as TableChunk
        const bytes = Buffer.from(chunk.base64, 'base64')
        await file.write(bytes, 0, bytes.length, offset)
        hash.update(bytes)
        offset += bytes.length
        wanted = chunk.tableSha256
        if (offset >= chunk.totalBytes || bytes.length === 0) break
      }
    } finally {
      await file.close()
    }
    return { digest: hash.digest('hex'), wanted }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
