// Browser mode's one WebSocket to `trainpool serve`, kept open: requests go out as {id, method,
// payload} and come back as {id, ...Envelope}; pushed {event} frames go to `onEvent`. It reconnects
// with backoff; requests queued or in flight when it drops are rejected with a clear error.
import type { ApiRequest, ApiResponse, Envelope, Method } from '@shared/contract/api'
import type { TrainpoolErrorShape } from '@shared/vocabulary/errors'
import type { RunEvent } from '@shared/contract/events'
import { WS_CLOSE, type WsRequest } from '@shared/contract/websocket'

export interface BridgeError extends TrainpoolErrorShape {
  name: 'TrainpoolError'
}

export type ConnectionState = 'connecting' | 'open' | 'closed' | 'unauthorized'

export interface ConnectionOptions {
  /** the URL the socket opens (with the token) */
  url: string
  /** the URL errors name (without the token) */
  shownUrl: string
  WebSocketImpl: typeof WebSocket
  /** first reconnect delay; doubles up to maxDelayMs */
  initialDelayMs: number
  maxDelayMs: number
  onEvent: (event: RunEvent) => void
  /** the socket opened again after a drop */
  onReopen: () => void
}

function bridgeError(shape: TrainpoolErrorShape): BridgeError {
  return { name: 'TrainpoolError', code: shape.code, message: shape.message, ...(shape.issues ? { issues: shape.issues } : {}) }
}

interface Pending {
  method: Method
  resolve: (value: unknown) => void
  reject: (err: BridgeError) => void
}

/** what a close event carries (structural: the DOM's CloseEvent and ws's both fit) */
interface CloseInfo {
  code: number
  reason: string
}

function describeClose(ev: CloseInfo): string {
  return `code ${ev.code}${ev.reason ? `: ${ev.reason}` : ''}`
}

export class WsConnection {
  state: ConnectionState = 'connecting'
  private readonly stateListeners = new Set<(s: ConnectionState) => void>()
  private readonly pending = new Map<number, Pending>()
  /** requests made while the socket is (re)connecting: sent on open, rejected if it closes first */
  private queued: { id: number; frame: string }[] = []
  private socket: WebSocket | null = null
  private nextId = 1
  private delay: number
  private everOpened = false
  private closedForGood = false
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null

  constructor(private readonly opts: ConnectionOptions) {
    this.delay = opts.initialDelayMs
  }

  onStateChange(listener: (state: ConnectionState) => void): () => void {
    this.stateListeners.add(listener)
    return () => this.stateListeners.delete(listener)
  }

  private setState(s: ConnectionState) {
    if (this.state === s) return
    this.state = s
    for (const l of [...this.stateListeners]) l(s)
  }

  connect() {
    this.setState('connecting')
    let ws: WebSocket
    try {
      ws = new this.opts.WebSocketImpl(this.opts.url)
    } catch (err) {
      this.failAll(`could not open ${this.opts.shownUrl}: ${(err as Error)?.message ?? String(err)}`, 'internal')
      this.scheduleReconnect()
      return
    }
    this.socket = ws
    ws.onopen = () => this.opened(ws)
    ws.onmessage = (ev: { data: unknown }) => this.onFrame(ev.data)
    ws.onclose = (ev: CloseInfo) => this.closed(ws, ev)
    ws.onerror = () => {
      /* onclose follows with the code */
    }
  }

  private opened(ws: WebSocket) {
    const reconnected = this.everOpened
    this.everOpened = true
    this.delay = this.opts.initialDelayMs
    this.setState('open')
    const toSend = this.queued
    this.queued = []
    for (const q of toSend) ws.send(q.frame)
    if (reconnected) this.opts.onReopen()
  }

  private closed(ws: WebSocket, ev: CloseInfo) {
    if (this.socket !== ws) return
    this.socket = null
    const why = describeClose(ev)
    if (ev.code === WS_CLOSE.unauthorized || ev.code === WS_CLOSE.forbidden) {
      this.closedForGood = true
      this.failAll(`Trainpool server refused the connection: ${why}. Open the URL that \`trainpool serve\` printed (it carries ?token=…)`, 'unauthorized')
      this.setState('unauthorized')
      return
    }
    this.failAll(`connection to the Trainpool server closed (${why}) before it answered`, 'internal')
    if (this.closedForGood) {
      this.setState('closed')
      return
    }
    this.setState('connecting')
    this.scheduleReconnect()
  }

  private scheduleReconnect() {
    if (this.closedForGood || this.reconnectTimer) return
    const wait = Math.min(this.opts.maxDelayMs, this.delay) * (0.8 + Math.random() * 0.4)
    this.delay = Math.min(this.opts.maxDelayMs, this.delay * 2)
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null
      if (!this.closedForGood) this.connect()
    }, wait)
  }

  private failAll(message: string, code: TrainpoolErrorShape['code']) {
    const failed = [...this.pending.values()]
    this.pending.clear()
    this.queued = []
    for (const p of failed) p.reject(bridgeError({ code, message: `${p.method}: ${message}` }))
  }

  private onFrame(data: unknown) {
    if (typeof data !== 'string') return
    let msg: unknown
    try {
      msg = JSON.parse(data)
    } catch {
      console.error('trainpool: malformed frame from the server')
      return
    }
    if (!msg || typeof msg !== 'object') return
    const m = msg as { id?: unknown; event?: unknown } & Partial<Envelope<unknown>>
    if (m.event && typeof m.event === 'object') {
      this.opts.onEvent(m.event as RunEvent)
      return
    }
    if (typeof m.id !== 'number') {
      if (m.ok === false && m.error) console.error(`trainpool: server error: ${m.error.message}`)
      return
    }
    const p = this.pending.get(m.id)
    if (!p) return
    this.pending.delete(m.id)
    if (m.ok === true) p.resolve((m as { value: unknown }).value)
    else if (m.ok === false && m.error && typeof m.error.message === 'string') p.reject(bridgeError(m.error))
    else p.reject(bridgeError({ code: 'internal', message: `${p.method}: malformed reply from the server` }))
  }

  call<M extends Method>(method: M, payload: ApiRequest<M> | undefined): Promise<ApiResponse<M>> {
    if (this.closedForGood) {
      const refused = this.state === 'unauthorized'
      return Promise.reject(
        bridgeError({
          code: refused ? 'unauthorized' : 'internal',
          message: `${method}: not connected to the Trainpool server (${refused ? 'the token was refused' : 'the bridge was closed'})`,
        }),
      )
    }
    const id = this.nextId++
    const request: WsRequest = payload === undefined ? { id, method } : { id, method, payload }
    const frame = JSON.stringify(request)
    return new Promise<ApiResponse<M>>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject })
      if (this.socket && this.socket.readyState === this.opts.WebSocketImpl.OPEN) this.socket.send(frame)
      else this.queued.push({ id, frame })
    })
  }

  /** Closes the socket for good (no reconnect). */
  close() {
    this.closedForGood = true
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer)
    this.reconnectTimer = null
    const ws = this.socket
    this.socket = null
    this.failAll('the bridge was closed', 'internal')
    ws?.close(1000, 'bridge closed')
    this.setState('closed')
  }
}
