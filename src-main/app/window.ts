// The one application window: sandboxed, context-isolated, no Node in the page, no navigation, no
// pop-ups; shown when its first paint is ready; size/position remembered across launches;
// background follows the OS light/dark theme so there is no white flash in dark mode.
import { BrowserWindow, nativeTheme, screen } from 'electron'
import type { BrowserWindowConstructorOptions } from 'electron'
import type { AppPage } from './app-page'
import { hardenWebContents } from './security'
import { MIN_SIZE, loadWindowState, saveWindowState, type WindowState } from './window-state'

export const WINDOW_TITLE = 'Trainpool'
export const BACKGROUND = { dark: '#14161a', light: '#ffffff' } as const

export interface MainWindowOptions {
  page: AppPage
  /** out/preload/index.js */
  preloadPath: string
  /** userData/window-state.json */
  stateFile: string
  /** debounce for saving bounds after move/resize (ms) */
  saveDelayMs?: number
}

export function themeBackground(): string {
  return nativeTheme.shouldUseDarkColors ? BACKGROUND.dark : BACKGROUND.light
}

export function mainWindowOptions(preloadPath: string, state: WindowState): BrowserWindowConstructorOptions {
  return {
    title: WINDOW_TITLE,
    width: state.width,
    height: state.height,
    ...(state.x !== undefined && state.y !== undefined ? { x: state.x, y: state.y } : { center: true }),
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    show: false,
    backgroundColor: themeBackground(),
    webPreferences: {
      preload: preloadPath,
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  }
}

export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const workAreas = screen.getAllDisplays().map((d) => d.workArea)
  const state = loadWindowState(options.stateFile, workAreas)
  const win = new BrowserWindow(mainWindowOptions(options.preloadPath, state))
  if (state.maximized) win.maximize()

  hardenWebContents(win.webContents)
  win.once('ready-to-show', () => win.show())

  const onTheme = () => {
    if (!win.isDestroyed()) win.setBackgroundColor(themeBackground())
  }
  nativeTheme.on('updated', onTheme)
  win.on('closed', () => nativeTheme.removeListener('updated', onTheme))

  rememberBounds(win, options.stateFile, options.saveDelayMs ?? 400)

  const loading = options.page.kind === 'file' && options.page.filePath ? win.loadFile(options.page.filePath) : win.loadURL(options.page.url)
  loading.catch((err: unknown) => {
    console.error(`trainpool: could not load ${options.page.url}: ${(err as Error)?.message ?? String(err)}`)
  })
  return win
}

function rememberBounds(win: BrowserWindow, file: string, delayMs: number): void {
  let timer: NodeJS.Timeout | null = null
  const save = () => {
    if (timer) clearTimeout(timer)
    timer = null
    if (win.isDestroyed()) return
    const b = win.getNormalBounds()
    try {
      saveWindowState(file, { x: b.x, y: b.y, width: b.width, height: b.height, maximized: win.isMaximized() })
    } catch (err) {
      console.warn(`trainpool: could not save window state: ${(err as Error).message}`)
    }
  }
  const later = () => {
    if (timer) clearTimeout(timer)
    timer = setTimeout(save, delayMs)
  }
  win.on('resize', later)
  win.on('move', later)
  win.on('maximize', later)
  win.on('unmaximize', later)
  win.on('close', save)
}
