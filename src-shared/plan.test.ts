import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract'
import { BenchConfigSchema } from '@shared/contract'
import { contiguousGroups, expandPlan, groupKey, modelSweep } from './plan'

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
