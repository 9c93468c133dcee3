// Same work, exactly: a model trained in a batched group is the model trained alone, bit for bit.
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

  it('without sampling, N models are N identical models (the article\'s exact settings)', () => {
    const p = { ...params, subsample: 1, colsampleBytree: 1 }
    expect(new Set(trainGbdtGroup(data, p, [1, 2, 3]).map(treeHash)).size).toBe(1)
  })
})

describe('memory estimate', () => {
  it('bounds the article\'s largest batch (200 000 rows, 100 features, 50 models) under 1 GiB', () => {
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

  it('counts the node histograms the trainer holds at its peak (the family\'s model is this trainer\'s)', () => {
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
