// The leaderboard as the Run view, History and the printed report show it: the shared ranking's
// rows, best first and marked; nothing for a plain run.
import { mount } from '@vue/test-utils'
import { createPinia } from 'pinia'
import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { resultFor } from '@shared/testing/fixtures'
import { halvingResult, setResult } from '@shared/testing/model-set-fixtures'
import LeaderboardTable from './LeaderboardTable.vue'
import RunReport from './RunReport.vue'

describe('LeaderboardTable', () => {
  it("ranks a model set's configurations, best first and marked", () => {
    const w = mount(LeaderboardTable, { props: { result: setResult({ folds: 3 }) } })
    expect(w.get('[data-test=leaderboard-title]').text()).toBe('Leaderboard at 2,000 rows, ranked by validation MSE over 3 folds × 2 seeds, best first')
    expect(w.findAll('th').map((th) => th.text())).toEqual(['rank', 'configuration', 'validation MSE', 'test MSE', 'time/model'])
    const best = w
      .get('[data-test=leaderboard-best]')
      .findAll('td')
      .map((td) => td.text())
    expect(best.slice(0, 2)).toEqual(['1 (best)', 'max-depth 5 · eta 0.3'])
    expect(w.findAll('[data-test=leaderboard-row]').map((r) => r.findAll('td')[1].text())).toEqual([
      'max-depth 5 · eta 0.1',
      'max-depth 3 · eta 0.3',
      'max-depth 3 · eta 0.1',
    ])
  })

  it("shows in a run's report (History), and not for a plain run", () => {
    const global = { plugins: [createPinia()] }
    expect(
      mount(RunReport, { props: { result: setResult() }, global })
        .find('[data-test=leaderboard]')
        .exists(),
    ).toBe(true)
    expect(
      mount(RunReport, { props: { result: resultFor(presetConfig('smoke'), []) }, global })
        .find('[data-test=leaderboard]')
        .exists(),
    ).toBe(false)
  })
})

describe("LeaderboardTable: a classifier's board", () => {
  it('ranks by the validation log loss, lowest first; its columns name the metrics', () => {
    const w = mount(LeaderboardTable, { props: { result: setResult({ objective: 'binary', folds: 3 }) } })
    expect(w.get('[data-test=leaderboard-title]').text()).toBe('Leaderboard at 2,000 rows, ranked by validation log loss over 3 folds × 2 seeds, best first')
    expect(w.findAll('th').map((th) => th.text())).toEqual([
      'rank',
      'configuration',
      'validation log loss',
      'validation accuracy',
      'validation ROC AUC',
      'test log loss',
      'time/model',
    ])
    expect(w.get('[data-test=leaderboard-best]').findAll('td')[1].text()).toBe('max-depth 5 · eta 0.3')
  })

  it('ranked by accuracy, highest first', () => {
    const w = mount(LeaderboardTable, { props: { result: setResult({ objective: 'multiclass', folds: 3, metric: 'accuracy' }) } })
    expect(w.findAll('th').map((th) => th.text())).toEqual([
      'rank',
      'configuration',
      'validation accuracy',
      'validation log loss',
      'test accuracy',
      'time/model',
    ])
    expect([w.get('[data-test=leaderboard-best]'), ...w.findAll('[data-test=leaderboard-row]')].map((r) => r.findAll('td')[1].text())).toEqual([
      'max-depth 5 · eta 0.1',
      'max-depth 5 · eta 0.3',
      'max-depth 3 · eta 0.3',
      'max-depth 3 · eta 0.1',
    ])
  })
})

describe('LeaderboardTable: a search that stopped configurations (issue 39)', () => {
  it("gives each configuration's last rung and rounds trained under halving", () => {
    const w = mount(LeaderboardTable, { props: { result: halvingResult() } })
    expect(w.findAll('th').map((th) => th.text())).toEqual(['rank', 'configuration', 'validation MSE', 'test MSE', 'last rung', 'rounds', 'time/model'])
    const rows = [w.get('[data-test=leaderboard-best]'), ...w.findAll('[data-test=leaderboard-row]')].map((r) => r.findAll('td').map((td) => td.text()))
    expect(rows.map((r) => [r[1], r[4], r[5]])).toEqual([
      ['max-depth 5 · eta 0.3', '3 of 3', '10'],
      ['max-depth 5 · eta 0.1', '2 of 3', '4'],
      ['max-depth 3 · eta 0.3', '1 of 3', '2'],
      ['max-depth 3 · eta 0.1', '1 of 3', '2'],
    ])
  })

  it('gives the rounds and best round of early-stopped models, a range where they differ', () => {
    const run = setResult({ folds: 3 })
    run.config.earlyStopping = 3
    for (const m of run.measurements) m.perModel = m.perModel.map((p) => ({ ...p, roundsTrained: 6 + (p.index % 3), bestRound: 3 + (p.index % 3) }))
    const w = mount(LeaderboardTable, { props: { result: run } })
    expect(w.findAll('th').map((th) => th.text())).toEqual(['rank', 'configuration', 'validation MSE', 'test MSE', 'rounds', 'best round', 'time/model'])
    expect(
      w
        .get('[data-test=leaderboard-best]')
        .findAll('td')
        .map((td) => td.text())
        .slice(4, 6),
    ).toEqual(['6–8', '3–5'])
  })
})
