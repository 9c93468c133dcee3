// The test rows kept on the device: binned with the training cuts after the training rows, never
// drawn, they follow every tree through the row update, and their margins come back once per chunk
// equal to predictGbdt's over the same trees, bit for bit; the trees stay the CPU engine's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type HeldOutRows, predictGbdt, trainGbdtGroup, treeHash } from '../gbdt'
import type { GbdtTask } from '../gbdt/objective'
import type { GbdtModel } from '../gbdt/tree'
import { type DeviceHolder, makeData, noDevice, openForTests } from '../../testing/webgpu-trees'
import { disposeGbdtData, type GpuGbdtData, uploadGbdtData } from './device-data'
import type { GbdtModelWithTestMargins } from '../trees/gbdt-report'
import { testMarginsExact, trainGbdtGroupWebgpu, type WebgpuTrainOptions } from './trainer'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const ROWS = 480
const TEST_ROWS = 90
const F = 5
const SEEDS = [3, 4, 5]
const PARAMS = { rounds: 4, maxDepth: 3 }
/** training rows: some missing in features 0 and 1 only */
const trainValue = (f: number, v: number, r: number) => (f < 2 && (r + f) % 11 === 0 ? NaN : v)
/**
 * test rows: inside the training range (the bins then tell every split as predictGbdt's values do),
 * with missing values in every feature, also where no training row has one (the missing bin goes the default way)
 */
const testValue = (f: number, v: number, r: number) => ((r + 2 * f) % 7 === 0 ? NaN : Math.max(-1.5, Math.min(1.5, v)))

function dataFor(task: GbdtTask | undefined) {
  const K = task?.classes ?? 0
  const label = K > 0 ? { label: (xs: Float32Array, r: number) => (((r + Math.round((xs[2] || 0) * 2)) % K) + K) % K } : {}
  const train = makeData({ rows: ROWS, features: F, value: trainValue, ...label })
  const test = makeData({ rows: TEST_ROWS, features: F, seed: 2, value: testValue })
  return { data: train.data, xTest: test.x }
}

const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length)

const TASKS: (GbdtTask | undefined)[] = [undefined, { objective: 'binary', classes: 2 }, { objective: 'multiclass', classes: 3 }]
const FOLDS: (HeldOutRows | null)[] = [{ begin: 0, end: 160 }, { begin: 160, end: 320 }, null]

describe('webgpu trees: test predictions kept on the device', () => {
  for (const task of TASKS) {
    const name = task ? `${task.objective}${task.objective === 'multiclass' ? ` K=${task.classes}` : ''}` : 'regression'
    it(`${name}: sequential and batched, with and without folds, the margins are predictGbdt's bit for bit`, async (ctx) => {
      if (noDevice(dev)) return ctx.skip()
      const gpu = dev.gpu!
      const { data, xTest } = dataFor(task)
      const gd = uploadGbdtData(gpu, data, { x: xTest, rows: TEST_ROWS })
      try {
        for (const folds of [null, FOLDS]) {
          const cpu = SEEDS.map((s, i) => trainGbdtGroup(data, PARAMS, [s], { task, heldOut: [folds?.[i] ?? null] })[0])
          const options = (i?: number): WebgpuTrainOptions => ({ task, ...(folds ? { heldOut: i === undefined ? folds : [folds[i]] } : {}) })
          const batched = await trainGbdtGroupWebgpu(gpu, gd, PARAMS, SEEDS, options())
          const sequential: GbdtModelWithTestMargins[] = []
          for (let i = 0; i < SEEDS.length; i++) sequential.push(...(await trainGbdtGroupWebgpu(gpu, gd, PARAMS, [SEEDS[i]], options(i))))
          for (const models of [batched, sequential]) {
            expect(models.map(treeHash)).toEqual(cpu.map(treeHash))
            models.forEach((m) => {
              expect(m.testMargins, 'the engine gives the test margins').toBeDefined()
              expect(bits(m.testMargins!)).toEqual(bits(predictGbdt(m, xTest, TEST_ROWS, F)))
            })
          }
        }
      } finally {
        disposeGbdtData(gpu, gd)
      }
    })
  }

  it('every row in every tree (no row draws) and host-planned rounds: the test rows are still never trained on', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const gpu = dev.gpu!
    const { data, xTest } = dataFor(undefined)
    const gd = uploadGbdtData(gpu, data, { x: xTest, rows: TEST_ROWS })
    try {
      const params = { ...PARAMS, subsample: 1, colsampleBytree: 1 }
      const cpu = SEEDS.map((s) => treeHash(trainGbdtGroup(data, params, [s])[0]))
      for (const options of [{}, { hostPlanned: true }]) {
        const models = await trainGbdtGroupWebgpu(gpu, gd, params, SEEDS, options)
        expect(models.map(treeHash)).toEqual(cpu)
        for (const m of models) expect(bits(m.testMargins!)).toEqual(bits(predictGbdt(m, xTest, TEST_ROWS, F)))
      }
    } finally {
      disposeGbdtData(gpu, gd)
    }
  })
})

describe('webgpu trees: where the bins cannot tell a test value from the threshold', () => {
  // one split on feature 0 (3 bins: cuts 1, 2 and the sentinel 5) at `splitBin`, threshold `threshold`
  const model = (splitBin: number, threshold: number): GbdtModel => ({
    params: {} as GbdtModel['params'],
    seed: 1,
    features: 1,
    baseScore: 0.5,
    trees: [
      {
        feature: Int32Array.from([0, -1, -1]),
        splitBin: Int32Array.from([splitBin, 0, 0]),
        threshold: Float32Array.from([threshold, 0, 0]),
        defaultLeft: Uint8Array.from([0, 0, 0]),
        left: Int32Array.from([1, 0, 0]),
        leafValue: Float32Array.from([0, -1, 1]),
      } as unknown as GbdtModel['trees'][number],
    ],
  })
  const data = (testMin: number, testMax: number) =>
    ({ host: { nBins: Int32Array.from([3]) }, testMin: Float32Array.of(testMin), testMax: Float32Array.of(testMax) }) as unknown as GpuGbdtData

  it('a split at the last bin with a test value at or above its sentinel, or at bin −1 with one below minValue: no device margins', () => {
    expect(testMarginsExact(model(2, 5), data(0, 4.5))).toBe(true)
    expect(testMarginsExact(model(2, 5), data(0, 5))).toBe(false)
    expect(testMarginsExact(model(-1, -0.5), data(-0.5, 3))).toBe(true)
    expect(testMarginsExact(model(-1, -0.5), data(-0.6, 3))).toBe(false)
    // an inner split: bin ≤ splitBin is value < threshold for any value
    expect(testMarginsExact(model(1, 2), data(-100, 100))).toBe(true)
  })
})
