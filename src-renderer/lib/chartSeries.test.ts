import { describe, expect, it } from 'vitest'
import type { Measurement } from '@shared/contract/result'
import { measurementFor } from '@shared/testing/fixtures'
import { chartSeries, median } from './chartSeries'

const m = (size: number, strategy: Measurement['strategy'], workers: number, repeat: number, wallMs: number, models = 4) => ({
  ...measurementFor({ size, models, workers, strategy, repeat }),
  wallMs,
})

describe('chartSeries', () => {
  it('median of odd and even lists', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([])).toBeNaN()
  })

  it('is empty before any measurement', () => {
    const d = chartSeries([])
    expect(d.time).toEqual([])
    expect(d.models).toBeNull()
  })

  it('adds a point per size as measurements arrive, with medians over repeats', () => {
    const ms = [m(1000, 'sequential', 1, 0, 100)]
    let d = chartSeries(ms)
    expect(d.time).toHaveLength(1)
    expect(d.time[0].points).toEqual([{ x: 1000, y: 100 }])
    expect(d.speedup).toEqual([])

    ms.push(m(1000, 'pool', 2, 0, 60), m(1000, 'sequential', 1, 1, 120), m(1000, 'sequential', 1, 2, 110))
    d = chartSeries(ms)
    const seq = d.time.find((s) => s.strategy === 'sequential')!
    expect(seq.points).toEqual([{ x: 1000, y: 110 }])
    const pool = d.time.find((s) => s.strategy === 'pool')!
    expect(pool.label).toBe('pool (W=2)')
    expect(pool.points).toEqual([{ x: 1000, y: 60 }])
    expect(d.speedup[0].points[0].y).toBeCloseTo(110 / 60)

    ms.push(m(5000, 'sequential', 1, 0, 500))
    d = chartSeries(ms)
    expect(d.time.find((s) => s.strategy === 'sequential')!.points.map((p) => p.x)).toEqual([1000, 5000])
  })

  it('ignores failed and cancelled measurements', () => {
    const bad = { ...m(1000, 'pool', 2, 0, 5), status: 'failed' as const }
    const d = chartSeries([m(1000, 'sequential', 1, 0, 100), bad])
    expect(d.time.map((s) => s.strategy)).toEqual(['sequential'])
  })

  it('builds a worker sweep with the best W marked when several worker counts exist', () => {
    const ms = [
      m(2000, 'sequential', 1, 0, 400),
      m(2000, 'pool', 1, 0, 410),
      m(2000, 'pool', 2, 0, 220),
      m(2000, 'pool', 4, 0, 250),
      m(2000, 'batched', 1, 0, 90),
      m(2000, 'batched', 2, 0, 70),
      m(2000, 'batched', 4, 0, 80),
    ]
    const d = chartSeries(ms)
    expect(d.sweepSize).toBe(2000)
    const pool = d.sweep.find((s) => s.strategy === 'pool')!
    expect(pool.points.map((p) => p.x)).toEqual([1, 2, 4])
    expect(d.bestWorkers).toEqual([
      { strategy: 'pool', workers: 2, ms: 220 },
      { strategy: 'batched', workers: 2, ms: 70 },
    ])
    // sequential is one worker whatever W is: a labelled reference level, not points at W=1, 2, 4
    expect(d.sweep.map((s) => s.strategy)).toEqual(['pool', 'batched'])
    expect(d.sweepReference).toEqual({ label: 'sequential (1 worker, reference)', y: 400 })
  })

  it('has no sweep with a single worker count', () => {
    const d = chartSeries([m(2000, 'sequential', 1, 0, 400), m(2000, 'pool', 2, 0, 220)])
    expect(d.sweep).toEqual([])
    expect(d.bestWorkers).toEqual([])
  })

  it('shows one model count at a time, the largest by default', () => {
    const ms = [m(1000, 'sequential', 1, 0, 100, 4), m(1000, 'sequential', 1, 0, 900, 8)]
    expect(chartSeries(ms).models).toBe(8)
    expect(chartSeries(ms).time[0].points[0].y).toBe(900)
    expect(chartSeries(ms, { models: 4 }).time[0].points[0].y).toBe(100)
    expect(chartSeries(ms).modelCounts).toEqual([4, 8])
  })
})
