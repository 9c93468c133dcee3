// The live lanes of a search (issue 39): under successive halving the rung in flight in words, and
// the models that left at a cut marked in the model grid — as soon as the next rung's models are all
// known, never before; under early stopping, the models that stopped before their last round.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import type { ModelCell, RunEvent, WorkerLane } from '@shared/contract/events'
import type { MeasurementKey } from '@shared/contract/result'
import { expandPlan } from '@shared/plan'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { setBridge } from '../bridge'
import { useRunStore } from '../stores/run'
import LiveRun from './LiveRun.vue'

function setup() {
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(LiveRun, { global: { plugins: [pinia] } })
  return { w, run: useRunStore() }
}
beforeEach(() => setBridge(fakeBridge(new FakeService())))
afterEach(() => setBridge(null))

/** 4 configurations × 2 folds (model i of configuration ⌊i/2⌋), 8 rounds, halving by 2 from 2 rounds: rungs 4 × 2 → 2 × 4 → 1 × 8 */
const config = presetConfig('smoke', {
  backend: 'cpu',
  strategies: ['pool'],
  workers: [2],
  models: [8],
  set: { grid: { maxDepth: [1, 2, 3, 4] }, seeds: 1, folds: 2 },
  search: { method: 'halving', factor: 2, minRounds: 2 },
  model: { kind: 'gbdt', rounds: 8 } as never,
})
const key: MeasurementKey = { size: config.sizes[0], models: 8, workers: 2, strategy: 'pool', repeat: 0 }
const started: RunEvent = { type: 'run-started', runId: 'r1', config, plan: expandPlan(config), startedAt: new Date().toISOString() }

/** a lane training `model` to `total` rounds (null: just handed out) */
const lane = (worker: number, model: number, total: number | null): WorkerLane => ({
  worker,
  modelIndices: [model],
  progress: total === null ? null : { done: 1, total, unit: 'round' },
})
/** the cells with each model's rounds so far (undefined: not finished a rung yet) */
const cells = (rounds: (number | undefined)[]): ModelCell[] =>
  rounds.map((r) => ({ fraction: r === undefined ? 0 : 1, loss: null, done: r !== undefined, ...(r === undefined ? {} : { roundsTrained: r }) }))
const progress = (lanes: WorkerLane[], rounds: (number | undefined)[]): RunEvent => ({
  type: 'progress',
  runId: 'r1',
  index: 0,
  key,
  elapsedMs: 10,
  modelsDone: 0,
  lanes,
  models: cells(rounds),
})
const left = (w: ReturnType<typeof setup>['w']) =>
  w
    .findAll('[data-test=model-grid] li')
    .map((li, i) => [i, li.attributes('data-search')])
    .filter(([, s]) => s === 'left')
    .map(([i]) => i)

describe('LiveRun: a halving search', () => {
  it('says the rung in flight and marks the models that left once the next rung is known', async () => {
    const { w, run } = setup()
    run.applyEvent(started)
    run.applyEvent(progress([lane(0, 0, 2), lane(1, 1, 2)], Array(8).fill(undefined)))
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toBe('rung 1 of 3 · 4 of 4 configurations · 8 models to 2 rounds')

    // rung 2 begins with configurations 2 and 3 (models 4–7): two of its four models seen, the others may still come
    run.applyEvent(progress([lane(0, 4, 4), lane(1, 5, null)], Array(8).fill(2)))
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toBe('rung 2 of 3 · 2 of 4 configurations · 4 models to 4 rounds · 2 configurations left at the cuts')
    expect(left(w)).toEqual([])
    // the other two seen (4 and 5 finished meanwhile): the rung's four known, models 0–3 left after rung 1
    run.applyEvent(progress([lane(0, 6, 4), lane(1, 7, 4)], [2, 2, 2, 2, 4, 4, 2, 2]))
    await flushPromises()
    expect(left(w)).toEqual([0, 1, 2, 3])
    expect(w.get('[data-test=model-grid] li').attributes('title')).toBe('model #0: left after rung 1')

    // the last rung: configuration 3 alone; configuration 2 (models 4, 5) left after rung 2
    run.applyEvent(progress([lane(0, 6, 8), lane(1, 7, 8)], [2, 2, 2, 2, 4, 4, 4, 4]))
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toBe('rung 3 of 3 · 1 of 4 configurations · 2 models to 8 rounds · 3 configurations left at the cuts')
    expect(left(w)).toEqual([0, 1, 2, 3, 4, 5])
    // an idle lane still showing its last rung's job does not take the rung back
    run.applyEvent(progress([lane(0, 4, 4), lane(1, 7, 8)], [2, 2, 2, 2, 4, 4, 4, 4]))
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toMatch(/^rung 3 of 3/)
  })

  it("says the first rung from the measurement's start, even when the first snapshot is already in rung 2", async () => {
    const { w, run } = setup()
    run.applyEvent(started)
    run.applyEvent({ type: 'phase', runId: 'r1', phase: 'warming', index: 0, key, message: 'warming up' })
    await flushPromises()
    expect(w.find('[data-test=live-search]').exists()).toBe(false)
    run.applyEvent({ type: 'phase', runId: 'r1', phase: 'measuring', index: 0, key, message: 'measuring' })
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toBe('rung 1 of 3 · 4 of 4 configurations · 8 models to 2 rounds')
    run.applyEvent(progress([lane(0, 4, 4), lane(1, 5, 4)], Array(8).fill(2)))
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toMatch(/^rung 2 of 3/)
  })

  it('a grid says nothing of rungs', async () => {
    const { w, run } = setup()
    const grid = { ...config, search: undefined }
    run.applyEvent({ ...started, config: grid } as RunEvent)
    run.applyEvent(progress([lane(0, 0, 8)], Array(8).fill(undefined)))
    await flushPromises()
    expect(w.find('[data-test=live-search]').exists()).toBe(false)
  })
})

describe('LiveRun: early stopping', () => {
  it('marks the models that stopped before their last round', async () => {
    const { w, run } = setup()
    const stopping = { ...config, search: undefined, earlyStopping: 2 }
    run.applyEvent({ ...started, config: stopping } as RunEvent)
    run.applyEvent(progress([lane(0, 7, 8)], [8, 5, 8, 3, undefined, undefined, undefined, undefined]))
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toBe('early stopping: 2 of 8 models stopped before their last round')
    const stopped = w.findAll('[data-test=model-grid] li').filter((li) => li.attributes('data-search') === 'stopped')
    expect(stopped.map((li) => li.attributes('title'))).toEqual(['model #1: stopped early at round 5', 'model #3: stopped early at round 3'])
  })

  it("without a model set, against the model's own rounds", async () => {
    const { w, run } = setup()
    const plain = { ...config, search: undefined, set: undefined, models: [3], earlyStopping: 2, validation: 0.2 }
    run.applyEvent({ ...started, config: plain } as RunEvent)
    run.applyEvent({ ...(progress([], [8, 4, undefined]) as Extract<RunEvent, { type: 'progress' }>), key: { ...key, models: 3 } })
    await flushPromises()
    expect(w.get('[data-test=live-search]').text()).toBe('early stopping: 1 of 3 models stopped before their last round')
  })
})
