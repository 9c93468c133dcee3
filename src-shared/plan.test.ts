import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract'
import { BenchConfigSchema } from '@shared/contract'
import { balancedGroups, contiguousGroups, expandPlan, groupKey, modelSweep } from './plan'

describe('expandPlan', () => {
  it('crosses sizes × models × strategies × workers × repeats, sequential once per size and model count', () => {
    const plan = expandPlan(presetConfig('smoke', { sizes: [100, 200], models: [4, 8], workers: [1, 2], repeats: 2 }))
    // per (size, models): sequential 1 W × 2 repeats + pool 2 W × 2 + batched 2 W × 2 = 10
    expect(plan).toHaveLength(2 * 2 * 10)
    expect(plan.filter((k) => k.strategy === 'sequential').every((k) => k.workers === 1)).toBe(true)
    expect(plan.filter((k) => k.strategy === 'pool' && k.size === 200 && k.models === 8).map((k) => [k.workers, k.repeat])).toEqual([
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
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

describe('model-count sweep', () => {
  it('doubles from 1 and ends at the requested N itself', () => {
    expect(modelSweep(50)).toEqual([1, 2, 4, 8, 16, 32, 50])
    expect(modelSweep(64)).toEqual([1, 2, 4, 8, 16, 32, 64])
    expect(modelSweep(1)).toEqual([1])
    expect(modelSweep(1000)).toHaveLength(11)
    expect(() => modelSweep(0)).toThrow(/whole number of models/)
  })

  it('fits the config (up to 1000 models) and skips a W larger than N at that N only', () => {
    const config = BenchConfigSchema.parse({ ...presetConfig('smoke'), models: modelSweep(1000), workers: [1, 2, 5] })
    const plan = expandPlan(config)
    expect(plan.filter((k) => k.models === 1).map((k) => `${k.strategy}/${k.workers}`)).toEqual(['sequential/1', 'pool/1', 'batched/1'])
    expect(plan.filter((k) => k.models === 4 && k.strategy === 'pool').map((k) => k.workers)).toEqual([1, 2])
    expect(plan.filter((k) => k.models === 8 && k.strategy === 'batched').map((k) => k.workers)).toEqual([1, 2, 5])
    expect(plan.every((k) => k.workers <= k.models)).toBe(true)
  })

  it('still refuses a W larger than every model count', () => {
    const parsed = BenchConfigSchema.safeParse({ ...presetConfig('smoke'), models: [1, 2, 4], workers: [2, 5] })
    expect(parsed.success).toBe(false)
    expect(parsed.error!.issues.map((i) => i.message)).toEqual([
      'workers 5 is more than models 4: each worker needs at least one model (workers must be from 1 to 4)',
    ])
  })
})

describe('contiguousGroups', () => {
  it('splits models into contiguous groups differing by at most one', () => {
    expect(contiguousGroups(10, 3)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ])
    expect(contiguousGroups(50, 5).map((g) => g.length)).toEqual([10, 10, 10, 10, 10])
    expect(contiguousGroups(3, 3)).toEqual([[0], [1], [2]])
    expect(contiguousGroups(7, 1).flat()).toEqual([0, 1, 2, 3, 4, 5, 6])
  })
})

describe('balancedGroups', () => {
  const sums = (weights: number[], groups: number[][]) => groups.map((g) => g.reduce((a, i) => a + weights[i], 0))

  it('equal weights split exactly as contiguousGroups', () => {
    for (const [n, parts] of [
      [10, 3],
      [7, 2],
      [3, 3],
      [162, 2],
      [5, 4],
    ])
      expect(balancedGroups(new Array(n).fill(2.5), parts)).toEqual(contiguousGroups(n, parts))
  })

  it("a grid whose configurations cost differently: the programs' work near equal, not their model counts", () => {
    // 54 models of depth 3, 54 of depth 6, 54 of depth 8 (the work of a tree grows with its depth)
    const weights = [...new Array(54).fill(3), ...new Array(54).fill(6), ...new Array(54).fill(8)]
    const groups = balancedGroups(weights, 2)
    expect(groups.flat()).toEqual(weights.map((_, i) => i))
    const [a, b] = sums(weights, groups)
    expect(Math.abs(a - b)).toBeLessThanOrEqual(8)
    // by count (81 + 81) the second program would hold 594 of the 918: 1.3× the balanced one's
    expect(sums(weights, contiguousGroups(weights.length, 2))).toEqual([324, 594])
  })

  it('every group non-empty and contiguous, at most `parts` of them, whatever the weights', () => {
    const rng = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    const next = rng(7)
    for (let t = 0; t < 200; t++) {
      const n = 1 + Math.floor(next() * 30)
      const parts = 1 + Math.floor(next() * 6)
      const weights = Array.from({ length: n }, () => (next() < 0.2 ? 100 : 1 + next() * 5))
      const groups = balancedGroups(weights, parts)
      expect(groups.length).toBe(Math.min(n, parts))
      expect(groups.flat()).toEqual(weights.map((_, i) => i))
      for (const g of groups) expect(g.length).toBeGreaterThan(0)
      // no group above the heaviest item plus an equal share
      const total = weights.reduce((a, b) => a + b, 0)
      for (const s of sums(weights, groups)) expect(s).toBeLessThanOrEqual(total / groups.length + Math.max(...weights) + 1e-9)
    }
  })
})
