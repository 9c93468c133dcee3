// Same work, exactly: a model trained in a batched group is the model trained alone, bit for bit —
// also when the group's models have parameters of their own (a model set's configurations fused).
import { describe, expect, it } from 'vitest'
import { GBDT_DEFAULTS, peakNodeHistograms } from '@shared/families/gbdt'
import {
  gbdtMemory,
  meanSquaredError,
  predictGbdt,
  prepareGbdtData,
  trainGbdt,
  trainGbdtGroup,
  treeHash,
  type GbdtData,
  type GbdtParams,
  type GbdtPerModelParams,
  type GbdtTree,
} from './index'
import { splitRows, syntheticRegression } from './synthetic'

const all = syntheticRegression({ rows: 1500, features: 12, seed: 11, missing: 0.05 })
const [train, test] = splitRows(all, 1200)
const data = prepareGbdtData(train.x, train.y, train.rows, train.features, 64)
const params: Partial<GbdtParams> = { rounds: 12, maxDepth: 5, maxBin: 64, subsample: 0.8, colsampleBytree: 0.7 }
const seeds = [2, 3, 4, 5, 6]

describe('batched == one at a time', () => {
  const alone = seeds.map((s) => trainGbdt(data, params, s))
  const together = trainGbdtGroup(data, params, seeds)

  it('gives every model the same trees (hash) and the same predictions, bit for bit', () => {
    for (let i = 0; i < seeds.length; i++) {
      expect(treeHash(together[i])).toBe(treeHash(alone[i]))
      const a = predictGbdt(alone[i], test.x, test.rows)
      const b = predictGbdt(together[i], test.x, test.rows)
      expect(Buffer.from(b.buffer).equals(Buffer.from(a.buffer))).toBe(true)
      expect(meanSquaredError(b, test.y)).toBe(meanSquaredError(a, test.y))
    }
  })

  it('models differ from each other (own row and column samples) and learn', () => {
    expect(new Set(alone.map(treeHash)).size).toBe(seeds.length)
    const baseOnly = meanSquaredError(new Float32Array(test.rows).fill(0.5), test.y)
    for (const m of alone) expect(meanSquaredError(predictGbdt(m, test.x, test.rows), test.y)).toBeLessThan(0.6 * baseOnly)
  })

  it('is deterministic, and the model order inside the group does not matter', () => {
    expect(trainGbdtGroup(data, params, seeds.slice().reverse()).map(treeHash).reverse()).toEqual(alone.map(treeHash))
    expect(treeHash(trainGbdt(data, params, seeds[0]))).toBe(treeHash(alone[0]))
  })

  it('a tiny histogram budget (split level passes, no subtraction) changes nothing', () => {
    const deep = { ...params, maxDepth: 7 }
    const ref = trainGbdtGroup(data, deep, seeds.slice(0, 3)).map(treeHash)
    const slots = data.width.reduce((s, w) => s + w, 0)
    for (const buffers of [2, 3, 7]) {
      const low = trainGbdtGroup(data, deep, seeds.slice(0, 3), { histogramBudgetBytes: buffers * slots * 16 })
      expect(low.map(treeHash)).toEqual(ref)
    }
  })

  it('any tree group size (models growing a tree together) gives the same trees', () => {
    for (const treeGroup of [1, 2, 5]) expect(trainGbdtGroup(data, params, seeds, { treeGroup }).map(treeHash)).toEqual(alone.map(treeHash))
  })

  it('calls onRound once per round for the group and onModelDone once per model', () => {
    const rounds: number[] = []
    const done: number[] = []
    const out = trainGbdtGroup(data, { ...params, rounds: 3 }, seeds, {
      onRound: (r) => rounds.push(r),
      onModelDone: (i, m) => {
        expect(m.trees.length).toBe(3)
        done.push(i)
      },
    })
    expect(rounds).toEqual([1, 2, 3])
    expect(done).toEqual([0, 1, 2, 3, 4])
    expect(out.map((m) => m.seed)).toEqual(seeds)
  })

  it("without sampling, N models are N identical models (the article's exact settings)", () => {
    const p = { ...params, subsample: 1, colsampleBytree: 1 }
    expect(new Set(trainGbdtGroup(data, p, [1, 2, 3]).map(treeHash)).size).toBe(1)
  })
})

describe('memory estimate', () => {
  it("bounds the article's largest batch (200 000 rows, 100 features, 50 models) under 1 GiB", () => {
    const e = gbdtMemory({ rows: 160_000, features: 100, models: 50, testRows: 40_000 })
    expect(e.totalBytes).toBeLessThan(2 ** 30)
    expect(e.histogramBytes).toBeLessThanOrEqual(e.histogramUnboundedBytes)
  })

  it('grows with models and depth, and the budget caps histograms', () => {
    const a = gbdtMemory({ rows: 10_000, features: 100, models: 1 })
    const b = gbdtMemory({ rows: 10_000, features: 100, models: 50 })
    expect(b.totalBytes).toBeGreaterThan(a.totalBytes)
    const deep = gbdtMemory({ rows: 10_000, features: 100, models: 50, treeGroup: 50, params: { maxDepth: 10 }, histogramBudgetBytes: 2 ** 28 })
    expect(deep.histogramUnboundedBytes).toBeGreaterThan(2 ** 28)
    expect(deep.histogramBytes).toBeLessThanOrEqual(2 ** 28)
  })

  it("counts the node histograms the trainer holds at its peak (the family's model is this trainer's)", () => {
    const peakOf = (d: GbdtData, p: Partial<GbdtParams>, models: number) => {
      const stats = { peakNodeHistograms: 0 }
      trainGbdtGroup(d, p, seeds.slice(0, models), { treeGroup: models, stats })
      return stats.peakNodeHistograms
    }
    // full trees: two models, 2^(maxDepth−2) each
    const full = { ...params, rounds: 2, subsample: 1, colsampleBytree: 1 }
    expect(peakOf(data, full, 2)).toBe(2 * peakNodeHistograms({ ...GBDT_DEFAULTS, ...full }, data.rows))
    // the row bound: 40 rows, nodes of ≥ 6 rows, depth 8
    const few = prepareGbdtData(train.x.subarray(0, 40 * train.features), train.y.subarray(0, 40), 40, train.features, 64)
    const small = { ...params, rounds: 3, maxDepth: 8, minChildWeight: 3 }
    const bound = peakNodeHistograms({ ...GBDT_DEFAULTS, ...small }, 40)
    expect(bound).toBeLessThan(2 ** 6)
    expect(peakOf(few, small, 1)).toBeLessThanOrEqual(bound)
    expect(peakOf(data, params, 3)).toBeLessThanOrEqual(3 * peakNodeHistograms({ ...GBDT_DEFAULTS, ...params }, data.rows))
  })
})

describe('async trainer', () => {
  it('gives the same trees, lets timers run while it trains, and cancels mid-round', async () => {
    const { trainGbdtGroupAsync, GbdtCancelledError } = await import('./index')
    const p = { ...params, rounds: 6 }
    let ticks = 0
    const timer = setInterval(() => ticks++, 0)
    const models = await trainGbdtGroupAsync(data, p, seeds, { sliceMs: 0 })
    clearInterval(timer)
    expect(models.map(treeHash)).toEqual(trainGbdtGroup(data, p, seeds).map(treeHash))
    expect(ticks).toBeGreaterThan(0)
    let stop = false
    setTimeout(() => (stop = true), 0)
    const rounds: number[] = []
    await expect(
      trainGbdtGroupAsync(data, { ...params, rounds: 10_000 }, seeds, { sliceMs: 0, shouldStop: () => stop, onRound: (r) => rounds.push(r) }),
    ).rejects.toThrow(GbdtCancelledError)
    expect(rounds.length).toBeLessThan(10_000)
  })
})

describe('a group whose models differ in eta and rounds (a model set fused across them)', () => {
  it('gives each model the trees it grows alone with its own eta and rounds, bit for bit', () => {
    const own = [
      { eta: 0.05, rounds: 4 },
      { eta: 0.3, rounds: 12 },
      { eta: 0.1, rounds: 7 },
    ]
    const together = trainGbdtGroup(data, params, [7, 8, 9], { perModel: own })
    own.forEach((p, i) => {
      const alone = trainGbdt(data, { ...params, ...p }, [7, 8, 9][i])
      expect(together[i].trees).toHaveLength(p.rounds)
      expect(treeHash(together[i]), `model ${i}`).toBe(treeHash(alone))
      expect(together[i].params).toMatchObject(p)
    })
  })
})

/** a tree's depth: the most splits from its root to a leaf */
function depthOf(t: GbdtTree, node = 0): number {
  return t.feature[node] < 0 ? 0 : 1 + Math.max(depthOf(t, t.left[node]), depthOf(t, t.left[node] + 1))
}

describe('a group whose models differ in depth, regularisation and sampling (a model set fused across them)', () => {
  // max_depth 3,5 × lambda 0,1 × subsample 0.8,1: eight configurations, one seed each, in one group
  const grid: GbdtPerModelParams[] = []
  for (const maxDepth of [3, 5]) for (const lambda of [0, 1]) for (const subsample of [0.8, 1]) grid.push({ maxDepth, lambda, subsample })
  const gridSeeds = grid.map((_, i) => 20 + i)
  const alone = grid.map((p, i) => trainGbdt(data, { ...params, ...p }, gridSeeds[i]))

  it('gives each model of a depth × lambda × subsample grid the trees it grows alone, bit for bit', () => {
    const together = trainGbdtGroup(data, params, gridSeeds, { perModel: grid })
    grid.forEach((p, i) => {
      expect(treeHash(together[i]), `model ${i} ${JSON.stringify(p)}`).toBe(treeHash(alone[i]))
      expect(together[i].params).toMatchObject(p)
      const a = predictGbdt(alone[i], test.x, test.rows)
      const b = predictGbdt(together[i], test.x, test.rows)
      expect(Buffer.from(b.buffer).equals(Buffer.from(a.buffer))).toBe(true)
    })
    expect(new Set(together.map(treeHash)).size).toBe(grid.length)
  })

  it('a model whose depth is reached stops splitting while the deeper ones go on', () => {
    const together = trainGbdtGroup(data, params, gridSeeds, { perModel: grid })
    grid.forEach((p, i) => {
      const depths = together[i].trees.map((t) => depthOf(t))
      expect(Math.max(...depths), `model ${i}`).toBe(p.maxDepth)
    })
  })

  it('any tree group size, a tiny histogram budget, or the models in another order change nothing', () => {
    const ref = alone.map(treeHash)
    for (const treeGroup of [1, 3, 8]) expect(trainGbdtGroup(data, params, gridSeeds, { perModel: grid, treeGroup }).map(treeHash)).toEqual(ref)
    const slots = data.width.reduce((s, w) => s + w, 0)
    for (const buffers of [2, 5]) {
      expect(trainGbdtGroup(data, params, gridSeeds, { perModel: grid, histogramBudgetBytes: buffers * slots * 16 }).map(treeHash)).toEqual(ref)
    }
    const order = [5, 2, 7, 0, 3, 6, 1, 4]
    const shuffled = trainGbdtGroup(
      data,
      params,
      order.map((i) => gridSeeds[i]),
      { perModel: order.map((i) => grid[i]) },
    )
    expect(shuffled.map(treeHash)).toEqual(order.map((i) => ref[i]))
  })

  it('every per-model field at once — alpha, gamma, min_child_weight, colsample, eta, rounds too — gives each model its own trees', () => {
    const own: GbdtPerModelParams[] = [
      { maxDepth: 2, alpha: 0.5, colsampleBytree: 0.5, rounds: 5 },
      { maxDepth: 6, gamma: 0.05, minChildWeight: 4, subsample: 0.6, eta: 0.3 },
      { maxDepth: 4, lambda: 3, alpha: 0.1, gamma: 0.01, minChildWeight: 2, subsample: 1, colsampleBytree: 1, eta: 0.05, rounds: 9 },
      {},
    ]
    const ownSeeds = [31, 32, 33, 34]
    const together = trainGbdtGroup(data, params, ownSeeds, { perModel: own, treeGroup: 2 })
    own.forEach((p, i) => {
      const solo = trainGbdt(data, { ...params, ...p }, ownSeeds[i])
      expect(together[i].trees).toHaveLength(p.rounds ?? params.rounds!)
      expect(treeHash(together[i]), `model ${i} ${JSON.stringify(p)}`).toBe(treeHash(solo))
    })
  })

  it("refuses a per-model maxBin or baseScore (the binning and the base score are the group's)", () => {
    expect(() => trainGbdtGroup(data, params, [1, 2], { perModel: [{}, { maxBin: 32 } as GbdtPerModelParams] })).toThrow(/maxBin must be the group's/)
    expect(() => trainGbdtGroup(data, params, [1], { perModel: [{ baseScore: 0 } as GbdtPerModelParams] })).toThrow(/baseScore must be the group's/)
  })
})

describe("held-out rows (a model set's folds fused)", () => {
  // 3 folds of the 1 200 training rows, as contract/model-set.ts foldRows cuts them
  const folds = [0, 1, 2].map((f) => ({ begin: Math.floor((f * 1200) / 3), end: Math.floor(((f + 1) * 1200) / 3) }))
  const foldSeeds = [41, 42, 43]

  it('a group of folds gives each model the trees it grows alone with its rows held out', () => {
    for (const p of [params, { ...params, subsample: 1, colsampleBytree: 1 }]) {
      const together = trainGbdtGroup(data, p, foldSeeds, { heldOut: folds, perModel: [{ maxDepth: 3 }, {}, { lambda: 0 }] })
      const alone = foldSeeds.map((s, i) => trainGbdtGroup(data, { ...p, ...[{ maxDepth: 3 }, {}, { lambda: 0 }][i] }, [s], { heldOut: [folds[i]] })[0])
      expect(together.map(treeHash)).toEqual(alone.map(treeHash))
      // and holding rows out changes the trees
      expect(treeHash(trainGbdt(data, p, foldSeeds[1]))).not.toBe(treeHash(alone[1]))
    }
  })

  it('never trains on them: their labels do not change a bit of the trees', () => {
    const y = Float32Array.from(train.y)
    for (let r = folds[1].begin; r < folds[1].end; r++) y[r] = 1e3 * Math.sin(r)
    const scrambled: GbdtData = { ...data, y }
    const p = { ...params, subsample: 1 }
    expect(treeHash(trainGbdtGroup(scrambled, p, [7], { heldOut: [folds[1]] })[0])).toBe(treeHash(trainGbdtGroup(data, p, [7], { heldOut: [folds[1]] })[0]))
    expect(treeHash(trainGbdtGroup(scrambled, p, [7], { heldOut: [folds[0]] })[0])).not.toBe(treeHash(trainGbdtGroup(data, p, [7], { heldOut: [folds[0]] })[0]))
  })

  it('refuses a range outside the training rows, an empty one, or one with nothing left to train on', () => {
    for (const bad of [
      { begin: -1, end: 10 },
      { begin: 10, end: 10 },
      { begin: 0, end: 1201 },
      { begin: 0, end: 1200 },
      { begin: 1.5, end: 9 },
    ]) {
      expect(() => trainGbdtGroup(data, params, [1], { heldOut: [bad] }), JSON.stringify(bad)).toThrow(
        /model 0: heldOut rows must be a range \[begin, end\) inside the 1200 training rows/,
      )
    }
    expect(() => trainGbdtGroup(data, params, [1, 2], { heldOut: [null] })).toThrow(/heldOut has 1 entries for 2 models/)
  })
})
