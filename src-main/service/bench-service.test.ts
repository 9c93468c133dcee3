// The service end to end on real worker processes (wasm, smoke sizes): the event stream a shell
// sees, progress coalescing, saving after every measurement, one run at a time.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PROGRESS_MIN_INTERVAL_MS, type RunEvent, presetConfig } from '@shared/contract'
import { NodeLauncher } from '../pool/node-launcher'
import { RunStore } from '../store/run-store'
import { BenchService } from './bench-service'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-service-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('BenchService', () => {
  it('streams run-started, phases, coalesced progress, measurements and run-finished; saves after each measurement', async () => {
    const store = new RunStore(dir)
    const service = new BenchService({ launcher: new NodeLauncher(), store, shell: 'cli', telemetry: false })
    const events: { at: number; event: RunEvent }[] = []
    const storedCounts: number[] = []
    service.onEvent((event) => {
      events.push({ at: performance.now(), event })
      if (event.type === 'measurement' && event.index === 0) {
        // the first measurement reaches the disk while the run goes on
        void (async () => {
          for (let i = 0; i < 100; i++) {
            const stored = await store.get(event.runId)
            if (stored.measurements.length >= 1) return storedCounts.push(stored.status === 'running' ? 1 : 0)
            await new Promise((r) => setTimeout(r, 10))
          }
          storedCounts.push(-1)
        })()
      }
    })
    const config = presetConfig('smoke', { backend: 'wasm', sizes: [3000], model: { epochs: 4 } })
    const { runId } = await service.start({ config })

    // one run at a time: a second start is refused with a clear message, nothing else starts
    await expect(service.start({ config })).rejects.toMatchObject({ code: 'busy', message: expect.stringMatching(/still running/) })
    const live = await service.currentRun()
    expect(live?.runId).toBe(runId)
    expect(live?.events[0]).toMatchObject({ type: 'run-started' })

    const result = await service.waitForRun(runId)
    expect(result.status).toBe('ok')
    expect(result.verification.sameWork).toBe(true)

    const types = events.map((e) => e.event.type)
    expect(types[0]).toBe('run-started')
    expect(types.at(-1)).toBe('run-finished')
    expect(types.filter((t) => t === 'measurement')).toHaveLength(3)
    expect(types.filter((t) => t === 'progress').length).toBeGreaterThan(3)

    // ≤ 20 progress events per second per run: consecutive ones at least the interval apart (timer slack allowed)
    const progressTimes = events.filter((e) => e.event.type === 'progress').map((e) => e.at)
    const gaps = progressTimes.slice(1).map((t, i) => t - progressTimes[i])
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(PROGRESS_MIN_INTERVAL_MS - 5)

    // progress carries worker lanes and one cell per model, filling up
    const progress = events.filter((e) => e.event.type === 'progress').map((e) => e.event as Extract<RunEvent, { type: 'progress' }>)
    expect(progress.every((p) => p.models.length === 4 && p.models.every((m) => m.fraction >= 0 && m.fraction <= 1))).toBe(true)
    expect(progress.some((p) => p.lanes.length > 0 && p.lanes[0].progress?.total === 4 * 5 && p.lanes[0].progress.unit === 'batch')).toBe(true)
    expect(progress.some((p) => p.modelsDone > 0 || p.models.some((m) => m.fraction > 0))).toBe(true)

    // the first measurement was on disk while the run was still going; the final run is complete
    expect(storedCounts).toEqual([1])
    const stored = await store.get(runId)
    expect(stored.status).toBe('ok')
    expect(stored.measurements).toHaveLength(3)
    expect((await service.listRuns()).find((r) => r.runId === runId)).toMatchObject({ status: 'ok', backend: 'wasm' })
    expect(await service.currentRun()).toBeNull()
  })

  it('refuses an invalid config with field issues, and an unavailable backend with the reason', async () => {
    const service = new BenchService({
      launcher: new NodeLauncher(),
      store: null,
      shell: 'cli',
      probe: async () => [
        { name: 'tensorflow', available: false, detail: 'not installed' },
        { name: 'webgpu', available: false, detail: 'no adapter' },
        { name: 'wasm', available: true, detail: 'cpu' },
        { name: 'cpu', available: true, detail: 'cpu' },
      ],
    })
    await expect(service.start({ config: { ...presetConfig('smoke'), models: [0] } })).rejects.toMatchObject({
      code: 'invalid-input',
      issues: [expect.objectContaining({ field: 'models.0' })],
    })
    await expect(service.start({ config: presetConfig('smoke', { backend: 'webgpu' }) })).rejects.toMatchObject({
      code: 'backend-unavailable',
      message: 'backend webgpu is not available here: no adapter',
    })
    await expect(service.start({ config: presetConfig('smoke', { sizes: [2_000_000], models: [1000], workers: [64], features: 4096 }) })).rejects.toMatchObject(
      {
        code: 'insufficient-memory',
      },
    )
    expect(await service.currentRun()).toBeNull()
  })
})
