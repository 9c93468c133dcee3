import { describe, expect, it } from 'vitest'
import { type Measurement, type Strategy, presetConfig } from '@shared/contract'
import { verify } from './verify'

const config = presetConfig('smoke') // 2000 rows × 4 models, all strategies
function m(strategy: Strategy, mses: number[], extra: Partial<Measurement> = {}): Measurement {
  return {
    size: 2000,
    models: 4,
    workers: strategy === 'sequential' ? 1 : 2,
    strategy,
    repeat: 0,
    status: 'ok',
    wallMs: 1,
    startupMs: 0,
    warmupMs: 0,
    modelsTrained: mses.length,
    work: 1,
    failures: [],
    peakRssBytes: [],
    perModel: mses.map((testMse, index) => ({ index, seed: 43 + index, trainMs: 1, groupTrainMs: null, testMse, finalLoss: null, worker: 0 })),
    ...extra,
  }
}

describe('verify', () => {
  const mses = [0.5, 0.6, 0.7, 0.8]
  it('passes when every strategy trained all models and the MSEs agree within tolerance', () => {
    const v = verify(config, [
      m('sequential', mses),
      m('pool', mses),
      m(
        'batched',
        mses.map((x) => x * (1 + 3e-7)),
      ),
    ])
    expect(v.sameWork).toBe(true)
    expect(v.maxRelMseDiff).toBeCloseTo(3e-7, 9)
    expect(v.modelsTrained).toEqual({ sequential: 4, pool: 4, batched: 4 })
  })

  it('fails loudly when a model disagrees beyond the tolerance', () => {
    const v = verify(config, [m('sequential', mses), m('pool', mses), m('batched', [0.5, 0.6, 0.71, 0.8])])
    expect(v.sameWork).toBe(false)
    expect(v.problems.join('\n')).toMatch(/batched .* model 2 test MSE 0\.7100000 differs from sequential's 0\.7000000/)
  })

  it('fails when a strategy trained fewer models or is missing', () => {
    const v = verify(config, [m('sequential', mses), m('pool', mses.slice(0, 3))])
    expect(v.sameWork).toBe(false)
    expect(v.modelsTrained.pool).toBe(3)
    expect(v.problems.some((p) => /trained 3 of 4 models/.test(p))).toBe(true)
    expect(v.problems.some((p) => /batched has no finished measurement/.test(p))).toBe(true)
  })

  it('fails on a non-finite MSE and on a failed measurement', () => {
    const v = verify(config, [m('sequential', mses), m('pool', [0.5, NaN, 0.7, 0.8]), m('batched', mses, { status: 'failed' })])
    expect(v.sameWork).toBe(false)
    expect(v.problems.some((p) => /model 1 test MSE is NaN/.test(p))).toBe(true)
    expect(v.problems.some((p) => /batched .*: failed/.test(p))).toBe(true)
  })

  it('does not ask for a strategy at a model count where every W was skipped (W > N in a sweep)', () => {
    const sweep = presetConfig('smoke', { models: [1, 4], workers: [2] })
    const at1 = m('sequential', [0.5], { models: 1 })
    const v = verify(sweep, [at1, m('sequential', mses), m('pool', mses), m('batched', mses)])
    expect(v.problems).toEqual([])
    expect(v.sameWork).toBe(true)
  })
})

describe('verify, a successive-halving search', () => {
  // 2 configurations × 2 folds, 9 rounds, factor 3: rungs 3 rounds (both), 9 rounds (one)
  const halving = presetConfig('smoke', {
    strategies: ['sequential', 'pool'],
    models: [4],
    backend: 'cpu',
    set: { grid: { eta: [0.1, 0.3] }, seeds: 1, folds: 2 },
    search: { method: 'halving', factor: 3, minRounds: 3 },
    model: { kind: 'gbdt', rounds: 9 } as never,
  })
  /** a halving measurement whose second rung trained `winner`: its models 9 rounds, the other's 3 */
  const searched = (strategy: Strategy, winner: number, rounds: (c: number) => number = (c) => (c === winner ? 9 : 3)) =>
    m(strategy, [0.5, 0.6, 0.7, 0.8], {
      rungs: [
        { rounds: 3, configurations: [0, 1], models: 4, validation: [0.5, 0.5] },
        { rounds: 9, configurations: [winner], models: 2, validation: [0.5] },
      ],
      perModel: [0, 1, 2, 3].map((index) => {
        const c = Math.floor(index / 2)
        return {
          index,
          seed: 43 + index,
          trainMs: 1,
          groupTrainMs: null,
          testMse: 0.5,
          finalLoss: null,
          worker: 0,
          configuration: c,
          rung: c === winner ? 1 : 0,
          roundsTrained: rounds(c),
        }
      }),
    })

  it('passes when every strategy promoted the same configurations and each model has its last rung’s rounds', () => {
    const v = verify(halving, [searched('sequential', 1), searched('pool', 1)])
    expect(v.problems).toEqual([])
  })

  it('fails when a strategy promoted another configuration', () => {
    const v = verify(halving, [searched('sequential', 1), searched('pool', 0)])
    expect(v.sameWork).toBe(false)
    expect(v.problems).toContain("pool W=2 repeat 0 at 2000 rows × 4 models: rung 1 trained configurations 0, sequential's 1")
  })

  it('fails when a model grew more rounds than its rungs (retrained) or the rungs are not the plan', () => {
    const v = verify(halving, [searched('sequential', 1), searched('pool', 1, (c) => (c === 1 ? 12 : 3))])
    expect(v.problems).toContain(
      "pool W=2 repeat 0 at 2000 rows × 4 models: model 2 trained 12 rounds reaching rung 1; its configuration's last rung is 1 at 9 rounds",
    )
    const short = { ...searched('pool', 1), rungs: [{ rounds: 3, configurations: [0, 1], models: 4, validation: [0.5, 0.5] }] }
    expect(verify(halving, [searched('sequential', 1), short]).problems).toContain(
      'pool W=2 repeat 0 at 2000 rows × 4 models: rungs 2×3, the search plans 2×3 → 1×9',
    )
  })
})
