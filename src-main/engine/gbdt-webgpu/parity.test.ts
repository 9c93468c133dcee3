// The WebGPU trees engine against the CPU engine, on lavapipe here and in CI: every model's tree
// hash must be equal (bit-identical trees), on tiny and edge cases, through every path of the
// engine (workgroup-memory and global-atomics histograms, the subtraction trick, chunks, sliced
// levels, the large-gradient fallback), with rounds planned on the device and levels planned by
// the host. checkFilter (host-planned) reads every evaluated node's histogram back and checks that
// the device's split decision is the CPU engine's choice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trainGbdtGroup, treeHash, type GbdtParams, type GbdtPerModelParams, type GbdtTree } from '../gbdt'
import { disposeGbdtData, uploadGbdtData } from './device-data'
import { cpuHashes, type DeviceHolder, makeData, noDevice, openForTests, type DataSpec } from '../../testing/webgpu-trees'
import { emptyStats, trainGbdtGroupWebgpu, type WebgpuTrainOptions, type WebgpuTrainStats } from './trainer'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const SEEDS = [101, 102, 103]

/**
 * Trains `seeds` batched on the device and checks each model's hash against the CPU engine alone:
 * host-planned with every device decision checked (its stats are returned), and as the runtime
 * trains (rounds planned on the device where the chunk allows).
 */
async function expectParity(
  spec: DataSpec,
  params: Partial<GbdtParams>,
  options: WebgpuTrainOptions = {},
  seeds: readonly number[] = SEEDS,
): Promise<WebgpuTrainStats> {
  const gpu = dev.gpu!
  const { data } = makeData(spec)
  const gd = uploadGbdtData(gpu, data)
  const stats = emptyStats()
  try {
    const cpu = cpuHashes(data, params, seeds)
    const models = await trainGbdtGroupWebgpu(gpu, gd, params, seeds, { checkFilter: true, ...options, stats })
    expect(models.map(treeHash)).toEqual(cpu)
    const planned = await trainGbdtGroupWebgpu(gpu, gd, params, seeds, { ...options, checkFilter: false })
    expect(planned.map(treeHash)).toEqual(cpu)
  } finally {
    disposeGbdtData(gpu, gd)
  }
  return stats
}

const SMALL: DataSpec = { rows: 300, features: 6 }

describe('webgpu trees = CPU trees (tree hash), edge cases', () => {
  it('one row per leaf: 16 rows with distinct values, depth 5, no sampling', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const spec: DataSpec = { rows: 16, features: 2, value: (f, v, r) => (f === 0 ? r : v), label: (xs) => 3 * xs[0] }
    const params = { rounds: 4, maxDepth: 5, lambda: 0, subsample: 1, colsampleBytree: 1, minChildWeight: 1 }
    await expectParity(spec, params)
    const leaves = trainGbdtGroup(makeData(spec).data, params, [1])[0].trees[0].feature.filter((f) => f < 0).length
    expect(leaves).toBe(16)
  })

  it('constant features (nothing to split on) next to one informative feature, and all constant', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    await expectParity({ rows: 200, features: 4, value: (f, v) => (f === 2 ? v : 1.5) }, { rounds: 3, maxDepth: 3, colsampleBytree: 1 })
    const stats = await expectParity({ rows: 200, features: 3, value: () => 2 }, { rounds: 3, maxDepth: 3 })
    expect(stats.splits).toBe(0)
  })

  it('a feature with 2 bins (binary), with and without missing values', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    await expectParity({ rows: 300, features: 3, value: (f, v) => (f === 0 ? (v > 0 ? 1 : 0) : v) }, { rounds: 4, maxDepth: 3 })
    await expectParity({ rows: 300, features: 2, value: (f, v, r) => (r % 7 === 0 ? NaN : v > 0 ? 1 : 0) }, { rounds: 4, maxDepth: 3, colsampleBytree: 1 })
  })

  it('max_bin 256: 256 value bins plus a missing slot (u16 bins), continuous features', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const stats = await expectParity(
      { rows: 1200, features: 4, value: (f, v, r) => (f === 1 && r % 5 === 0 ? NaN : v) },
      { rounds: 3, maxDepth: 4, maxBin: 256 },
    )
    expect(stats.evaluatedNodes).toBeGreaterThan(0)
  })

  it('max_bin 2 and 16', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    await expectParity({ ...SMALL, maxBin: 2 }, { rounds: 3, maxDepth: 3, maxBin: 2 })
    await expectParity({ ...SMALL, maxBin: 16 }, { rounds: 3, maxDepth: 3, maxBin: 16 })
  })

  it('depth 1 (stumps)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    await expectParity(SMALL, { rounds: 6, maxDepth: 1 })
  })

  it('all gradients equal: no split beats the parent, every tree is one leaf', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const stats = await expectParity({ ...SMALL, label: () => 3.25 }, { rounds: 3, maxDepth: 4 })
    expect(stats.evaluatedNodes).toBe(3 * 3)
  })

  it('large gradients near the quantisation bound: max |g| just under a power of two, |q| ≈ 2^30, sums carrying into the high word', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    // base 0, labels −(2^20 − 2^-3) … 2^20 − 2^-3: max |g| just under 2^20, so k = 10 and |q| up to 2^30 − 2^7
    const near = 2 ** 20 - 0.125
    await expectParity(
      { rows: 2000, features: 3, label: (xs, r) => (r % 2 === 0 ? near : -near) * (r % 3 === 0 ? 1 : Math.tanh(xs[0])) },
      { rounds: 3, maxDepth: 3, baseScore: 0 },
    )
  })

  it('huge gradients (ns·max|g| ≥ 2^60: float32 gains could overflow) are decided from whole histograms', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const stats = await expectParity({ ...SMALL, label: (xs) => 3e16 * Math.tanh(xs[0] + xs[1]) }, { rounds: 2, maxDepth: 3, baseScore: 0 })
    expect(stats.exactHostRounds).toBeGreaterThan(0)
  })

  it('tiny gradients (|g| ≈ 1e-20: a quantisation exponent above 64, gains far below kRtEps)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    await expectParity({ ...SMALL, label: (xs) => 1e-20 * Math.tanh(xs[0]) }, { rounds: 2, maxDepth: 3, baseScore: 0 })
  })
})

describe('webgpu trees = CPU trees, parameters and engine paths', () => {
  it('missing values (backward scans, default directions), row and column sampling', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    await expectParity(
      { rows: 600, features: 7, value: (f, v, r) => ((r + f) % 9 === 0 ? NaN : v) },
      { rounds: 4, maxDepth: 4, subsample: 0.7, colsampleBytree: 0.6 },
    )
  })

  it('regularisation: lambda 0, alpha 0.5, gamma 0.2, min_child_weight 0 and 7', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    await expectParity(SMALL, { rounds: 3, maxDepth: 4, lambda: 0, alpha: 0.5 })
    await expectParity(SMALL, { rounds: 3, maxDepth: 4, gamma: 0.2, minChildWeight: 0 })
    await expectParity(SMALL, { rounds: 3, maxDepth: 4, minChildWeight: 7, eta: 0.3 })
  })

  it('global atomics and workgroup memory give the same trees', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const g = await expectParity(SMALL, { rounds: 3, maxDepth: 4 }, { histogramMode: 'global' })
    expect(g.sharedPasses).toBe(0)
    const s = await expectParity(SMALL, { rounds: 3, maxDepth: 4 }, { histogramMode: 'shared' })
    expect(s.sharedPasses).toBeGreaterThan(0)
  })

  it('32-bit and 64-bit workgroup histograms on the same data give the same trees', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const spec: DataSpec = { rows: 1500, features: 5, value: (f, v, r) => (f === 2 && r % 6 === 0 ? NaN : v) }
    const params = { rounds: 3, maxDepth: 4 }
    const s32 = await expectParity(spec, params, { histogramMode: 'shared32' })
    const s64 = await expectParity(spec, params, { histogramMode: 'shared64' })
    expect(s32.histogramKernels.histShared32).toBeGreaterThan(0)
    expect(s64.histogramKernels.histShared32 ?? 0).toBe(0)
    expect(s64.histogramKernels.histShared64).toBeGreaterThan(0)
    // |q| near 2^30, and a feature whose rows all fall in one bin: a workgroup's 1024 rows in one 32-bit slot
    const near = 2 ** 20 - 0.125
    const bound: DataSpec = {
      rows: 2100,
      features: 3,
      value: (f, v) => (f === 1 ? 0.5 : v),
      label: (xs, r) => (r % 2 === 0 ? near : -near) * (r % 3 === 0 ? 1 : Math.tanh(xs[0])),
    }
    for (const histogramMode of ['shared32', 'shared64'] as const) await expectParity(bound, { rounds: 2, maxDepth: 3, baseScore: 0 }, { histogramMode })
  })

  it('the host decides where the device cannot (α·2^k not an integer): whole histograms, the same trees', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    // labels ~ ±3000: max |g| ≥ 2^11, k ≤ 19, and f32(0.1)·2^k has fractional bits (its lowest is 2^-27)
    const stats = await expectParity({ ...SMALL, label: (xs) => 3000 * Math.tanh(xs[0] + xs[1]) }, { rounds: 2, maxDepth: 3, alpha: 0.1, baseScore: 0 })
    expect(stats.exactHostRounds).toBeGreaterThan(0)
    expect(stats.hostDecidedNodes).toBeGreaterThan(0)
  })

  it('chunks of models and sliced levels (a histogram budget of a few node histograms)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const seeds = [1, 2, 3, 4, 5]
    // 6 features × 256 slots × 12 B ≈ 18 KiB per node; 40 KiB holds 2 node histograms: one model per chunk, levels sliced
    const stats = await expectParity({ rows: 400, features: 6, value: (_f, v) => v }, { rounds: 2, maxDepth: 4 }, { histogramBudgetBytes: 40 * 1024 }, seeds)
    expect(stats.chunks).toBe(5)
    expect(stats.nodeSlots).toBeLessThan(8)
    expect(stats.passes).toBeGreaterThan(5 * 2 * 4)
  })

  it('two chunks in flight (a group of several chunks: one on the device while the host reads the other back)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    // 6 features × 256 slots × 12 B ≈ 18 KiB a node histogram, 8 a model at depth 4: 300 KiB holds 2 models, halved 1
    const stats = await expectParity(
      { rows: 400, features: 6, value: (_f, v) => v },
      { rounds: 3, maxDepth: 4 },
      { histogramBudgetBytes: 300 * 1024 },
      [1, 2, 3, 4, 5],
    )
    expect(stats.lanes).toBe(2)
    expect(stats.chunks).toBe(5)
  })

  it('small nodes: a model with nothing to evaluate at a level while the others build (its rows still look up the pass table)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const seeds = [1, 2, 3, 4, 5, 6]
    await expectParity({ rows: 40, features: 3 }, { rounds: 3, maxDepth: 4, minChildWeight: 3, subsample: 0.5 }, {}, seeds)
    await expectParity({ rows: 100, features: 3 }, { rounds: 3, maxDepth: 4, minChildWeight: 10, subsample: 0.8 }, {}, seeds)
  })

  it('exact ties: two identical features, every candidate of one with a twin of equal gain (the lower feature wins)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    // features 0 and 1 are the same column: every candidate of one has a twin with an equal gain
    const same = new Float32Array(300)
    const stats = await expectParity(
      { rows: 300, features: 3, value: (f, v, r) => (f === 0 ? (same[r] = v) : f === 1 ? same[r] : v) },
      { rounds: 3, maxDepth: 3, colsampleBytree: 1 },
    )
    expect(stats.splits).toBeGreaterThan(0)
  })

  it('batched = one model at a time on the device (hashes), and progress per round', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const gpu = dev.gpu!
    const { data } = makeData(SMALL)
    const gd = uploadGbdtData(gpu, data)
    try {
      const params = { rounds: 3, maxDepth: 3 }
      const rounds: number[] = []
      const done: number[] = []
      const batched = await trainGbdtGroupWebgpu(gpu, gd, params, SEEDS, { onRound: (_i, r) => rounds.push(r), onModelDone: (i) => done.push(i) })
      const alone = []
      for (const s of SEEDS) alone.push(...(await trainGbdtGroupWebgpu(gpu, gd, params, [s])))
      expect(batched.map(treeHash)).toEqual(alone.map(treeHash))
      expect(rounds).toEqual([1, 2, 3])
      expect(done).toEqual([0, 1, 2])
    } finally {
      disposeGbdtData(gpu, gd)
    }
  })
})

/** a tree's depth: the most splits from its root to a leaf */
function depthOf(t: GbdtTree, node = 0): number {
  return t.feature[node] < 0 ? 0 : 1 + Math.max(depthOf(t, t.left[node]), depthOf(t, t.left[node] + 1))
}

describe('webgpu trees = CPU trees, a group whose models each have their own parameters (a fused model set)', () => {
  const base: Partial<GbdtParams> = { rounds: 3, maxDepth: 4, subsample: 0.8, colsampleBytree: 0.7 }
  const withMissing: DataSpec = { rows: 400, features: 7, value: (f, v, r) => ((r + f) % 11 === 0 ? NaN : v) }

  /** Trains the group on the device with `perModel` (host-planned and checked, and as the runtime trains); each model's hash must be the CPU engine's alone with its own parameters (and held-out rows). */
  async function expectPerModelParity(
    spec: DataSpec,
    perModel: readonly GbdtPerModelParams[],
    options: WebgpuTrainOptions = {},
  ): Promise<{ stats: WebgpuTrainStats; trees: GbdtTree[][] }> {
    const gpu = dev.gpu!
    const { data } = makeData(spec)
    const gd = uploadGbdtData(gpu, data)
    const seeds = perModel.map((_, i) => 40 + i)
    const stats = emptyStats()
    try {
      const models = await trainGbdtGroupWebgpu(gpu, gd, base, seeds, { checkFilter: true, ...options, perModel, stats })
      const planned = await trainGbdtGroupWebgpu(gpu, gd, base, seeds, { ...options, checkFilter: false, perModel })
      const alone = perModel.map((p, i) => treeHash(trainGbdtGroup(data, { ...base, ...p }, [seeds[i]], { heldOut: [options.heldOut?.[i] ?? null] })[0]))
      perModel.forEach((p, i) => {
        expect(treeHash(models[i]), `model ${i} ${JSON.stringify(p)}`).toBe(alone[i])
        expect(treeHash(planned[i]), `model ${i} ${JSON.stringify(p)}, rounds planned on the device`).toBe(alone[i])
        expect(models[i].params).toMatchObject(p)
      })
      return { stats, trees: models.map((m) => m.trees) }
    } finally {
      disposeGbdtData(gpu, gd)
    }
  }

  it('a depth × lambda × subsample grid in one chunk: each model its own trees, shallower ones stop while deeper ones go on', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const grid: GbdtPerModelParams[] = []
    for (const maxDepth of [2, 5]) for (const lambda of [0, 2]) for (const subsample of [0.7, 1]) grid.push({ maxDepth, lambda, subsample })
    const { stats, trees } = await expectPerModelParity(withMissing, grid)
    expect(stats.chunks).toBe(1)
    grid.forEach((p, i) => expect(Math.max(...trees[i].map((t) => depthOf(t))), `model ${i}`).toBe(p.maxDepth))
    expect(new Set(trees.map((t) => JSON.stringify(t))).size).toBe(grid.length)
  })

  it('every per-model field at once: alpha, gamma, min_child_weight, eta, colsample, subsample and rounds', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const own: GbdtPerModelParams[] = [
      { maxDepth: 2, alpha: 0.5, colsampleBytree: 0.4, rounds: 2 },
      { maxDepth: 5, gamma: 0.05, minChildWeight: 4, subsample: 0.6, eta: 0.3, rounds: 5 },
      { maxDepth: 4, lambda: 3, alpha: 0.1, gamma: 0.01, minChildWeight: 2, subsample: 1, colsampleBytree: 1, eta: 0.05, rounds: 4 },
      { minChildWeight: 0, lambda: 0, rounds: 1 },
      {},
    ]
    const { trees } = await expectPerModelParity(withMissing, own)
    own.forEach((p, i) => expect(trees[i], `model ${i}`).toHaveLength(p.rounds ?? base.rounds!))
  })

  it("a model set's folds fused: each model's rows held out as the CPU engine holds them out, with and without row sampling", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const folds = [0, 1, 2].map((f) => ({ begin: Math.floor((f * 400) / 3), end: Math.floor(((f + 1) * 400) / 3) }))
    await expectPerModelParity(withMissing, [{}, {}, {}], { heldOut: folds })
    await expectPerModelParity(withMissing, [{ subsample: 1, maxDepth: 3 }, { subsample: 1 }, { subsample: 1, lambda: 0 }], {
      heldOut: [folds[0], null, folds[2]],
    })
  })

  it('chunks and sliced levels: models with different depths and rounds across chunks, sized for the deepest and widest', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const own: GbdtPerModelParams[] = [
      { maxDepth: 2, rounds: 2, colsampleBytree: 0.5 },
      { maxDepth: 4, rounds: 4, colsampleBytree: 1, lambda: 0 },
      { maxDepth: 3, rounds: 3, subsample: 1 },
      { maxDepth: 4, rounds: 1, minChildWeight: 3 },
      { maxDepth: 1, rounds: 4, alpha: 0.3 },
    ]
    const spec: DataSpec = { rows: 400, features: 6, value: (f, v, r) => (f === 3 && r % 7 === 0 ? NaN : v) }
    // ≤ 6 features × ≤ 257 slots × 12 B ≈ 18 KiB per node histogram; the deepest model needs 8
    const chunked = await expectPerModelParity(spec, own, { histogramBudgetBytes: 300 * 1024 })
    expect(chunked.stats.chunks).toBeGreaterThan(1)
    expect(chunked.stats.nodeSlots).toBe(8)
    const sliced = await expectPerModelParity(spec, own, { histogramBudgetBytes: 40 * 1024 })
    expect(sliced.stats.chunks).toBe(own.length)
    expect(sliced.stats.nodeSlots).toBeLessThan(8)
  })

  it('global atomics and workgroup memory, per-model coefficients in the split filter', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const own: GbdtPerModelParams[] = [
      { lambda: 0, minChildWeight: 0 },
      { lambda: 5, minChildWeight: 9, gamma: 0.1 },
      { alpha: 1, colsampleBytree: 0.3 },
    ]
    const g = await expectPerModelParity(SMALL, own, { histogramMode: 'global' })
    expect(g.stats.sharedPasses).toBe(0)
    const s = await expectPerModelParity(SMALL, own, { histogramMode: 'shared' })
    expect(s.stats.sharedPasses).toBeGreaterThan(0)
  })

  it("progress per round of the chunk, and every model done once, in the caller's index order of its results", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const gpu = dev.gpu!
    const { data } = makeData(SMALL)
    const gd = uploadGbdtData(gpu, data)
    try {
      const own: GbdtPerModelParams[] = [{ rounds: 1 }, { rounds: 3 }, { rounds: 2 }]
      const rounds: [number, number][] = []
      const done: number[] = []
      const models = await trainGbdtGroupWebgpu(gpu, gd, base, [1, 2, 3], {
        perModel: own,
        onRound: (_i, r, total) => rounds.push([r, total]),
        onModelDone: (i) => done.push(i),
      })
      expect(models.map((m) => m.trees.length)).toEqual([1, 3, 2])
      expect(rounds).toEqual([
        [1, 3],
        [2, 3],
        [3, 3],
      ])
      expect([...done].sort()).toEqual([0, 1, 2])
    } finally {
      disposeGbdtData(gpu, gd)
    }
  })

  it("refuses a per-model maxBin or baseScore as the CPU engine does (the binning and the base score are the group's)", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const gpu = dev.gpu!
    const { data } = makeData(SMALL)
    const gd = uploadGbdtData(gpu, data)
    try {
      for (const bad of [{ maxBin: 32 } as GbdtPerModelParams, { baseScore: 0 } as GbdtPerModelParams]) {
        let cpuMessage = 'accepted'
        try {
          trainGbdtGroup(data, base, [1, 2], { perModel: [{}, bad] })
        } catch (err) {
          cpuMessage = (err as Error).message
        }
        expect(cpuMessage).toMatch(/must be the group's/)
        await expect(trainGbdtGroupWebgpu(gpu, gd, base, [1, 2], { perModel: [{}, bad] })).rejects.toThrow(cpuMessage)
      }
      expect(gpu.bufferStats().live).toBe(3)
    } finally {
      disposeGbdtData(gpu, gd)
    }
  })
})
