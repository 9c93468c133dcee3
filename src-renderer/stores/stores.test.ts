import { flushPromises } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { chooseBridge, setBridge } from '../bridge'
import { fakeBridge, FakeService, type FakeBridge } from '@shared/testing/fake-service'
import { CAPABILITIES, resultFor, scriptedRun } from '@shared/testing/fixtures'
import { presetConfig } from '@shared/contract/config'
import { TrainpoolError } from '@shared/vocabulary/errors'
import type { RunEvent } from '@shared/contract/events'
import { estimateRun } from '@shared/estimate'
import { expandPlan } from '@shared/plan'
import runStoreSource from './run.ts?raw'
import { useCapabilitiesStore } from './capabilities'
import { useConfigStore } from './config'
import { parseList } from './draft/text-boxes'
import { useHistoryStore } from './history'
import { useRunStore } from './run'

let service: FakeService
let bridge: FakeBridge
beforeEach(() => {
  localStorage.clear()
  setActivePinia(createPinia())
  service = new FakeService()
  bridge = fakeBridge(service)
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
    expect(cfg.messagesFor('sizes')[0]).toMatch(/^Data size 2 must be an integer from 2/)
    expect(cfg.itemMessages('sizes', 1)).toHaveLength(1)
    expect(cfg.itemMessages('sizes', 0)).toHaveLength(0)
    expect(cfg.canRun).toBe(false)
  })

  it('an empty models list is named', () => {
    const cfg = useConfigStore()
    cfg.setList('models', '')
    expect(cfg.messagesFor('models').join(' ')).toMatch(/Models \(N\) needs at least 1 value/)
  })

  it('canRun is false while a run is busy', () => {
    const cfg = useConfigStore()
    expect(cfg.canRun).toBe(true)
    useRunStore().applyEvent(scriptedRun()[0])
    expect(cfg.canRun).toBe(false)
  })

  it('the estimate waits for the capabilities, then uses the backend auto resolves to', async () => {
    const cfg = useConfigStore()
    // no guess before the capabilities arrive (was: 'cpu ≈ 7 min'): counts and memory, no time
    expect(cfg.estimate?.backend).toBeNull()
    expect(cfg.estimate?.totalMs).toBeNull()
    expect(cfg.estimate?.measurements).toBe(expandPlan(cfg.config!).length)
    await useCapabilitiesStore().load()
    expect(cfg.estimate?.backend).toBe('webgpu')
    expect(cfg.estimate).toEqual(estimateRun(cfg.config!, 'webgpu', { cpuCount: CAPABILITIES.cpuCount }))
  })

  it("trees estimate on their own auto (the CPU engine), not the MLP's GPU pick, and count their compute", async () => {
    const cfg = useConfigStore()
    await useCapabilitiesStore().load()
    cfg.setFamily('gbdt')
    expect(cfg.config?.backend).toBe('auto')
    expect(cfg.estimate?.backend).toBe('cpu')
    expect(cfg.estimate).toEqual(estimateRun(cfg.config!, 'cpu', { cpuCount: CAPABILITIES.cpuCount }))
  })

  it("startFromDraft starts the validated draft once; a refused start puts the service's field issues on the fields", async () => {
    const cfg = useConfigStore()
    const run = useRunStore()
    cfg.setList('models', '8')
    expect(await cfg.startFromDraft()).toBe(true)
    expect(service.callsTo('start')).toEqual([{ config: cfg.config }])
    // busy: a second start is not sent
    expect(await cfg.startFromDraft()).toBe(false)
    expect(service.callsTo('start')).toHaveLength(1)

    run.resetRun()
    service.fail('start', new TrainpoolError('insufficient-memory', 'needs 40 GiB', [{ field: 'sizes', message: 'sizes 10000 needs about 40 GiB' }]))
    expect(await cfg.startFromDraft()).toBe(false)
    expect(run.status).toBe('error')
    expect(cfg.messagesFor('sizes')).toEqual(['Data sizes 10000 needs about 40 GiB'])
    cfg.touched()
    expect(cfg.messagesFor('sizes')).toEqual([])
    // an invalid draft is never sent
    cfg.setList('models', '0')
    expect(await cfg.startFromDraft()).toBe(false)
    expect(service.callsTo('start')).toHaveLength(2)
  })

  it('a joined run (started elsewhere) shows its config in the draft; a run started here leaves the draft alone', () => {
    const cfg = useConfigStore()
    const run = useRunStore()
    cfg.setList('models', '12')
    const theirs = scriptedRun({ runId: 'theirs', models: 6, workers: [3] })
    run.applyEvent(theirs[0])
    expect(run.joined).toBe(true)
    expect(cfg.draft.models).toEqual([6])
    expect(cfg.listText.models).toBe('6')
  })
})

describe('capabilities store', () => {
  it("lists a family's backends with availability and the reason, and resolves auto per family", async () => {
    const caps = useCapabilitiesStore()
    await caps.load()
    const tf = caps.backendOptionsFor('mlp').find((o) => o.value === 'tensorflow')!
    expect(tf).toMatchObject({ available: false })
    expect(tf.detail).toMatch(/cuDNN/)
    // the fixture announces webgpu for the MLP and the CPU engine for trees
    expect(caps.resolve('auto', 'mlp')).toBe('webgpu')
    expect(caps.resolve('auto', 'gbdt')).toBe('cpu')
    expect(caps.backendOptionsFor('gbdt')[0]).toMatchObject({ value: 'auto', label: 'auto → cpu' })
  })

  it('keeps the error message when capabilities fail', async () => {
    service.fail('capabilities', new Error('probe crashed'))
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
    service.fail('start', new TrainpoolError('busy', 'a run is already in progress'))
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
    expect(run.joined).toBe(false)
  })

  it('resetRun clears every trace of the last run, and a new run-started starts from that same clean state', () => {
    const run = useRunStore()
    const events = scriptedRun({ models: 4, workers: [2] })
    for (const e of events) run.applyEvent(e)
    expect(run.result).not.toBeNull()
    run.resetRun()
    expect(run.status).toBe('idle')
    expect([run.runId, run.config, run.result, run.error, run.startedAtMs, run.currentKey, run.telemetry]).toEqual([null, null, null, null, null, null, null])
    expect([run.plan, run.measurements, run.lanes, run.models, run.lossHistory]).toEqual([[], [], [], [], []])
    // a second run right after a finished one keeps nothing of the first
    for (const e of events.slice(0, 12)) run.applyEvent(e)
    run.applyEvent({ ...(events[0] as Extract<RunEvent, { type: 'run-started' }>), runId: 'run-2' })
    expect(run.runId).toBe('run-2')
    expect([run.measurements, run.lanes, run.models]).toEqual([[], [], []])
    expect(run.status).toBe('running')
  })

  it('imports no other store (the config store depends on it, not the other way round)', () => {
    expect(runStoreSource).not.toMatch(/from '\.\/(config|history|runActions|capabilities)'/)
    expect(runStoreSource).not.toMatch(/use(Config|History|RunActions|Capabilities)Store/)
  })
})

describe('history store', () => {
  it('lists runs newest first and opens one', async () => {
    const h = useHistoryStore()
    service.runs = [
      { runId: 'a', status: 'ok', startedAt: '2026-01-01T00:00:00Z', preset: 'smoke', backend: 'cpu', device: 'x', sizes: [2000], models: [4], bestSpeedup: 2 },
      {
        runId: 'b',
        status: 'damaged',
        startedAt: '2026-02-01T00:00:00Z',
        preset: null,
        backend: null,
        device: null,
        sizes: [],
        models: [],
        bestSpeedup: null,
        problem: 'bad JSON',
      },
    ]
    service.results.set('a', resultFor(presetConfig('smoke'), [], { runId: 'a' }))
    await h.refresh()
    expect(h.runs.map((r) => r.runId)).toEqual(['b', 'a'])
    await h.open('a')
    expect(h.selected?.runId).toBe('a')
    await h.open('zzz')
    await flushPromises()
    expect(h.selected).toBeNull()
    expect(h.selectedError).toMatch(/no run zzz/)
  })
})

describe('config persistence', () => {
  it('remembers the last valid config and ignores a stored invalid one', async () => {
    const { STORAGE_KEY } = await import('./draft/persistence')
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

  it('reads a config saved before the model-family seam (MLP fields at the top) into model', async () => {
    const { LEGACY_STORAGE_KEY } = await import('./draft/persistence')
    const { model, ...rest } = presetConfig('quick', { models: [12] })
    localStorage.setItem(LEGACY_STORAGE_KEY, JSON.stringify({ ...rest, epochs: 7, batchSize: 256, hidden: [32, 16], lr: 0.005 }))
    setActivePinia(createPinia())
    const cfg = useConfigStore()
    expect(cfg.draft.models).toEqual([12])
    expect(cfg.draft.model).toEqual({ ...model, epochs: 7, batchSize: 256, hidden: [32, 16], lr: 0.005 })
    expect(cfg.modelText.hidden).toBe('32, 16')
  })
})
