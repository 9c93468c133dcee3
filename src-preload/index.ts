// The sandboxed preload: exposes window.trainpool, one typed method per method of the contract's
// API table (each invoking that method's channel with its one request object), and nothing raw (no
// ipcRenderer, no event objects). A sandboxed preload may only require `electron` (plus
// events/timers/url): the build bundles everything else, the API table and zod included.
import { contextBridge, ipcRenderer } from 'electron'
import type { IpcRendererEvent } from 'electron'
import { MENU_CHANNEL, MENU_COMMANDS } from '@shared/contract/channels'
import type { MenuCommand } from '@shared/contract/channels'
import { CHANNELS, requestMethods } from '@shared/contract/api'
import type { ApiRequest, ApiResponse, Envelope, Method, TrainpoolApi } from '@shared/contract/api'
import type { RunEvent } from '@shared/contract/events'
import type { TrainpoolErrorShape } from '@shared/vocabulary/errors'

/**
 * What a failed call rejects with. A plain object on purpose: contextBridge copies Error instances
 * with their message only, so an Error's `code`/`issues` would not reach the page.
 */
export interface BridgeError extends TrainpoolErrorShape {
  name: 'TrainpoolError'
}

function bridgeError(shape: TrainpoolErrorShape): BridgeError {
  return {
    name: 'TrainpoolError',
    code: shape.code,
    message: shape.message,
    ...(shape.issues ? { issues: shape.issues.map((i) => ({ field: i.field, message: i.message })) } : {}),
  }
}

function isEnvelope(value: unknown): value is Envelope<unknown> {
  if (value === null || typeof value !== 'object') return false
  const v = value as { ok?: unknown; error?: unknown }
  if (v.ok === true) return 'value' in v
  if (v.ok === false) {
    const e = v.error as { code?: unknown; message?: unknown } | null
    return e !== null && typeof e === 'object' && typeof e.code === 'string' && typeof e.message === 'string'
  }
  return false
}

async function call<M extends Method>(method: M, request: ApiRequest<M> | undefined): Promise<ApiResponse<M>> {
  let reply: unknown
  try {
    reply = await ipcRenderer.invoke(CHANNELS[method], request)
  } catch (err) {
    throw bridgeError({ code: 'internal', message: `IPC ${method} failed: ${(err as Error)?.message ?? String(err)}` })
  }
  if (!isEnvelope(reply)) throw bridgeError({ code: 'internal', message: `IPC ${method}: malformed reply from main` })
  if (reply.ok) return reply.value as ApiResponse<M>
  throw bridgeError(reply.error)
}

function subscribe<T>(channel: string, listener: (value: T) => void, accept: (value: unknown) => boolean = () => true) {
  if (typeof listener !== 'function') throw new TypeError('listener must be a function')
  // The IpcRendererEvent (with its `sender` ipcRenderer) never reaches the page.
  const wrapped = (_event: IpcRendererEvent, value: unknown) => {
    if (accept(value)) listener(value as T)
  }
  ipcRenderer.on(channel, wrapped)
  return () => {
    ipcRenderer.removeListener(channel, wrapped)
  }
}

const api: Required<TrainpoolApi> = {
  ...requestMethods(call),
  onEvent: (listener) => subscribe<RunEvent>(CHANNELS.event, listener),
  onMenuCommand: (listener) => subscribe<MenuCommand>(MENU_CHANNEL, listener, (v) => (MENU_COMMANDS as readonly unknown[]).includes(v)),
}

contextBridge.exposeInMainWorld('trainpool', api)
