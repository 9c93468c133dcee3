// The rung line's words: a count of one is singular (the lanes said "18 models to 1 rounds" and
// "1 configurations left" when a first rung trained one round or a cut left one configuration).
import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { liveSearch } from './liveSearch'

/** 2 configurations, one model each, 4 rounds, halving by 2 from 1 round: rungs 2 × 1 → 1 × 4 */
const config = presetConfig('smoke', {
  backend: 'cpu',
  models: [2],
  set: { grid: { maxDepth: [1, 2] }, seeds: 1, folds: null },
  search: { method: 'halving', factor: 2, minRounds: 1 },
  model: { kind: 'gbdt', rounds: 4 } as never,
})
const plan = [
  { configurations: 2, rounds: 1 },
  { configurations: 1, rounds: 4 },
]

describe('liveSearch: the rung line', () => {
  it('says one round, one model and one configuration in the singular', () => {
    expect(liveSearch(config, plan, { index: 0, seen: [] }, [])!.text).toBe('rung 1 of 2 · 2 of 2 configurations · 2 models to 1 round')
    expect(liveSearch(config, plan, { index: 1, seen: [] }, [])!.text).toBe(
      'rung 2 of 2 · 1 of 2 configurations · 1 model to 4 rounds · 1 configuration left at the cuts',
    )
  })
})
