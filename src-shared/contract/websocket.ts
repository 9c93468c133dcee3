// Browser mode's wire format (server/ and the renderer's WebSocket bridge): the same methods and
// Envelopes as the IPC channels, as JSON text frames on one socket. Pure: imported by both sides.
import type { Envelope, Method } from './api'
import type { RunEvent } from './events'

export const WS_PATH = '/ws'

/** A text frame larger than this gets an error reply and is not parsed. */
export const WS_MAX_MESSAGE_BYTES = 1024 * 1024

/** Close codes (4000–4999 are the application's). */
export const WS_CLOSE = {
  /** missing or wrong token: reconnecting will not help */
  unauthorized: 4401,
  /** foreign Origin or Host */
  forbidden: 4403,
  /** the server is stopping (Ctrl+C) */
  goingAway: 1001,
} as const

export type WsRequestId = string | number

/** client → server */
export interface WsRequest {
  id: WsRequestId
  method: Method
  payload?: unknown
}

/** server → client, the answer to one request (id null when the request could not be read) */
export type WsReply = { id: WsRequestId | null } & Envelope<unknown>

/** server → client, pushed to every connected tab */
export interface WsPush {
  event: RunEvent
}

export type WsServerMessage = WsReply | WsPush
