// Successive halving on the WGSL trees engine: a model continued from an earlier rung's trees (its
// training rows' margins and column sampler from the CPU engine's ModelState.resume, uploaded as the
// device's start) grows the trees it would have grown straight through, bit for bit, and the CPU
// engine's resumed ones — batched (device- and host-planned; resumed and fresh models in their own
// chunks) and alone; through the family (a rung's job with the earlier rung's artifacts), the cpu backend's reports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Workload } from '@shared/contract'
import { GBDT_DEFAULTS, type GbdtParams } from '@shared/families/gbdt'
import { type GbdtPerModelParams, type HeldOutRows, trainGbdtGroup, treeHash } from '../gbdt'
import type { GbdtTask } from '../gbdt/objective'
import type { GbdtModel } from '../gbdt/tree'
import type { TrainedModel } from '../backend/types'
import { gbdtWorkerFamily } from '../families/gbdt'
import { type DeviceHolder, makeData, noDevice, openForTests } from '../../testing/webgpu-trees'
import { disposeGbdtData, uploadGbdtData } from './device-data'
import { emptyStats, trainGbdtGroupWebgpu } from './trainer'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const ROWS = 300
const F = 12
const SEEDS = [21, 22, 23]
/** the first rung's rounds, then the next rung's */
const FIRST = 3
const NEXT = 8
const PARAMS: Partial<GbdtParams> = { maxDepth: 4, maxBin: 32, eta: 0.3, subsample: 0.8, colsampleBytree: 0.7 }
const PER_MODEL: GbdtPerModelParams[] = [{ eta: 0.5 }, { maxDepth: 3, colsampleBytree: 0.5 }, { subsample: 0.6 }]
const HELD_OUT: HeldOutRows[] = [
  { begin: 0, end: 100 },
  { begin: 100, end: 200 },
  { begin: 200, end: 300 },
]

const TASKS: { name: string; task?: GbdtTask; label?: (xs: Float32Array, r: number, rng: { normal(): number }) => number }[] = [
  { name: 'regression' },
  { name: 'binary', task: { objective: 'binary', classes: 2 }, label: (xs, _r, rng) => (xs[0] + 0.5 * xs[1] + rng.normal() > 0 ? 1 : 0) },
  {
    name: 'multiclass K=3',
    task: { objective: 'multiclass', classes: 3 },
    label: (xs, _r, rng) => {
      const s = xs[0] - 0.7 * xs[3] + rng.normal()
      return s < -0.5 ? 0 : s < 0.5 ? 1 : 2
    },
  },
]

describe('webgpu trees: successive halving (a model resumed from its trees)', () => {
  for (const { name, task, label } of TASKS) {
    it(`${name}: resumed = straight = the CPU engine's resumed, batched (device- and host-planned, resumed beside fresh) and alone`, async (ctx) => {
      if (noDevice(dev)) return ctx.skip()
      const gpu = dev.gpu!
      const { data } = makeData({ rows: ROWS, features: F, maxBin: 32, ...(label ? { label } : {}) })
      const gd = uploadGbdtData(gpu, data)
      try {
        const common = { task, perModel: PER_MODEL, heldOut: HELD_OUT }
        const next = { ...PARAMS, rounds: NEXT }
        const straight = trainGbdtGroup(data, next, SEEDS, common).map(treeHash)
        const first = await trainGbdtGroupWebgpu(gpu, gd, { ...PARAMS, rounds: FIRST }, SEEDS, common)
        const trees = first.map((m) => m.trees)
        const cpu = trainGbdtGroup(data, next, SEEDS, { ...common, resume: trees })
        expect(cpu.map(treeHash)).toEqual(straight)

        const batched = await trainGbdtGroupWebgpu(gpu, gd, next, SEEDS, { ...common, resume: trees })
        const hostPlanned = await trainGbdtGroupWebgpu(gpu, gd, next, SEEDS, { ...common, resume: trees, hostPlanned: true })
        const alone: GbdtModel[] = []
        for (let i = 0; i < SEEDS.length; i++)
          alone.push(...(await trainGbdtGroupWebgpu(gpu, gd, next, [SEEDS[i]], { task, perModel: [PER_MODEL[i]], heldOut: [HELD_OUT[i]], resume: [trees[i]] })))
        // the middle model starts from nothing (a rung's first): its own chunk, the others resumed
        const stats = emptyStats()
        const mixed = await trainGbdtGroupWebgpu(gpu, gd, next, SEEDS, { ...common, resume: [trees[0], null, trees[2]], stats })
        expect(stats.chunks).toBe(2)
        for (const models of [batched, hostPlanned, alone, mixed]) expect(models.map(treeHash)).toEqual(straight)
        // each records the rounds it grew here (the runner sums them over the rungs), as the CPU engine's
        expect(batched.map((m) => m.roundsGrown)).toEqual(cpu.map((m) => m.roundsGrown))
        expect(mixed.map((m) => m.roundsGrown)).toEqual([NEXT - FIRST, NEXT, NEXT - FIRST])
        expect(first.map((m) => m.roundsGrown)).toEqual([undefined, undefined, undefined])
      } finally {
        disposeGbdtData(gpu, gd)
      }
    }, 60_000)
  }

  it('refused as the CPU engine refuses: beside early stopping, one entry per model, nothing left to grow', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const gpu = dev.gpu!
    const { data } = makeData({ rows: 60, features: 3 })
    const gd = uploadGbdtData(gpu, data)
    try {
      const [m] = await trainGbdtGroupWebgpu(gpu, gd, { rounds: 2 }, [1])
      const heldOut = [{ begin: 0, end: 20 }]
      await expect(
        trainGbdtGroupWebgpu(gpu, gd, { rounds: 4 }, [1], { resume: [m.trees], heldOut, earlyStopping: { rounds: 2, metric: 'mse' } }),
      ).rejects.toThrow('resume continues each model from its last round: not with earlyStopping')
      await expect(trainGbdtGroupWebgpu(gpu, gd, { rounds: 4 }, [1, 2], { resume: [m.trees] })).rejects.toThrow('resume has 1 entries for 2 models')
      await expect(trainGbdtGroupWebgpu(gpu, gd, { rounds: 2 }, [1], { resume: [m.trees] })).rejects.toThrow(/has nothing left of its 2/)
    } finally {
      disposeGbdtData(gpu, gd)
    }
  })

  it("through the family: a rung's job continues the earlier rung's artifacts, as the cpu backend does (trees, rounds grown, scores)", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const workload = (rounds: number): Workload<GbdtParams> => ({
      size: 400,
      features: 8,
      seed: 7,
      target: 'teacher',
      testSplit: 0.2,
      model: { ...GBDT_DEFAULTS, rounds, maxDepth: 4, maxBin: 32, subsample: 0.8, colsampleBytree: 0.8 },
    })
    const report = async (backend: 'cpu' | 'webgpu', w: Workload<GbdtParams>, fused: boolean, earlier?: TrainedModel[]): Promise<TrainedModel[]> => {
      const started = await gbdtWorkerFamily.init(backend)
      const data = gbdtWorkerFamily.prepare(started, w)
      try {
        const out: TrainedModel[] = []
        const resumeOf = earlier ? (index: number) => ({ index, rounds: FIRST, artifact: earlier[index].artifact! }) : undefined
        const hooks = { onProgress: () => {}, onModelDone: (m: TrainedModel) => void out.push(m), shouldStop: () => false }
        await gbdtWorkerFamily.train(started, data, w, [0, 1], { fused, keep: true, ...(resumeOf ? { resumeOf } : {}) }, hooks)
        return out.sort((a, b) => a.index - b.index)
      } finally {
        gbdtWorkerFamily.disposeData(started, data)
        started.runtime.release()
      }
    }
    const fields = (ms: TrainedModel[]) => ms.map((m) => [m.fingerprint, m.roundsTrained, m.testMse])
    const rung = await report('webgpu', workload(FIRST), true)
    const cpu = await report('cpu', workload(NEXT), true, rung)
    expect(cpu.map((m) => m.roundsTrained)).toEqual([NEXT - FIRST, NEXT - FIRST])
    expect(cpu.map((m) => m.fingerprint)).toEqual((await report('cpu', workload(NEXT), true)).map((m) => m.fingerprint))
    expect(fields(await report('webgpu', workload(NEXT), true, rung))).toEqual(fields(cpu))
    expect(fields(await report('webgpu', workload(NEXT), false, rung))).toEqual(fields(cpu))
  })
})
