// The renderer's one door to the backend. In Electron the preload exposes window.trainpool; in
// browser mode a WebSocket bridge implementing the same TrainpoolApi is injected with setBridge().
// Stores call chooseBridge(); views never touch it, and nothing here knows which shell it runs under.
import type { TrainpoolApi } from '@shared/contract/api'
import { bridgeForLocation } from './websocket'

export type Bridge = TrainpoolApi

let injected: Bridge | null = null

/** Installs a bridge (the WebSocket bridge, or a fake in tests); null removes it. */
export function setBridge(bridge: Bridge | null): void {
  injected = bridge
}

/** The injected bridge, else window.trainpool (preload); throws a clear error when neither exists. */
export function chooseBridge(): Bridge {
  if (injected) return injected
  const preload = (globalThis as { trainpool?: Bridge }).trainpool
  if (preload) return preload
  throw new Error('Trainpool backend not connected: window.trainpool (Electron preload) is missing and no browser-mode bridge was installed')
}

/** True when a bridge is available without throwing. */
export function hasBridge(): boolean {
  try {
    chooseBridge()
    return true
  } catch {
    return false
  }
}

/**
 * Browser mode (`trainpool serve`): when there is no preload (window.trainpool) and nothing was
 * injected, install the WebSocket bridge to the server that served this page (token from ?token=).
 */
export function installBrowserBridge(loc: Pick<Location, 'protocol' | 'host' | 'search'> = globalThis.location): void {
  if (injected || (globalThis as { trainpool?: Bridge }).trainpool) return
  if (loc.protocol !== 'http:' && loc.protocol !== 'https:') return
  injected = bridgeForLocation(loc)
}
