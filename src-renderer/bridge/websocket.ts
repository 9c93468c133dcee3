// Browser mode's bridge: TrainpoolApi over one WebSocket to `trainpool serve` (ws-connection.ts:
// requests, reconnects). After a reconnect it re-attaches to the live run (currentRun), or, when the
// run ended while the socket was down, delivers its run-finished from getRun, so stores never go stale.
import { requestMethods, type TrainpoolApi } from '@shared/contract/api'
import type { RunEvent } from '@shared/contract/events'
import { WS_PATH } from '@shared/contract/websocket'
import { type ConnectionState, WsConnection } from './ws-connection'

export type { BridgeError, ConnectionState } from './ws-connection'

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

/** The run events' listeners, and the run this tab last saw running (to reconcile after a drop). */
function runEvents() {
  const listeners = new Set<(e: RunEvent) => void>()
  let liveRunId: string | null = null
  function emit(event: RunEvent) {
    if (event.type === 'run-started') liveRunId = event.runId
    else if (event.type === 'run-finished' && event.runId === liveRunId) liveRunId = null
    for (const l of [...listeners]) {
      try {
        l(event)
      } catch (err) {
        console.error('trainpool: event listener failed', err)
      }
    }
  }
  function onEvent(listener: (e: RunEvent) => void) {
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
    }
  }
  return { emit, onEvent, liveRunId: () => liveRunId }
}

/** After a reconnect: replay the live run's events, or deliver the end of a run we missed. */
async function reconcile(conn: WsConnection, events: ReturnType<typeof runEvents>) {
  try {
    const current = await conn.call('currentRun', undefined)
    if (current) {
      for (const e of current.events) events.emit(e)
      return
    }
    const missed = events.liveRunId()
    if (missed) {
      const result = await conn.call('getRun', { runId: missed })
      if (result.status !== 'running') events.emit({ type: 'run-finished', runId: missed, result })
    }
  } catch {
    /* the next reconnect tries again */
  }
}

export function createWebSocketBridge(options: WebSocketBridgeOptions): WebSocketBridge {
  const url = options.token ? `${options.url}${options.url.includes('?') ? '&' : '?'}token=${encodeURIComponent(options.token)}` : options.url
  const events = runEvents()
  const conn: WsConnection = new WsConnection({
    url,
    shownUrl: options.url,
    WebSocketImpl: options.WebSocketImpl ?? WebSocket,
    initialDelayMs: options.initialDelayMs ?? 250,
    maxDelayMs: options.maxDelayMs ?? 5000,
    onEvent: events.emit,
    onReopen: () => void reconcile(conn, events),
  })
  conn.connect()

  return {
    get state() {
      return conn.state
    },
    onStateChange: (listener) => conn.onStateChange(listener),
    close: () => conn.close(),
    ...requestMethods(conn.call.bind(conn)),
    onEvent: events.onEvent,
  }
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
