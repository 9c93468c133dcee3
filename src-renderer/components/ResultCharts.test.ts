import { flushPromises, mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import type { Measurement } from '@shared/contract/result'
import { measurementFor, scriptedRun } from '@shared/testing/fixtures'
import ResultCharts from './ResultCharts.vue'

const stream = scriptedRun({ models: 4, sizes: [2000, 8000], workers: [1, 2], strategies: ['sequential', 'pool', 'batched'] })
const finished = stream.filter((e) => e.type === 'measurement').map((e) => (e as { measurement: Measurement }).measurement)

function tableRows(w: ReturnType<typeof mount>, test: string) {
  return w.findAll(`[data-test=${test}] tbody tr`).map((tr) => tr.findAll('th,td').map((c) => c.text()))
}

describe('ResultCharts', () => {
  it('receives points as measurements finish', async () => {
    const w = mount(ResultCharts, { props: { measurements: [], backend: 'webgpu', device: 'NVIDIA H200' } })
    expect(w.find('[data-test=charts-empty]').exists()).toBe(true)
    expect(tableRows(w, 'chart-time')).toEqual([])

    await w.setProps({ measurements: finished.slice(0, 1) })
    expect(finished[0].strategy).toBe('sequential')
    expect(tableRows(w, 'chart-time')).toEqual([['2,000', `${Math.round(finished[0].wallMs)} ms`]])
    expect(w.find('[data-test=chart-speedup]').exists()).toBe(false)

    await w.setProps({ measurements: finished.slice(0, 2) })
    expect(tableRows(w, 'chart-time')[0]).toHaveLength(3)
    expect(w.find('[data-test=chart-speedup]').exists()).toBe(true)

    await w.setProps({ measurements: finished })
    await flushPromises()
    const rows = tableRows(w, 'chart-time')
    expect(rows.map((r) => r[0])).toEqual(['2,000', '8,000'])
    const headers = w.findAll('[data-test=chart-time] thead th').map((t) => t.text())
    expect(headers).toEqual(['rows', 'sequential', 'pool (W=1)', 'pool (W=2)', 'batched (W=1)', 'batched (W=2)'])
  })

  it('names backend and device in every chart title and labels the canvas for screen readers', async () => {
    const w = mount(ResultCharts, { props: { measurements: finished, backend: 'webgpu', device: 'NVIDIA H200' } })
    const panels = w.findAll('figure.chart-panel')
    expect(panels).toHaveLength(3)
    for (const p of panels) {
      expect(p.get('figcaption').text()).toMatch(/webgpu on NVIDIA H200/)
      const canvas = p.get('canvas')
      expect(canvas.attributes('role')).toBe('img')
      expect(canvas.attributes('aria-label')).toMatch(/webgpu on NVIDIA H200\. \w.* → \d/)
      expect(p.find('table').exists()).toBe(true)
    }
  })

  it('titles have no dangling separators while backend or device are not known', () => {
    const one = finished.slice(0, 1)
    const cap = (backend: string | null, device: string | null) =>
      mount(ResultCharts, { props: { measurements: one, backend, device } })
        .get('[data-test=chart-time] figcaption')
        .text()
    expect(cap(null, null)).toBe('Total time vs data size — 4 models')
    expect(cap('wasm', null)).toBe('Total time vs data size — 4 models · wasm')
    expect(cap('wasm', 'AMD EPYC 9654')).toBe('Total time vs data size — 4 models · wasm on AMD EPYC 9654')
    for (const t of [cap(null, null), cap('wasm', null)]) expect(t).not.toMatch(/— ·|· —|·\s*$|—\s*$|pending/)
    const withFamily = mount(ResultCharts, { props: { measurements: one, backend: 'cpu', device: null, family: 'GBDT' } })
    expect(withFamily.get('[data-test=chart-time] figcaption').text()).toBe('Total time vs data size — 4 GBDT models · cpu')
  })

  it('no empty chart frame without measurements; the message says why once the run is over', () => {
    const live = mount(ResultCharts, { props: { measurements: [], backend: 'wasm', device: null, status: 'running' } })
    expect(live.find('figure.chart-panel').exists()).toBe(false)
    expect(live.get('[data-test=charts-empty]').text()).toBe('Charts fill in as measurements finish.')
    const cancelled = mount(ResultCharts, { props: { measurements: [], backend: 'wasm', device: null, status: 'cancelled' } })
    expect(cancelled.get('[data-test=charts-empty]').text()).toBe('No measurement finished before the run was cancelled.')
  })

  it('shows the worker sweep with the best W when several worker counts exist', () => {
    const w = mount(ResultCharts, { props: { measurements: finished, backend: 'cpu', device: null } })
    expect(w.get('[data-test=chart-sweep] figcaption').text()).toMatch(/Worker sweep at 8k rows/)
    expect(tableRows(w, 'chart-sweep').map((r) => r[0])).toEqual(['W=1', 'W=2'])
    // fixture timings: more workers are faster for the pool
    expect(w.get('[data-test=best-workers]').text()).toMatch(/pool W=2/)
  })

  it('speedup table holds median(sequential) / median(strategy)', () => {
    const ms = [
      { ...measurementFor({ size: 1000, models: 4, workers: 2, strategy: 'sequential', repeat: 0 }), wallMs: 400 },
      { ...measurementFor({ size: 1000, models: 4, workers: 2, strategy: 'batched', repeat: 0 }), wallMs: 100 },
    ]
    const w = mount(ResultCharts, { props: { measurements: ms, backend: 'cpu', device: 'x' } })
    expect(tableRows(w, 'chart-speedup')).toEqual([['1,000', '4.00×']])
  })
})
