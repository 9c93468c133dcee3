import { describe, expect, it } from 'vitest'
import type { Measurement } from '@shared/contract/result'
import { measurementFor } from '@shared/testing/fixtures'
import { chartSeries, costModelChart, costModelLabel, median, modelCountSeries, throughputPlateaus, workerFitChart } from './chartSeries'

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

describe('modelCountSeries and throughputPlateaus', () => {
  const at = (models: number, strategy: Measurement['strategy'], workers: number, wallMs: number, size = 1000) => ({
    ...measurementFor({ size, models, workers, strategy, repeat: 0 }),
    wallMs,
  })
  // batched: fixed cost 100 ms, then 10 ms per model: throughput rises, then flattens near 100 models/s
  const batched = [1, 2, 4, 8, 16, 32, 64, 128, 256].map((n) => at(n, 'batched', 1, 100 + 10 * n))
  const seq = [1, 2, 4, 8].map((n) => at(n, 'sequential', 1, 40 * n))

  it('is empty without two model counts at one size', () => {
    expect(modelCountSeries([at(4, 'sequential', 1, 100)]).time).toEqual([])
    expect(modelCountSeries([at(4, 'sequential', 1, 100), at(8, 'sequential', 1, 200, 2000)]).sizes).toEqual([])
  })

  it('time and throughput against N per strategy and W, at the largest size with a sweep', () => {
    const d = modelCountSeries([...batched, ...seq, at(4, 'pool', 2, 90), at(8, 'pool', 2, 170), at(8, 'sequential', 1, 999, 500)])
    expect(d.size).toBe(1000)
    expect(d.time.map((s) => s.label)).toEqual(['sequential', 'pool (W=2)', 'batched (W=1)'])
    expect(d.time[0].points).toEqual([1, 2, 4, 8].map((n) => ({ x: n, y: 40 * n })))
    // throughput = N / seconds
    expect(d.throughput[0].points.map((p) => p.y)).toEqual([25, 25, 25, 25])
    expect(d.throughput[2].points[0]).toEqual({ x: 1, y: 1 / 0.11 })
  })

  it('says from which N throughput stops rising (time linear in N past it), or that it still rises', () => {
    const d = modelCountSeries([...batched, ...seq])
    const [s, b] = throughputPlateaus(d.throughput)
    expect(s.flatFrom).toBe(1) // sequential: one model at a time, flat from the start
    // models/s: … 32 → 76, 64 → 86 (+14 %), 128 → 93 (+7 %), 256 → 96 (+4 %): flat from N = 64
    expect(b.flatFrom).toBe(64)
    expect(b.rate).toBeCloseTo(64 / 0.74)
    expect(b.falls).toBe(false)
    // a peak: 8 → 16 models takes three times as long
    const peaked = throughputPlateaus(modelCountSeries([...[1, 2, 4, 8].map((n) => at(n, 'pool', 1, 50 * n)), at(16, 'pool', 1, 2400)]).throughput)[0]
    expect(peaked).toMatchObject({ flatFrom: 8, rate: 20, falls: true })
    const rising = throughputPlateaus(modelCountSeries(batched.slice(0, 4)).throughput)[0]
    expect(rising.flatFrom).toBeNull()
    expect(rising.largestN).toBe(8)
  })
})

describe('advice charts of a side-by-side run (issue 25)', () => {
  it('name and key each cost model and worker fit by its backend, so two backends never merge', async () => {
    const { adviseFrom } = await import('@shared/advice')
    const line = (backend: 'wasm' | 'onnxruntime', strategy: 'sequential' | 'batched', workers: number, a: number, b: number) =>
      [1, 2, 4, 8]
        .filter((n) => n >= workers)
        .map((n) => ({
          size: 1000,
          models: n,
          workers,
          strategy,
          backend,
          repeats: 1,
          medianMs: a + b * n,
          minMs: 0,
          maxMs: 0,
          speedupVsSequential: null,
          efficiency: null,
          workRate: 1,
          warnings: [],
        }))
    const summary = [
      ...line('wasm', 'sequential', 1, 10, 8),
      ...line('wasm', 'batched', 1, 20, 3),
      ...line('wasm', 'batched', 2, 30, 2),
      ...line('onnxruntime', 'sequential', 1, 5, 2),
      ...line('onnxruntime', 'batched', 1, 8, 1),
      ...line('onnxruntime', 'batched', 2, 9, 0.5),
    ]
    const advice = adviseFrom({ runId: 'r', summary }, { models: 16, size: 1000 })
    const chart = costModelChart(advice.costModels)
    expect(chart.series.map((s) => s.label)).toContain('onnxruntime batched (W=2)')
    expect(new Set(chart.series.map((s) => s.id)).size).toBe(advice.costModels.length)
    const fits = workerFitChart(advice.scaling.filter((s) => s.models === 8))
    expect(fits.series.map((s) => s.label).sort()).toEqual(['onnxruntime batched measured', 'wasm batched measured'])
    expect(costModelLabel(advice.costModels[0])).toBe('wasm sequential')
  })
})
