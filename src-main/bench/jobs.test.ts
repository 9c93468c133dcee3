// The jobs of a batched measurement over a model set whose configurations cost differently: the
// fused programs split by each model's work (the family's work count), not by model count, and the
// memory estimate holds the same groups the runner sends.
import { describe, expect, it } from 'vitest'
import { modelWorks, presetConfig, setSize, workloadFor, type BenchConfig, type ModelSet } from '@shared/contract'
import { modelsPerWorker } from '@shared/estimate'
import { gbdtFamily, NODE_BIN_PASSES, NODE_ROWS } from '@shared/families/gbdt'
import { jobsFor } from './runner'

const set: ModelSet = { grid: { maxDepth: [2, 8] }, seeds: 3, folds: null }

function config(): BenchConfig {
  return presetConfig('smoke', {
    sizes: [600],
    workers: [2],
    backend: 'cpu',
    models: [setSize(set)],
    set,
    model: { kind: 'gbdt', rounds: 10, maxDepth: 3 } as never,
  })
}

describe('batched jobs over a set of unequal configurations', () => {
  it("fuse programs of near-equal work: depth 8's three models alone, depth 2's with one… not three and three", () => {
    const c = config()
    const workload = workloadFor(c, 600)
    const works = modelWorks(gbdtFamily, workload, [0, 1, 2, 3, 4, 5])
    // models 0–2 are depth 2, 3–5 depth 8: a model's work a feature and round is depth × its sampled rows
    // (480 training rows) + NODE_BIN_PASSES × its split nodes' max_bin bins, 2^depth − 1 nodes but no more than one
    // for NODE_ROWS sampled rows (families/gbdt.ts workCount): 16.6× here
    const { subsample, maxBin } = c.model as { subsample: number; maxBin: number }
    const sampled = Math.ceil(480 * subsample)
    const perFeature = (depth: number) => depth * sampled + NODE_BIN_PASSES * Math.min(2 ** depth - 1, Math.ceil(sampled / NODE_ROWS)) * maxBin
    const heavier = perFeature(8) / perFeature(2)
    expect(heavier).toBeGreaterThan(15)
    for (const [i, ratio] of [1, 1, 1, heavier, heavier, heavier].entries()) expect(works[i] / works[0]).toBeCloseTo(ratio, 12)
    const jobs = jobsFor({ size: 600, models: 6, workers: 2, strategy: 'batched', repeat: 0 }, workload)
    expect(jobs.map((j) => j.modelIndices)).toEqual([
      [0, 1, 2, 3],
      [4, 5],
    ])
    expect(jobs.every((j) => j.fused)).toBe(true)
    // the memory estimate's models per worker are the runner's groups
    expect(modelsPerWorker('batched', 6, 2, works)).toEqual(jobs.map((j) => j.modelIndices.length))
  })

  it('a halving rung balances its live models the same way', () => {
    const workload = workloadFor(config(), 600)
    const jobs = jobsFor({ size: 600, models: 6, workers: 2, strategy: 'batched', repeat: 0 }, workload, [1, 2, 4, 5])
    expect(jobs.map((j) => j.modelIndices)).toEqual([[1, 2, 4], [5]])
  })
})
