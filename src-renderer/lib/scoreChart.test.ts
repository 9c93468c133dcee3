import { describe, expect, it } from 'vitest'
import { gbdtFamily, mlpFamily } from '@shared/families'
import { leaderboardOf } from '@shared/leaderboard'
import { setResult } from '@shared/testing/model-set-fixtures'
import { scoreCharts } from './scoreChart'

describe('score charts', () => {
  it('one chart per varied field: a line per value of the other field, the best starred', () => {
    const run = setResult()
    const charts = scoreCharts(leaderboardOf(run)!, gbdtFamily.fields, run.config.set!)
    expect(charts.map((c) => c.input.title)).toEqual(['Test MSE vs max-depth', 'Test MSE vs eta'])
    const depth = charts[0].input
    expect(depth.series.map((s) => s.label)).toEqual(['eta 0.3', 'eta 0.1'])
    expect(depth.series[0].points.map((p) => p.x)).toEqual([3, 5])
    expect(depth.series[0].points[1].y).toBeCloseTo(0.65, 10)
    expect(depth.marks).toEqual({ label: 'best: max-depth 5 · eta 0.3', points: [{ x: 5, y: expect.closeTo(0.65, 10) }] })
  })

  it('a list field is placed by position and labelled with its value', () => {
    const run = setResult()
    const set = { grid: { hidden: [[32], [64, 32]] }, seeds: 2, folds: null }
    run.config = { ...run.config, model: { ...mlpFamily.defaults }, set, models: [4] }
    for (const m of run.measurements) m.perModel = m.perModel.slice(0, 4).map((p) => ({ ...p, configuration: Math.floor(p.index / 2) }))
    const [chart] = scoreCharts(leaderboardOf(run)!, mlpFamily.fields, set)
    expect(chart.input.series[0].points.map((p) => p.x)).toEqual([0, 1])
    expect([0, 1].map(chart.formatX)).toEqual(['32', '64,32'])
  })

  it("a classifier's charts name its metric on the title and the axis", () => {
    const run = setResult({ objective: 'binary', folds: 3, metric: 'auc' })
    const charts = scoreCharts(leaderboardOf(run)!, gbdtFamily.fields, run.config.set!)
    expect(charts.map((c) => c.input.title)).toEqual(['Validation ROC AUC vs max-depth', 'Validation ROC AUC vs eta'])
    expect(charts[0].input.yLabel).toBe('validation ROC AUC (mean over folds)')
    // the best (starred) is the highest AUC: max-depth 5 · eta 0.3
    expect(charts[0].input.marks).toEqual({ label: 'best: max-depth 5 · eta 0.3', points: [{ x: 5, y: expect.closeTo(0.95 - 0.002, 10) }] })
  })
})
