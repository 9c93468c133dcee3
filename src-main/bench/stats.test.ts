import { describe, expect, it } from 'vitest'
import type { Measurement, Strategy } from '@shared/contract'
import { mlpFamily } from '@shared/families'
import { median, medianRun, summarize as summarizeFor, timingWarnings } from './stats'

const summarize = (ms: Measurement[]) => summarizeFor(ms, mlpFamily)

function m(strategy: Strategy, workers: number, repeat: number, wallMs: number, status: Measurement['status'] = 'ok'): Measurement {
  return {
    size: 1000,
    models: 4,
    workers,
    strategy,
    repeat,
    status,
    wallMs,
    startupMs: 0,
    warmupMs: 0,
    modelsTrained: 4,
    work: 4e9,
    perModel: [],
    failures: [],
    peakRssBytes: [],
  }
}

describe('stats', () => {
  it('median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([])).toBeNaN()
    // the run a repeated measurement's models are read from: the median one, of an even count the faster middle one
    expect(medianRun([175, 62, 22])).toBe(1)
    expect(medianRun([40, 10, 30, 20])).toBe(3)
    expect(medianRun([5])).toBe(0)
  })

  it('summarizes medians, min/max, speedup vs sequential and efficiency per W', () => {
    const s = summarize([
      m('sequential', 1, 0, 1000),
      m('sequential', 1, 1, 1200),
      m('sequential', 1, 2, 1100),
      m('pool', 2, 0, 600),
      m('pool', 2, 1, 550),
      m('pool', 2, 2, 580),
      m('batched', 2, 0, 100),
      m('batched', 2, 1, 110),
      m('batched', 2, 2, 90),
    ])
    const seq = s.find((e) => e.strategy === 'sequential')!
    const pool = s.find((e) => e.strategy === 'pool')!
    const batched = s.find((e) => e.strategy === 'batched')!
    expect([seq.medianMs, seq.minMs, seq.maxMs]).toEqual([1100, 1000, 1200])
    expect(seq.speedupVsSequential).toBe(1)
    expect(pool.speedupVsSequential).toBeCloseTo(1100 / 580)
    expect(pool.efficiency).toBeCloseTo(1100 / 580 / 2)
    expect(batched.speedupVsSequential).toBeCloseTo(11)
    expect(batched.workRate).toBeCloseTo(4e9 / 100 / 1e6)
  })

  it('leaves failed measurements out and has no speedup without a sequential baseline', () => {
    const s = summarize([m('pool', 2, 0, 500), m('pool', 2, 1, 10, 'failed')])
    expect(s).toHaveLength(1)
    expect(s[0].repeats).toBe(1)
    expect(s[0].speedupVsSequential).toBeNull()
  })

  it('warns about a slow first repeat and a wide spread, not about steady repeats', () => {
    expect(timingWarnings([300, 100, 105])[0]).toMatch(/first repeat 2\.9× slower/)
    expect(timingWarnings([100, 150, 100]).some((w) => /wide spread/.test(w))).toBe(true)
    expect(timingWarnings([100, 102, 101])).toEqual([])
  })
})
