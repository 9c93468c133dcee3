// The one FakeService behaves as the tests that lean on it assume: it follows the event stream like
// the service, records every call, fails and answers as told, and its bridge view validates requests
// and rejects with the bridges' plain error shape.
import { describe, expect, it } from 'vitest'
import { TrainpoolError } from '../vocabulary/errors'
import type { RunEvent } from '../contract/events'
import { fakeBridge, FakeService } from './fake-service'
import { scriptedRun } from './fixtures'
import { presetConfig } from '../contract/config'
import { CHURN_SHA, churnDataSet } from './data-sets'

describe('FakeService', () => {
  it('follows the scripted stream: run-started makes the live run, its events are replayed, run-finished ends it', async () => {
    const service = new FakeService()
    const seen: RunEvent[] = []
    const off = service.onEvent((e) => seen.push(e))
    const events = scriptedRun({ runId: 'r1' })
    service.play(events.slice(0, 5))
    expect(await service.currentRun()).toEqual({ runId: 'r1', events: events.slice(0, 5) })
    expect(await service.cancel({ runId: 'other' })).toEqual({ cancelled: false })
    expect(await service.cancel({})).toEqual({ cancelled: true })
    service.play(events.slice(5))
    expect(await service.currentRun()).toBeNull()
    expect(seen).toEqual(events)
    off()
    expect(service.listenerCount()).toBe(0)
  })

  it('start makes a live run; stored runs are listed, read, renamed, tagged, exported and deleted; unknown ids are not-found', async () => {
    const service = new FakeService({ runId: 'mine' })
    expect(await service.start({ config: presetConfig('smoke') })).toEqual({ runId: 'mine' })
    expect(await service.currentRun()).toEqual({ runId: 'mine', events: [] })
    const finished = (scriptedRun({ runId: 'done' }).at(-1) as Extract<RunEvent, { type: 'run-finished' }>).result
    service.addRun(finished)
    expect((await service.listRuns()).map((r) => r.runId)).toEqual(['done'])
    expect(await service.getRun({ runId: 'done' })).toBe(finished)
    expect(await service.renameRun({ runId: 'done', name: 'base' })).toMatchObject({ runId: 'done', name: 'base' })
    expect((await service.renameRun({ runId: 'done', name: '' })).name).toBeUndefined()
    expect((await service.tagRun({ runId: 'done', tags: ['a'] })).tags).toEqual(['a'])
    expect((await service.getRun({ runId: 'done' })).tags).toEqual(['a'])
    expect(await service.exportRun({ runId: 'done', format: 'csv' })).toMatchObject({ fileName: 'trainpool-done.csv', mimeType: 'text/csv' })
    expect(await service.deleteRun({ runId: 'done' })).toEqual({ deleted: true })
    for (const call of [() => service.getRun({ runId: 'done' }), () => service.reportPdf({ runId: 'nope' })]) {
      await expect(call()).rejects.toMatchObject({ code: 'not-found', message: expect.stringMatching(/^no run /) })
    }
    expect(service.calls.map((c) => c.method)).toEqual([
      'start',
      'currentRun',
      'listRuns',
      'getRun',
      'renameRun',
      'renameRun',
      'tagRun',
      'getRun',
      'exportRun',
      'deleteRun',
      'getRun',
      'reportPdf',
    ])
  })

  it('records synchronously; fail() rejects the next calls only; respond() replaces a method (shutdown too)', async () => {
    const service = new FakeService()
    service.fail('listRuns', new Error('disk on fire'), 2)
    const pending = service.listRuns()
    expect(service.callsTo('listRuns')).toEqual([undefined])
    await expect(pending).rejects.toThrow('disk on fire')
    await expect(service.listRuns()).rejects.toThrow('disk on fire')
    expect(await service.listRuns()).toEqual([])
    let release!: () => void
    service.respond('shutdown', () => new Promise<void>((r) => (release = r)))
    let done = false
    void service.shutdown().then(() => (done = true))
    await Promise.resolve()
    expect(done).toBe(false)
    release()
    await new Promise((r) => setTimeout(r, 0))
    expect(done).toBe(true)
    expect(service.callsTo('shutdown')).toHaveLength(1)
  })
})

describe('fakeBridge', () => {
  it('validates requests against the API table (an invalid one never reaches the service) and parses them as dispatch() does', async () => {
    const service = new FakeService()
    const bridge = fakeBridge(service)
    await expect(bridge.getRun({ runId: '../x' })).rejects.toMatchObject({ name: 'TrainpoolError', code: 'invalid-input' })
    expect(service.calls).toEqual([])
    await bridge.tagRun({ runId: 'x', tags: [' a ', 'a', ''] }).catch(() => {})
    expect(service.callsTo('tagRun')).toEqual([{ runId: 'x', tags: ['a'] }])
  })

  it("rejects with the bridges' plain error shape (issues kept); onMenuCommand only with { menu: true }", async () => {
    const service = new FakeService().fail('start', new TrainpoolError('insufficient-memory', 'too big', [{ field: 'sizes', message: 'needs 40 GiB' }]))
    const err = await fakeBridge(service)
      .start({ config: presetConfig('smoke') })
      .catch((e: unknown) => e)
    expect(err).not.toBeInstanceOf(Error)
    expect(err).toEqual({ name: 'TrainpoolError', code: 'insufficient-memory', message: 'too big', issues: [{ field: 'sizes', message: 'needs 40 GiB' }] })
    expect(fakeBridge(service).onMenuCommand).toBeUndefined()
    const bridge = fakeBridge(service, { menu: true })
    const got: string[] = []
    const off = bridge.onMenuCommand!((c) => got.push(c))
    bridge.sendMenuCommand('history')
    off()
    bridge.sendMenuCommand('run')
    expect(got).toEqual(['history'])
    expect(bridge.menuListenerCount()).toBe(0)
  })
})

describe('FakeService: classifier runs', () => {
  it("start resolves the task as the service does: from a generated target, or from the cached set's target column; a misfit is refused naming its field", async () => {
    const service = new FakeService().addDataSet(churnDataSet())
    await service.start({ config: presetConfig('smoke', { target: 'multiclass', classes: 4 }) })
    expect(service.startedTask).toEqual({ objective: 'multiclass', classes: ['0', '1', '2', '3'], metric: 'logloss', auto: true })
    const data = { sha256: CHURN_SHA, name: 'churn.csv', target: 'churn', features: null, exclude: [], impute: 'none' as const }
    await service.start({ config: presetConfig('smoke', { data, metric: 'auc' }) })
    expect(service.startedTask).toEqual({ objective: 'binary', classes: ['no', 'yes'], metric: 'auc', auto: true })
    const refused = await service.start({ config: presetConfig('smoke', { data, objective: 'multiclass' }) }).catch((e: TrainpoolError) => e)
    expect(refused).toBeInstanceOf(TrainpoolError)
    expect((refused as TrainpoolError).issues).toEqual([
      { field: 'objective', message: expect.stringMatching(/^objective multiclass needs 3 to 32 classes; churn has 2/) },
    ])
    // a regression run as before classifiers
    await service.start({ config: presetConfig('smoke') })
    expect(service.startedTask).toEqual({ objective: 'regression', classes: [], metric: 'mse', auto: true })
  })

  it('a scripted classifier run: run-started and the result carry the task, every model its metrics', () => {
    const events = scriptedRun({ objective: 'binary', models: 3 })
    const started = events[0] as Extract<RunEvent, { type: 'run-started' }>
    const task = { objective: 'binary', classes: ['0', '1'], metric: 'logloss', auto: true }
    expect(started.task).toEqual(task)
    const { result } = events.at(-1) as Extract<RunEvent, { type: 'run-finished' }>
    expect(result.task).toEqual(task)
    const p = result.measurements[0].perModel[1]
    expect(Object.keys(p.metrics!).sort()).toEqual(['accuracy', 'auc', 'logloss', 'mse'])
    expect(p.testMse).toBe(p.metrics!.mse)
    expect(
      Object.keys((scriptedRun({ objective: 'multiclass' }).at(-1) as Extract<RunEvent, { type: 'run-finished' }>).result.measurements[0].perModel[0].metrics!),
    ).not.toContain('auc')
    // a regression script is as it was: no task, no metrics
    const plain = (scriptedRun().at(-1) as Extract<RunEvent, { type: 'run-finished' }>).result
    expect(plain).not.toHaveProperty('task')
    expect(plain.measurements[0].perModel[0]).not.toHaveProperty('metrics')
  })
})
