// The WebGPU trees engine's classifiers against the CPU engine's, on lavapipe here and in CI: every
// model's tree hash equal (bit-identical trees) for binary:logistic and multi:softprob (K = 3 and 5),
// with sampling on and off, one model alone (sequential) and several in one program (batched), host-
// planned with every device decision checked against the CPU engine's scan and planned on the device;
// and squared error through the same hessian kernels (each row's hessian 1) grows regression's trees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trainGbdtGroup, treeHash, treesArtifact, type GbdtModel, type GbdtParams } from '../gbdt'
import type { GbdtTask } from '../gbdt/objective'
import { disposeGbdtData, uploadGbdtData } from './device-data'
import { cpuHashes, type DataSpec, type DeviceHolder, makeData, noDevice, openForTests } from '../../testing/webgpu-trees'
import { emptyStats, trainGbdtGroupWebgpu, type WebgpuTrainOptions, type WebgpuTrainStats } from './trainer'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const SEEDS = [11, 12, 13]

/** a smooth score of a row's features (missing values count 0.3) */
function score(xs: Float32Array): number {
  let s = 0
  xs.forEach((v, f) => (s += Number.isNaN(v) ? 0.3 : v * ((f % 3) + 1) * 0.4))
  return s
}

/** labels 0 … K−1: the score with noise, cut into K bands */
function classes(K: number): DataSpec['label'] {
  return (xs, _r, rng) => {
    const s = score(xs) + 0.6 * rng.normal()
    return Math.min(K - 1, Math.max(0, Math.floor(s + K / 2)))
  }
}

/** every model of `seeds` on the CPU engine alone (sequential's trees), with the task */
function cpuModels(spec: DataSpec, params: Partial<GbdtParams>, seeds: readonly number[], task?: GbdtTask): GbdtModel[] {
  const { data } = makeData(spec)
  return seeds.map((s) => trainGbdtGroup(data, params, [s], { task })[0])
}

/**
 * `seeds` batched on the device (and, with `sequential`, each alone), host-planned with every device
 * decision checked and planned on the device: each model's hash is the CPU engine's.
 */
async function expectParity(
  spec: DataSpec,
  params: Partial<GbdtParams>,
  options: WebgpuTrainOptions,
  seeds: readonly number[] = SEEDS,
  sequential = false,
): Promise<WebgpuTrainStats> {
  const gpu = dev.gpu!
  const { data } = makeData(spec)
  const gd = uploadGbdtData(gpu, data)
  const stats = emptyStats()
  try {
    const cpuTrees = options.task ? cpuModels(spec, params, seeds, options.task) : null
    const cpu = cpuTrees ? cpuTrees.map(treeHash) : cpuHashes(data, params, seeds)
    const checked = await trainGbdtGroupWebgpu(gpu, gd, params, seeds, { checkFilter: true, ...options, stats })
    expect(checked.map(treeHash)).toEqual(cpu)
    const planned = await trainGbdtGroupWebgpu(gpu, gd, params, seeds, { ...options, stats })
    expect(planned.map(treeHash)).toEqual(cpu)
    // the run's artifact: objective, classes, base score and trees (K a round, round-major) as the CPU engine's
    if (cpuTrees) expect(planned.map(treesArtifact)).toEqual(cpuTrees.map(treesArtifact))
    if (sequential) {
      for (let i = 0; i < seeds.length; i++) {
        const [alone] = await trainGbdtGroupWebgpu(gpu, gd, params, [seeds[i]], options)
        expect(treeHash(alone)).toBe(cpu[i])
      }
    }
  } finally {
    disposeGbdtData(gpu, gd)
  }
  return stats
}

const SPEC: DataSpec = { rows: 400, features: 5, value: (f, v, r) => (f === 1 && r % 9 === 0 ? NaN : v) }
const SAMPLED = { subsample: 0.8, colsampleBytree: 0.8 }

describe('webgpu trees: classifiers = CPU trees (tree hash)', () => {
  it('squared error through the hessian kernels (each row 1, quantised per tree) grows the regression trees', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const stats = await expectParity(SPEC, { rounds: 3, maxDepth: 4, ...SAMPLED }, { squaredErrorHessians: true })
    expect(stats.splits).toBeGreaterThan(0)
    // both workgroup-memory (64-bit slots) and global histograms
    await expectParity(SPEC, { rounds: 2, maxDepth: 3, minChildWeight: 3 }, { squaredErrorHessians: true, histogramMode: 'global' })
  })

  it('binary:logistic: sampling off and on, sequential and batched', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const task: GbdtTask = { objective: 'binary', classes: 2 }
    const spec = { ...SPEC, label: classes(2) }
    const stats = await expectParity(spec, { rounds: 3, maxDepth: 3 }, { task }, SEEDS.slice(0, 2), true)
    expect(stats.splits).toBeGreaterThan(0)
    await expectParity(spec, { rounds: 3, maxDepth: 4, baseScore: 0.3, minChildWeight: 0.5, lambda: 0.5, alpha: 0.5, gamma: 0.05, ...SAMPLED }, { task })
  })

  it('binary:logistic with λ 0 and min_child_weight 0 on separable labels: hessians near the 1e-16 floor quantise to 0 (sides with Σqh = 0)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const task: GbdtTask = { objective: 'binary', classes: 2 }
    const spec: DataSpec = { rows: 300, features: 3, value: (_f, v) => v, label: (xs) => (xs[0] > 0.2 ? 1 : 0) }
    // base_score 0.999999: round 1 sends the 0-labelled rows to p ≈ 0 (h at the floor, g ≈ 0), whose hessians then quantise to 0
    await expectParity(spec, { rounds: 4, maxDepth: 3, eta: 1, lambda: 0, minChildWeight: 0, baseScore: 0.999999 }, { task }, [5])
  })

  it('multi:softprob, K = 3 and 5: K trees a round, sampling off and on, sequential and batched', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const three: GbdtTask = { objective: 'multiclass', classes: 3 }
    const stats = await expectParity({ ...SPEC, label: classes(3) }, { rounds: 2, maxDepth: 3, ...SAMPLED }, { task: three }, SEEDS.slice(0, 2), true)
    expect(stats.splits).toBeGreaterThan(0)
    const five: GbdtTask = { objective: 'multiclass', classes: 5 }
    await expectParity({ ...SPEC, rows: 300, label: classes(5) }, { rounds: 2, maxDepth: 3 }, { task: five })
    // a budget of one model's K trees a chunk: chunks of whole models (a model's classes side by side)
    const chunked = await expectParity({ ...SPEC, label: classes(3) }, { rounds: 2, maxDepth: 3 }, { task: three, histogramBudgetBytes: 300_000 })
    expect(chunked.chunks).toBeGreaterThan(2)
    expect(chunked.modelsPerChunk % 3).toBe(0)
  })

  it('sliced levels (a budget of a few node histograms): binary, and a K-class model sharing its slots among its K trees', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    // 6 features of ≤ 256 bins × 20 B ≤ 30 KiB a node: 70 KiB holds a few node histograms (depth 4 wants 8), 100 KiB a few for 3 trees
    const spec: DataSpec = { rows: 400, features: 6, value: (_f, v) => v }
    const binary = await expectParity(
      { ...spec, label: classes(2) },
      { rounds: 2, maxDepth: 4 },
      { task: { objective: 'binary', classes: 2 }, histogramBudgetBytes: 70 * 1024 },
      [1, 2],
    )
    expect(binary.nodeSlots).toBeLessThan(8)
    const three = await expectParity(
      { ...spec, label: classes(3) },
      { rounds: 2, maxDepth: 4 },
      { task: { objective: 'multiclass', classes: 3 }, histogramBudgetBytes: 100 * 1024 },
      [1, 2],
    )
    expect(three.nodeSlots).toBeLessThan(8)
    expect(three.modelsPerChunk).toBe(3)
  })
})
