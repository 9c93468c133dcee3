// What a round asks of the device, counted (DeviceWork, the runtime's deviceCounters): rounds
// planned on the device take one submit and one read-back each — its trees' records (24 bytes a
// node a model's tree can have), the next round's max |g| and the rows each model drew — and a
// host-planned level one read-back a pass; sequential training costs the same per model. A
// classifier's rounds too: its gradients and hessians come from the margins on the device (K trees
// a round for K classes). The rows are drawn on the device (the counter-based generator, from a few
// words a model), so nothing per row crosses the bus between rounds, either way. The test rows
// follow the trees on the device: their margins (4 B a tree and test row) are read back once per chunk.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeviceCounters } from '@shared/contract'
import { subtractDeviceCounters } from '@shared/contract/device-counters'
import { featuresPerTree, resolveGbdtParams } from '@shared/families/gbdt'
import { trainGbdtGroup, treeHash } from '../gbdt'
import type { GbdtTask } from '../gbdt/objective'
import { disposeGbdtData, uploadGbdtData } from './device-data'
import { hessianWords, MODEL_INFO_WORDS, ROW_DRAW_WORDS, TREE_WORDS, UNIFORM_FIELDS } from './tree-kernels'
import { cpuHashes, type DeviceHolder, makeData, noDevice, openForTests } from '../../testing/webgpu-trees'
import { emptyStats, trainGbdtGroupWebgpu, type WebgpuTrainOptions, type WebgpuTrainStats } from './trainer'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const ROUNDS = 4
const DEPTH = 4
const SEEDS = [7, 8, 9]
/** a tree of depth 4 has at most 31 nodes */
const TREE_NODES = 2 ** (DEPTH + 1) - 1
const FEATURES = 6
const ROWS = 800
/** test rows kept on the device (binned with the training cuts), their margins read back at the end of a chunk */
const TEST_ROWS = 50

async function counted(options: WebgpuTrainOptions, seeds = SEEDS, rows = ROWS): Promise<{ work: DeviceCounters; stats: WebgpuTrainStats }> {
  const gpu = dev.gpu!
  const K = options.task?.classes ?? 0
  const { data } = makeData({
    rows,
    features: FEATURES,
    value: (f, v, r) => ((r + f) % 13 === 0 ? NaN : v),
    ...(K > 0 ? { label: (xs: Float32Array, r: number) => (((r + Math.round((xs[1] || 0) * 2)) % K) + K) % K } : {}),
  })
  const test = makeData({ rows: TEST_ROWS, features: FEATURES, seed: 2 })
  const gd = uploadGbdtData(gpu, data, { x: test.x, rows: TEST_ROWS })
  const params = { rounds: ROUNDS, maxDepth: DEPTH }
  const stats = emptyStats()
  try {
    // warm: the pipelines compile once, outside the count
    await trainGbdtGroupWebgpu(gpu, gd, { ...params, rounds: 1 }, seeds, options)
    const before = gpu.work.snapshot()
    const models = await trainGbdtGroupWebgpu(gpu, gd, params, seeds, { ...options, stats })
    const work = subtractDeviceCounters(gpu.work.snapshot(), before)
    expect(models.every((m) => m.testMargins?.length === TEST_ROWS * (K > 2 ? K : 1))).toBe(true)
    const cpu = options.task ? seeds.map((s) => treeHash(trainGbdtGroup(data, params, [s], { task: options.task })[0])) : cpuHashes(data, params, seeds)
    expect(models.map(treeHash)).toEqual(cpu)
    return { work, stats }
  } finally {
    disposeGbdtData(gpu, gd)
  }
}

describe('webgpu trees: the device work of a round', () => {
  it('rounds planned on the device: one submit and one read-back a round (≤ 1 a level), 24 B a tree node and 8 B a model read back; the test margins once', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const { work, stats } = await counted({})
    const C = SEEDS.length
    expect(stats.deviceRounds).toBe(ROUNDS)
    expect(stats.hostRounds).toBe(0)
    // the first round's gradient, then one per round, then the chunk's test margins
    expect(work.submits).toBe(ROUNDS + 2)
    expect(work.readbacks).toBe(ROUNDS + 2)
    const levels = ROUNDS * (DEPTH + 1)
    expect((work.readbacks - 1) / levels).toBeLessThanOrEqual(1)
    // per model: the first round's max |g| and rows drawn (8 B), then per round its tree's records
    // (24 B a node the tree can have) and the error word (4 B), and the next round's max |g| and rows
    // drawn but after the last round; at the end its test rows' margins (4 B a row)
    const treeBytes = ROUNDS * C * TREE_NODES * 24
    expect(work.bytesReadBack).toBe(treeBytes + 8 * C + ROUNDS * 4 * C + (ROUNDS - 1) * 8 * C + C * TEST_ROWS * 4)
    expect(TREE_WORDS * 4).toBe(24)
    expect(work.dispatches).toBeGreaterThan(0)
  })

  it('uploads a few words a model a round and nothing per row: the row draws are made on the device', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const C = SEEDS.length
    const { subsample, colsampleBytree } = resolveGbdtParams()
    expect(subsample).toBeLessThan(1)
    const perTree = featuresPerTree(colsampleBytree, FEATURES)
    // per round and model: its (feature, slot offset) pairs, its row draw and its ModelInfo; the
    // uniform records of the first gradient, each round's levels and last row update and the next
    // round's gradient; once per chunk, the start margins (4 B a model and row, test rows included)
    const perRound = C * (perTree * 2 + ROW_DRAW_WORDS + MODEL_INFO_WORDS) * 4
    const records = 1 + ROUNDS * (DEPTH + 2) + (ROUNDS - 1)
    for (const rows of [ROWS, 4 * ROWS]) {
      const { stats } = await counted({}, SEEDS, rows)
      expect(stats.bytesUploaded).toBe(C * (rows + TEST_ROWS) * 4 + ROUNDS * perRound + records * UNIFORM_FIELDS.length * 4)
    }
  })

  it('sequential: the same per model (one submit and one read-back a round, and the test margins)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const total = { submits: 0, readbacks: 0 }
    for (const s of SEEDS) {
      const { work } = await counted({}, [s])
      total.submits += work.submits
      total.readbacks += work.readbacks
    }
    expect(total).toEqual({ submits: SEEDS.length * (ROUNDS + 2), readbacks: SEEDS.length * (ROUNDS + 2) })
  })

  it('levels planned by the host: one read-back a pass (here one pass a level), the choices of the level', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const { work, stats } = await counted({ hostPlanned: true })
    expect(stats.hostRounds).toBe(ROUNDS)
    // per round: the roots' sums, ≤ one pass a level, the last row update with the next gradient; the test margins
    expect(work.readbacks).toBeLessThanOrEqual(2 + ROUNDS * (DEPTH + 2))
    expect(stats.passes).toBeLessThanOrEqual(ROUNDS * DEPTH)
  })

  it('classifiers planned on the device: one submit and one read-back a round, 32 B a tree node and 12 B (max |g|, max h, rows drawn) a tree read back; the test margins once', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const tasks: GbdtTask[] = [
      { objective: 'binary', classes: 2 },
      { objective: 'multiclass', classes: 3 },
    ]
    for (const task of tasks) {
      const { work, stats } = await counted({ task }, SEEDS.slice(0, 2))
      // trees a round: one per model, K per K-class model
      const trees = 2 * (task.objective === 'multiclass' ? task.classes : 1)
      expect(stats.deviceRounds).toBe(ROUNDS)
      expect(work.submits).toBe(ROUNDS + 2)
      expect(work.readbacks).toBe(ROUNDS + 2)
      const treeBytes = ROUNDS * trees * TREE_NODES * hessianWords(true).tree * 4
      expect(work.bytesReadBack).toBe(treeBytes + 12 * trees + ROUNDS * 4 * trees + (ROUNDS - 1) * 12 * trees + trees * TEST_ROWS * 4)
    }
    expect(hessianWords(true).tree * 4).toBe(32)
  })
})
