import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveAppPage } from './app-page'
import { BrowserWindow, nativeTheme, resetFakeElectron } from '../testing/fake-electron'

vi.mock('electron', () => import('../testing/fake-electron'))
const { createMainWindow, BACKGROUND, WINDOW_TITLE } = await import('./window')

const page = resolveAppPage({ rendererDir: '/app/out/renderer', allowDevServer: false })

function open(stateFile = join(mkdtempSync(join(tmpdir(), 'tp-win-')), 'window-state.json')) {
  const win = createMainWindow({ page, preloadPath: '/app/out/preload/index.js', stateFile, saveDelayMs: 1 }) as unknown as BrowserWindow
  return { win, stateFile }
}

beforeEach(() => resetFakeElectron())

describe('main window', () => {
  it('keeps the renderer sandboxed, isolated and without Node', () => {
    const { win } = open()
    const prefs = win.options.webPreferences as Record<string, unknown>
    expect(prefs).toMatchObject({
      preload: '/app/out/preload/index.js',
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    })
    expect(win.options.title).toBe(WINDOW_TITLE)
  })

  it('loads the bundled page and shows only when ready to show', () => {
    const { win } = open()
    expect(win.loadFile).toHaveBeenCalledWith('/app/out/renderer/index.html')
    expect(win.options.show).toBe(false)
    expect(win.show).not.toHaveBeenCalled()
    win.emit('ready-to-show')
    expect(win.show).toHaveBeenCalledOnce()
  })

  it('loads the dev server URL in dev mode', () => {
    const dev = resolveAppPage({ rendererDir: '/x', devServerUrl: 'http://localhost:5173', allowDevServer: true })
    const win = createMainWindow({ page: dev, preloadPath: '/p.js', stateFile: join(tmpdir(), 'nope', 'ws.json') }) as unknown as BrowserWindow
    expect(win.loadURL).toHaveBeenCalledWith('http://localhost:5173/')
    expect(win.loadFile).not.toHaveBeenCalled()
  })

  it('prevents every navigation and denies window.open', () => {
    const { win } = open()
    expect(win.webContents.navigate('https://evil.example/')).toBe(true)
    expect(win.webContents.navigate('file:///app/out/renderer/index.html')).toBe(true)
    expect(win.webContents.windowOpenHandler?.({ url: 'https://example.com' })).toEqual({ action: 'deny' })
    let prevented = false
    win.webContents.emit('will-attach-webview', { preventDefault: () => (prevented = true) })
    expect(prevented).toBe(true)
  })

  it('follows the OS theme for its background colour', () => {
    nativeTheme.shouldUseDarkColors = true
    const { win } = open()
    expect(win.options.backgroundColor).toBe(BACKGROUND.dark)
    nativeTheme.shouldUseDarkColors = false
    nativeTheme.emit('updated')
    expect(win.setBackgroundColor).toHaveBeenCalledWith(BACKGROUND.light)
    win.close()
    expect(nativeTheme.listenerCount('updated')).toBe(0)
  })

  it('remembers size and position across launches', async () => {
    const { win, stateFile } = open()
    expect(win.options).toMatchObject({ width: 1280, height: 840, center: true })
    win.emit('resize')
    await new Promise((r) => setTimeout(r, 20))
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toEqual({ x: 10, y: 20, width: 1000, height: 700, maximized: false })
    win.close()

    const again = open(stateFile).win
    expect(again.options).toMatchObject({ x: 10, y: 20, width: 1000, height: 700 })
    expect(again.options.center).toBeUndefined()
  })

  it('restores a maximized window maximized', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-win-'))
    const file = join(dir, 'window-state.json')
    writeFileSync(file, JSON.stringify({ x: 0, y: 0, width: 1200, height: 800, maximized: true }))
    const { win } = open(file)
    expect(win.maximize).toHaveBeenCalled()
  })
})
