// Backends side by side (issue 25) in the results: a run on wasm and cpu (sideBySideResult) draws
// one series per (backend, strategy, W) with the backend in its label and a colour and dash of its
// own, has a Backend column in the summary tables (app, compare, printed report), says each size's
// fastest backend against the other's best, the cross-backend Δ and notes, and every backend's device.
import { mount } from '@vue/test-utils'
import { createPinia } from 'pinia'
import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { optionKey, type RunResult } from '@shared/contract/result'
import { formatDuration } from '@shared/format'
import { expandPlan } from '@shared/plan'
import { measurementFor, resultFor, sideBySideResult } from '@shared/testing/fixtures'
import { verdictFor } from '@shared/verdict'
import { toDatasets } from '../composables/useChart'
import { chartSeries } from '../lib/chartSeries'
import ReportApp from '../report/ReportApp.vue'
import EnvironmentCard from './EnvironmentCard.vue'
import ResultCharts from './ResultCharts.vue'
import RunCompare from './RunCompare.vue'
import RunReport from './RunReport.vue'
import RunVerdict from './RunVerdict.vue'
import SummaryTable from './SummaryTable.vue'
import VerificationBadge from './VerificationBadge.vue'

const run = sideBySideResult({ sizes: [2000, 8000], workers: [1, 2] })
const rows = (w: ReturnType<typeof mount>, sel: string) => w.findAll(`${sel} tbody tr`).map((tr) => tr.findAll('th,td').map((c) => c.text()))

describe('charts, side by side', () => {
  it('one series per (backend, strategy, W), the backend in its label, sequential and speedups per backend', () => {
    const w = mount(ResultCharts, { props: { measurements: run.measurements, backend: 'wasm vs cpu', device: null } })
    const headers = w.findAll('[data-test=chart-time] thead th').map((t) => t.text())
    expect(headers).toEqual([
      'rows',
      'wasm sequential',
      'wasm pool (W=1)',
      'wasm pool (W=2)',
      'wasm batched (W=1)',
      'wasm batched (W=2)',
      'cpu sequential',
      'cpu pool (W=1)',
      'cpu pool (W=2)',
      'cpu batched (W=1)',
      'cpu batched (W=2)',
    ])
    expect(w.get('[data-test=chart-time] figcaption').text()).toBe('Total time vs data size — 4 models · wasm vs cpu')
    // cpu is 3× slower throughout, so each backend's speedup over its own sequential is the same
    const d = chartSeries(run.measurements)
    const speedOf = (id: string) => d.speedup.find((s) => s.id === id)!.points.map((p) => p.y)
    expect(speedOf('cpu/pool/W2')).toEqual(speedOf('wasm/pool/W2').map((y) => expect.closeTo(y, 9)))
    // the worker sweep: a series per backend and strategy, a best W for each
    expect(d.sweep.map((s) => s.label)).toEqual(['wasm pool', 'wasm batched', 'cpu pool', 'cpu batched'])
    expect(w.findAll('[data-test=best-workers] .pill').map((p) => p.text().replace(/ W=\d \(.*\)$/, ''))).toEqual([
      'wasm pool',
      'wasm batched',
      'cpu pool',
      'cpu batched',
    ])
  })

  it('each backend draws its strategies in a colour and dash of its own', () => {
    const sets = toDatasets({ series: chartSeries(run.measurements).time })
    const style = (label: string) => {
      const s = sets.find((x) => x.label === label)!
      return { color: s.borderColor, dash: JSON.stringify(s.borderDash) }
    }
    for (const strategy of ['sequential', 'pool (W=1)', 'batched (W=1)']) {
      const [a, b] = [style(`wasm ${strategy}`), style(`cpu ${strategy}`)]
      expect(a.color).not.toBe(b.color)
      expect(a.dash).not.toBe(b.dash)
    }
    // the first backend keeps the one-backend run's look
    const oneBackend = toDatasets({
      series: chartSeries(
        resultFor(
          presetConfig('smoke'),
          expandPlan(presetConfig('smoke')).map((k) => measurementFor(k)),
        ).measurements,
      ).time,
    })
    expect(style('wasm pool (W=1)').color).toBe(oneBackend.find((s) => s.label === 'pool (W=2)')!.borderColor)
  })
})

describe('summary table and verdict, side by side', () => {
  it('the summary table has a Backend column, one row per backend and option', () => {
    const w = mount(SummaryTable, { props: { summary: run.summary, rateLabel: 'GFLOP/s' } })
    expect(
      w
        .findAll('thead th')
        .map((t) => t.text())
        .slice(0, 4),
    ).toEqual(['Rows', 'Models', 'Backend', 'Strategy'])
    const body = rows(w, '[data-test=summary]')
    expect(body).toHaveLength(run.summary.length)
    expect(new Set(body.map((r) => `${r[0]}/${r[2]}/${r[3]}/${r[4]}`)).size).toBe(body.length)
    expect(body.filter((r) => r[2] === 'cpu')).toHaveLength(body.length / 2)
    expect(w.get('[data-test=summary-note]').text()).toMatch(/sequential's median on the same backend/)
    // a one-backend run keeps its columns
    const one = mount(SummaryTable, { props: { summary: run.summary.map(({ backend: _b, ...s }) => s).slice(0, 3), rateLabel: 'GFLOP/s' } })
    expect(one.find('[data-test=backend-header]').exists()).toBe(false)
  })

  it('the verdict names the fastest backend against the other one, size by size', () => {
    const w = mount(RunVerdict, { props: { result: run } })
    const headline = w.get('[data-test=verdict-headline]').text()
    expect(headline).toMatch(/^On this machine, for 4 models at 8,000 rows: wasm .*faster than cpu's best \(cpu /)
    // the other size's sentence under it (the headline is not said twice)
    expect(w.findAll('[data-test=verdict-backends] li').map((l) => l.text())).toEqual([verdictFor(run).backends[0]])
    expect(w.get('[data-test=verdict-backends]').text()).toMatch(/at 2,000 rows: wasm/)
  })
})

describe('verification and environment, side by side', () => {
  it('the badge says the cross-backend Δ and lists the pairs not compared model by model', () => {
    const notes = ['cpu vs xgboost at 2000 rows × 4 models: not compared model by model: XGBoost samples rows']
    const r = sideBySideResult({ notes })
    const w = mount(VerificationBadge, {
      props: { verification: r.verification, expectedModels: 4, status: 'ok', config: r.config, measurements: r.measurements },
    })
    expect(w.get('[data-test=verification]').classes()).toContain('verify-ok')
    expect(w.text()).toMatch(/per-model MSE agree \(max Δ 2\.1e-7; across backends max Δ 3\.2e-5\)/)
    expect(w.findAll('[data-test=verification-notes] li').map((l) => l.text())).toEqual([`Across backends, ${notes[0]}.`])
    expect(
      mount(VerificationBadge, { props: { verification: run.verification, expectedModels: 4 } })
        .find('[data-test=verification-notes]')
        .exists(),
    ).toBe(false)
  })

  it('the Environment card lists every backend compared with its device, versions and flags', () => {
    const w = mount(EnvironmentCard, { props: { environment: run.environment, capabilities: null } })
    const kv = w.findAll('dl.kv').at(0)!
    const pairs = kv.findAll('dt').map((dt, i) => [dt.text(), kv.findAll('dd')[i].text()])
    expect(pairs.slice(0, 2)).toEqual([
      ['Backend wasm', 'AMD EPYC 9654 (SIMD, 16 threads)'],
      ['Backend cpu', 'AMD EPYC 9654'],
    ])
    expect(w.text()).toMatch(/@tensorflow\/tfjs-backend-cpu\s*4\.22\.0/)
    expect(w.text()).toMatch(/wasm: WASM_HAS_SIMD_SUPPORT\s*true/)
  })

  it("History's run page shows it all: both backends in the charts, table, verdict and environment", () => {
    const w = mount(RunReport, { props: { result: run }, global: { plugins: [createPinia()], stubs: { AdvicePanel: true } } })
    expect(w.get('[data-test=chart-time] figcaption').text()).toMatch(/wasm vs cpu/)
    expect(w.findAll('[data-test=summary] tbody tr').some((tr) => tr.text().includes('cpu'))).toBe(true)
    expect(w.get('[data-test=verdict-headline]').text()).toMatch(/cpu's best/)
    expect(w.get('[data-test=environment]').text()).toMatch(/Backend cpu/)
  })
})

describe('compare and the printed report, side by side', () => {
  it('RunCompare keys rows by backend too: two backends never collide, and a wasm-only run lines up with the wasm rows', () => {
    const config = presetConfig('smoke', { sizes: [2000, 8000], workers: [1, 2], repeats: 1 })
    const wasmOnly: RunResult = {
      ...resultFor(
        config,
        expandPlan(config).map((k) => measurementFor(k, false, config)),
        { runId: 'run-wasm' },
      ),
      environment: { ...run.environment!, backends: undefined },
    }
    const w = mount(RunCompare, { props: { a: wasmOnly, b: run } })
    expect(w.get('[data-test=compare-backend-header]').text()).toBe('Backend')
    const body = rows(w, '[data-test=compare-table]')
    expect(body).toHaveLength(run.summary.length)
    const wasm = body.filter((r) => r[2] === 'wasm')
    const cpu = body.filter((r) => r[2] === 'cpu')
    expect(wasm.every((r) => r[5] !== '—' && r[6] !== '—')).toBe(true)
    // the same fake times on wasm: Δ 0; cpu only in B
    expect(wasm.every((r) => r[7] === '±0.0%')).toBe(true)
    expect(cpu.every((r) => r[5] === '—' && r[6] !== '—')).toBe(true)
    expect(w.get('[data-test=compare-shared]').text()).toMatch(new RegExp(`^${wasm.length} of ${body.length} measurements are in both runs`))
  })

  it('the printed report has Backend columns, every backend in its environment and the backend sentences', () => {
    const w = mount(ReportApp, { props: { run }, global: { stubs: { ReportChart: true } } })
    const summary = w.get('[data-test=summary-table]')
    expect(summary.get('[data-test=report-backend-header]').text()).toBe('Backend')
    const body = rows(w, '[data-test=summary-table]')
    expect(body).toHaveLength(run.summary.length)
    // keys by backend: a row per entry, the cpu rows named, strategy without the backend (its own column)
    const cpuSeq = run.summary.find((s) => s.backend === 'cpu' && s.strategy === 'sequential' && s.size === 2000)!
    expect(body).toContainEqual(expect.arrayContaining(['2,000', '4', 'cpu', 'sequential', formatDuration(cpuSeq.medianMs)]))
    const measured = rows(w, '[data-test=measurements-table]')
    expect(measured).toHaveLength(run.measurements.length)
    expect(new Set(run.measurements.map((m) => `${m.size}/${optionKey(m)}`)).size).toBe(run.measurements.length)
    expect(measured.filter((r) => r[2] === 'cpu')).toHaveLength(run.measurements.length / 2)
    const env = w.get('[data-test=environment]').text()
    expect(env).toMatch(/Backend wasm\s*AMD EPYC 9654 \(SIMD, 16 threads\)/)
    expect(env).toMatch(/Backend cpu\s*AMD EPYC 9654 \(@tensorflow\/tfjs-backend-cpu 4\.22\.0\)/)
    expect(w.findAll('[data-test=report-verdict-backend]').map((l) => l.text())).toEqual([verdictFor(run).backends[0]])
    expect(w.get('[data-test=verification]').text()).toMatch(/same work/i)
  })
})
