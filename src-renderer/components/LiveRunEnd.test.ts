// How the live view ends: a cancelled measurement leaves its unfinished models grey, the counter
// never goes backwards, the grid and counters go when the run ends, and a page opened after a run
// offers that run ("Last run finished 12 s ago — open").
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { RunEvent } from '@shared/contract/events'
import { setBridge } from '../bridge'
import { useRunStore } from '../stores/run'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { scriptedRun } from '@shared/testing/fixtures'
import LiveRun from './LiveRun.vue'

type Of<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>
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
  vi.useRealTimers()
})

const events = scriptedRun({ models: 4, workers: [2], strategies: ['sequential', 'pool', 'batched'] })
const finished = events.at(-1) as Of<'run-finished'>
const progressOf = (index: number) => events.filter((e): e is Of<'progress'> => e.type === 'progress' && e.index === index)

describe('cancel leaves no contradiction', () => {
  it('a cancelled measurement marks only the models it trained; the end clears the grid and says what finished', async () => {
    const { w, run } = setup()
    const firstPool = events.indexOf(progressOf(1)[2])
    for (const e of events.slice(0, firstPool + 1)) run.applyEvent(e)
    // the pool measurement is cancelled after models 0 and 1 finished
    const poolDone = (events.find((e) => e.type === 'measurement' && e.index === 1) as Of<'measurement'>).measurement
    const cut = { ...poolDone, status: 'cancelled' as const, modelsTrained: 2, perModel: poolDone.perModel.slice(0, 2) }
    run.applyEvent({ type: 'measurement', runId: 'run-1', index: 1, measurement: cut })
    await flushPromises()
    expect(w.findAll('[data-test=model-grid] li').map((li) => li.classes().includes('done'))).toEqual([true, true, false, false])
    expect(w.get('[data-test=models-done]').text()).toBe('2/4')

    const seq = finished.result.measurements[0]
    run.applyEvent({ ...finished, result: { ...finished.result, status: 'cancelled', measurements: [seq, cut] } })
    await flushPromises()
    expect(w.get('[data-test=run-status]').text()).toBe('Cancelled')
    expect(w.find('[data-test=model-grid]').exists()).toBe(false)
    expect(w.find('[data-test=lanes]').exists()).toBe(false)
    expect(w.find('[data-test=current-key]').exists()).toBe(false)
    expect(w.get('[data-test=measurement-of]').text()).toBe('1 of 3 measurements done')
  })

  it('a late snapshot of an earlier measurement does not move the counter back', async () => {
    const { w, run } = setup()
    for (const e of events.slice(0, events.indexOf(progressOf(2)[0]) + 1)) run.applyEvent(e)
    await flushPromises()
    expect(w.get('[data-test=measurement-of]').text()).toBe('measurement 3 of 3')
    // the pool's last snapshot, sent by a timer after the batched measurement began
    run.applyEvent(progressOf(1).at(-1)!)
    await flushPromises()
    expect(w.get('[data-test=measurement-of]').text()).toBe('measurement 3 of 3')
    expect(run.currentIndex).toBe(2)
    // a phase event of an earlier index does not either
    run.applyEvent({
      type: 'phase',
      runId: 'run-1',
      phase: 'starting',
      index: 0,
      key: events[0].type === 'run-started' ? events[0].plan[0] : null,
      message: 'x',
    })
    await flushPromises()
    expect(w.get('[data-test=measurement-of]').text()).toBe('measurement 3 of 3')
  })

  it('a finished run ends with every measurement counted and no live part left', async () => {
    const { w, run } = setup()
    for (const e of events) run.applyEvent(e)
    await flushPromises()
    expect(w.get('[data-test=measurement-of]').text()).toBe('3 of 3 measurements done')
    expect(w.find('[data-test=model-grid]').exists()).toBe(false)
    expect(run.telemetry).toBeNull()
  })
})

describe('a page opened after a run', () => {
  it('offers the last run with how long ago it finished, and opens it in the Run view', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.parse(finished.result.finishedAt!) + 12_000)
    service.addRun(finished.result)
    const { w, run } = setup()
    await run.connect()
    await flushPromises()
    expect(w.get('[data-test=run-status]').text()).toBe('No run in progress')
    expect(w.get('[data-test=last-run]').text()).toBe('Last run (smoke) finished 12 s ago —open')
    await w.get('[data-test=open-last-run]').trigger('click')
    await flushPromises()
    expect(run.status).toBe('ok')
    expect(run.result?.runId).toBe('run-1')
    expect(w.get('[data-test=run-status]').text()).toBe('Finished')
    expect(w.get('[data-test=measurement-of]').text()).toBe('3 of 3 measurements done')
    expect(w.find('[data-test=last-run]').exists()).toBe(false)
  })

  it('with an empty history: "No run yet", no offer', async () => {
    const { w, run } = setup()
    await run.connect()
    await flushPromises()
    expect(w.get('[data-test=run-status]').text()).toBe('No run yet')
    expect(w.find('[data-test=last-run]').exists()).toBe(false)
  })
})
