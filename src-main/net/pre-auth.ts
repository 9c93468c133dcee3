// Until a peer has proved its token (browser mode's /ws, the worker socket) it costs next to
// nothing: its frames are a few KiB at most (ws refuses a larger one at its header with 1009, before
// keeping its bytes), at most PRE_AUTH_MAX_CONNECTIONS such sockets are held (the oldest dropped to
// make room, so strangers cannot lock a worker out), and a refused one goes soon after its close.
import type { Socket } from 'node:net'
import type { WebSocket } from 'ws'

/** the largest frame before the token: a worker's hello is ~300 bytes; /ws's token is checked at the upgrade */
export const PRE_AUTH_MAX_FRAME_BYTES = 4096
/** sockets without a proven token held at once, per server */
export const PRE_AUTH_MAX_CONNECTIONS = 32
/** a refused socket whose peer does not answer its close frame is dropped after this (ws alone waits 30 s) */
export const REFUSED_GRACE_MS = 1000

/** The sockets of one server that have not proved a token yet, oldest first, each with where it came from. */
export class StrangerSockets {
  private readonly waiting = new Map<WebSocket, string>()

  /** Holds a new socket; when PRE_AUTH_MAX_CONNECTIONS are held already, the oldest is dropped: where it came from, else null. */
  admit(socket: WebSocket, from: string): string | null {
    let droppedFrom: string | null = null
    const oldest = this.waiting.size >= PRE_AUTH_MAX_CONNECTIONS ? this.waiting.keys().next().value : undefined
    if (oldest) {
      droppedFrom = this.waiting.get(oldest) ?? null
      this.waiting.delete(oldest)
      oldest.terminate()
    }
    this.waiting.set(socket, from)
    socket.once('close', () => this.waiting.delete(socket))
    return droppedFrom
  }

  /** The socket proved its token: no longer held against the bound. */
  trust(socket: WebSocket): void {
    this.waiting.delete(socket)
  }
}

/** Closes a refused socket with `code`; drops it if its peer has not answered the close within REFUSED_GRACE_MS. */
export function closeRefused(socket: WebSocket, code: number, reason: string): void {
  socket.close(code, reason)
  setTimeout(() => socket.terminate(), REFUSED_GRACE_MS).unref()
}

/**
 * A stranger's frame over the limit: ws has sent its 1009 close and would read on, dropping bytes,
 * until the peer answers it. Nothing more is read (after ws resumes the socket on its error), and
 * the socket is dropped after REFUSED_GRACE_MS.
 */
export function dropOversized(socket: WebSocket, tcp: Socket): void {
  setImmediate(() => tcp.pause())
  setTimeout(() => socket.terminate(), REFUSED_GRACE_MS).unref()
}

/**
 * Raises the frame limit of a socket that proved its token to `maxBytes`. ws has one limit per
 * server (maxPayload, here the small pre-auth one) and no public way to change a socket's, so its
 * receiver's is set; checked, so a ws that renamed it fails loudly here instead of refusing frames.
 */
export function allowFramesUpTo(socket: WebSocket, maxBytes: number): void {
  const receiver = (socket as unknown as { _receiver?: { _maxPayload?: unknown } })._receiver
  if (!receiver || typeof receiver._maxPayload !== 'number')
    throw new Error('ws no longer keeps a receiver with _maxPayload: allowFramesUpTo (src-main/net/pre-auth.ts) must follow it')
  receiver._maxPayload = maxBytes
}
