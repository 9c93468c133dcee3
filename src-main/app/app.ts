// The desktop shell's lifecycle: single instance, hardened web contents, the service over
// utility-process workers, IPC, menu, the window, and an orderly shutdown on quit.
import { join } from 'node:path'
import { BrowserWindow as ElectronWindow, app, dialog, nativeTheme, session, utilityProcess } from 'electron'
import type { BrowserWindow } from 'electron'
import { MENU_CHANNEL } from '@shared/contract/channels'
import type { MenuCommand } from '@shared/contract/channels'
import { ElectronLauncher } from '../pool/electron-launcher'
import type { BenchServiceApi } from '../service/types'
import { resolveAppPage, type AppPage } from './app-page'
import { installCsp } from './csp'
import { dataFilePicker } from './data-file-dialog'
import { registerIpc } from './ipc'
import { printReportPdf, withDesktopSaving } from './report-window'
import { installMenu } from './menu'
import { hardenSession, hardenWebContents } from './security'
import type { ServiceFactory } from './service-factory'
import { createMainWindow } from './window'

export interface AppOptions {
  createService: ServiceFactory
  /** folder of the main bundle (out/main); worker.js sits here, preload and renderer beside it */
  mainDir: string
  env?: NodeJS.ProcessEnv
  /** how long quitting waits for the service to stop its workers */
  shutdownTimeoutMs?: number
}

export interface AppContext {
  service: BenchServiceApi
  page: AppPage
  getWindow(): BrowserWindow | null
  sendMenuCommand(command: MenuCommand): void
}

/** Starts the app; resolves once the service and the first window exist (null if another instance runs). */
export async function runApp(options: AppOptions): Promise<AppContext | null> {
  const env = options.env ?? process.env
  app.enableSandbox() // every renderer sandboxed, whatever its options say
  if (!app.requestSingleInstanceLock()) {
    app.quit()
    return null
  }
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents))

  await app.whenReady()
  nativeTheme.themeSource = 'system'

  const page = resolveAppPage({
    rendererDir: join(options.mainDir, '..', 'renderer'),
    devServerUrl: env.ELECTRON_RENDERER_URL,
    allowDevServer: !app.isPackaged,
  })
  const windows = new MainWindow(page, options.mainDir)
  const getWindow = () => windows.current()
  const launcher = new ElectronLauncher({ utilityProcess, workerPath: join(options.mainDir, 'worker.js') })
  const service = await options.createService({
    launcher,
    storeDir: env.TRAINPOOL_STORE || undefined,
    appVersion: app.getVersion(),
    // "Open…" in the config panel: a native open dialog; the service loads the file it names
    pickDataFile: dataFilePicker({ dialog: () => dialog, getWindow, defaultDir: () => app.getPath('documents') }),
  })

  hardenSession(session.defaultSession)
  installCsp(session.defaultSession, page)
  // exports and PDF reports are saved where the user picks (save dialog); the PDF prints in a hidden window
  const desktopService = withDesktopSaving(service, {
    dialog: () => dialog,
    getWindow,
    print: (run) => printReportPdf(run, { BrowserWindow: ElectronWindow, page }),
    defaultDir: () => app.getPath('documents'),
  })
  registerIpc({ service: desktopService, getWindow, page })

  const sendMenuCommand = (command: MenuCommand) => {
    const win = windows.shown()
    win?.webContents.send(MENU_CHANNEL, command)
  }
  installMenu({
    command: sendMenuCommand,
    cancel: () => {
      service.cancel({}).catch((err: unknown) => console.warn(`trainpool: cancel failed: ${(err as Error)?.message ?? err}`))
    },
  })
  windows.open()
  windows.followAppEvents()
  quitAfterShutdown(service, options.shutdownTimeoutMs ?? 5000)
  return { service, page, getWindow, sendMenuCommand }
}

/** The one main window: opened again on a second instance or macOS activate; the app quits when it closes (not on macOS). */
class MainWindow {
  private window: BrowserWindow | null = null

  constructor(
    private readonly page: AppPage,
    private readonly mainDir: string,
  ) {}

  current(): BrowserWindow | null {
    return this.window && !this.window.isDestroyed() ? this.window : null
  }

  /** The window restored and focused (null when there is none). */
  shown(): BrowserWindow | null {
    const win = this.current()
    if (!win) return null
    if (win.isMinimized()) win.restore()
    win.focus()
    return win
  }

  open(): BrowserWindow {
    const window = createMainWindow({
      page: this.page,
      preloadPath: join(this.mainDir, '..', 'preload', 'index.js'),
      stateFile: join(app.getPath('userData'), 'window-state.json'),
    })
    window.on('closed', () => {
      this.window = null
    })
    this.window = window
    return window
  }

  followAppEvents(): void {
    app.on('second-instance', () => {
      if (!this.shown()) this.open().focus()
    })
    app.on('activate', () => {
      if (!this.current()) this.open()
    })
    app.on('window-all-closed', () => {
      if (process.platform !== 'darwin') app.quit()
    })
  }
}

/** Quit waits (bounded) for the service to cancel any run and stop its worker processes. */
function quitAfterShutdown(service: BenchServiceApi, timeoutMs: number): void {
  let stopped = false
  let stopping = false
  app.on('before-quit', (event) => {
    if (stopped) return
    event.preventDefault()
    if (stopping) return
    stopping = true
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref())
    Promise.race([service.shutdown(), timeout])
      .catch((err: unknown) => console.warn(`trainpool: shutdown failed: ${(err as Error)?.message ?? err}`))
      .finally(() => {
        stopped = true
        app.quit()
      })
  })
}
