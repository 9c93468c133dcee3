// The worker's side of the worker socket (contract/worker-socket.ts), for a worker on another
// machine (`trainpool worker --connect URL`, a Slurm task): it dials the coordinator, says who it is
// with its one-time token, and then serves the same messages as over IPC. Who it is comes from the
// environment, never from the command line: TRAINPOOL_WORKER_INDEX (or Slurm's
// SLURM_ARRAY_TASK_ID), TRAINPOOL_WORKER_SUBMISSION, and TRAINPOOL_WORKER_TOKEN or the run's
// TRAINPOOL_RUN_SECRET to derive it. A data set's table is read where the workload names it when
// this machine shares the store, and otherwise fetched once by its sha256 over the same socket into
// a local cache (TRAINPOOL_WORKER_CACHE), checked against the coordinator's digest;
// TRAINPOOL_WORKER_DATA=fetch always fetches (a node whose copy of the store path may be stale).
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { type CoordinatorFrame, CoordinatorFrameSchema, type TableChunk, type ToWorker, WORKER_SOCKET, type WorkerHello, type FromWorker } from '@shared/contract'
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
  const cacheDir = env.TRAINPOOL_WORKER_CACHE || join(tmpdir(), 'trainpool-worker-cache')
  const dataMode = env.TRAINPOOL_WORKER_DATA ?? 'auto'
  if (dataMode !== 'auto' && dataMode !== 'fetch') throw new Error(`trainpool worker: TRAINPOOL_WORKER_DATA ${JSON.stringify(dataMode)} is not valid: auto (read the store when this machine has it, else fetch) or fetch`)
  const socket = new WebSocket(url, { maxPayload: WORKER_SOCKET.maxFrameBytes })
  socket.on('error', (err) => process.stderr.write(`trainpool worker: socket error: ${err.message}\n`))
  const listeners: ((m: ToWorker) => void)[] = []
  const goneListeners: (() => void)[] = []
  const chunkWaiters = new Map<string, (frame: CoordinatorFrame) => void>()
  let deliveries: Promise<void> = Promise.resolve()

  const post = (frame: FromWorker | { type: 'fetch-table'; sha256: string; offset: number }) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame))
  }

  /** The table a workload names, made readable here (fetched when this machine does not have it). */
  const localTable = async (data: { table: string; sha256: string }): Promise<string> => {
    if (dataMode === 'auto' && existsSync(data.table)) return data.table
    const path = join(cacheDir, data.sha256, 'table.f32')
    if (existsSync(path)) return path
    await mkdir(join(cacheDir, data.sha256), { recursive: true })
    const partial = `${path}.${process.pid}.partial`
    const file = await open(partial, 'w')
    const hash = createHash('sha256')
    let expected = ''
    try {
      for (let offset = 0; ; ) {
        const frame = await new Promise<CoordinatorFrame>((resolve) => {
          chunkWaiters.set(data.sha256, resolve)
          post({ type: 'fetch-table', sha256: data.sha256, offset })
        })
        if (frame.type === 'table-missing') throw new Error(`the coordinator did not send data set ${data.sha256}: ${frame.reason}`)
        const chunk = frame as TableChunk
        const bytes = Buffer.from(chunk.base64, 'base64')
        await file.write(bytes, 0, bytes.length, offset)
        hash.update(bytes)
        offset += bytes.length
        expected = chunk.tableSha256
        if (offset >= chunk.totalBytes || bytes.length === 0) break
      }
    } finally {
      await file.close()
    }
    if (hash.digest('hex') !== expected) {
      await rm(partial, { force: true })
      throw new Error(`data set ${data.sha256}: the fetched table does not match the coordinator's digest`)
    }
    await rename(partial, path)
    return path
  }

  const deliver = async (message: ToWorker): Promise<ToWorker> => {
    if ((message.type === 'warmup' || message.type === 'job') && message.workload.data) {
      const table = await localTable(message.workload.data)
      return { ...message, workload: { ...message.workload, data: { ...message.workload.data, table } } }
    }
    return message
  }

  // one handler from the start: the coordinator may send its first job in the same read as the welcome
  let welcomed: (() => void) | null = null
  let refused: ((err: Error) => void) | null = null
  socket.on('message', (data) => {
    const parsed = CoordinatorFrameSchema.safeParse(parseJson(data.toString()))
    if (!parsed.success) {
      process.stderr.write(`trainpool worker: the coordinator sent a frame outside the contract (${parsed.error.issues[0]?.message}): closing\n`)
      socket.close(WORKER_SOCKET.invalidCode, 'frame outside the contract')
      return
    }
    const frame = parsed.data
    if (frame.type === 'welcome') return welcomed?.()
    if (frame.type === 'table-chunk' || frame.type === 'table-missing') {
      const waiter = chunkWaiters.get(frame.sha256)
      chunkWaiters.delete(frame.sha256)
      waiter?.(frame)
      return
    }
    // cancel and shutdown act now (as over IPC); the rest in order, after any table they need
    if (frame.type === 'cancel' || frame.type === 'shutdown') return listeners.forEach((l) => l(frame))
    deliveries = deliveries
      .then(() => deliver(frame))
      .then((m) => listeners.forEach((l) => l(m)))
      .catch((err: Error) => {
        const jobId = frame.type === 'job' ? frame.jobId : -1
        post({ type: 'job-failed', jobId, message: err.message })
      })
  })
  socket.on('close', (code, reason) => {
    refused?.(new Error(`trainpool worker: the coordinator closed the connection (${code}${reason.length ? `: ${reason.toString()}` : ''})`))
    goneListeners.forEach((l) => l())
  })
  await new Promise<void>((resolve, reject) => {
    welcomed = resolve
    refused = reject
    socket.once('open', () => {
      const hello: WorkerHello = { type: 'hello', ...identity, host: hostname(), pid: process.pid }
      socket.send(JSON.stringify(hello))
    })
    socket.once('error', reject)
  })
  welcomed = null
  refused = null
  return {
    post,
    onMessage: (l) => void listeners.push(l),
    onParentGone: (l) => void goneListeners.push(l),
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

