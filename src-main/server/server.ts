// Browser mode: the built renderer over HTTP and the contract over one WebSocket (/ws), backed by
// the same BenchService as the desktop shell; data files come in by POST /api/upload (upload.ts).
// Token-locked (URL ?token= or the cookie the first authorized load sets), Host/Origin-checked,
// bound to 127.0.0.1 unless told otherwise.
import { createReadStream } from 'node:fs'
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { type RawData, WebSocket, WebSocketServer } from 'ws'
import type { RunEvent } from '@shared/contract'
import { UPLOAD_PATH } from '@shared/contract/upload'
import { WS_CLOSE, WS_MAX_MESSAGE_BYTES, WS_PATH, type WsReply, type WsRequestId } from '@shared/contract/websocket'
import { dispatch } from '../service/dispatch'
import type { BenchServiceApi } from '../service/types'
import {
  BASE_HEADERS,
  contentSecurityPolicy,
  hostAllowed,
  isLoopbackHost,
  isWildcardHost,
  listenHost,
  newToken,
  originAllowed,
  tokenCookie,
  tokenSource,
  urlHost,
} from './security'
import { lookupStatic, resolveRendererDir } from './static'
import { handleUpload, removeAbandonedUploads, type UploadOptions } from './upload'

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 7878
/** frames above this close the socket (1009); between WS_MAX_MESSAGE_BYTES and this they get an error reply */
const HARD_MAX_PAYLOAD = 16 * WS_MAX_MESSAGE_BYTES
/** a tab this far behind stops getting progress snapshots until it catches up (other events always go) */
const SLOW_CLIENT_BYTES = 4 * 1024 * 1024
const HEARTBEAT_MS = 30_000

export interface ServeOptions {
  service: BenchServiceApi
  host?: string
  /** 0 picks a free port */
  port?: number
  rendererDir?: string
  /** fixed token (tests); a random one otherwise */
  token?: string
  /** call service.shutdown() in close() (default true) */
  shutdownService?: boolean
  /** data-file uploads (POST /api/upload): where they arrive, the cap, the loader; absent: refused (503) */
  uploads?: UploadOptions
}

export interface TrainpoolServer {
  host: string
  port: number
  token: string
  /** http://host:port/ */
  baseUrl: string
  /** the URL to open: baseUrl with ?token= */
  url: string
  /** ws://host:port/ws (add ?token=) */
  wsUrl: string
  /** true when bound to something other than loopback */
  exposed: boolean
  connections(): number
  /** stops the workers (service.shutdown()), closes every socket and the server */
  close(): Promise<void>
}

export async function startServer(options: ServeOptions): Promise<TrainpoolServer> {
  const service = options.service
  const host = options.host ?? DEFAULT_HOST
  const token = options.token ?? newToken()
  const rendererDir = options.rendererDir ?? resolveRendererDir()
  let port = options.port ?? DEFAULT_PORT

  const wss = new WebSocketServer({ noServer: true, maxPayload: HARD_MAX_PAYLOAD, perMessageDeflate: false, clientTracking: false })
  /** authorized sockets only (an unauthorized one is closed before it is counted) */
  const clients = new Set<WebSocket>()
  const alive = new WeakMap<WebSocket, boolean>()

  // no limit on a whole request: an upload is bounded by its idle timeout (upload.ts) instead of
  // Node's 5 minutes in total; headers still must arrive within headersTimeout
  const http: Server = createServer({ requestTimeout: 0 }, (req, res) => {
    handleHttp(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, `internal error: ${(err as Error)?.message ?? String(err)}`)
      else res.destroy()
    })
  })

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const [k, v] of Object.entries(BASE_HEADERS)) res.setHeader(k, v)
    const hostHeader = req.headers.host
    if (!hostAllowed(hostHeader, host, port)) return send(res, 403, 'forbidden: unexpected Host header')
    if (!originAllowed(headerString(req.headers.origin), hostHeader)) return send(res, 403, 'forbidden: foreign Origin')
    const url = new URL(req.url ?? '/', `http://${hostHeader}`)
    const source = tokenSource(req, url, token, port)
    if (!source) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="trainpool"')
      return send(res, 401, 'unauthorized: open the URL `trainpool serve` printed (it carries ?token=…)')
    }
    if (url.pathname === UPLOAD_PATH) return handleUpload(req, res, url, options.uploads)
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD')
      return send(res, 405, 'method not allowed')
    }
    if (url.pathname === WS_PATH) return send(res, 426, 'this endpoint speaks WebSocket', { Upgrade: 'websocket' })
    const found = await lookupStatic(rendererDir, url.pathname)
    if (!found.ok) {
      // browsers ask for a favicon on their own; the app has none: no content rather than a logged 404
      if (url.pathname === '/favicon.ico') return void res.writeHead(204, { 'Cache-Control': 'max-age=86400' }).end()
      return send(res, found.status, found.status === 404 ? 'not found' : 'bad path')
    }
    if (source === 'query') res.setHeader('Set-Cookie', tokenCookie(token, port))
    const isHtml = found.contentType.startsWith('text/html')
    res.writeHead(200, {
      'Content-Type': found.contentType,
      'Content-Length': String(found.size),
      'Cache-Control': isHtml ? 'no-store' : 'no-cache',
      ...(isHtml ? { 'Content-Security-Policy': contentSecurityPolicy(hostHeader!) } : {}),
    })
    if (req.method === 'HEAD') return void res.end()
    createReadStream(found.file)
      .on('error', () => res.destroy())
      .pipe(res)
  }

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    const hostHeader = req.headers.host
    const url = new URL(req.url ?? '/', 'http://upgrade.invalid')
    if (url.pathname !== WS_PATH) return refuseUpgrade(socket, 404, 'Not Found')
    // foreign pages never get a socket at all
    if (!hostAllowed(hostHeader, host, port) || !originAllowed(headerString(req.headers.origin), hostHeader)) {
      return refuseUpgrade(socket, 403, 'Forbidden')
    }
    const authorized = tokenSource(req, url, token, port) !== null
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (!authorized) {
        // a close code the page can read (a refused handshake only shows as 1006)
        ws.close(WS_CLOSE.unauthorized, 'unauthorized: wrong or missing token')
        return
      }
      wss.emit('connection', ws, req)
    })
  })

  wss.on('connection', (ws: WebSocket) => {
    clients.add(ws)
    ws.on('close', () => clients.delete(ws))
    alive.set(ws, true)
    ws.on('pong', () => alive.set(ws, true))
    ws.on('error', () => ws.terminate())
    ws.on('message', (data: RawData, isBinary: boolean) => {
      void onMessage(ws, data, isBinary)
    })
  })

  async function onMessage(ws: WebSocket, data: RawData, isBinary: boolean): Promise<void> {
    const size = rawSize(data)
    if (size > WS_MAX_MESSAGE_BYTES) {
      return reply(ws, { id: null, ok: false, error: { code: 'invalid-input', message: `message of ${size} bytes refused: the limit is ${WS_MAX_MESSAGE_BYTES} bytes` } })
    }
    if (isBinary) return reply(ws, { id: null, ok: false, error: { code: 'invalid-input', message: 'binary frames are not accepted: send JSON text' } })
    let msg: unknown
    try {
      msg = JSON.parse(rawText(data))
    } catch (err) {
      return reply(ws, { id: null, ok: false, error: { code: 'invalid-input', message: `malformed JSON: ${(err as Error).message}` } })
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      return reply(ws, { id: null, ok: false, error: { code: 'invalid-input', message: 'a request is a JSON object {id, method, payload}' } })
    }
    const m = msg as { id?: unknown; method?: unknown; payload?: unknown }
    const id = validId(m.id)
    if (id === null) {
      return reply(ws, { id: null, ok: false, error: { code: 'invalid-input', message: 'request id must be a string (≤ 64 characters) or a finite number' } })
    }
    const extra = Object.keys(m).filter((k) => k !== 'id' && k !== 'method' && k !== 'payload')
    if (extra.length) {
      return reply(ws, { id, ok: false, error: { code: 'invalid-input', message: `unknown request field${extra.length > 1 ? 's' : ''} ${extra.join(', ')}: a request is {id, method, payload}` } })
    }
    // not String(m.method): ["getRun"] would become "getRun"; dispatch refuses anything but a method name
    const envelope = await dispatch(service, m.method as string, m.payload)
    reply(ws, { id, ...envelope })
  }

  const offEvents = service.onEvent((event: RunEvent) => {
    let frame: string | null = null
    for (const ws of clients) {
      if (ws.readyState !== WebSocket.OPEN) continue
      if (event.type === 'progress' && ws.bufferedAmount > SLOW_CLIENT_BYTES) continue
      frame ??= JSON.stringify({ event })
      ws.send(frame)
    }
  })

  const heartbeat = setInterval(() => {
    for (const ws of clients) {
      if (alive.get(ws) === false) {
        ws.terminate()
        continue
      }
      alive.set(ws, false)
      ws.ping()
    }
  }, HEARTBEAT_MS)
  heartbeat.unref()

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err)
    http.once('error', onError)
    http.listen(port, listenHost(host), () => {
      http.off('error', onError)
      resolve()
    })
  })
  port = (http.address() as AddressInfo).port
  if (options.uploads) await removeAbandonedUploads(options.uploads.dir)

  // a wildcard bind is reached on this machine at loopback: print a URL that works
  const shownHost = urlHost(isWildcardHost(host) ? DEFAULT_HOST : listenHost(host))
  const baseUrl = `http://${shownHost}:${port}/`
  let closing: Promise<void> | null = null

  return {
    host,
    port,
    token,
    baseUrl,
    url: `${baseUrl}?token=${token}`,
    wsUrl: `ws://${shownHost}:${port}${WS_PATH}`,
    exposed: !isLoopbackHost(host),
    connections: () => clients.size,
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat)
        try {
          if (options.shutdownService !== false) await service.shutdown()
        } finally {
          offEvents()
          for (const ws of clients) ws.close(WS_CLOSE.goingAway, 'server stopping')
          await new Promise<void>((resolve) => wss.close(() => resolve()))
          // give the close frames a moment, then drop whatever is still open
          await new Promise((r) => setTimeout(r, 50))
          for (const ws of clients) ws.terminate()
          await new Promise<void>((resolve) => {
            http.close(() => resolve())
            http.closeAllConnections()
          })
        }
      })()
      return closing
    },
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

function headerString(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v
}

function send(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = `${status} ${text}\n`
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), 'Cache-Control': 'no-store', ...headers })
  res.end(body)
}

function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  const body = `${status} ${text}\n`
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n${Object.entries(BASE_HEADERS).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`)
}
