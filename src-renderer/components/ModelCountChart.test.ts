// The model-count chart: time against N (log–log) per strategy and W, throughput as a second view,
// and where throughput flattens said in words from the same points.
import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { sweepResult } from '@shared/testing/advice-fixtures'
import { measurementFor } from '@shared/testing/fixtures'
import ModelCountChart from './ModelCountChart.vue'
import ResultCharts from './ResultCharts.vue'

const run = sweepResult()
const rows = (w: ReturnType<typeof mount>) => w.findAll('[data-test=chart-model-count] tbody tr').map((tr) => tr.findAll('th,td').map((c) => c.text()))

describe('ModelCountChart', () => {
  it('time against N on log–log axes, one column per strategy and W', () => {
    const w = mount(ModelCountChart, { props: { measurements: run.measurements, where: 'wasm' } })
    expect(w.get('[data-test=chart-model-count] figcaption').text()).toBe('Time vs model count — 2k rows · wasm')
    const headers = w.findAll('[data-test=chart-model-count] thead th').map((t) => t.text())
    expect(headers).toEqual(['models', 'sequential', 'pool (W=1)', 'pool (W=2)', 'pool (W=4)', 'batched (W=1)', 'batched (W=2)', 'batched (W=4)'])
    expect(rows(w).map((r) => r[0])).toEqual(['N=1', 'N=2', 'N=4', 'N=8', 'N=16'])
    // W larger than N was not measured
    expect(rows(w)[0][3]).toBe('—')
    const seq16 = run.summary.find((s) => s.strategy === 'sequential' && s.models === 16)!
    expect(rows(w)[4][1]).toBe(`${Math.round(seq16.medianMs)} ms`)
    expect(w.get('[data-test=mc-view-time]').attributes('aria-pressed')).toBe('true')
  })

  it('the throughput view: models per second, and the plateau of each series in words', async () => {
    const w = mount(ModelCountChart, { props: { measurements: run.measurements } })
    await w.get('[data-test=mc-view-throughput]').trigger('click')
    expect(w.get('[data-test=mc-view-throughput]').attributes('aria-pressed')).toBe('true')
    expect(w.get('[data-test=chart-model-count] figcaption').text()).toMatch(/^Throughput vs model count/)
    const seq16 = run.summary.find((s) => s.strategy === 'sequential' && s.models === 16)!
    expect(rows(w)[4][1]).toBe(`${(16 / (seq16.medianMs / 1000)).toPrecision(3)} models/s`)
    const lines = w.findAll('[data-test=mc-plateaus] li').map((li) => li.text())
    expect(lines).toHaveLength(7)
    // sequential trains one model at a time: flat from the start
    expect(lines[0]).toMatch(/^sequential: throughput flat from N = 1 .*one model at a time/)
    // batched W=1 in the fixture: a fixed 30 ms plus a per-model share, so it still rises at 16
    expect(lines.find((l) => l.startsWith('batched (W=1)'))).toMatch(/still rising at the largest N measured \(16/)
    // the pool with W=1 is sequential with extra steps: flat, and the text says what that means
    expect(lines.find((l) => l.startsWith('pool (W=1)'))).toMatch(/flat from N = \d+ .*the pool stops scaling/)
  })

  it('nothing without a sweep; inside ResultCharts below the other charts when there is one', () => {
    const single = [measurementFor({ size: 2000, models: 4, workers: 1, strategy: 'sequential', repeat: 0 })]
    expect(
      mount(ModelCountChart, { props: { measurements: single } })
        .find('[data-test=model-count]')
        .exists(),
    ).toBe(false)
    const charts = mount(ResultCharts, { props: { measurements: run.measurements, backend: 'wasm', device: null } })
    expect(charts.find('[data-test=chart-model-count]').exists()).toBe(true)
  })
})
