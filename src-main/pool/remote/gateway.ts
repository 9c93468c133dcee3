// The coordinator's side of the worker socket (contract/worker-socket.ts), where remote workers dial
// back. Nothing is trusted before the hello: it must bring the one-time token of a worker the
// launcher waits for, within WORKER_SOCKET.helloTimeoutMs and net/pre-auth.ts's limits; an unknown or
// replayed token is refused (4401) and logged, as is a frame that breaks the contract (4400) or is
// over the size limit (1009). A welcomed worker may fetch the tables of the data sets it was given.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import type { AddressInfo, Socket } from 'node:net'
import { hostname } from 'node:os'
import { type RawData, WebSocket, WebSocketServer } from 'ws'
import {
  type CoordinatorFrame,
  type FromWorker,
  WORKER_SOCKET,
  type WorkerFrame,
  WorkerFrameSchema,
  type WorkerHello,
  WorkerHelloSchema,
} from '@shared/contract'
import { allowFramesUpTo, closeRefused, dropOversized, PRE_AUTH_MAX_CONNECTIONS, PRE_AUTH_MAX_FRAME_BYTES, StrangerSockets } from '../../net/pre-auth'
import { sameToken, workerToken } from './token'

export interface ListenAddress {
  host: string
  port: number
}

/** One welcomed worker's socket. */
export interface WorkerConnection {
  readonly hello: WorkerHello
  readonly remoteAddress: string
  send(frame: CoordinatorFrame): void
  onMessage(listener: (message: FromWorker) => void): void
  /** fires once, when the socket is gone (the worker exited, its node failed, or it broke the contract) */
  onClose(listener: (why: string) => void): void
  /** lets this worker fetch the data table of a data set it was given */
  shareTable(sha256: string, path: string): void
  close(): void
}

interface Waiting {
  worker: number
  submission: number
  token: string
  resolve: (connection: WorkerConnection) => void
}

const WILDCARD = new Set(['0.0.0.0', '::', '[::]', ''])

/** "HOST:PORT" (IPv6 in brackets) as the --listen flag takes it. */
export function parseListenAddress(text: string): ListenAddress {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(text.trim())
  const port = m ? Number(m[2]) : NaN
  if (!m || port > 65535) throw new Error(`--listen ${JSON.stringify(text)} is not valid: HOST:PORT, e.g. 10.0.0.5:7900 (port 0 picks a free one)`)
  return { host: m[1].replace(/^\[|\]$/g, ''), port }
}

/** The service's workerSocket option from --listen (absent: 127.0.0.1 on a free port, this machine's tasks only). */
export function workerSocketOption(listen: ListenAddress | undefined, log: (line: string) => void): { listen: ListenAddress; log: (line: string) => void } {
  return { listen: listen ?? { host: '127.0.0.1', port: 0 }, log }
}

export class WorkerGateway {
  private readonly waiting = new Map<string, Waiting>()
  /** tokens already presented once: a second hello with one is a replay */
  private readonly spent = new Set<string>()
  private readonly tableDigests = new Map<string, Promise<{ sha256: string; bytes: number }>>()
  private readonly connections = new Set<WebSocket>()
  private readonly strangers = new StrangerSockets()

  private constructor(
    private readonly server: WebSocketServer,
    readonly secret: string,
    private readonly log: (line: string) => void,
  ) {
    server.on('connection', (socket, request) => this.accept(socket, request.socket))
  }

  /** Listens on `address`; says so in the log when that is every interface. */
  static async listen(address: ListenAddress, secret: string, log: (line: string) => void): Promise<WorkerGateway> {
    // the hello's limit: raised to the contract's once a worker is welcomed
    const server = new WebSocketServer({ host: address.host, port: address.port, path: WORKER_SOCKET.path, maxPayload: PRE_AUTH_MAX_FRAME_BYTES })
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve)
      server.once('error', reject)
    })
    if (WILDCARD.has(address.host))
      log(`warning: the worker socket listens on every interface (${address.host}); workers need only the address they dial (--listen HOST:PORT)`)
    return new WorkerGateway(server, secret, log)
  }

  /** ws://HOST:PORT/worker for the address it listens on (a wildcard address is dialled by this machine's name). */
  get url(): string {
    const { address, port } = this.server.address() as AddressInfo
    const host = WILDCARD.has(address) ? hostname() : address.includes(':') ? `[${address}]` : address
    return `ws://${host}:${port}${WORKER_SOCKET.path}`
  }

  private submissions = 0

  /** A new submission number: each launch of workers gets one, so each (worker, submission) token is new. */
  nextSubmission(): number {
    return this.submissions++
  }

  /** Resolves when worker `worker` (submission `submission`) dials back with its token. */
  expect(worker: number, submission: number): { connected: Promise<WorkerConnection>; stopWaiting: () => void } {
    const token = workerToken(this.secret, worker, submission)
    let stopWaiting = () => {}
    const connected = new Promise<WorkerConnection>((resolve) => {
      this.waiting.set(token, { worker, submission, token, resolve })
      stopWaiting = () => {
        this.waiting.delete(token)
        this.spent.add(token)
      }
    })
    return { connected, stopWaiting }
  }

  async close(): Promise<void> {
    for (const socket of this.connections) socket.terminate()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private accept(socket: WebSocket, tcp: Socket): void {
    const remoteAddress = tcp.remoteAddress ?? 'unknown'
    this.connections.add(socket)
    socket.once('close', () => this.connections.delete(socket))
    const droppedFrom = this.strangers.admit(socket, remoteAddress)
    if (droppedFrom !== null) this.log(`dropped a worker connection from ${droppedFrom}: ${PRE_AUTH_MAX_CONNECTIONS} others were waiting for their hello`)
    const refuse = (why: string) => {
      this.log(`refused a worker connection from ${remoteAddress}: ${why}`)
      closeRefused(socket, WORKER_SOCKET.refusedCode, why.slice(0, 120))
    }
    const timer = setTimeout(() => refuse(`no hello within ${WORKER_SOCKET.helloTimeoutMs / 1000} s`), WORKER_SOCKET.helloTimeoutMs)
    const onOversized = (err: Error & { code?: string }) => {
      if (err.code !== 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return
      clearTimeout(timer)
      this.log(`refused a worker connection from ${remoteAddress}: a frame over ${PRE_AUTH_MAX_FRAME_BYTES} bytes before its hello`)
      dropOversized(socket, tcp)
    }
    socket.on('error', onOversized)
    socket.once('message', (data) => {
      clearTimeout(timer)
      socket.off('error', onOversized)
      const parsed = WorkerHelloSchema.safeParse(parseJson(data))
      if (!parsed.success) return refuse(`the first frame is not a valid hello (${parsed.error.issues[0]?.message ?? 'malformed'})`)
      const hello = parsed.data
      const expected = workerToken(this.secret, hello.worker, hello.submission)
      if (!sameToken(expected, hello.token)) return refuse(`unknown token for worker ${hello.worker} submission ${hello.submission}`)
      if (this.spent.has(hello.token)) return refuse(`replayed token for worker ${hello.worker} submission ${hello.submission}`)
      const waiting = this.waiting.get(hello.token)
      if (!waiting) return refuse(`worker ${hello.worker} submission ${hello.submission} is not expected now`)
      this.waiting.delete(hello.token)
      this.spent.add(hello.token)
      this.strangers.trust(socket)
      allowFramesUpTo(socket, WORKER_SOCKET.maxFrameBytes)
      waiting.resolve(this.connection(socket, hello, remoteAddress))
      send(socket, { type: 'welcome' })
    })
    socket.once('close', () => clearTimeout(timer))
    socket.on('error', () => {})
  }

  private connection(socket: WebSocket, hello: WorkerHello, remoteAddress: string): WorkerConnection {
    const messageListeners: ((m: FromWorker) => void)[] = []
    const closeListeners: ((why: string) => void)[] = []
    const tables = new Map<string, string>()
    let closedWhy: string | null = null
    const closed = (why: string) => {
      if (closedWhy !== null) return
      closedWhy = why
      for (const l of closeListeners) l(why)
    }
    socket.on('message', (data) => {
      const parsed = WorkerFrameSchema.safeParse(parseJson(data))
      if (!parsed.success) {
        const why = `worker ${hello.worker} sent a frame outside the contract (${parsed.error.issues[0]?.message ?? 'malformed'}): connection closed`
        this.log(why)
        socket.close(WORKER_SOCKET.invalidCode, 'frame outside the contract')
        closed(why)
        return
      }
      const frame: WorkerFrame = parsed.data
      if (frame.type === 'fetch-table') void this.sendTableChunk(socket, tables, frame.sha256, frame.offset)
      else for (const l of messageListeners) l(frame)
    })
    let oversized = false
    socket.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') oversized = true
    })
    socket.on('close', (code, reason) => {
      const text = reason.toString()
      if (oversized) code = 1009
      closed(
        code === 1009
          ? `worker ${hello.worker} sent a frame larger than ${WORKER_SOCKET.maxFrameBytes} bytes: connection closed`
          : `connection closed (${code}${text ? `: ${text}` : ''})`,
      )
      if (code === 1009) this.log(`worker ${hello.worker} sent a frame larger than the limit: connection closed`)
    })
    return {
      hello,
      remoteAddress,
      send: (frame) => send(socket, frame),
      onMessage: (l) => void messageListeners.push(l),
      onClose: (l) => {
        if (closedWhy !== null) l(closedWhy)
        else closeListeners.push(l)
      },
      shareTable: (sha256, path) => void tables.set(sha256, path),
      close: () => socket.close(1000, 'done'),
    }
  }

  private async sendTableChunk(socket: WebSocket, tables: Map<string, string>, sha256: string, offset: number): Promise<void> {
    const path = tables.get(sha256)
    if (!path) return send(socket, { type: 'table-missing', sha256, reason: 'this worker was not given that data set' })
    try {
      const digest = await this.tableDigest(path)
      const length = Math.max(0, Math.min(WORKER_SOCKET.tableChunkBytes, digest.bytes - offset))
      const bytes = Buffer.alloc(length)
      const file = await open(path, 'r')
      try {
        await file.read(bytes, 0, length, offset)
      } finally {
        await file.close()
      }
      send(socket, { type: 'table-chunk', sha256, offset, totalBytes: digest.bytes, tableSha256: digest.sha256, base64: bytes.toString('base64') })
    } catch (err) {
      send(socket, { type: 'table-missing', sha256, reason: `the coordinator could not read it: ${(err as Error).message}` })
    }
  }

  private tableDigest(path: string): Promise<{ sha256: string; bytes: number }> {
    let digest = this.tableDigests.get(path)
    if (!digest) {
      digest = (async () => {
        const { size } = await stat(path)
        const hash = createHash('sha256')
        for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
        return { sha256: hash.digest('hex'), bytes: size }
      })()
      this.tableDigests.set(path, digest)
    }
    return digest
  }
}

function send(socket: WebSocket, frame: CoordinatorFrame): void {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame))
}

function parseJson(data: RawData): unknown {
  try {
    return JSON.parse(data.toString())
  } catch {
    return undefined
  }
}
