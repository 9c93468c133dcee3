// Faults on real worker processes (Node launcher, wasm, smoke sizes), through BenchService with a
// RunStore in a temp folder: a worker SIGKILLed during each strategy (policy stop and continue), a
// worker that exits with a message on stderr, a hung worker (heartbeat timeout), a worker out of
// memory (TRAINPOOL_WORKER_MAX_MEMORY_MB), an unwritable store, cancel (warm-up, measurement,
// twice) and a second run while one is running. Every test ends with no worker process alive.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type BenchConfig, type ConfigOverrides, type RunEvent, type RunResult, type Strategy, TrainpoolError, presetConfig } from '@shared/contract'
import { dispatch } from '../service/dispatch'
import { RunStore } from '../store/run-store'
import { processAlive } from '../testing/capability'
import { seededRandom } from '@shared/testing/random'
import { makeService, tempDir } from '../testing/service-harness'

const random = seededRandom(20240607)
let faults = 0
afterAll(() => console.log(`[reliability] faults injected in faults.test.ts: ${faults}`))

/** smoke shapes, long enough (epochs) that a measurement is still running when the fault lands */
function config(overrides: ConfigOverrides): BenchConfig {
  return presetConfig('smoke', { backend: 'wasm', workers: [2], ...overrides, model: { epochs: 40, ...overrides.model } })
}

function stripTelemetry(run: RunResult): unknown {
  return JSON.parse(JSON.stringify(run.measurements))
}

/** Kills one of the measurement's live workers (chosen at random) at its first progress event. */
function killOnProgress(s: ReturnType<typeof makeService>, when: (e: Extract<RunEvent, { type: 'progress' }>) => boolean): { victim: () => number | null } {
  let victim: number | null = null
  s.service.onEvent((e) => {
    if (victim !== null || e.type !== 'progress' || !when(e)) return
    const live = s.launcher.livePids
    victim = live[Math.floor(random() * live.length)]
    faults++
    process.kill(victim, 'SIGKILL')
  })
  return { victim: () => victim }
}

const STRATEGY_LIST: Strategy[] = ['sequential', 'pool', 'batched']

describe('a worker SIGKILLed mid-measurement', () => {
  for (const strategy of STRATEGY_LIST) {
    it(`${strategy}, policy stop: the run ends failed, the failure is named, finished measurements are stored, no process left`, async () => {
      const s = makeService()
      // two repeats: repeat 1 finishes and is stored, the worker dies during repeat 2
      const { runId } = await s.service.start({ config: config({ strategies: [strategy], repeats: 2, failurePolicy: 'stop' }) })
      const kill = killOnProgress(s, (e) => e.index === 1)
      const result = await s.service.waitForRun(runId)
      expect(kill.victim()).not.toBeNull()
      expect(result.status).toBe('failed')
      expect(result.measurements.map((m) => m.status)).toEqual(['ok', 'failed'])
      const failed = result.measurements[1]
      expect(failed.failures.length).toBeGreaterThanOrEqual(1)
      const f = failed.failures.find((x) => x.signal === 'SIGKILL')!
      expect(f, JSON.stringify(failed.failures)).toBeDefined()
      expect(f.reason).toMatch(/killed by SIGKILL/)
      expect(f.modelIndices.length).toBeGreaterThan(0)
      expect(typeof f.stderrTail).toBe('string')
      expect(result.error).toMatch(/SIGKILL/)
      // models that finished before the kill are kept, the killed ones are not counted
      expect(failed.modelsTrained).toBeLessThan(4)
      for (const i of f.modelIndices) expect(failed.perModel.some((p) => p.index === i)).toBe(false)
      // the store holds exactly what the service returned
      const stored = await s.store!.get(runId)
      expect(stored.status).toBe('failed')
      expect(stripTelemetry(stored)).toEqual(stripTelemetry(result))
      expect(await s.launcher.allGone()).toBe(true)
    })

    it(`${strategy}, policy continue: the failed measurement is recorded and the run goes on`, async () => {
      const s = makeService()
      const other: Strategy = strategy === 'sequential' ? 'pool' : 'sequential'
      const strategies: Strategy[] = [strategy, other]
      const { runId } = await s.service.start({ config: config({ strategies, failurePolicy: 'continue' }) })
      killOnProgress(s, (e) => e.key.strategy === strategy)
      const result = await s.service.waitForRun(runId)
      expect(result.status).toBe('failed') // a measurement failed, so the run is not ok…
      const byStrategy = (x: Strategy) => result.measurements.find((m) => m.strategy === x)!
      expect(byStrategy(strategy).status).toBe('failed')
      expect(byStrategy(strategy).failures[0]).toMatchObject({ signal: 'SIGKILL' })
      // …but it went on: the other strategy ran in full
      expect(byStrategy(other)).toMatchObject({ status: 'ok', modelsTrained: 4 })
      if (strategy === 'pool') {
        // the surviving worker went on with the queue: more models than the dead worker's job alone lost
        expect(byStrategy('pool').modelsTrained).toBeGreaterThanOrEqual(2)
      }
      expect(stripTelemetry(await s.store!.get(runId))).toEqual(stripTelemetry(result))
      expect(await s.launcher.allGone()).toBe(true)
    })
  }

  it('a worker that exits with a message: exit code and stderr tail are in the failure', async () => {
    const s = makeService({ runner: { workerEnv: { TRAINPOOL_TEST_FAULT: 'exit-at-step:5' } } })
    faults++
    const { runId } = await s.service.start({ config: config({ strategies: ['sequential'] }) })
    const result = await s.service.waitForRun(runId)
    expect(result.status).toBe('failed')
    const [f] = result.measurements[0].failures
    expect(f).toMatchObject({ exitCode: 70, signal: null, modelIndices: [0, 1, 2, 3] })
    expect(f.reason).toMatch(/exited with code 70/)
    expect(f.stderrTail).toMatch(/injected fault exit at step 5/)
    expect(await s.launcher.allGone()).toBe(true)
  })
})

describe('a hung worker', () => {
  it('is detected by the heartbeat timeout, killed and reported', async () => {
    const s = makeService({ runner: { heartbeatTimeoutMs: 2000, workerEnv: { TRAINPOOL_TEST_FAULT: 'hang-at-step:3' } } })
    faults++
    const t0 = Date.now()
    const { runId } = await s.service.start({ config: config({ strategies: ['sequential'] }) })
    const result = await s.service.waitForRun(runId)
    const elapsed = Date.now() - t0
    expect(result.status).toBe('failed')
    const [f] = result.measurements[0].failures
    expect(f.reason).toMatch(/no heartbeat for \d+ s \(timeout 2 s\): killed as hung/)
    expect(f.signal).toBe('SIGKILL')
    expect(f.stderrTail).toMatch(/injected fault hang at step 3/)
    expect(result.error).toMatch(/no heartbeat/)
    expect(elapsed).toBeLessThan(15_000)
    expect(await s.launcher.allGone()).toBe(true)
    console.log(`[reliability] hung worker detected and the run ended in ${elapsed} ms (heartbeat timeout 2000 ms)`)
  })
})

describe('a worker out of memory', () => {
  it('fails the run with a clear out-of-memory error; the service stays alive and runs again', async () => {
    // 32 MB cap (JS heap and wasm heap) against 200 000 rows × 100 features (~80 MB of floats)
    const s = makeService({ runner: { workerEnv: { TRAINPOOL_WORKER_MAX_MEMORY_MB: '32' } } })
    faults++
    const { runId } = await s.service.start({ config: config({ strategies: ['sequential'], sizes: [200_000], model: { epochs: 1 } }) })
    const result = await s.service.waitForRun(runId)
    expect(result.status).toBe('failed')
    expect(result.error).toMatch(/out of memory/)
    expect(result.error).toMatch(/memory cap is 32 MB/)
    expect(await s.launcher.allGone()).toBe(true)
    // the same service runs the next (small) run normally
    const again = await s.service.start({ config: config({ strategies: ['sequential'], model: { epochs: 1 } }) })
    const ok = await s.service.waitForRun(again.runId)
    expect(ok.status, ok.error ?? '').toBe('ok')
    expect((await s.service.listRuns()).map((r) => r.status).sort()).toEqual(['failed', 'ok'])
    expect(await s.launcher.allGone()).toBe(true)
  })
})

describe('an unwritable store', () => {
  it('the run finishes in memory with a "could not save" warning; the service keeps answering', async () => {
    const parent = tempDir('notadir')
    const file = join(parent, 'file')
    writeFileSync(file, 'a regular file where the store folder should be')
    const store = new RunStore(join(file, 'runs')) // ENOTDIR for every write, whoever runs the test
    const s = makeService({ store })
    faults++
    const { runId } = await s.service.start({ config: config({ strategies: ['sequential'], model: { epochs: 1 } }) })
    const result = await s.service.waitForRun(runId)
    expect(result.status).toBe('ok')
    expect(result.measurements).toHaveLength(1)
    expect(result.warnings.filter((w) => w.startsWith('could not save'))).toHaveLength(1)
    expect(result.warnings[0]).toMatch(/ENOTDIR/)
    expect(result.warnings[0]).toMatch(/kept in memory/)
    expect((await s.service.getRun({ runId })).measurements).toHaveLength(1)
    expect((await s.service.listRuns()).map((r) => r.runId)).toEqual([runId])
    expect(await s.launcher.allGone()).toBe(true)
  })
})

describe('cancel', () => {
  async function cancelWithin(s: ReturnType<typeof makeService>, runId: string): Promise<number> {
    const t0 = Date.now()
    const r = await s.service.cancel({ runId })
    expect(r).toEqual({ cancelled: true })
    return Date.now() - t0
  }

  it('during warm-up: clean, < 2 s, no process left', async () => {
    const s = makeService()
    // a large data set makes the warm-up (data generation + upload) last long enough to land in
    const { runId } = await s.service.start({ config: config({ strategies: ['pool'], sizes: [400_000], model: { epochs: 1 } }) })
    await new Promise<void>((resolve) => s.service.onEvent((e) => e.type === 'phase' && e.phase === 'warming' && resolve()))
    await new Promise((r) => setTimeout(r, 200))
    expect(s.events.some((e) => e.type === 'measurement')).toBe(false)
    faults++
    const ms = await cancelWithin(s, runId)
    const result = await s.service.getRun({ runId })
    expect(result.status).toBe('cancelled')
    expect(result.measurements).toEqual([])
    expect(ms).toBeLessThan(2000)
    expect(await s.launcher.allGone(500)).toBe(true)
    console.log(`[reliability] cancel during warm-up took ${ms} ms`)
  })

  it('during a measurement, and twice: clean, < 2 s, no process left, the store says cancelled', async () => {
    const s = makeService()
    const { runId } = await s.service.start({ config: config({ strategies: ['pool', 'batched'], model: { epochs: 200 } }) })
    await new Promise<void>((resolve) => s.service.onEvent((e) => e.type === 'progress' && resolve()))
    faults++
    const t0 = Date.now()
    const [a, b] = await Promise.all([s.service.cancel({ runId }), s.service.cancel({ runId })])
    const ms = Date.now() - t0
    expect(a).toEqual({ cancelled: true })
    expect([true, false]).toContain(b.cancelled)
    expect(await s.service.cancel({ runId })).toEqual({ cancelled: false }) // a third time: nothing to cancel
    expect(ms).toBeLessThan(2000)
    const result = await s.service.getRun({ runId })
    expect(result.status).toBe('cancelled')
    expect((await s.store!.get(runId)).status).toBe('cancelled')
    expect(await s.launcher.allGone(500)).toBe(true)
    console.log(`[reliability] cancel (twice, concurrently) during a measurement took ${ms} ms`)
  })
})

describe('one run at a time', () => {
  it('a second start while a run is running is refused with code busy, through the service and dispatch()', async () => {
    const s = makeService()
    const { runId } = await s.service.start({ config: config({ strategies: ['sequential'], model: { epochs: 200 } }) })
    const err = await s.service.start({ config: config({ strategies: ['sequential'] }) }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TrainpoolError)
    expect(err).toMatchObject({ code: 'busy', message: expect.stringMatching(new RegExp(`run ${runId} is still running.*one run at a time`)) })
    const viaIpc = await dispatch(s.service, 'start', { config: config({ strategies: ['sequential'] }) })
    expect(viaIpc).toMatchObject({ ok: false, error: { code: 'busy' } })
    // deleting the live run is refused too
    expect(await dispatch(s.service, 'deleteRun', { runId })).toMatchObject({ ok: false, error: { code: 'busy' } })
    expect((await s.service.listRuns()).map((r) => r.runId)).toEqual([runId])
    await s.service.cancel({ runId })
    expect(await s.launcher.allGone(500)).toBe(true)
    for (const p of s.launcher.pids) expect(processAlive(p)).toBe(false)
  })
})
