// A halving search's chart: one line per configuration through the rungs it trained in, the rung
// cuts as vertical lines (drawn by the cut plugin), the metric named; nothing for a grid.
import { mount } from '@vue/test-utils'
import { describe, expect, it, vi } from 'vitest'
import { halvingResult, setResult } from '@shared/testing/model-set-fixtures'
import { cutLinesPlugin } from '../composables/useChart'
import ScoreCharts from '../components/ScoreCharts.vue'
import { rungChart } from './rungChart'

describe('rungChart', () => {
  it('draws each configuration through its rungs, with a cut after every rung but the last', () => {
    const chart = rungChart(halvingResult())!
    expect(chart.title).toBe("Validation MSE vs rounds, by configuration: successive halving's rungs")
    expect(chart.yLabel).toBe('validation MSE (mean over folds)')
    expect(chart.series.map((s) => [s.label, s.points.map((p) => p.x)])).toEqual([
      ['max-depth 3 · eta 0.1', [2]],
      ['max-depth 3 · eta 0.3', [2]],
      ['max-depth 5 · eta 0.1', [2, 4]],
      ['max-depth 5 · eta 0.3', [2, 4, 10]],
    ])
    expect(chart.series[3].points.map((p) => p.y)).toEqual([0.7, 0.65, 0.6].map((v) => expect.closeTo(v, 12)))
    expect(chart.cuts).toEqual([
      { x: 2, label: '4 → 2' },
      { x: 4, label: '2 → 1' },
    ])
    expect(chart.marks).toEqual({ label: 'last rung: max-depth 5 · eta 0.3', points: [{ x: 10, y: 0.6 }] })
    expect(chart.legend).toBe(true)
  })

  it('a grid has no rungs to chart', () => {
    expect(rungChart(setResult({ folds: 3 }))).toBeNull()
  })

  it('shows beside the score charts, its data table giving each configuration at each rung', () => {
    const w = mount(ScoreCharts, { props: { result: halvingResult() } })
    const panel = w.get('[data-test=rung-chart]')
    expect(panel.get('figcaption').text()).toBe("Validation MSE vs rounds, by configuration: successive halving's rungs")
    expect(panel.findAll('tbody th').map((th) => th.text())).toEqual(['2', '4', '10'])
    expect(
      panel
        .findAll('tbody tr')[2]
        .findAll('td')
        .map((td) => td.text()),
    ).toEqual(['—', '—', '—', '0.6000'])
  })
})

describe('cutLinesPlugin', () => {
  it('draws a dashed vertical line and its label at each cut inside the plot', () => {
    const ctx = {
      save: vi.fn(),
      restore: vi.fn(),
      setLineDash: vi.fn(),
      beginPath: vi.fn(),
      moveTo: vi.fn(),
      lineTo: vi.fn(),
      stroke: vi.fn(),
      fillText: vi.fn(),
    }
    const chart = { ctx, chartArea: { left: 0, right: 100, top: 10, bottom: 90 }, scales: { x: { getPixelForValue: (x: number) => x * 10 } } }
    const cuts = [
      { x: 2, label: '4 → 2' },
      { x: 50, label: 'outside' },
    ]
    const draw = cutLinesPlugin.afterDatasetsDraw as unknown as (chart: unknown, args: unknown, options: unknown) => void
    draw(chart, {}, { cuts })
    expect(ctx.moveTo.mock.calls).toEqual([[20, 10]])
    expect(ctx.lineTo.mock.calls).toEqual([[20, 90]])
    expect(ctx.fillText.mock.calls).toEqual([['4 → 2', 23, 12]])
  })
})
