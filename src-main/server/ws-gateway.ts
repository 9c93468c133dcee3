// Browser mode's WebSocket gateway (/ws): the contract over one socket per tab. An upgrade passes the
// Host/Origin check (a foreign page never gets a socket), then the token (a wrong one is closed with
// a code the page can read, held to net/pre-auth.ts's limits meanwhile). Each text frame is one
// request {id, method, payload}, checked for size, JSON and shape, then answered by dispatch() as IPC
// is; events go to every tab, except progress snapshots to one too far behind. A heartbeat drops dead sockets.
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { type RawData, WebSocket, WebSocketServer } from 'ws'
import type { RunEvent } from '@shared/contract'
import { WS_CLOSE, WS_MAX_MESSAGE_BYTES, WS_PATH, type WsReply, type WsRequestId } from '@shared/contract/websocket'
import { closeRefused, PRE_AUTH_MAX_FRAME_BYTES, StrangerSockets } from '../net/pre-auth'
import { dispatch } from '../service/dispatch'
import type { BenchServiceApi } from '../service/types'
import { BASE_HEADERS, foreignRequest, tokenSource } from './security'

/** frames above this close the socket (1009); between WS_MAX_MESSAGE_BYTES and this they get an error reply */
const HARD_MAX_PAYLOAD = 16 * WS_MAX_MESSAGE_BYTES
/** a tab this far behind stops getting progress snapshots until it catches up (other events always go) */
const SLOW_CLIENT_BYTES = 4 * 1024 * 1024
const HEARTBEAT_MS = 30_000

export interface WsGatewayOptions {
  service: BenchServiceApi
  host: string
  port: () => number
  token: string
  /** an upgrade proved the token: its connection is no stranger's (net/http-connections.ts) */
  tokenProven: (req: IncomingMessage) => void
}

export class WsGateway {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: HARD_MAX_PAYLOAD, perMessageDeflate: false, clientTracking: false })
  /** sockets with a wrong token live only to read their close code: ws's limit is per server, so a server of their own */
  private readonly refusing = new WebSocketServer({ noServer: true, maxPayload: PRE_AUTH_MAX_FRAME_BYTES, perMessageDeflate: false, clientTracking: false })
  private readonly strangers = new StrangerSockets()
  /** authorized sockets only (an unauthorized one is closed before it is counted) */
  private readonly clients = new Set<WebSocket>()
  private readonly alive = new WeakMap<WebSocket, boolean>()
  private readonly offEvents: () => void
  private readonly heartbeat: NodeJS.Timeout

  constructor(private readonly options: WsGatewayOptions) {
    this.wss.on('connection', (ws: WebSocket) => this.accept(ws))
    this.offEvents = options.service.onEvent((event) => this.broadcast(event))
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS)
    this.heartbeat.unref()
  }

  get connections(): number {
    return this.clients.size
  }

  /** The HTTP server's 'upgrade' listener. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy())
    const { host, token } = this.options
    const port = this.options.port()
    const url = new URL(req.url ?? '/', 'http://upgrade.invalid')
    if (url.pathname !== WS_PATH) return refuseUpgrade(socket, 404, 'Not Found')
    // foreign pages never get a socket at all
    if (foreignRequest(req, host, port)) return refuseUpgrade(socket, 403, 'Forbidden')
    if (tokenSource(req, url, token, port) === null) {
      this.refusing.handleUpgrade(req, socket, head, (ws) => {
        // a frame over the limit is an error on this socket (1009): never thrown
        ws.on('error', () => ws.terminate())
        this.strangers.admit(ws, req.socket.remoteAddress ?? 'unknown')
        // a close code the page can read (a refused handshake only shows as 1006)
        closeRefused(ws, WS_CLOSE.unauthorized, 'unauthorized: wrong or missing token')
      })
      return
    }
    this.options.tokenProven(req)
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req))
  }

  /** Stops the events and the heartbeat, says goodbye to every tab, then drops whatever is still open. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat)
    this.offEvents()
    for (const ws of this.clients) ws.close(WS_CLOSE.goingAway, 'server stopping')
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
    await new Promise<void>((resolve) => this.refusing.close(() => resolve()))
    // give the close frames a moment
    await new Promise((r) => setTimeout(r, 50))
    for (const ws of this.clients) ws.terminate()
  }

  private accept(ws: WebSocket): void {
    this.clients.add(ws)
    ws.on('close', () => this.clients.delete(ws))
    this.alive.set(ws, true)
    ws.on('pong', () => this.alive.set(ws, true))
    ws.on('error', () => ws.terminate())
    ws.on('message', (data: RawData, isBinary: boolean) => {
      void this.answer(ws, data, isBinary)
    })
  }

  private async answer(ws: WebSocket, data: RawData, isBinary: boolean): Promise<void> {
    const refuse = (id: WsRequestId | null, message: string) => reply(ws, { id, ok: false, error: { code: 'invalid-input', message } })
    const size = rawSize(data)
    if (size > WS_MAX_MESSAGE_BYTES) return refuse(null, `message of ${size} bytes refused: the limit is ${WS_MAX_MESSAGE_BYTES} bytes`)
    if (isBinary) return refuse(null, 'binary frames are not accepted: send JSON text')
    let msg: unknown
    try {
      msg = JSON.parse(rawText(data))
    } catch (err) {
      return refuse(null, `malformed JSON: ${(err as Error).message}`)
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return refuse(null, 'a request is a JSON object {id, method, payload}')
    const m = msg as { id?: unknown; method?: unknown; payload?: unknown }
    const id = validId(m.id)
    if (id === null) return refuse(null, 'request id must be a string (≤ 64 characters) or a finite number')
    const extra = Object.keys(m).filter((k) => k !== 'id' && k !== 'method' && k !== 'payload')
    if (extra.length) return refuse(id, `unknown request field${extra.length > 1 ? 's' : ''} ${extra.join(', ')}: a request is {id, method, payload}`)
    // not String(m.method): ["getRun"] would become "getRun"; dispatch refuses anything but a method name
    const envelope = await dispatch(this.options.service, m.method as string, m.payload)
    reply(ws, { id, ...envelope })
  }

  private broadcast(event: RunEvent): void {
    let frame: string | null = null
    for (const ws of this.clients) {
      if (ws.readyState !== WebSocket.OPEN) continue
      if (event.type === 'progress' && ws.bufferedAmount > SLOW_CLIENT_BYTES) continue
      frame ??= JSON.stringify({ event })
      ws.send(frame)
    }
  }

  private beat(): void {
    for (const ws of this.clients) {
      if (this.alive.get(ws) === false) {
        ws.terminate()
        continue
      }
      this.alive.set(ws, false)
      ws.ping()
    }
  }
}

function reply(ws: WebSocket, message: WsReply): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message))
}

function validId(id: unknown): WsRequestId | null {
  if (typeof id === 'number' && Number.isFinite(id)) return id
  if (typeof id === 'string' && id.length > 0 && id.length <= 64) return id
  return null
}

function rawSize(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0)
  return data instanceof ArrayBuffer ? data.byteLength : data.length
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  if (Buffer.isBuffer(data)) return data.toString('utf8')
  return Buffer.from(data).toString('utf8')
}

function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  const body = `${status} ${text}\n`
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n${Object.entries(BASE_HEADERS)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n${body}`,
  )
}
