import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { CHANNELS } from '@shared/contract/api'
import { MENU_CHANNEL } from '@shared/contract/channels'
import { ElectronLauncher } from '../pool/electron-launcher'
import type { ServiceFactoryContext } from './service-factory'
import { BrowserWindow, FakeFrame, Menu, app, dialog, ipcMain, nativeTheme, resetFakeElectron, session } from '../testing/fake-electron'
import { FakeService } from '@shared/testing/fake-service'
import { presetConfig } from '@shared/contract'

/** a whole config: the service (and so the fake) checks it */
const SMOKE = presetConfig('smoke')

vi.mock('electron', () => import('../testing/fake-electron'))
const { runApp } = await import('./app')

beforeEach(() => {
  resetFakeElectron()
  app.userData = mkdtempSync(join(tmpdir(), 'tp-app-'))
})

async function start(env: NodeJS.ProcessEnv = {}) {
  const service = new FakeService()
  const contexts: ServiceFactoryContext[] = []
  const ctx = await runApp({
    createService: (c) => {
      contexts.push(c)
      return service
    },
    mainDir: '/app/out/main',
    env,
    shutdownTimeoutMs: 50,
  })
  return { service, contexts, ctx: ctx! }
}

describe('runApp', () => {
  it('creates the service over utility-process workers and opens one hardened window', async () => {
    const { contexts, ctx } = await start({ TRAINPOOL_STORE: '/data/runs' })
    expect(app.enableSandbox).toHaveBeenCalled()
    expect(nativeTheme.themeSource).toBe('system')
    expect(contexts).toHaveLength(1)
    expect(contexts[0].launcher).toBeInstanceOf(ElectronLauncher)
    expect((contexts[0].launcher as ElectronLauncher).workerPath).toBe(join('/app/out/main', 'worker.js'))
    expect(contexts[0].storeDir).toBe('/data/runs')

    expect(BrowserWindow.instances).toHaveLength(1)
    const win = BrowserWindow.instances[0]
    expect(ctx.getWindow()).toBe(win)
    expect((win.options.webPreferences as { preload: string }).preload).toBe(join('/app/out/main', '..', 'preload', 'index.js'))
    expect(win.loadFile).toHaveBeenCalledWith(join('/app/out/renderer', 'index.html'))
    expect(session.defaultSession.headersListener).not.toBeNull()
    expect(session.defaultSession.permissionCheck?.(null, 'geolocation')).toBe(false)
    expect(Menu.current).not.toBeNull()
  })

  it('gives the service the native open dialog for data files, modal to the app window', async () => {
    const { contexts, ctx } = await start()
    const pick = contexts[0].pickDataFile!
    expect(await pick()).toBeNull() // cancelled
    dialog.openAnswer = { canceled: false, filePaths: ['/home/u/data/houses.parquet'] }
    expect(await pick()).toBe('/home/u/data/houses.parquet')
    expect(dialog.showOpenDialog).toHaveBeenCalledTimes(2)
    const [parent, options] = dialog.showOpenDialog.mock.calls[1] as [unknown, { filters: { extensions: string[] }[]; properties: string[] }]
    expect(parent).toBe(ctx.getWindow())
    expect(options.properties).toEqual(['openFile'])
    expect(options.filters[0].extensions).toEqual(['csv', 'tsv', 'parquet'])
  })

  it('answers IPC from its window through the service', async () => {
    const { service } = await start()
    const win = BrowserWindow.instances[0]
    const reply = await ipcMain.invoke(
      CHANNELS.start,
      { sender: win.webContents, senderFrame: new FakeFrame('file:///app/out/renderer/index.html') },
      { config: SMOKE },
    )
    expect(reply).toEqual({ ok: true, value: { runId: 'run-1' } })
    expect(service.callsTo('start')).toEqual([{ config: SMOKE }])
  })

  it('uses the dev server only when unpackaged', async () => {
    await start({ ELECTRON_RENDERER_URL: 'http://localhost:5173' })
    expect(BrowserWindow.instances[0].loadURL).toHaveBeenCalledWith('http://localhost:5173/')
    resetFakeElectron()
    app.isPackaged = true
    await start({ ELECTRON_RENDERER_URL: 'http://localhost:5173' })
    expect(BrowserWindow.instances[0].loadURL).not.toHaveBeenCalled()
    expect(BrowserWindow.instances[0].loadFile).toHaveBeenCalled()
  })

  it('hardens any other web contents that appear', async () => {
    await start()
    const { FakeWebContents } = await import('../testing/fake-electron')
    const stray = new FakeWebContents()
    app.emit('web-contents-created', {}, stray)
    expect(stray.navigate('https://evil.example')).toBe(true)
    expect(stray.windowOpenHandler?.({ url: 'x' })).toEqual({ action: 'deny' })
  })

  it('menu commands reach the renderer on the menu channel; Cancel reaches the service', async () => {
    const { ctx, service } = await start()
    ctx.sendMenuCommand('run')
    expect(BrowserWindow.instances[0].webContents.sent).toContainEqual([MENU_CHANNEL, 'run'])
    const menu = Menu.current as unknown as { template: Array<{ submenu?: Array<{ id?: string; click?: () => void }> }> }
    const cancel = menu.template.flatMap((m) => m.submenu ?? []).find((i) => i.id === 'cancel')!
    cancel.click!()
    expect(service.callsTo('cancel')).toHaveLength(1)
  })

  it('before-quit waits for service.shutdown(), then quits', async () => {
    const { service } = await start()
    let release!: () => void
    service.respond('shutdown', () => new Promise<void>((r) => (release = r)))
    const ev1 = { preventDefault: vi.fn() }
    app.emit('before-quit', ev1)
    expect(ev1.preventDefault).toHaveBeenCalled()
    expect(service.callsTo('shutdown')).toHaveLength(1)
    app.emit('before-quit', { preventDefault: vi.fn() }) // a second Cmd+Q does not shut down twice
    expect(service.callsTo('shutdown')).toHaveLength(1)
    expect(app.quit).not.toHaveBeenCalled()
    release()
    await vi.waitFor(() => expect(app.quit).toHaveBeenCalled())
    const ev2 = { preventDefault: vi.fn() }
    app.emit('before-quit', ev2) // the real quit goes through
    expect(ev2.preventDefault).not.toHaveBeenCalled()
  })

  it('quits even if shutdown hangs (bounded wait)', async () => {
    const { service } = await start()
    service.respond('shutdown', () => new Promise<void>(() => {}))
    app.emit('before-quit', { preventDefault: vi.fn() })
    await vi.waitFor(() => expect(app.quit).toHaveBeenCalled())
  })

  it('a second instance focuses the existing window; without the lock it quits', async () => {
    await start()
    app.emit('second-instance')
    expect(BrowserWindow.instances[0].focus).toHaveBeenCalled()
    resetFakeElectron()
    app.lock = false
    const service = new FakeService()
    const ctx = await runApp({ createService: () => service, mainDir: '/app/out/main', env: {} })
    expect(ctx).toBeNull()
    expect(app.quit).toHaveBeenCalled()
    expect(BrowserWindow.instances).toHaveLength(0)
  })

  it('reopens a window on activate after it was closed', async () => {
    const { ctx } = await start()
    BrowserWindow.instances[0].close()
    expect(ctx.getWindow()).toBeNull()
    app.emit('activate')
    expect(BrowserWindow.instances).toHaveLength(2)
    expect(ctx.getWindow()).toBe(BrowserWindow.instances[1])
  })
})
