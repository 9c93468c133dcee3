import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract'
import { contiguousGroups, expandPlan, groupKey } from './plan'

describe('expandPlan', () => {
  it('crosses sizes × models × strategies × workers × repeats, sequential once per size and model count', () => {
    const plan = expandPlan(presetConfig('smoke', { sizes: [100, 200], models: [4, 8], workers: [1, 2], repeats: 2 }))
    // per (size, models): sequential 1 W × 2 repeats + pool 2 W × 2 + batched 2 W × 2 = 10
    expect(plan).toHaveLength(2 * 2 * 10)
    expect(plan.filter((k) => k.strategy === 'sequential').every((k) => k.workers === 1)).toBe(true)
    expect(plan.filter((k) => k.strategy === 'pool' && k.size === 200 && k.models === 8).map((k) => [k.workers, k.repeat])).toEqual([
      [1, 0], [1, 1], [2, 0], [2, 1],
    ])
  })

  it('keeps the repeats of one pool together so the pool is started and warmed once', () => {
    const plan = expandPlan(presetConfig('smoke', { repeats: 3 }))
    const keys = plan.map(groupKey)
    const changes = keys.filter((k, i) => i > 0 && k !== keys[i - 1]).length
    expect(changes).toBe(2) // sequential → pool → batched
  })

  it('follows the order of the strategies given', () => {
    const plan = expandPlan(presetConfig('smoke', { strategies: ['batched', 'sequential'] }))
    expect(plan.map((k) => k.strategy)).toEqual(['batched', 'sequential'])
  })
})

describe('contiguousGroups', () => {
  it('splits models into contiguous groups differing by at most one', () => {
    expect(contiguousGroups(10, 3)).toEqual([[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]])
    expect(contiguousGroups(50, 5).map((g) => g.length)).toEqual([10, 10, 10, 10, 10])
    expect(contiguousGroups(3, 3)).toEqual([[0], [1], [2]])
    expect(contiguousGroups(7, 1).flat()).toEqual([0, 1, 2, 3, 4, 5, 6])
  })
})
