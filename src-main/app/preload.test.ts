// The preload lives in src-preload/; its test sits here because the vitest node project covers src-main/**.
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { MENU_CHANNEL } from '@shared/contract/channels'
import { CHANNELS, type TrainpoolApi } from '@shared/contract/api'
import { METHODS } from '../service/dispatch'

type Listener = (event: unknown, ...args: unknown[]) => void

const h = vi.hoisted(() => {
  const listeners = new Map<string, Set<(event: unknown, ...args: unknown[]) => void>>()
  return {
    exposed: new Map<string, unknown>(),
    listeners,
    invoke: vi.fn<(channel: string, payload: unknown) => Promise<unknown>>(),
  }
})

vi.mock('electron', () => ({
  contextBridge: {
    exposeInMainWorld: (key: string, value: unknown) => h.exposed.set(key, value),
  },
  ipcRenderer: {
    invoke: h.invoke,
    on: (channel: string, l: Listener) => {
      if (!h.listeners.has(channel)) h.listeners.set(channel, new Set())
      h.listeners.get(channel)!.add(l)
    },
    removeListener: (channel: string, l: Listener) => h.listeners.get(channel)?.delete(l),
  },
}))

await import('../../src-preload/index')
const api = h.exposed.get('trainpool') as Required<TrainpoolApi>

function emit(channel: string, value: unknown) {
  const fakeEvent = { sender: { secret: 'ipcRenderer' }, senderId: 0 }
  for (const l of h.listeners.get(channel) ?? []) l(fakeEvent, value)
}

beforeEach(() => h.invoke.mockReset())

describe('preload window.trainpool', () => {
  it('exposes exactly one method per method of the API table plus onEvent/onMenuCommand, nothing raw', () => {
    expect([...h.exposed.keys()]).toEqual(['trainpool'])
    expect(Object.keys(api).sort()).toEqual([...METHODS, 'onEvent', 'onMenuCommand'].sort())
    for (const v of Object.values(api)) expect(typeof v).toBe('function')
    expect(
      Object.keys(CHANNELS)
        .filter((k) => k !== 'event')
        .sort(),
    ).toEqual([...METHODS].sort())
    // channels derived from the names, unchanged from when they were written by hand
    expect(CHANNELS).toMatchObject({
      getRun: 'trainpool:get-run',
      listRuns: 'trainpool:list-runs',
      reportPdf: 'trainpool:report-pdf',
      event: 'trainpool:event',
    })
    expect(new Set(Object.values(CHANNELS)).size).toBe(METHODS.length + 1)
  })

  it("invokes each method's channel with its one request object as is, and unwraps ok envelopes", async () => {
    h.invoke.mockResolvedValue({ ok: true, value: { runId: 'r1' } })
    await expect(api.start({ config: { preset: 'smoke' } })).resolves.toEqual({ runId: 'r1' })
    expect(h.invoke).toHaveBeenLastCalledWith(CHANNELS.start, { config: { preset: 'smoke' } })

    h.invoke.mockResolvedValue({ ok: true, value: { cancelled: true } })
    await api.cancel({})
    expect(h.invoke).toHaveBeenLastCalledWith(CHANNELS.cancel, {})
    await api.cancel({ runId: 'r1' })
    expect(h.invoke).toHaveBeenLastCalledWith(CHANNELS.cancel, { runId: 'r1' })

    h.invoke.mockResolvedValue({ ok: true, value: null })
    await api.getRun({ runId: 'r1' })
    expect(h.invoke).toHaveBeenLastCalledWith(CHANNELS.getRun, { runId: 'r1' })
    await api.exportRun({ runId: 'r1', format: 'csv' })
    expect(h.invoke).toHaveBeenLastCalledWith(CHANNELS.exportRun, { runId: 'r1', format: 'csv' })
    for (const m of ['capabilities', 'listRuns', 'currentRun'] as const) {
      await api[m]()
      expect(h.invoke).toHaveBeenLastCalledWith(CHANNELS[m], undefined)
    }
  })

  it('rejects with a plain error-like object carrying code, message and issues', async () => {
    const error = { code: 'invalid-input', message: 'invalid start request: sizes.0: too small', issues: [{ field: 'sizes.0', message: 'too small' }] }
    h.invoke.mockResolvedValue({ ok: false, error })
    const err = await api.start({ config: { sizes: [0] } }).catch((e: unknown) => e)
    expect(err).toEqual({ name: 'TrainpoolError', ...error })
    expect(err).not.toBeInstanceOf(Error) // contextBridge would drop code/issues from an Error
  })

  it('turns transport failures and malformed replies into internal errors', async () => {
    h.invoke.mockRejectedValue(new Error('No handler registered'))
    await expect(api.listRuns()).rejects.toMatchObject({ code: 'internal', message: expect.stringContaining('No handler') })
    h.invoke.mockResolvedValue({ weird: true })
    await expect(api.listRuns()).rejects.toMatchObject({ code: 'internal' })
  })

  it('onEvent passes only the RunEvent (never the IpcRendererEvent) and unsubscribes', () => {
    const got: unknown[][] = []
    const off = api.onEvent((...args: unknown[]) => got.push(args))
    const ev = { type: 'phase', runId: 'r1', phase: 'starting', index: null, key: null, message: 'x' }
    emit(CHANNELS.event, ev)
    expect(got).toEqual([[ev]])
    off()
    emit(CHANNELS.event, ev)
    expect(got).toHaveLength(1)
    expect(h.listeners.get(CHANNELS.event)?.size).toBe(0)
  })

  it('onMenuCommand forwards known commands only', () => {
    const got: unknown[] = []
    const off = api.onMenuCommand((c) => got.push(c))
    emit(MENU_CHANNEL, 'run')
    emit(MENU_CHANNEL, 'rm -rf')
    expect(got).toEqual(['run'])
    off()
  })

  it('refuses a non-function listener', () => {
    expect(() => api.onEvent(42 as never)).toThrow(TypeError)
  })
})
