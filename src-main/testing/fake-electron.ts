// A stand-in for the `electron` module in main-process unit tests (vi.mock('electron', …)).
// Importing the real npm package from plain Node would try to download the Electron binary.
import { EventEmitter } from 'node:events'
import { tmpdir } from 'node:os'
import { vi } from 'vitest'

let nextId = 1

export class FakeFrame {
  constructor(
    public url: string,
    public parent: FakeFrame | null = null,
  ) {}
}

export class FakeWebContents extends EventEmitter {
  readonly id = nextId++
  readonly sent: Array<[string, unknown]> = []
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null
  destroyed = false
  mainFrame: FakeFrame
  constructor(url = 'file:///app/out/renderer/index.html') {
    super()
    this.mainFrame = new FakeFrame(url)
  }
  send(channel: string, value: unknown): void {
    this.sent.push([channel, value])
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler
  }
  isDestroyed(): boolean {
    return this.destroyed
  }
  /** emits like Electron: returns whether a listener called preventDefault() */
  navigate(url: string): boolean {
    let prevented = false
    this.emit('will-navigate', { url, preventDefault: () => (prevented = true) }, url)
    return prevented
  }
}

export class BrowserWindow extends EventEmitter {
  static instances: BrowserWindow[] = []
  readonly webContents = new FakeWebContents()
  readonly loadFile = vi.fn(async (_path: string) => {})
  readonly loadURL = vi.fn(async (_url: string) => {})
  readonly show = vi.fn()
  readonly focus = vi.fn()
  readonly restore = vi.fn()
  readonly maximize = vi.fn()
  readonly setBackgroundColor = vi.fn()
  destroyed = false
  constructor(public readonly options: Record<string, unknown>) {
    super()
    BrowserWindow.instances.push(this)
  }
  isDestroyed(): boolean {
    return this.destroyed
  }
  isMinimized(): boolean {
    return false
  }
  isMaximized(): boolean {
    return false
  }
  getNormalBounds() {
    return { x: 10, y: 20, width: 1000, height: 700 }
  }
  close(): void {
    this.emit('close')
    this.destroyed = true
    this.emit('closed')
  }
}

type Handler = (event: unknown, ...args: unknown[]) => unknown

export const ipcMain = {
  handlers: new Map<string, Handler>(),
  handle(channel: string, handler: Handler) {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`)
    this.handlers.set(channel, handler)
  },
  removeHandler(channel: string) {
    this.handlers.delete(channel)
  },
  /** what ipcRenderer.invoke would get back */
  async invoke(channel: string, event: { sender: unknown; senderFrame: FakeFrame | null }, payload?: unknown) {
    const h = this.handlers.get(channel)
    if (!h) throw new Error(`No handler registered for '${channel}'`)
    return h(event, payload)
  },
}

class FakeApp extends EventEmitter {
  isPackaged = false
  userData = tmpdir()
  readonly enableSandbox = vi.fn()
  readonly quit = vi.fn()
  readonly exit = vi.fn()
  lock = true
  requestSingleInstanceLock(): boolean {
    return this.lock
  }
  whenReady(): Promise<void> {
    return Promise.resolve()
  }
  getVersion(): string {
    return '0.1.0'
  }
  getPath(_name: string): string {
    return this.userData
  }
}
export const app = new FakeApp()

type HeadersListener = (
  details: { url: string; responseHeaders?: Record<string, string[]> },
  callback: (response: { responseHeaders?: Record<string, string | string[]> }) => void,
) => void

export const session = {
  defaultSession: {
    headersListener: null as HeadersListener | null,
    permissionRequest: null as ((wc: unknown, permission: string, cb: (ok: boolean) => void) => void) | null,
    permissionCheck: null as ((wc: unknown, permission: string) => boolean) | null,
    webRequest: {
      onHeadersReceived(listener: HeadersListener) {
        session.defaultSession.headersListener = listener
      },
    },
    setPermissionRequestHandler(h: (wc: unknown, permission: string, cb: (ok: boolean) => void) => void) {
      session.defaultSession.permissionRequest = h
    },
    setPermissionCheckHandler(h: (wc: unknown, permission: string) => boolean) {
      session.defaultSession.permissionCheck = h
    },
  },
}

class FakeNativeTheme extends EventEmitter {
  themeSource = 'light'
  shouldUseDarkColors = false
}
export const nativeTheme = new FakeNativeTheme()

export const screen = {
  getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }],
}

export const Menu = {
  current: null as { template: unknown[] } | null,
  buildFromTemplate: (template: unknown[]) => ({ template }),
  setApplicationMenu(menu: { template: unknown[] } | null) {
    Menu.current = menu
  },
}

export const utilityProcess = { fork: vi.fn() }

/** The native dialogs: what the next open dialog answers, and what each was asked (window, options). */
export const dialog = {
  openAnswer: { canceled: true, filePaths: [] as string[] },
  showOpenDialog: vi.fn(async (..._args: unknown[]) => dialog.openAnswer),
}

export function resetFakeElectron(): void {
  dialog.openAnswer = { canceled: true, filePaths: [] }
  dialog.showOpenDialog.mockClear()
  BrowserWindow.instances = []
  ipcMain.handlers.clear()
  app.removeAllListeners()
  app.lock = true
  app.isPackaged = false
  app.quit.mockReset()
  app.enableSandbox.mockReset()
  nativeTheme.removeAllListeners()
  nativeTheme.themeSource = 'light'
  nativeTheme.shouldUseDarkColors = false
  session.defaultSession.headersListener = null
  session.defaultSession.permissionRequest = null
  session.defaultSession.permissionCheck = null
  Menu.current = null
  utilityProcess.fork.mockReset()
}

export default { app, BrowserWindow, ipcMain, session, nativeTheme, screen, Menu, utilityProcess, dialog }
