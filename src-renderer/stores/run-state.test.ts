// The run's rules on a plain RunState, without Pinia or a bridge (the store's own tests: stores.test.ts).
import { describe, expect, it } from 'vitest'
import { scriptedRun } from '@shared/testing/fixtures'
import type { RunEvent } from '@shared/contract/events'
import { expandPlan } from '@shared/plan'
import {
  applyEvent,
  currentLoss,
  emptyRunState,
  isBusy,
  LOSS_HISTORY_MAX,
  resetRun,
  runElapsedMs,
  runEtaMs,
  runFraction,
  showStoredRun,
  startAnswered,
  startRefused,
  startRequested,
  type RunState,
} from './run-state'

type Of<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>
const T0 = Date.parse('2026-12-02T09:00:00.000Z')

function replay(events: readonly RunEvent[], s: RunState = emptyRunState(0)): RunState {
  for (const [i, e] of events.entries()) applyEvent(s, e, T0 + i)
  return s
}

const events = scriptedRun({ models: 4, workers: [2] })
const started = events[0] as Of<'run-started'>
const finished = events[events.length - 1] as Of<'run-finished'>
const progressOf = (index: number) => events.filter((e): e is Of<'progress'> => e.type === 'progress' && e.index === index)

describe('applyEvent', () => {
  it('returns the state it was given, changed in place', () => {
    const s = emptyRunState(0)
    expect(applyEvent(s, started, T0)).toBe(s)
    expect(s.now).toBe(T0)
  })

  it('run-started begins the run from a clean state: its id, config, plan and start time', () => {
    const s = replay([started])
    expect([s.status, s.runId, s.startedAtMs, s.joined]).toEqual(['running', 'run-1', T0, true])
    expect(s.plan).toEqual(started.plan)
    expect(s.config).toBe(started.config)
  })

  it('a run this page asked for is not joined; an unreadable start time is the time it arrived', () => {
    const s = emptyRunState(0)
    startRequested(s)
    applyEvent(s, { ...started, startedAt: 'not a time' }, 1234)
    expect([s.joined, s.startedAtMs]).toEqual([false, 1234])
  })

  it('progress fills the live part and the loss history; a later measurement starts it afresh', () => {
    const s = replay([started, ...progressOf(0)])
    const last = progressOf(0).at(-1)!
    expect([s.currentIndex, s.furthestMeasurement, s.modelsDone, s.measurementElapsedMs]).toEqual([0, 1, last.modelsDone, last.elapsedMs])
    expect(s.lanes).toBe(last.lanes)
    expect(s.lossHistory.length).toBeGreaterThan(0)
    const next = progressOf(1)[0]
    applyEvent(s, next, T0)
    const loss = currentLoss(next.models, next.lanes)
    expect([s.currentIndex, s.furthestMeasurement, s.lossHistory]).toEqual([1, 2, loss == null ? [] : [loss]])
  })

  it('a late progress of an earlier measurement is ignored: the counter never goes back', () => {
    const s = replay([started, progressOf(0)[0], progressOf(1)[0]])
    const before = { ...s }
    applyEvent(s, progressOf(0).at(-1)!, T0)
    expect([s.currentIndex, s.furthestMeasurement, s.lanes, s.models]).toEqual([1, 2, before.lanes, before.models])
  })

  it(`keeps the last ${LOSS_HISTORY_MAX} losses`, () => {
    const s = replay([started])
    const p = progressOf(0)[0]
    const lane = { worker: 0, modelIndices: [0], progress: { done: 1, total: 2, unit: 'epoch' as const, loss: 0 } }
    for (let i = 0; i < LOSS_HISTORY_MAX + 5; i++) applyEvent(s, { ...p, lanes: [{ ...lane, progress: { ...lane.progress, loss: i } }] }, T0)
    expect(s.lossHistory).toHaveLength(LOSS_HISTORY_MAX)
    expect([s.lossHistory[0], s.lossHistory.at(-1)]).toEqual([5, LOSS_HISTORY_MAX + 4])
  })

  it('a measurement counts; a cancelled one marks done only the models it trained', () => {
    const ok = events.find((e): e is Of<'measurement'> => e.type === 'measurement' && e.index === 0)!
    const s = replay([started, ...progressOf(0), ok])
    expect(s.measurements).toEqual([ok.measurement])
    expect(s.models.every((c) => c.done)).toBe(true)

    const t = replay([started, progressOf(1)[0]])
    const cut = { ...ok.measurement, status: 'cancelled' as const, perModel: ok.measurement.perModel.slice(0, 1) }
    applyEvent(t, { type: 'measurement', runId: 'run-1', index: 1, measurement: cut }, T0)
    expect(t.models.map((c) => c.done)).toEqual([
      true,
      ...progressOf(1)[0]
        .models.slice(1)
        .map((c) => c.done),
    ])
    expect(t.modelsDone).toBe(t.models.filter((c) => c.done).length)
  })

  it('ignores the events of another run, until another run starts', () => {
    const s = replay(events.slice(0, 12))
    const before = { ...s }
    for (const e of events.slice(12, 20)) applyEvent(s, { ...e, runId: 'run-2' } as RunEvent, T0)
    expect({ ...s, now: before.now }).toEqual(before)
    applyEvent(s, { ...started, runId: 'run-2' }, T0)
    expect([s.runId, s.measurements, s.lanes, s.models, s.status]).toEqual(['run-2', [], [], [], 'running'])
  })

  it('telemetry samples accumulate; the result brings its own', () => {
    const sample = (t: number) => ({ t, phase: 'sequential', gpu: [], workers: [] }) as never
    const gpu = { state: 'ok' as const, message: '' }
    const s = replay([started])
    applyEvent(s, { type: 'telemetry', runId: 'run-1', gpu, samples: [sample(0), sample(1)] }, T0)
    applyEvent(s, { type: 'telemetry', runId: 'run-1', gpu, samples: [sample(1), sample(2)] }, T0)
    expect(s.telemetry?.samples.map((x) => (x as { t: number }).t)).toEqual([0, 1, 2])
    applyEvent(s, { ...finished, result: { ...finished.result, telemetry: { intervalMs: 1000, maxSamples: 10, gpu, samples: [sample(9)] } } }, T0)
    expect(s.telemetry?.samples).toEqual([sample(9)])
  })

  it('run-finished ends the run: the result, its status, the measurements; no live part left behind', () => {
    const s = replay(events)
    expect([s.status, s.result, s.measurements, s.finishedAtMs]).toEqual([
      'ok',
      finished.result,
      finished.result.measurements,
      Date.parse(finished.result.finishedAt!),
    ])
    expect([s.lanes, s.models, s.lossHistory, s.currentIndex, s.phase]).toEqual([[], [], [], null, null])
    expect(isBusy(s)).toBe(false)
  })

  it("a result still 'running' (its writer died) is interrupted; its error and plan come with it", () => {
    const s = emptyRunState(0)
    const r = { ...finished.result, status: 'running' as const, finishedAt: null, error: 'worker died' }
    applyEvent(s, { type: 'run-finished', runId: 'run-1', result: r }, 42)
    expect([s.status, s.finishedAtMs, s.error]).toEqual(['interrupted', 42, { code: 'internal', message: 'worker died' }])
    expect(s.plan).toEqual(expandPlan(r.config))
  })
})

describe('starting, resetting and showing a stored run', () => {
  it('a start answered before its run-started shows the run as running with its id', () => {
    const s = emptyRunState(0)
    startRequested(s)
    expect([s.status, isBusy(s)]).toEqual(['starting', true])
    startAnswered(s, 'run-7', started.config, 99)
    expect([s.status, s.runId, s.startedAtMs, s.joined, s.plan]).toEqual(['running', 'run-7', 99, false, []])
  })

  it('a refused start keeps the error and is not busy', () => {
    const s = emptyRunState(0)
    startRequested(s)
    startRefused(s, { code: 'busy', message: 'a run is already in progress' })
    expect([s.status, s.error?.message, isBusy(s)]).toEqual(['error', 'a run is already in progress', false])
  })

  it('resetRun leaves nothing of the run, but the same state as a fresh one', () => {
    const s = replay(events)
    s.lastRun = null
    expect(resetRun(s)).toEqual(emptyRunState(s.now))
  })

  it('a stored run is shown finished, from its own start time, and no longer offered', () => {
    const s = emptyRunState(0)
    s.lastRun = { entry: {} as never, finishedAtMs: 1 }
    showStoredRun(s, finished.result, 5)
    expect([s.status, s.runId, s.startedAtMs, s.lastRun, s.plan.length]).toEqual(['ok', 'run-1', T0, null, started.plan.length])
    showStoredRun(s, { ...finished.result, startedAt: '' }, 5)
    expect(s.startedAtMs).toBe(s.finishedAtMs)
  })
})

describe('derived: progress, elapsed time, ETA', () => {
  it('the fraction counts finished measurements and the current one’s cells; a finished run is full', () => {
    const s = replay([started])
    expect(runFraction(s)).toBe(0)
    replay(events.slice(1, events.indexOf(progressOf(1)[0]) + 1), s)
    const cells = progressOf(1)[0].models
    const inCurrent = cells.reduce((a, c) => a + c.fraction, 0) / cells.length
    expect(runFraction(s)).toBeCloseTo((1 + inCurrent) / started.plan.length)
    applyEvent(s, finished, T0)
    expect(runFraction(s)).toBe(1)
  })

  it('elapsed runs to now while running, to the end once finished; the ETA only while busy', () => {
    const s = replay(events.slice(0, events.indexOf(progressOf(1).at(-1)!) + 1))
    s.now = T0 + 10_000
    expect(runElapsedMs(s)).toBe(10_000)
    const f = runFraction(s)
    expect(runEtaMs(s)).toBeCloseTo((10_000 * (1 - f)) / f)
    applyEvent(s, finished, T0 + 20_000)
    expect(runElapsedMs(s)).toBe(Date.parse(finished.result.finishedAt!) - T0)
    expect(runEtaMs(s)).toBeNull()
  })
})

describe('currentLoss', () => {
  const lane = (loss: number | undefined, models = [0]) => ({ worker: 0, modelIndices: models, progress: { done: 1, total: 2, unit: 'epoch' as const, loss } })
  const cell = (loss: number | null) => ({ fraction: 0.5, done: false, loss }) as never

  it('is the mean over lanes training a model, else over the cells, else none', () => {
    expect(currentLoss([cell(9)], [lane(1), lane(3), lane(100, []), lane(NaN)])).toBe(2)
    expect(currentLoss([cell(4), cell(null), cell(6)], [lane(undefined)])).toBe(5)
    expect(currentLoss([], [])).toBeNull()
  })
})

describe("the run's task", () => {
  it('comes with run-started, then the result; a stored run from before classifiers is regression ranked by MSE', () => {
    const events = scriptedRun({ objective: 'binary' })
    const s = replay(events.slice(0, 1))
    expect(s.task).toEqual({ objective: 'binary', classes: ['0', '1'], metric: 'logloss', auto: true })
    replay(events.slice(1), s)
    expect(s.task).toEqual(s.result!.task)
    const old = (scriptedRun().at(-1) as Of<'run-finished'>).result
    showStoredRun(s, old, T0)
    expect(s.task).toEqual({ objective: 'regression', classes: [], metric: 'mse', auto: false })
    expect(resetRun(s).task).toBeNull()
  })

  it("before run-started (or from a service that sends none), generated data has its target's task; the user's data none yet", () => {
    const s = emptyRunState(0)
    const started = scriptedRun({ objective: 'multiclass' })[0] as Of<'run-started'>
    startRequested(s)
    startAnswered(s, 'run-1', started.config, T0)
    expect(s.task).toMatchObject({ objective: 'multiclass', metric: 'logloss' })
    const { task: _sent, ...withoutTask } = started
    replay([withoutTask], resetRun(s))
    expect(s.task).toMatchObject({ objective: 'multiclass', classes: ['0', '1', '2', '3', '4'] })
    const data = { sha256: 'c'.repeat(64), name: 'churn.csv', target: 'churn', features: null, exclude: [], impute: 'none' as const }
    replay([{ ...withoutTask, config: { ...started.config, target: 'teacher', data } }], resetRun(s))
    expect(s.task).toBeNull()
  })
})
