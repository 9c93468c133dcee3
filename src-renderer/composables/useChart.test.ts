import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { defineComponent, h, nextTick, ref } from 'vue'
import type { LineChartInput, Series } from '../lib/chartSeries'
import { singleXAxis, toDatasets, useLineChart } from './useChart'

const series = (strategy: Series['strategy'], workers: number | null, ys: number[]): Series => ({
  id: `${strategy}/${workers}`,
  label: workers == null ? strategy : `${strategy} (W=${workers})`,
  strategy,
  workers,
  points: ys.map((y, i) => ({ x: (i + 1) * 1000, y })),
})

describe('toDatasets', () => {
  it('distinguishes strategies by dash pattern and point style, not only colour', () => {
    const sets = toDatasets({ series: [series('sequential', null, [1]), series('pool', 2, [1]), series('batched', 2, [1])] })
    const dashes = sets.map((s) => JSON.stringify(s.borderDash))
    const points = sets.map((s) => s.pointStyle)
    expect(new Set(dashes).size).toBe(3)
    expect(new Set(points).size).toBe(3)
  })

  it('a second worker count of the same strategy gets its own dash and point style', () => {
    const sets = toDatasets({ series: [series('pool', 2, [1]), series('pool', 5, [1])] })
    expect(sets[0].borderColor).toBe(sets[1].borderColor)
    expect(JSON.stringify(sets[0].borderDash)).not.toBe(JSON.stringify(sets[1].borderDash))
    expect(sets[0].pointStyle).not.toBe(sets[1].pointStyle)
  })

  it('adds marks as a separate star dataset without a line', () => {
    const sets = toDatasets({ series: [series('pool', 2, [1])], marks: { label: 'best W', points: [{ x: 2, y: 1 }] } })
    expect(sets).toHaveLength(2)
    expect(sets[1]).toMatchObject({ label: 'best W', pointStyle: 'star', showLine: false })
  })
})

describe('useLineChart', () => {
  it('tolerates a canvas without a 2-D context and still tracks the data it would draw', async () => {
    const input = ref<LineChartInput>({ title: 't', series: [], xLabel: 'x', yLabel: 'y' })
    let state: ReturnType<typeof useLineChart> | undefined
    const C = defineComponent({
      setup() {
        const canvas = ref<HTMLCanvasElement | null>(null)
        state = useLineChart(canvas, () => input.value)
        return () => h('canvas', { ref: canvas })
      },
    })
    const w = mount(C)
    expect(state!.drawn).toBe(false)
    input.value = { ...input.value, series: [series('pool', 2, [5, 6])] }
    await nextTick()
    expect(state!.updates).toBe(1)
    expect(state!.lastDatasets[0].data).toEqual([
      { x: 1000, y: 5 },
      { x: 2000, y: 6 },
    ])
    w.unmount()
  })
})

describe('singleXAxis', () => {
  it('centres a lone x value (one data size) and leaves several alone', () => {
    const one: Series[] = [{ id: 'sequential/1', label: 'a', strategy: 'sequential', workers: 1, points: [{ x: 2000, y: 1 }] }]
    expect(singleXAxis(one)).toEqual({ min: 1000, max: 3000, value: 2000 })
    const two = [
      {
        ...one[0],
        points: [
          { x: 2000, y: 1 },
          { x: 5000, y: 2 },
        ],
      },
    ]
    expect(singleXAxis(two)).toBeNull()
  })
})

describe('a reference level (sequential in the worker sweep)', () => {
  it('is one dashed line across the whole W range, without points, labelled', () => {
    const pool = { ...series('pool', null, [300, 200, 250]), points: [1, 2, 4].map((x, i) => ({ x, y: [300, 200, 250][i] })) }
    const sets = toDatasets({ series: [pool], reference: { label: 'sequential (1 worker, reference)', y: 400 } })
    const ref = sets.find((s) => s.label === 'sequential (1 worker, reference)')!
    expect(ref.data).toEqual([
      { x: 1, y: 400 },
      { x: 4, y: 400 },
    ])
    expect(ref.pointRadius).toBe(0)
    expect(ref.borderDash).toEqual([6, 4])
  })
})

describe('toDatasets: fits and several mark sets', () => {
  it('draws measured points without lines, fitted curves as lines without points, each mark set on its own', () => {
    const sets = toDatasets({
      series: [series('pool', null, [300, 170])],
      pointsOnly: true,
      curves: [{ ...series('pool', null, [310, 160, 120]), id: 'pool/fit', label: 'pool Amdahl fit' }],
      marks: [
        { label: 'fastest W (fit)', points: [{ x: 3000, y: 120 }] },
        { label: 'knee', pointStyle: 'crossRot', color: '#7c3aed', points: [{ x: 2000, y: 160 }] },
        { label: 'empty', points: [] },
      ],
    })
    expect(sets.map((s) => s.label)).toEqual(['pool', 'pool Amdahl fit', 'fastest W (fit)', 'knee'])
    expect(sets[0]).toMatchObject({ showLine: false })
    expect(sets[1]).toMatchObject({ pointRadius: 0, borderColor: sets[0].borderColor })
    expect(sets[1].showLine).toBeUndefined()
    expect(sets[2]).toMatchObject({ pointStyle: 'star', showLine: false })
    expect(sets[3]).toMatchObject({ pointStyle: 'crossRot', borderColor: '#7c3aed', showLine: false })
  })
})
