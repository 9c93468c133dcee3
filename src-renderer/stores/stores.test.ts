import { flushPromises } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { chooseBridge, setBridge } from '../bridge'
import { fakeBridge, resultFor, scriptedRun, type FakeBridge } from '../test/fixtures'
import { presetConfig } from '@shared/contract/config'
import { useCapabilitiesStore } from './capabilities'
import { parseList, useConfigStore } from './config'
import { useHistoryStore } from './history'
import { useRunStore } from './run'

let bridge: FakeBridge
beforeEach(() => {
  localStorage.clear()
  setActivePinia(createPinia())
  bridge = fakeBridge()
  setBridge(bridge)
})
afterEach(() => {
  useRunStore().disconnect()
  setBridge(null)
})

describe('bridge', () => {
  it('uses an injected bridge, else window.trainpool, else throws a clear error', () => {
    expect(chooseBridge()).toBe(bridge)
    setBridge(null)
    expect(() => chooseBridge()).toThrow(/window\.trainpool .* missing/)
    const preload = fakeBridge()
    ;(globalThis as { trainpool?: unknown }).trainpool = preload
    try {
      expect(chooseBridge()).toBe(preload)
    } finally {
      delete (globalThis as { trainpool?: unknown }).trainpool
    }
  })
})

describe('config store', () => {
  it('parses list text, keeping bad tokens as NaN so validation names them', () => {
    expect(parseList('50, 100')).toEqual([50, 100])
    expect(parseList(' 1 2;3 ')).toEqual([1, 2, 3])
    expect(parseList('5, x')[1]).toBeNaN()
    expect(parseList('')).toEqual([])
  })

  it('messagesFor covers list items, itemMessages only the item', () => {
    const cfg = useConfigStore()
    cfg.draft.sizes = [1000, 0]
    expect(cfg.messagesFor('sizes')[0]).toMatch(/sizes must be an integer from 2/)
    expect(cfg.itemMessages('sizes', 1)).toHaveLength(1)
    expect(cfg.itemMessages('sizes', 0)).toHaveLength(0)
    expect(cfg.canRun).toBe(false)
  })

  it('an empty models list is named', () => {
    const cfg = useConfigStore()
    cfg.setList('models', '')
    expect(cfg.messagesFor('models').join(' ')).toMatch(/models needs at least 1 value/)
  })

  it('canRun is false while a run is busy', () => {
    const cfg = useConfigStore()
    expect(cfg.canRun).toBe(true)
    useRunStore().applyEvent(scriptedRun()[0])
    expect(cfg.canRun).toBe(false)
  })

  it('the estimate uses the backend auto resolves to', async () => {
    const cfg = useConfigStore()
    expect(cfg.estimate?.backend).toBe('cpu')
    await useCapabilitiesStore().load()
    expect(cfg.estimate?.backend).toBe('webgpu')
  })
})

describe('capabilities store', () => {
  it('lists every backend with availability and the reason', async () => {
    const caps = useCapabilitiesStore()
    await caps.load()
    const tf = caps.backendOptions.find((o) => o.value === 'tensorflow')!
    expect(tf).toMatchObject({ available: false })
    expect(tf.detail).toMatch(/cuDNN/)
    expect(caps.resolve('auto')).toBe('webgpu')
  })

  it('keeps the error message when capabilities fail', async () => {
    bridge.capabilities = async () => {
      throw { code: 'internal', message: 'probe crashed' }
    }
    const caps = useCapabilitiesStore()
    await caps.load()
    expect(caps.error).toBe('probe crashed')
  })
})

describe('run store', () => {
  it('applies the full stream: measurements accumulate, result and status at the end', () => {
    const run = useRunStore()
    const events = scriptedRun({ models: 4, workers: [2] })
    let seen = 0
    for (const e of events) {
      run.applyEvent(e)
      if (e.type === 'measurement') expect(run.measurements).toHaveLength(++seen)
    }
    expect(run.status).toBe('ok')
    expect(run.result?.verification.sameWork).toBe(true)
    expect(run.overallFraction).toBe(1)
    expect(run.busy).toBe(false)
    expect(run.lanes.every((l) => l.modelIndices.length === 0)).toBe(true)
  })

  it('a failed verification run ends failed', () => {
    const run = useRunStore()
    for (const e of scriptedRun({ disagree: true })) run.applyEvent(e)
    expect(run.status).toBe('failed')
  })

  it('start error keeps the message and lets the user try again', async () => {
    bridge.startImpl = async () => {
      throw { code: 'busy', message: 'a run is already in progress' }
    }
    const run = useRunStore()
    expect(await run.start(presetConfig('smoke'))).toBe(false)
    expect(run.status).toBe('error')
    expect(run.error?.message).toBe('a run is already in progress')
    expect(run.busy).toBe(false)
  })

  it('start before run-started arrives shows the run as running with its id', async () => {
    const run = useRunStore()
    await run.start(presetConfig('smoke'))
    expect(run.status).toBe('running')
    expect(run.runId).toBe('run-1')
  })
})

describe('history store', () => {
  it('lists runs newest first and opens one', async () => {
    const h = useHistoryStore()
    bridge.runs = [
      { runId: 'a', status: 'ok', startedAt: '2026-01-01T00:00:00Z', preset: 'smoke', backend: 'cpu', device: 'x', sizes: [2000], models: [4], bestSpeedup: 2 },
      { runId: 'b', status: 'damaged', startedAt: '2026-02-01T00:00:00Z', preset: null, backend: null, device: null, sizes: [], models: [], bestSpeedup: null, problem: 'bad JSON' },
    ]
    bridge.results.set('a', resultFor(presetConfig('smoke'), [], { runId: 'a' }))
    await h.refresh()
    expect(h.runs.map((r) => r.runId)).toEqual(['b', 'a'])
    await h.open('a')
    expect(h.selected?.runId).toBe('a')
    await h.open('zzz')
    await flushPromises()
    expect(h.selected).toBeNull()
    expect(h.selectedError).toMatch(/not found/)
  })
})

describe('config persistence', () => {
  it('remembers the last valid config and ignores a stored invalid one', async () => {
    const { STORAGE_KEY } = await import('./config')
    localStorage.removeItem(STORAGE_KEY)
    const cfg = useConfigStore()
    cfg.setList('models', '12')
    await flushPromises()
    expect(JSON.parse(localStorage.getItem(STORAGE_KEY)!).models).toEqual([12])
    cfg.setList('models', '0')
    await flushPromises()
    expect(JSON.parse(localStorage.getItem(STORAGE_KEY)!).models).toEqual([12])

    setActivePinia(createPinia())
    expect(useConfigStore().draft.models).toEqual([12])

    localStorage.setItem(STORAGE_KEY, JSON.stringify({ models: 'x' }))
    setActivePinia(createPinia())
    expect(useConfigStore().draft.models).toEqual([50])
    localStorage.removeItem(STORAGE_KEY)
  })
})
