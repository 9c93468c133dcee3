// Measurements long enough to trust (issue 25): a measurement shorter than MEASUREMENT_FLOOR.minMs
// runs again on the same warm workers until its runs have lasted the floor (or maxRuns); its time is
// the median run, every run is recorded, the models and their times are that median run's
// (perModelRun), and the live hooks count each model once. A measurement that is long enough runs once, as before.
import { describe, expect, it } from 'vitest'
import { MEASUREMENT_FLOOR, presetConfig } from '@shared/contract'
import { builtInWorkerFamilies } from '../engine/families'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchRunner } from './runner'
import { median, medianRun } from './stats'
import { verify } from './verify'

describe('the measurement floor', () => {
  it('a short measurement is run until it has lasted the floor; the median run is its time; models and hooks count once', async () => {
    const config = { ...presetConfig('smoke', { backend: 'cpu', models: [3], workers: [2] }), sizes: [60] }
    const done = new Map<number, number>()
    const outcome = await new BenchRunner(new InProcessLauncher(builtInWorkerFamilies), config, {
      onModelDone: (k) => done.set(k, (done.get(k) ?? 0) + 1),
    }).run()
    expect(outcome.status).toBe('ok')
    for (const [k, m] of outcome.measurements.entries()) {
      expect(m.runsMs!.length).toBeGreaterThan(1)
      const total = m.runsMs!.reduce((a, b) => a + b, 0)
      expect(total >= MEASUREMENT_FLOOR.minMs || m.runsMs!.length === MEASUREMENT_FLOOR.maxRuns).toBe(true)
      // the last run was needed: without it the runs fell short of the floor
      expect(total - m.runsMs!.at(-1)!).toBeLessThan(MEASUREMENT_FLOOR.minMs)
      expect(m.wallMs).toBe(median(m.runsMs!))
      // the models' times are the median run's, the run whose time is reported
      expect(m.perModelRun).toBe(medianRun(m.runsMs!))
      if (m.strategy === 'sequential') {
        const trained = m.perModel.reduce((a, p) => a + (p.trainMs ?? 0), 0)
        expect(trained).toBeLessThanOrEqual(m.runsMs![m.perModelRun!])
      }
      expect(m.perModel.map((p) => p.index)).toEqual([0, 1, 2])
      expect(done.get(k)).toBe(3)
    }
    expect(verify(config, outcome.measurements).sameWork).toBe(true)
  })

  it('a measurement that lasts the floor runs once, with no runs recorded', async () => {
    const config = {
      ...presetConfig('smoke', { backend: 'cpu', models: [2], workers: [1], model: { epochs: 8 } }),
      sizes: [2000],
      strategies: ['sequential' as const],
    }
    const outcome = await new BenchRunner(new InProcessLauncher(builtInWorkerFamilies), config).run()
    expect(outcome.status).toBe('ok')
    const [m] = outcome.measurements
    expect(m.wallMs).toBeGreaterThanOrEqual(MEASUREMENT_FLOOR.minMs)
    expect(m.runsMs).toBeUndefined()
  })
})
