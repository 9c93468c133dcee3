import { describe, expect, it } from 'vitest'
import { presetConfig } from './contract'
import { leaderboardOf, leaderboardTable } from './leaderboard'
import { resultFor } from './testing/fixtures'
import { setResult } from './testing/model-set-fixtures'

describe('leaderboard', () => {
  it('ranks configurations by mean test MSE over seeds, with spread and each model\'s own time', () => {
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

  it('a fused group\'s time is shared by its models when only batched finished', () => {
    const run = setResult()
    run.measurements = run.measurements.filter((m) => m.strategy === 'batched')
    // 8 models, 2 workers, 2 configurations per worker: each (worker, configuration) group of 2 shares 400 ms
    expect(leaderboardOf(run)!.entries[0].trainMs).toBe(200)
  })

  it('a plain run has no leaderboard', () => {
    expect(leaderboardOf(resultFor(presetConfig('smoke'), []))).toBeNull()
  })
})
