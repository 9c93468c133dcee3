// The report's Advice section: only with a sweep or a stored check; the recommendation (the last
// verified advice's, else the run's own at its sweep), the cost models with R² and residuals, the
// worker fits, and the check table predicted against measured.
import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { adviseFrom, checkAdvice } from '@shared/advice'
import type { RunResult } from '@shared/contract/result'
import { formatDuration } from '@shared/format'
import { sweepResult } from '@shared/testing/advice-fixtures'
import { scriptedRun } from '@shared/testing/fixtures'
import ReportApp from './ReportApp.vue'

const render = (run: RunResult) => mount(ReportApp, { props: { run }, global: { stubs: { ReportChart: true } } })

describe('report: Advice section', () => {
  it('absent for a run without a sweep or a check', () => {
    const plain = (scriptedRun({ models: 4, workers: [2] }).at(-1) as { result: RunResult }).result
    expect(render(plain).find('[data-test=report-advice]').exists()).toBe(false)
  })

  it('a sweep: the recommendation at its own largest N, the fits with R² and residuals, the worker fits, three charts', () => {
    const run = sweepResult()
    const w = render(run)
    const advice = adviseFrom(run, { models: 16, size: 2000 })
    const best = advice.options[0]
    expect(w.get('[data-test=report-advice-rec]').text()).toMatch(
      new RegExp(
        `^For 16 models at 2,000 rows: batched, W=${best.workers} ≈ ${formatDuration(best.predictedMs)} \\(95 % interval .+\\); next best .+ slower \\(the intervals overlap: as good as a tie\\)\\.$`,
      ),
    )
    const rows = w.findAll('[data-test=report-cost-models] tbody tr').map((tr) => tr.findAll('td').map((td) => td.text()))
    expect(rows.map((r) => r[0])).toEqual(['sequential', 'pool (W=1)', 'pool (W=2)', 'pool (W=4)', 'batched (W=1)', 'batched (W=2)', 'batched (W=4)'])
    expect(rows[0][3]).toBe(advice.costModels[0].fit.r2!.toFixed(3))
    expect(rows[0].slice(4, 9).every((c) => /^[+−]\d+%$/.test(c))).toBe(true)
    expect(rows[0].at(-1)).toBe('yes')
    // pool W=4 was not measured at N = 1, 2
    expect(rows[3].slice(4, 6)).toEqual(['—', '—'])
    expect(w.findAll('[data-test=report-worker-fits] li').map((li) => li.text())).toEqual([
      expect.stringMatching(
        /^Worker scaling at 16 models, pool: Amdahl fit \(serial fraction σ \d\.\d\d\), R² \d\.\d\d; fastest at W = \d+( \(read off the curve past the largest W measured, 4\))?; knee at W = \d+ \(past it one more worker saves < 10 %\)\.$/,
      ),
      expect.stringMatching(/^Worker scaling at 16 models, batched: (Amdahl|USL) /),
    ])
    expect(w.findAll('[data-test=report-advice] report-chart-stub')).toHaveLength(3)
    expect(w.find('[data-test=report-advice-check]').exists()).toBe(false)
  })

  it("verified: the check's advice is the one shown, with the check table and the verdict", () => {
    const source = sweepResult()
    const advice = adviseFrom(source, { models: 100, size: 2000 })
    const [a, b] = advice.options
    const verify = {
      runId: 'verify-9',
      summary: [a, b].map((o, i) => ({
        ...source.summary[0],
        strategy: o.strategy,
        workers: o.workers,
        models: 100,
        size: 2000,
        medianMs: o.predictedMs * (i === 0 ? 1.1 : 0.5),
      })),
    }
    const check = checkAdvice(advice, verify, '2026-12-02T10:00:00Z')
    const w = render({ ...source, adviceChecks: [check] })
    expect(w.get('[data-test=report-advice-rec]').text()).toMatch(/^For 100 models at 2,000 rows: .* Verified below\.$/)
    expect(w.get('[data-test=report-advice-extrapolation]').text()).toMatch(/^EXTRAPOLATION\. Extrapolation: 100 models is 6× the largest N measured \(16\)/)
    const table = w.get('[data-test=report-advice-check]')
    expect(table.get('caption').text()).toBe(
      'Verified: 100 models at 2,000 rows, run verify-9 — predicted against measured (error = (predicted − measured) / measured)',
    )
    const rows = table.findAll('tbody tr').map((tr) => tr.findAll('th,td').map((cell) => cell.text()))
    expect(rows[0][0]).toMatch(/\(recommended\)$/)
    expect(rows[0][3]).toBe(formatDuration(a.predictedMs * 1.1))
    expect(rows[0][4]).toBe('−9 %')
    expect(rows[1][4]).toBe('+100 %')
    // the runner-up measured faster: the pick was wrong, and the report says so
    expect(w.get('[data-test=report-check-verdict]').text()).toMatch(/^Another option was faster when measured: the pick was wrong\./)
  })
})
