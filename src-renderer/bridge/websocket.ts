// Browser mode's bridge: TrainpoolApi over one WebSocket to `trainpool serve`. Requests are
// {id, method, payload} (one method per entry of the contract's API table, the payload its request
// object) and come back as {id, ...Envelope}; run events are pushed as {event}.
// The socket reconnects with backoff; requests in flight when it drops are rejected with a clear
// error. After a reconnect it re-attaches to the live run (currentRun), or, when the run ended
// while the socket was down, delivers its run-finished from getRun, so stores never go stale.
import { requestMethods } from '@shared/contract/api'
import type { ApiRequest, ApiResponse, Envelope, Method, TrainpoolApi } from '@shared/contract/api'
import type { TrainpoolErrorShape } from '@shared/contract/errors'
import type { RunEvent } from '@shared/contract/events'
import { WS_CLOSE, WS_PATH, type WsRequest } from '@shared/contract/websocket'

export interface BridgeError extends TrainpoolErrorShape {
  name: 'TrainpoolError'
}

export type ConnectionState = 'connecting' | 'open' | 'closed' | 'unauthorized'

export interface WebSocketBridgeOptions {
  /** ws://host:port/ws */
  url: string
  /** from the page URL's ?token= (the server's cookie also works when absent) */
  token?: string | null
  /** injected in tests */
  WebSocketImpl?: typeof WebSocket
  /** first reconnect delay; doubles up to maxDelayMs (default 250 → 5 000 ms) */
  initialDelayMs?: number
  maxDelayMs?: number
}

export interface WebSocketBridge extends TrainpoolApi {
  readonly state: ConnectionState
  onStateChange(listener: (state: ConnectionState) => void): () => void
  /** closes the socket for good (no reconnect) */
  close(): void
}

function bridgeError(shape: TrainpoolErrorShape): BridgeError {
  return { name: 'TrainpoolError', code: shape.code, message: shape.message, ...(shape.issues ? { issues: shape.issues } : {}) }
}

interface Pending {
  method: Method
  resolve: (value: unknown) => void
  reject: (err: BridgeError) => void
}

export function createWebSocketBridge(options: WebSocketBridgeOptions): WebSocketBridge {
  const WS = options.WebSocketImpl ?? WebSocket
  const initialDelay = options.initialDelayMs ?? 250
  const maxDelay = options.maxDelayMs ?? 5000
  const url = options.token ? `${options.url}${options.url.includes('?') ? '&' : '?'}token=${encodeURIComponent(options.token)}` : options.url

  const eventListeners = new Set<(e: RunEvent) => void>()
  const stateListeners = new Set<(s: ConnectionState) => void>()
  const pending = new Map<number, Pending>()
  /** requests made while the socket is (re)connecting: sent on open, rejected if it closes first */
  let queued: { id: number; frame: string }[] = []
  let socket: WebSocket | null = null
  let state: ConnectionState = 'connecting'
  let nextId = 1
  let delay = initialDelay
  let everOpened = false
  let closedForGood = false
  let reconnectTimer: ReturnType<typeof setTimeout> | null = null
  /** the run this tab last saw running, to reconcile after a drop */
  let liveRunId: string | null = null

  function setState(s: ConnectionState) {
    if (state === s) return
    state = s
    for (const l of [...stateListeners]) l(s)
  }

  function emit(event: RunEvent) {
    if (event.type === 'run-started') liveRunId = event.runId
    else if (event.type === 'run-finished' && event.runId === liveRunId) liveRunId = null
    for (const l of [...eventListeners]) {
      try {
        l(event)
      } catch (err) {
        console.error('trainpool: event listener failed', err)
      }
    }
  }

  function connect() {
    setState('connecting')
    let ws: WebSocket
    try {
      ws = new WS(url)
    } catch (err) {
      failAll(`could not open ${options.url}: ${(err as Error)?.message ?? String(err)}`, 'internal')
      scheduleReconnect()
      return
    }
    socket = ws
    ws.onopen = () => {
      const reconnected = everOpened
      everOpened = true
      delay = initialDelay
      setState('open')
      const toSend = queued
      queued = []
      for (const q of toSend) ws.send(q.frame)
      if (reconnected) void reconcile()
    }
    ws.onmessage = (ev: { data: unknown }) => onFrame(ev.data)
    ws.onclose = (ev: CloseInfo) => {
      if (socket !== ws) return
      socket = null
      const why = describeClose(ev)
      if (ev.code === WS_CLOSE.unauthorized || ev.code === WS_CLOSE.forbidden) {
        closedForGood = true
        failAll(`Trainpool server refused the connection: ${why}. Open the URL that \`trainpool serve\` printed (it carries ?token=…)`, 'unauthorized')
        setState('unauthorized')
        return
      }
      failAll(`connection to the Trainpool server closed (${why}) before it answered`, 'internal')
      if (closedForGood) {
        setState('closed')
        return
      }
      setState('connecting')
      scheduleReconnect()
    }
    ws.onerror = () => {
      /* onclose follows with the code */
    }
  }

  function scheduleReconnect() {
    if (closedForGood || reconnectTimer) return
    const wait = Math.min(maxDelay, delay) * (0.8 + Math.random() * 0.4)
    delay = Math.min(maxDelay, delay * 2)
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null
      if (!closedForGood) connect()
    }, wait)
  }

  function failAll(message: string, code: TrainpoolErrorShape['code']) {
    const failed = [...pending.values()]
    pending.clear()
    queued = []
    for (const p of failed) p.reject(bridgeError({ code, message: `${p.method}: ${message}` }))
  }

  function onFrame(data: unknown) {
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
      emit(m.event as RunEvent)
      return
    }
    if (typeof m.id !== 'number') {
      if (m.ok === false && m.error) console.error(`trainpool: server error: ${m.error.message}`)
      return
    }
    const p = pending.get(m.id)
    if (!p) return
    pending.delete(m.id)
    if (m.ok === true) p.resolve((m as { value: unknown }).value)
    else if (m.ok === false && m.error && typeof m.error.message === 'string') p.reject(bridgeError(m.error))
    else p.reject(bridgeError({ code: 'internal', message: `${p.method}: malformed reply from the server` }))
  }

  function call<M extends Method>(method: M, payload: ApiRequest<M> | undefined): Promise<ApiResponse<M>> {
    if (closedForGood) {
      return Promise.reject(
        bridgeError({
          code: state === 'unauthorized' ? 'unauthorized' : 'internal',
          message: `${method}: not connected to the Trainpool server (${state === 'unauthorized' ? 'the token was refused' : 'the bridge was closed'})`,
        }),
      )
    }
    const id = nextId++
    const request: WsRequest = payload === undefined ? { id, method } : { id, method, payload }
    const frame = JSON.stringify(request)
    return new Promise<ApiResponse<M>>((resolve, reject) => {
      pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject })
      if (socket && socket.readyState === WS.OPEN) socket.send(frame)
      else queued.push({ id, frame })
    })
  }

  /** After a reconnect: replay the live run's events, or deliver the end of a run we missed. */
  async function reconcile() {
    try {
      const current = await call('currentRun', undefined)
      if (current) {
        for (const e of current.events) emit(e)
        return
      }
      const missed = liveRunId
      if (missed) {
        const result = await call('getRun', { runId: missed })
        if (result.status !== 'running') emit({ type: 'run-finished', runId: missed, result })
      }
    } catch {
      /* the next reconnect tries again */
    }
  }

  connect()

  return {
    get state() {
      return state
    },
    onStateChange(listener) {
      stateListeners.add(listener)
      return () => stateListeners.delete(listener)
    },
    close() {
      closedForGood = true
      if (reconnectTimer) clearTimeout(reconnectTimer)
      reconnectTimer = null
      const ws = socket
      socket = null
      failAll('the bridge was closed', 'internal')
      ws?.close(1000, 'bridge closed')
      setState('closed')
    },
    ...requestMethods(call),
    onEvent(listener) {
      eventListeners.add(listener)
      return () => {
        eventListeners.delete(listener)
      }
    },
  }
}

/** what a close event carries (structural: the DOM's CloseEvent and ws's both fit) */
interface CloseInfo {
  code: number
  reason: string
}

function describeClose(ev: CloseInfo): string {
  return `code ${ev.code}${ev.reason ? `: ${ev.reason}` : ''}`
}

/** the parts of window.location the bridge needs */
export interface PageLocation {
  protocol: string
  host: string
  search: string
}

/** The bridge for a page served by `trainpool serve`: same host, /ws, token from ?token=. */
export function bridgeForLocation(loc: PageLocation, extra: Partial<WebSocketBridgeOptions> = {}): WebSocketBridge {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:'
  const token = new URLSearchParams(loc.search).get('token')
  return createWebSocketBridge({ url: `${scheme}//${loc.host}${WS_PATH}`, token, ...extra })
}
