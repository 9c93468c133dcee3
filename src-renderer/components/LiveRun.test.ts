import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { RunEvent } from '@shared/contract/events'
import { setBridge } from '../bridge'
import { useRunStore } from '../stores/run'
import { registerFamily } from '@shared/families'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { scriptedRun, toyFamily } from '@shared/testing/fixtures'
import LiveRun from './LiveRun.vue'

let service: FakeService

function setup() {
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(LiveRun, { global: { plugins: [pinia] } })
  return { w, run: useRunStore() }
}

beforeEach(() => {
  localStorage.clear()
  service = new FakeService()
  setBridge(fakeBridge(service))
})
afterEach(() => {
  useRunStore().disconnect()
  setBridge(null)
})

const events = scriptedRun({ models: 4, workers: [2], strategies: ['sequential', 'pool', 'batched'] })
const upTo = (pred: (e: RunEvent, i: number) => boolean) => events.slice(0, events.findIndex(pred) + 1)

describe('LiveRun with a scripted 4 models × 2 workers stream', () => {
  it('shows one lane per worker with current model, epoch, batch and loss', async () => {
    const { w } = setup()
    await useRunStore().connect()
    // first half of the pool measurement (index 1)
    const poolProgress = events.filter((e) => e.type === 'progress' && e.index === 1)
    service.play(upTo((e) => e === poolProgress[2]))
    await flushPromises()
    const lanes = w.findAll('[data-test=lanes] tbody tr')
    expect(lanes).toHaveLength(2)
    expect(w.get('[data-test=lane-0]').text()).toMatch(/W0/)
    expect(w.get('[data-test=lane-0] [data-test=lane-models]').text()).toMatch(/#\d/)
    expect(w.get('[data-test=lane-1] [data-test=lane-models]').text()).not.toBe(w.get('[data-test=lane-0] [data-test=lane-models]').text())
    expect(w.get('[data-test=measurement-of]').text()).toBe('measurement 2 of 3')
    expect(w.get('[data-test=current-key]').text()).toMatch(/pool W=2 · 2k rows · 4 models/)
    expect(w.get('[data-test=run-status]').text()).toBe('Running')
  })

  it('fills the model grid as progress events arrive and counts models done', async () => {
    const { w, run } = setup()
    const seq = events.filter((e) => e.type === 'progress' && e.index === 0)
    service.emit(events[0])
    run.applyEvent(events[0])
    const fractions = () => w.findAll('[data-test=model-grid] li').map((li) => Number(li.attributes('data-fraction')))
    run.applyEvent(seq[0])
    await flushPromises()
    expect(w.findAll('[data-test=model-grid] li')).toHaveLength(4)
    const first = fractions()
    expect(first[0]).toBeGreaterThan(0)
    expect(first[3]).toBe(0)
    run.applyEvent(seq[seq.length - 1])
    await flushPromises()
    expect(fractions()).toEqual([1, 1, 1, 1])
    expect(w.get('[data-test=models-done]').text()).toBe('4/4')
    expect(w.findAll('[data-test=model-grid] li.done')).toHaveLength(4)
  })

  it("lanes say the progress in the family's words: epoch and batch for the MLP, 1-based", async () => {
    const { w, run } = setup()
    run.applyEvent(events[0])
    // the smoke workload: 2 000 rows, 20 % test → 1 600 training rows, batch 512 → 4 batches per epoch, 2 epochs
    const base = events.find((e) => e.type === 'progress' && e.index === 1) as Extract<RunEvent, { type: 'progress' }>
    const lane = (worker: number, done: number | null, loss: number | null = null) => ({
      worker,
      modelIndices: [worker],
      progress: done == null ? null : { done, total: 8, unit: 'batch', loss },
    })
    run.applyEvent({ ...base, lanes: [lane(0, 1, 0.25), lane(1, 8)] })
    await flushPromises()
    expect(w.get('[data-test=lanes] thead').text()).toMatch(/Progress/)
    expect(w.get('[data-test=lane-0] [data-test=lane-progress]').text()).toBe('epoch 1/2 · batch 1/4')
    expect(w.get('[data-test=lane-0] [data-test=lane-loss]').text()).toBe('0.2500')
    expect(w.get('[data-test=lane-1] [data-test=lane-progress]').text()).toBe('epoch 2/2 · batch 4/4')
    expect(w.get('[data-test=lane-1] [data-test=lane-loss]').text()).toBe('—')
    // a job just handed out, before its first step, and an idle lane
    run.applyEvent({ ...base, lanes: [lane(0, null), { ...lane(1, null), modelIndices: [] }] })
    await flushPromises()
    expect(w.get('[data-test=lane-0] [data-test=lane-progress]').text()).toBe('starting')
    expect(w.get('[data-test=lane-1] [data-test=lane-progress]').text()).toBe('—')
  })

  it('a family registered only in this test describes its own lanes (no change to LiveRun)', async () => {
    const restore = registerFamily(toyFamily)
    try {
      const { w, run } = setup()
      const [started] = events as [Extract<RunEvent, { type: 'run-started' }>]
      run.applyEvent({ ...started, config: { ...started.config, model: { ...toyFamily.defaults } as never } })
      const base = events.find((e) => e.type === 'progress' && e.index === 1) as Extract<RunEvent, { type: 'progress' }>
      run.applyEvent({ ...base, lanes: [{ worker: 0, modelIndices: [0], progress: { done: 37, total: 100, unit: 'round' } }] })
      await flushPromises()
      expect(w.get('[data-test=lane-0] [data-test=lane-progress]').text()).toBe('round 37/100')
    } finally {
      restore()
    }
  })

  it('the batched lanes each carry a contiguous group of models', async () => {
    const { w, run } = setup()
    const batched = events.filter((e) => e.type === 'progress' && e.index === 2)
    run.applyEvent(events[0])
    run.applyEvent(batched[1])
    await flushPromises()
    expect(w.get('[data-test=lane-0] [data-test=lane-models]').text()).toBe('#0, #1')
    expect(w.get('[data-test=lane-1] [data-test=lane-models]').text()).toBe('#2, #3')
  })

  it('records a loss history for the sparkline, reset per measurement', async () => {
    const { w, run } = setup()
    for (const e of upTo((e) => e.type === 'measurement' && e.index === 0)) run.applyEvent(e)
    const n = run.lossHistory.length
    expect(n).toBeGreaterThan(2)
    await flushPromises()
    expect(w.find('.sparkline polyline').exists()).toBe(true)
    expect(w.get('[data-test=loss-latest]').text()).toMatch(/^0\.\d{4}$/)
    const next = events.find((e) => e.type === 'progress' && e.index === 1)!
    run.applyEvent(next)
    expect(run.lossHistory.length).toBeLessThanOrEqual(1)
  })

  it('elapsed and ETA: ETA shrinks as the plan progresses and disappears when finished', async () => {
    const { w, run } = setup()
    run.applyEvent(events[0])
    const t0 = Date.parse('2026-12-02T09:00:00.000Z')
    const progress = events.filter((e) => e.type === 'progress')
    run.applyEvent(progress[2])
    run.now = t0 + 10_000
    const f1 = run.overallFraction
    const eta1 = run.etaMs!
    expect(run.elapsedMs).toBe(10_000)
    expect(eta1).toBeCloseTo((10_000 * (1 - f1)) / f1)
    for (const e of events.slice(events.indexOf(progress[2]) + 1, events.indexOf(progress[12]) + 1)) run.applyEvent(e)
    run.now = t0 + 20_000
    expect(run.overallFraction).toBeGreaterThan(f1)
    expect(run.etaMs!).toBeLessThan(eta1)
    await flushPromises()
    expect(w.get('[data-test=elapsed]').text()).toBe('20.0 s')
    expect(w.get('[data-test=eta]').text()).toMatch(/s$/)
    run.applyEvent(events[events.length - 1])
    await flushPromises()
    expect(w.find('[data-test=eta]').exists()).toBe(false)
    expect(w.get('[data-test=run-status]').text()).toBe('Finished')
    expect(w.get('[data-test=elapsed]').text()).toBe('1 min 0 s')
    expect(w.find('[data-test=cancel]').exists()).toBe(false)
  })

  it('ignores events of another run once a run is known', () => {
    const { run } = setup()
    run.applyEvent(events[0])
    const stray = { ...(events.find((e) => e.type === 'progress') as Extract<RunEvent, { type: 'progress' }>), runId: 'other' }
    run.applyEvent(stray)
    expect(run.models).toHaveLength(0)
  })
})

describe('cancel flow', () => {
  it('Cancel calls the bridge with the run id, shows Cancelling…, then Cancelled', async () => {
    const { w, run } = setup()
    await run.connect()
    service.play(events.slice(0, 8))
    await flushPromises()
    await w.get('[data-test=cancel]').trigger('click')
    await flushPromises()
    expect(service.callsTo('cancel')).toEqual([{ runId: 'run-1' }])
    expect(w.get('[data-test=cancel]').text()).toBe('Cancelling…')
    expect(w.get('[data-test=cancel]').attributes('aria-disabled')).toBe('true')
    // a second click does not send a second cancel
    await w.get('[data-test=cancel]').trigger('click')
    expect(service.callsTo('cancel')).toHaveLength(1)

    const finished = events[events.length - 1] as Extract<RunEvent, { type: 'run-finished' }>
    service.emit({ ...finished, result: { ...finished.result, status: 'cancelled', measurements: [] } })
    await flushPromises()
    expect(run.status).toBe('cancelled')
    expect(w.get('[data-test=run-status]').text()).toBe('Cancelled')
    expect(w.find('[data-test=cancel]').exists()).toBe(false)
  })

  it("a cancelled run's progress bar stays where the run stopped, not at 100 %", async () => {
    const { w, run } = setup()
    const finished = events.at(-1) as Extract<RunEvent, { type: 'run-finished' }>
    const firstMeasurement = events.findIndex((e) => e.type === 'measurement')
    for (const e of events.slice(0, firstMeasurement + 1)) run.applyEvent(e)
    const kept = finished.result.measurements.slice(0, 1)
    run.applyEvent({ ...finished, result: { ...finished.result, status: 'cancelled', measurements: kept } })
    await flushPromises()
    expect(run.overallFraction).toBeCloseTo(1 / 3, 5)
    expect(w.get('[role=progressbar]').attributes('aria-valuenow')).toBe('33')
  })

  it('a cancel the service refuses re-enables the button', async () => {
    const { w, run } = setup()
    service.respond('cancel', () => ({ cancelled: false }))
    run.applyEvent(events[0])
    await flushPromises()
    await w.get('[data-test=cancel]').trigger('click')
    await flushPromises()
    expect(run.cancelling).toBe(false)
    expect(w.get('[data-test=cancel]').attributes('aria-disabled')).toBeUndefined()
  })

  it('re-attaches to a run already in progress (currentRun) on connect', async () => {
    const { w, run } = setup()
    service.current = { runId: 'run-1', events: events.slice(0, 10) }
    await run.connect()
    await flushPromises()
    expect(run.status).toBe('running')
    expect(w.findAll('[data-test=lanes] tbody tr').length).toBeGreaterThan(0)
  })
})

describe('focus at the end of a run', () => {
  // keyboard users who pressed (or tabbed to) Cancel must not land on the page body when it goes
  function mountAttached() {
    const pinia = createPinia()
    setActivePinia(pinia)
    const w = mount(LiveRun, { global: { plugins: [pinia] }, attachTo: document.body })
    return { w, run: useRunStore() }
  }
  afterEach(() => {
    document.body.innerHTML = ''
  })

  it('Cancel pressed with the keyboard: focus stays on it while cancelling, then moves to the heading that says how the run ended', async () => {
    const { w, run } = mountAttached()
    await run.connect()
    service.play(events.slice(0, 8))
    await flushPromises()
    const cancel = w.get('[data-test=cancel]').element as HTMLButtonElement
    cancel.focus()
    await w.get('[data-test=cancel]').trigger('click')
    await flushPromises()
    // not disabled (a disabled button drops focus): said disabled, and a second press does nothing
    expect(w.get('[data-test=cancel]').attributes('aria-disabled')).toBe('true')
    expect(document.activeElement).toBe(cancel)

    const finished = events.at(-1) as Extract<RunEvent, { type: 'run-finished' }>
    service.emit({ ...finished, result: { ...finished.result, status: 'cancelled', measurements: [] } })
    await flushPromises()
    expect(w.find('[data-test=cancel]').exists()).toBe(false)
    expect(document.activeElement).toBe(w.get('#live-title').element)
    expect((document.activeElement as HTMLElement).textContent).toMatch(/Live run\s*Cancelled/)
  })

  it('a run that finishes while Cancel has focus moves focus to the heading; focus elsewhere is left alone', async () => {
    const { w, run } = mountAttached()
    await run.connect()
    service.play(events.slice(0, 8))
    await flushPromises()
    ;(w.get('[data-test=cancel]').element as HTMLButtonElement).focus()
    service.play(events.slice(8))
    await flushPromises()
    expect(document.activeElement).toBe(w.get('#live-title').element)
    expect(w.get('#live-title').text()).toMatch(/Finished/)

    // a second run ends while the user works elsewhere: focus is not taken from them
    const elsewhere = document.body.appendChild(document.createElement('input'))
    service.play(events.slice(0, 8).map((e) => ({ ...e, runId: 'run-2' })))
    await flushPromises()
    elsewhere.focus()
    service.play(events.slice(8).map((e) => ({ ...e, runId: 'run-2' })))
    await flushPromises()
    expect(document.activeElement).toBe(elsewhere)
  })
})
