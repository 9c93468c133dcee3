import { beforeEach, describe, expect, it, vi } from 'vitest'
import { CHANNELS } from '@shared/contract/api'
import type { RunEvent } from '@shared/contract'
import { METHODS } from '../service/dispatch'
import { resolveAppPage } from './app-page'
import { BrowserWindow, FakeFrame, FakeWebContents, ipcMain, resetFakeElectron } from '../testing/fake-electron'
import { FakeService } from '@shared/testing/fake-service'
import { presetConfig } from '@shared/contract'

/** a whole config: the service (and so the fake) checks it */
const SMOKE = presetConfig('smoke')

vi.mock('electron', () => import('../testing/fake-electron'))
const { registerIpc } = await import('./ipc')

const page = resolveAppPage({ rendererDir: '/app/out/renderer', allowDevServer: false })
const APP_URL = 'file:///app/out/renderer/index.html'

function setup() {
  const service = new FakeService()
  const win = new BrowserWindow({})
  let current: BrowserWindow | null = win
  const warn = vi.fn()
  const dispose = registerIpc({ service, getWindow: () => current as never, page, warn })
  const fromApp = (url = `${APP_URL}#/history`) => ({ sender: win.webContents, senderFrame: new FakeFrame(url) })
  return { service, win, warn, dispose, fromApp, setWindow: (w: BrowserWindow | null) => (current = w) }
}

const phase: RunEvent = { type: 'phase', runId: 'run-1', phase: 'starting', index: null, key: null, message: 'starting workers' }

beforeEach(() => resetFakeElectron())

describe('IPC handlers', () => {
  it('registers one handler per contract method', () => {
    setup()
    expect([...ipcMain.handlers.keys()].sort()).toEqual(METHODS.map((m) => CHANNELS[m]).sort())
  })

  it('start and cancel reach the service and come back as ok envelopes', async () => {
    const { service, fromApp } = setup()
    await expect(ipcMain.invoke(CHANNELS.start, fromApp(), { config: SMOKE })).resolves.toEqual({
      ok: true,
      value: { runId: 'run-1' },
    })
    expect(service.callsTo('start')).toEqual([{ config: SMOKE }])
    await expect(ipcMain.invoke(CHANNELS.cancel, fromApp(), { runId: 'run-1' })).resolves.toEqual({
      ok: true,
      value: { cancelled: true },
    })
    expect(service.callsTo('cancel')).toEqual([{ runId: 'run-1' }])
    await ipcMain.invoke(CHANNELS.cancel, fromApp(), {})
    expect(service.callsTo('cancel').at(-1)).toEqual({})
    await ipcMain.invoke(CHANNELS.listRuns, fromApp())
    expect(service.callsTo('listRuns')).toHaveLength(1)
  })

  it.each([
    ['start without config', CHANNELS.start, { preset: 'smoke' }],
    ['start with a string', CHANNELS.start, 'smoke'],
    ['getRun with a path', CHANNELS.getRun, { runId: '../../etc/passwd' }],
    ['getRun with no payload', CHANNELS.getRun, undefined],
    ['cancel with extra field', CHANNELS.cancel, { runId: 'a', force: true }],
    ['capabilities with a payload', CHANNELS.capabilities, { x: 1 }],
  ])('a bad payload (%s) gets an invalid-input envelope, not a throw', async (_name, channel, payload) => {
    const { service, fromApp } = setup()
    const reply = (await ipcMain.invoke(channel, fromApp(), payload)) as { ok: boolean; error: { code: string; message: string } }
    expect(reply.ok).toBe(false)
    expect(reply.error.code).toBe('invalid-input')
    expect(reply.error.message).toMatch(/invalid .* request/)
    expect(service.calls).toEqual([])
  })

  it('a service error becomes a typed error envelope', async () => {
    const { service, fromApp } = setup()
    service.fail('listRuns', new Error('disk on fire'))
    await expect(ipcMain.invoke(CHANNELS.listRuns, fromApp())).resolves.toEqual({
      ok: false,
      error: { code: 'internal', message: 'disk on fire' },
    })
  })

  describe('refuses senders that are not the app window main frame on an app page', () => {
    const cases: Array<[string, (s: ReturnType<typeof setup>) => { sender: unknown; senderFrame: FakeFrame | null }]> = [
      ['a remote page', (s) => ({ sender: s.win.webContents, senderFrame: new FakeFrame('https://evil.example/') })],
      ['another local file', (s) => ({ sender: s.win.webContents, senderFrame: new FakeFrame('file:///home/me/evil.html') })],
      ['a path-prefix look-alike', (s) => ({ sender: s.win.webContents, senderFrame: new FakeFrame('file:///app/out/renderer-evil/index.html') })],
      ['a subframe of the app page', (s) => ({ sender: s.win.webContents, senderFrame: new FakeFrame(APP_URL, new FakeFrame(APP_URL)) })],
      ['a destroyed frame', (s) => ({ sender: s.win.webContents, senderFrame: null })],
      ['another webContents', () => ({ sender: new FakeWebContents(), senderFrame: new FakeFrame(APP_URL) })],
    ]
    it.each(cases)('%s', async (_name, makeEvent) => {
      const s = setup()
      for (const channel of [CHANNELS.start, CHANNELS.listRuns]) {
        const reply = (await ipcMain.invoke(channel, makeEvent(s), { config: {} })) as { ok: boolean; error: { code: string } }
        expect(reply).toMatchObject({ ok: false, error: { code: 'unauthorized' } })
      }
      expect(s.service.calls).toEqual([])
      expect(s.warn).toHaveBeenCalled()
    })

    it('when there is no window', async () => {
      const s = setup()
      const event = s.fromApp()
      s.setWindow(null)
      await expect(ipcMain.invoke(CHANNELS.listRuns, event)).resolves.toMatchObject({ error: { code: 'unauthorized' } })
    })
  })

  it('trusts the dev server origin only in dev mode', async () => {
    const devPage = resolveAppPage({ rendererDir: '/app/out/renderer', devServerUrl: 'http://localhost:5173/', allowDevServer: true })
    const service = new FakeService()
    const win = new BrowserWindow({})
    registerIpc({ service, getWindow: () => win as never, page: devPage, warn: () => {} })
    const ok = await ipcMain.invoke(CHANNELS.listRuns, { sender: win.webContents, senderFrame: new FakeFrame('http://localhost:5173/#/x') })
    expect(ok).toEqual({ ok: true, value: [] })
    const bad = await ipcMain.invoke(CHANNELS.listRuns, { sender: win.webContents, senderFrame: new FakeFrame('http://localhost:5174/') })
    expect(bad).toMatchObject({ ok: false, error: { code: 'unauthorized' } })
  })

  it('forwards service events to the app window only, and stops after dispose', () => {
    const s = setup()
    const other = new BrowserWindow({})
    s.service.emit(phase)
    expect(s.win.webContents.sent).toEqual([[CHANNELS.event, phase]])
    expect(other.webContents.sent).toEqual([])

    s.win.webContents.destroyed = true
    s.service.emit(phase) // no throw, nothing sent to a destroyed page
    expect(s.win.webContents.sent).toHaveLength(1)

    s.dispose()
    expect(s.service.listenerCount()).toBe(0)
    expect(ipcMain.handlers.size).toBe(0)
  })
})
