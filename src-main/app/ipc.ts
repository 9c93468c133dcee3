// ipcMain ↔ service. One handler per method of the contract's API table (its derived channel); every request is checked for its sender
// (only the app window's main frame, showing one of the app's own pages) and then goes through
// dispatch(), which validates the payload against the contract and always answers an Envelope.
// Service events go to the app window only.
import { ipcMain } from 'electron'
import type { BrowserWindow, IpcMainInvokeEvent } from 'electron'
import { CHANNELS, type Envelope } from '@shared/contract/api'
import { dispatch, METHODS } from '../service/dispatch'
import type { BenchServiceApi } from '../service/types'
import type { AppPage } from './app-page'

export interface IpcOptions {
  service: BenchServiceApi
  /** the app window, or null while there is none */
  getWindow: () => BrowserWindow | null
  page: AppPage
  /** where rejected senders are reported */
  warn?: (message: string) => void
}

type SenderEvent = Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>

/** Why a sender is refused, or null when it is the app window's main frame on an app page. */
export function untrustedReason(event: SenderEvent, win: BrowserWindow | null, page: AppPage): string | null {
  if (!win || win.isDestroyed()) return 'no app window'
  if (event.sender !== win.webContents && event.sender?.id !== win.webContents.id) return 'sender is not the app window'
  const frame = event.senderFrame
  if (!frame) return 'sender frame is gone'
  if (frame.parent !== null) return 'sender is a subframe'
  if (!page.isAppUrl(frame.url)) return `sender URL ${JSON.stringify(frame.url)} is not an app page`
  return null
}

export function unauthorized(reason: string): Envelope<never> {
  return { ok: false, error: { code: 'unauthorized', message: `IPC refused: ${reason}` } }
}

/** Registers the handlers and the event forwarder; returns a function that removes both. */
export function registerIpc(options: IpcOptions): () => void {
  const warn = options.warn ?? ((m: string) => console.warn(`trainpool: ${m}`))
  for (const method of METHODS) {
    ipcMain.handle(CHANNELS[method], async (event: IpcMainInvokeEvent, payload: unknown) => {
      const reason = untrustedReason(event, options.getWindow(), options.page)
      if (reason) {
        warn(`${CHANNELS[method]} refused: ${reason}`)
        return unauthorized(reason)
      }
      return dispatch(options.service, method, payload)
    })
  }
  const unsubscribe = options.service.onEvent((event) => {
    const win = options.getWindow()
    if (!win || win.isDestroyed() || win.webContents.isDestroyed()) return
    win.webContents.send(CHANNELS.event, event)
  })
  return () => {
    unsubscribe()
    for (const method of METHODS) ipcMain.removeHandler(CHANNELS[method])
  }
}
