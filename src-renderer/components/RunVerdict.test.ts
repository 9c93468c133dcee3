// The result in words (the report's verdict), the timing warnings folded into one line, and the
// summary table without inline warnings and with efficiency for the pool only.
import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import type { RunResult } from '@shared/contract/result'
import { expandPlan } from '@shared/plan'
import { measurementFor, resultFor, scriptedRun } from '@shared/testing/fixtures'
import { meanMetric } from '@shared/leaderboard'
import { halvingResult } from '@shared/testing/model-set-fixtures'
import { verdictFor } from '@shared/verdict'
import RunVerdict from './RunVerdict.vue'
import SummaryTable from './SummaryTable.vue'

const config = presetConfig('quick', { sizes: [2000, 5000], models: [8], workers: [1, 2], repeats: 2 })
const base = resultFor(
  config,
  expandPlan(config).map((k) => measurementFor(k, false, config)),
)
const SPREAD = 'wide spread: max−min is 65% of the median (a busy or throttled machine?)'
/** 7 of the 10 summary entries noisy, their warnings repeated in the run's list as the service does, plus one other warning */
function noisyRun(): RunResult {
  const summary = base.summary.map((s, i) => ({ ...s, warnings: i < 7 ? [SPREAD] : [] }))
  const echoed = summary.flatMap((s) => s.warnings.map((w) => `${s.strategy} W=${s.workers} at ${s.size} rows: ${w}`))
  return { ...base, summary, warnings: [...echoed, 'could not save the run to /tmp/x: disk full (results are kept in memory; export them before closing)'] }
}

describe('RunVerdict', () => {
  it("says the report's verdict, word for word", () => {
    const w = mount(RunVerdict, { props: { result: base } })
    const v = verdictFor(base)
    expect(w.get('[data-test=verdict-headline]').text()).toBe(v.headline)
    expect(w.findAll('[data-test=verdict-lines] li').map((li) => li.text())).toEqual([...v.perSize, ...v.workers])
    expect(v.headline).toMatch(/fastest|speedup/)
  })

  it('timing warnings: one line "7 of 10 measurements noisy", details folded; other warnings as they are', () => {
    const w = mount(RunVerdict, { props: { result: noisyRun() } })
    const folded = w.get('[data-test=timing-warnings]')
    expect(folded.element.tagName).toBe('DETAILS')
    expect(folded.attributes('open')).toBeUndefined()
    expect(w.get('[data-test=timing-warnings-line]').text()).toBe('7 of 10 measurements noisy: add repeats or close other programs')
    expect(folded.findAll('li')).toHaveLength(7)
    expect(folded.findAll('li')[0].text()).toMatch(/^sequential at 2,000 rows: wide spread/)
    // the run's list echoes the summary's warnings: those are not shown a second time
    expect(w.findAll('[data-test=run-warnings] li').map((li) => li.text())).toEqual([
      '⚠ could not save the run to /tmp/x: disk full (results are kept in memory; export them before closing)',
    ])
    expect(w.get('[data-test=repeats-note]').text()).toMatch(/^Only 2 repeats per measurement/)
  })

  it('no warning line when nothing was noisy', () => {
    const w = mount(RunVerdict, { props: { result: { ...base, config: { ...base.config, repeats: 3 } } } })
    expect(w.find('[data-test=timing-warnings]').exists()).toBe(false)
    expect(w.find('[data-test=repeats-note]').exists()).toBe(false)
  })
})

describe('SummaryTable', () => {
  it('marks a noisy median instead of writing its warning into the row; efficiency only for the pool', () => {
    const r = noisyRun()
    const w = mount(SummaryTable, { props: { summary: r.summary, rateLabel: 'GFLOP/s' } })
    const rows = w.findAll('tbody tr').map((tr) => tr.findAll('td').map((td) => td.text()))
    expect(w.text()).not.toContain('wide spread: max−min is 65% of the median (a busy or throttled machine?) ')
    expect(w.findAll('[data-test=noisy-mark]')).toHaveLength(7)
    for (const [i, row] of rows.entries()) {
      const s = r.summary[i]
      if (s.strategy === 'pool') expect(row[8]).toBe(`${Math.round(s.efficiency! * 100)}%`)
      else expect(row[8], `${s.strategy} W=${s.workers}`).toBe('—')
    }
    expect(w.get('[data-test=summary-note]').text()).toMatch(/left out for batched/)
  })
})

describe("RunVerdict: a classifier's objective", () => {
  it("says the objective, its classes and the metric under the headline; a regression run's verdict has none", () => {
    const task = { objective: 'binary' as const, classes: ['no', 'yes'], metric: 'logloss' as const, auto: true }
    const w = mount(RunVerdict, { props: { result: { ...base, task } } })
    expect(w.get('[data-test=verdict-task]').text()).toBe(
      'Objective: binary (2 classes: no, yes), read from the target; the models are ranked and compared by log loss.',
    )
    expect(
      mount(RunVerdict, { props: { result: base } })
        .find('[data-test=verdict-task]')
        .exists(),
    ).toBe(false)
  })
})

describe("SummaryTable: a classifier's scores", () => {
  it('adds the mean test score in each metric of the objective, the primary first; a regression summary has none', () => {
    const finished = (scriptedRun({ objective: 'binary', models: 4, workers: [2] }).at(-1) as { result: RunResult }).result
    const w = mount(SummaryTable, { props: { summary: finished.summary, rateLabel: 'GFLOP/s', task: finished.task, measurements: finished.measurements } })
    expect(w.findAll('[data-test=score-header]').map((h) => h.text())).toEqual(['Test log loss', 'Test accuracy', 'Test ROC AUC'])
    const sequential = finished.measurements.find((m) => m.strategy === 'sequential')!
    const row = w.findAll('tbody tr').find((r) => r.findAll('td')[2].text() === 'sequential')!
    expect(
      row
        .findAll('td')
        .slice(-3)
        .map((td) => Number(td.text())),
    ).toEqual((['logloss', 'accuracy', 'auc'] as const).map((metric) => Number(meanMetric(sequential.perModel, metric)!.toPrecision(4))))
    expect(w.get('[data-test=summary-note]').text()).toMatch(/Test scores: the mean over the models on the test rows; ranked by log loss\.$/)
    const plain = mount(SummaryTable, { props: { summary: base.summary, rateLabel: 'GFLOP/s', task: undefined, measurements: base.measurements } })
    expect(plain.find('[data-test=score-header]').exists()).toBe(false)
  })
})

describe('RunVerdict: a search (issue 39)', () => {
  it("says halving's rungs and how much of the grid's rounds it trained, in the CLI summary's words", () => {
    const w = mount(RunVerdict, { props: { result: halvingResult() } })
    // 12 models × 2 rounds + 6 × 4 + 6 × 10 of 24 × 10: the first measurement at the largest size (sequential)
    expect(w.findAll('[data-test=verdict-search] li').map((li) => li.text())).toEqual([
      "search halving: factor 2 on the validation MSE (3 folds) · rungs 4 configurations × 2 rounds → 2 × 4 rounds → 1 × 10 rounds · trained 45 % of the grid's rounds (108 of 240, sequential at 2000 rows)",
    ])
  })

  it('a grid run says no search', () => {
    expect(
      mount(RunVerdict, { props: { result: base } })
        .find('[data-test=verdict-search]')
        .exists(),
    ).toBe(false)
  })
})
