// What an HTTP connection may cost before a request on it proves the token (browser mode's
// `serve`). Its request headers must be complete within the header timeout, counted from the
// connection (or from the end of its last response), whatever it sends meanwhile: Node 20's own
// check fires only while header bytes keep arriving, so a peer that sent one header line and went
// silent stayed open. And a peer holds at most STRANGER_CONNECTIONS.perPeer connections that have
// not proved the token, all peers STRANGER_CONNECTIONS.total: past that the oldest is closed to make
// room (never the newcomer, which may be the one carrying the token), so a flood of half-open
// connections cannot use up the process's file descriptors or keep a request with the token out.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * Connections without a proven token held at once. Far under any file-descriptor limit Node runs
 * with (it raises its soft limit to the hard one; 1024 is the smallest in common use) and far above
 * what a browser opens (6 per host, each proving the token with its first request's cookie).
 */
export const STRANGER_CONNECTIONS = { perPeer: 64, total: 256 } as const

export interface ConnectionLimits {
  /** ms a connection has to complete a request's headers */
  headersTimeoutMs: number
  /** connections without a proven token held at once, per remote address and in all */
  strangers: { perPeer: number; total: number }
}

export interface ConnectionGuard {
  /** A request on `socket` proved the token: the connection no longer counts against the bound. */
  trust(socket: Socket): void
}

/** Node's own answer to headers that took too long */
const TIMED_OUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'

/** Puts `server`'s connections under `limits` (see the header). */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  for (const [name, value] of Object.entries({ headersTimeoutMs: limits.headersTimeoutMs, ...limits.strangers }))
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} ${value} is not valid: a whole number, at least 1`)
  const strangers = new StrangerConnections(limits.strangers)
  const deadlines = new WeakMap<Socket, HeaderDeadline>()

  server.on('connection', (socket: Socket) => {
    const deadline = new HeaderDeadline(socket, limits.headersTimeoutMs)
    deadlines.set(socket, deadline)
    socket.once('close', () => deadline.stop())
    strangers.admit(socket)
  })
  server.on('request', (req: IncomingMessage, res: ServerResponse) => deadlines.get(req.socket)?.requestBegan(res))
  // the socket is the WebSocket's now: its frames have limits of their own (pre-auth.ts)
  server.on('upgrade', (req: IncomingMessage) => deadlines.get(req.socket)?.stop())
  return { trust: (socket) => strangers.trust(socket) }
}

/** One connection's clock for its next request's headers: running while no request is in flight. */
class HeaderDeadline {
  private timer: NodeJS.Timeout | null = null
  private inFlight = 0
  private stopped = false

  constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    this.arm()
  }

  /** Headers complete. Pipelined requests overlap (the next one's can begin before this one's 'close'), hence a count. */
  requestBegan(res: ServerResponse): void {
    this.disarm()
    this.inFlight++
    res.once('close', () => {
      if (--this.inFlight === 0) this.arm()
    })
  }

  stop(): void {
    this.stopped = true
    this.disarm()
  }

  private arm(): void {
    if (this.stopped || this.socket.destroyed) return
    this.timer = setTimeout(() => {
      // what Node writes on its own header timeout, then the socket goes
      if (this.socket.writable) this.socket.write(TIMED_OUT)
      this.socket.destroy()
    }, this.timeoutMs)
    this.timer.unref()
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }
}

/** The connections that have not proved the token, oldest first, by remote address. */
class StrangerConnections {
  private readonly peerOf = new Map<Socket, string>()
  private readonly byPeer = new Map<string, Set<Socket>>()

  constructor(private readonly limits: { perPeer: number; total: number }) {}

  admit(socket: Socket): void {
    const peer = socket.remoteAddress ?? 'unknown'
    const own = this.byPeer.get(peer)
    if (own && own.size >= this.limits.perPeer) this.drop(own.values().next().value!)
    else if (this.peerOf.size >= this.limits.total) this.drop(this.oldestOfTheLargestPeer())
    this.peerOf.set(socket, peer)
    this.byPeer.set(peer, (this.byPeer.get(peer) ?? new Set()).add(socket))
    socket.once('close', () => this.trust(socket))
  }

  trust(socket: Socket): void {
    const peer = this.peerOf.get(socket)
    if (peer === undefined) return
    this.peerOf.delete(socket)
    const own = this.byPeer.get(peer)!
    own.delete(socket)
    if (own.size === 0) this.byPeer.delete(peer)
  }

  /** the peer holding the most pays for a newcomer from another: one address cannot crowd the others out */
  private oldestOfTheLargestPeer(): Socket {
    let largest: Set<Socket> | null = null
    for (const own of this.byPeer.values()) if (!largest || own.size > largest.size) largest = own
    return largest!.values().next().value!
  }

  private drop(socket: Socket): void {
    this.trust(socket)
    socket.destroy()
  }
}
