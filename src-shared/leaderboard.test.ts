import { describe, expect, it } from 'vitest'
import { presetConfig } from './contract'
import { betterText, leaderboardOf, leaderboardTable, scoreLabel, timingText } from './leaderboard'
import { resultFor } from './testing/fixtures'
import { setResult } from './testing/model-set-fixtures'

describe('leaderboard', () => {
  it("ranks configurations by mean test MSE over seeds, with spread and each model's own time", () => {
    const board = leaderboardOf(setResult())!
    expect(board.scoreKind).toBe('test')
    expect(board.entries.map((e) => [e.rank, e.configuration, e.label])).toEqual([
      [1, 3, 'max-depth 5 · eta 0.3'],
      [2, 2, 'max-depth 5 · eta 0.1'],
      [3, 1, 'max-depth 3 · eta 0.3'],
      [4, 0, 'max-depth 3 · eta 0.1'],
    ])
    const best = board.entries[0]
    expect(best.models).toBe(2)
    expect(best.params).toEqual({ maxDepth: 5, eta: 0.3 })
    expect(best.score.mean).toBeCloseTo(0.65, 10)
    expect(best.score.std).toBeCloseTo(Math.SQRT2 * 0.01, 10)
    // read from the sequential measurement: each model's own time
    expect(best.trainMs).toBe(200)
    const t = leaderboardTable(board, { seeds: 2, folds: null })
    expect(t.title).toBe('Leaderboard at 2,000 rows, ranked by test MSE over 2 seeds, best first')
    expect(t.header).toEqual(['rank', 'configuration', 'test MSE', 'time/model'])
    expect(t.rows[0]).toEqual(['1 (best)', 'max-depth 5 · eta 0.3', '0.6500 ± 0.014', '200 ms'])
  })

  it('with folds, ranks by validation MSE and shows the test MSE beside it', () => {
    const board = leaderboardOf(setResult({ folds: 3 }))!
    expect(board.scoreKind).toBe('validation')
    expect(board.entries[0]).toMatchObject({ configuration: 3, models: 6 })
    expect(board.entries[0].score.mean).toBeCloseTo(0.6 + 0.002, 10)
    expect(leaderboardTable(board, { seeds: 2, folds: 3 }).header).toEqual(['rank', 'configuration', 'validation MSE', 'test MSE', 'time/model'])
  })

  it("a fused group's time is shared by its models when only batched finished", () => {
    const run = setResult()
    run.measurements = run.measurements.filter((m) => m.strategy === 'batched')
    // 8 models, 2 workers, 2 configurations per worker: each (worker, configuration) group of 2 shares 400 ms
    expect(leaderboardOf(run)!.entries[0].trainMs).toBe(200)
  })

  describe('a measurement repeated to reach the time floor (runs 175, 62, 22 ms: its time is the median, 62 ms)', () => {
    /** the set's run with its sequential measurement repeated; `perModelRun` as the runner records it (absent: an older file) */
    function repeated(perModelRun?: number) {
      const run = setResult()
      const sequential = run.measurements.find((m) => m.strategy === 'sequential')!
      Object.assign(sequential, { runsMs: [175, 62, 22], wallMs: 62 }, perModelRun === undefined ? {} : { perModelRun })
      return run
    }

    it('times per model from the median run are its own, and the board says so', () => {
      const board = leaderboardOf(repeated(1))!
      expect(board.timing).toEqual({ run: 1, runs: 3, runMs: 62, reportedMs: 62, scaled: false })
      expect(board.entries[0].trainMs).toBe(200)
      expect(leaderboardTable(board, { seeds: 2, folds: null }).title).toBe(
        'Leaderboard at 2,000 rows, ranked by test MSE over 2 seeds, best first; time per model from run 2 of 3 (62 ms), the median run',
      )
    })

    it("an older file's first-run times are scaled to the median run, and the board says so", () => {
      const board = leaderboardOf(repeated())!
      expect(board.timing).toEqual({ run: 0, runs: 3, runMs: 175, reportedMs: 62, scaled: true })
      // the models' times agree with the time reported: 200 ms in a 175 ms run → 200 × 62/175 in the 62 ms one
      expect(board.entries[0].trainMs).toBeCloseTo((200 * 62) / 175, 10)
      expect(timingText(board.timing)).toBe('time per model from run 1 of 3 (175 ms), scaled to the median 62 ms')
    })

    it('a measurement that ran once has its own times and no word about runs', () => {
      const board = leaderboardOf(setResult())!
      expect(board.timing).toBeNull()
      expect(leaderboardTable(board, { seeds: 2, folds: null }).title).not.toMatch(/run/)
    })
  })

  it('a plain run has no leaderboard', () => {
    expect(leaderboardOf(resultFor(presetConfig('smoke'), []))).toBeNull()
  })

  describe('a classifier ranks by its primary metric, in the direction of that metric', () => {
    const order = (run: Parameters<typeof leaderboardOf>[0]) => leaderboardOf(run)!.entries.map((e) => e.configuration)

    it('log loss (the default for classifiers): lowest first, on the held-out rows with folds; the columns name the metrics', () => {
      const run = setResult({ objective: 'binary', folds: 3 })
      const board = leaderboardOf(run)!
      expect(board.task).toMatchObject({ objective: 'binary', classes: ['0', '1'], metric: 'logloss', auto: true })
      expect(order(run)).toEqual([3, 2, 1, 0])
      // validation log loss of configuration 3: its mean 0.3, and the folds' wobble (0, 0.002, 0.004) averaged
      expect(board.entries[0].score.mean).toBeCloseTo(0.3 + 0.002, 10)
      expect(scoreLabel(board)).toBe('validation log loss')
      const t = leaderboardTable(board, { seeds: 2, folds: 3 })
      expect(t.title).toBe('Leaderboard at 2,000 rows, ranked by validation log loss over 3 folds × 2 seeds, best first')
      expect(t.header).toEqual(['rank', 'configuration', 'validation log loss', 'validation accuracy', 'validation ROC AUC', 'test log loss', 'time/model'])
      const [rank, label, loss, accuracy, auc, testLoss] = t.rows[0]
      expect([rank, label]).toEqual(['1 (best)', 'max-depth 5 · eta 0.3'])
      expect([loss, accuracy, auc, testLoss].map((x) => Number(x.split(' ± ')[0]))).toEqual([0.302, 0.848, 0.948, 0.352])
    })

    it('accuracy: highest first (not the order log loss gives)', () => {
      const run = setResult({ objective: 'binary', folds: 3, metric: 'accuracy' })
      expect(order(run)).toEqual([2, 3, 1, 0])
      const board = leaderboardOf(run)!
      expect(board.entries[0].score.mean).toBeCloseTo(0.9 - 0.002, 10)
      expect(leaderboardTable(board, { seeds: 2, folds: 3 }).header.slice(2, 6)).toEqual([
        'validation accuracy',
        'validation log loss',
        'validation ROC AUC',
        'test accuracy',
      ])
      expect(betterText(board.task.metric)).toBe('higher is better')
    })

    it('ROC AUC without folds: highest test AUC first; the test metrics beside it', () => {
      const run = setResult({ objective: 'binary', metric: 'auc' })
      expect(order(run)).toEqual([3, 1, 2, 0])
      const t = leaderboardTable(leaderboardOf(run)!, { seeds: 2, folds: null })
      expect(t.title).toBe('Leaderboard at 2,000 rows, ranked by test ROC AUC over 2 seeds, best first')
      expect(t.header).toEqual(['rank', 'configuration', 'test ROC AUC', 'test log loss', 'test accuracy', 'time/model'])
    })

    it('multiclass: log loss and accuracy, no AUC', () => {
      const run = setResult({ objective: 'multiclass', folds: 3 })
      const board = leaderboardOf(run)!
      expect(board.task.classes).toEqual(['0', '1', '2', '3', '4'])
      expect(order(run)).toEqual([3, 2, 1, 0])
      expect(leaderboardTable(board, { seeds: 2, folds: 3 }).header).toEqual([
        'rank',
        'configuration',
        'validation log loss',
        'validation accuracy',
        'test log loss',
        'time/model',
      ])
    })

    it('a configuration with no score in the metric ranks last and shows a dash', () => {
      const run = setResult({ objective: 'binary', metric: 'auc' })
      // configuration 3 (the best by AUC) held one class only in its test rows: no AUC
      for (const m of run.measurements) for (const p of m.perModel) if (p.configuration === 3) delete p.metrics!.auc
      expect(order(run)).toEqual([1, 2, 0, 3])
      const t = leaderboardTable(leaderboardOf(run)!, { seeds: 2, folds: null })
      expect(t.rows[3].slice(1, 3)).toEqual(['max-depth 5 · eta 0.3', '—'])
    })

    it('a run without a task (from before classifiers) is regression ranked by test MSE', () => {
      const board = leaderboardOf(setResult())!
      expect(board.task).toEqual({ objective: 'regression', classes: [], metric: 'mse', auto: false })
      expect(scoreLabel(board)).toBe('test MSE')
      expect(betterText('mse')).toBe('lower is better')
    })
  })
})
