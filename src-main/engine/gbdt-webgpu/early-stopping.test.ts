// Early stopping on the WGSL trees engine: every model stops at the round the CPU engine stops it
// (its watch is the CPU engine's, fed the device's held-out margins, bit for bit the CPU engine's),
// keeps the same best round's trees, in a batched chunk (device- and host-planned), in chunks and alone; a
// stopped model leaves the chunk (compacted: the survivors' trees and test margins unchanged), at
// most one round past its stop; through the family (the backend's entry, its worker half) as on the cpu backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Workload } from '@shared/contract'
import { GBDT_DEFAULTS, type GbdtParams } from '@shared/families/gbdt'
import { type GbdtModel, type GbdtPerModelParams, type HeldOutRows, predictGbdt, trainGbdtGroup, treeHash } from '../gbdt'
import type { GbdtEarlyStopping } from '../gbdt/early-stopping'
import type { GbdtTask } from '../gbdt/objective'
import type { TrainedModel } from '../backend/types'
import { gbdtWorkerFamily } from '../families/gbdt'
import { type DeviceHolder, makeData, noDevice, openForTests } from '../../testing/webgpu-trees'
import { disposeGbdtData, uploadGbdtData } from './device-data'
import { emptyStats, trainGbdtGroupWebgpu, type WebgpuTrainOptions } from './trainer'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const ROWS = 300
const F = 12
const TEST_ROWS = 60
const SEEDS = [11, 12, 13, 14]
const PARAMS: Partial<GbdtParams> = { rounds: 20, maxDepth: 4, maxBin: 32, subsample: 0.8, colsampleBytree: 0.8 }
/** high learning rates overfit within a few rounds and stop; the slow one (second) trains to the end, after a stopped one */
const PER_MODEL: GbdtPerModelParams[] = [{ eta: 0.9 }, { eta: 0.03 }, { eta: 0.7, maxDepth: 5 }, { eta: 0.4 }]
/** three folds' held-out rows, as a model set's */
const FOLDS: HeldOutRows[] = [
  { begin: 0, end: 100 },
  { begin: 100, end: 200 },
  { begin: 200, end: 300 },
]
/** a histogram budget that puts each model in its own chunk (two chunks in flight at once where half of it still holds one) */
const CHUNK_BUDGET = 200_000
const HELD_OUT = SEEDS.map((_, i) => FOLDS[i % FOLDS.length])

interface Case {
  name: string
  task?: GbdtTask
  stopping: GbdtEarlyStopping
  label?: (xs: Float32Array, r: number, rng: { normal(): number }) => number
}

const CASES: Case[] = [
  { name: 'regression (MSE)', stopping: { rounds: 2, metric: 'mse' } },
  {
    name: 'binary (log loss)',
    task: { objective: 'binary', classes: 2 },
    stopping: { rounds: 3, metric: 'logloss' },
    label: (xs, _r, rng) => (xs[0] + 0.5 * xs[1] + 1.2 * rng.normal() > 0 ? 1 : 0),
  },
  {
    name: 'multiclass K=3 (log loss)',
    task: { objective: 'multiclass', classes: 3 },
    stopping: { rounds: 2, metric: 'logloss' },
    label: (xs, _r, rng) => {
      const s = xs[0] - 0.7 * xs[3] + rng.normal()
      return s < -0.5 ? 0 : s < 0.5 ? 1 : 2
    },
  },
]

const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length)
const rounds = (models: readonly GbdtModel[]) => models.map((m) => m.stoppedRounds)

describe('webgpu trees: early stopping', () => {
  for (const c of CASES) {
    it(`${c.name}: each model stops at the CPU engine's round with its trees, batched (device- and host-planned) and alone; stopped models leave`, async (ctx) => {
      if (noDevice(dev)) return ctx.skip()
      const gpu = dev.gpu!
      const { data } = makeData({ rows: ROWS, features: F, maxBin: 32, ...(c.label ? { label: c.label } : {}) })
      const test = makeData({ rows: TEST_ROWS, features: F, seed: 9, value: (_f, v) => Math.max(-1.5, Math.min(1.5, v)) })
      const gd = uploadGbdtData(gpu, data, { x: test.x, rows: TEST_ROWS })
      try {
        const common = { task: c.task, earlyStopping: c.stopping }
        const cpu = trainGbdtGroup(data, PARAMS, SEEDS, { ...common, perModel: PER_MODEL, heldOut: HELD_OUT })
        const K = c.task?.objective === 'multiclass' ? c.task.classes : 1
        const R = PARAMS.rounds!
        // the case is one: the first model stops early, a later one trains every round and keeps them all
        expect(cpu[0].stoppedRounds!.roundsTrained).toBeLessThan(R)
        expect(cpu.some((m) => m.stoppedRounds!.roundsTrained === R && m.stoppedRounds!.bestRound === R)).toBe(true)
        const stopped = cpu.filter((m) => m.stoppedRounds!.roundsTrained < R).length

        const batched = emptyStats()
        const options: WebgpuTrainOptions = { ...common, perModel: PER_MODEL, heldOut: HELD_OUT }
        const device = await trainGbdtGroupWebgpu(gpu, gd, PARAMS, SEEDS, { ...options, stats: batched })
        const host = emptyStats()
        const hostPlanned = await trainGbdtGroupWebgpu(gpu, gd, PARAMS, SEEDS, { ...options, hostPlanned: true, stats: host })
        const chunked = emptyStats()
        const chunks = await trainGbdtGroupWebgpu(gpu, gd, PARAMS, SEEDS, { ...options, histogramBudgetBytes: CHUNK_BUDGET, stats: chunked })
        expect(chunked.chunks).toBeGreaterThan(1)
        const alone: GbdtModel[] = []
        for (let i = 0; i < SEEDS.length; i++)
          alone.push(...(await trainGbdtGroupWebgpu(gpu, gd, PARAMS, [SEEDS[i]], { ...common, perModel: [PER_MODEL[i]], heldOut: [HELD_OUT[i]] })))
        for (const models of [device, hostPlanned, chunks, alone]) {
          expect(rounds(models)).toEqual(rounds(cpu))
          expect(models.map(treeHash)).toEqual(cpu.map(treeHash))
          models.forEach((m, i) => expect(m.trees.length).toBe(cpu[i].stoppedRounds!.bestRound * K))
        }
        // stopped models left the chunk: compacted, each grown at most the one round in flight when
        // its stop was read (device-planned), none past it where the host plans every round
        expect(batched.compactions).toBeGreaterThan(0)
        expect(batched.roundsPastStop).toBeLessThanOrEqual(stopped)
        expect(host.roundsPastStop).toBe(0)
        // the test margins the device kept: a model that keeps every tree it grew has them (its
        // margins moved with it), predictGbdt's bit for bit; a stopped one has none (the report predicts on the host)
        device.forEach((m, i) => {
          const keepsAll = cpu[i].stoppedRounds!.bestRound === R
          expect(m.testMargins !== undefined, `model ${i}`).toBe(keepsAll)
          if (m.testMargins) expect(bits(m.testMargins)).toEqual(bits(predictGbdt(m, test.x, TEST_ROWS, F)))
        })
      } finally {
        disposeGbdtData(gpu, gd)
      }
    }, 60_000)
  }

  it('every model needs held-out rows: refused before the device trains, naming the option', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const gpu = dev.gpu!
    const { data } = makeData({ rows: 60, features: 3 })
    const gd = uploadGbdtData(gpu, data)
    try {
      const early = { earlyStopping: { rounds: 2, metric: 'mse' } } as const
      await expect(trainGbdtGroupWebgpu(gpu, gd, { rounds: 3 }, [1, 2], { ...early, heldOut: [{ begin: 0, end: 20 }, null] })).rejects.toThrow(
        /earlyStopping needs every model's held-out rows \(heldOut\); model 1 has none/,
      )
      await expect(trainGbdtGroupWebgpu(gpu, gd, { rounds: 3 }, [1], early)).rejects.toThrow(/model 0 has none/)
    } finally {
      disposeGbdtData(gpu, gd)
    }
  })

  it("through the family as a worker runs it (a validation fraction): each model records the cpu backend's rounds, best round, trees and scores", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const workload: Workload<GbdtParams> = {
      size: 400,
      features: 8,
      seed: 42,
      target: 'teacher',
      testSplit: 0.2,
      model: { ...GBDT_DEFAULTS, rounds: 20, maxDepth: 4, eta: 0.9, maxBin: 32 },
      validation: 0.25,
      earlyStopping: { rounds: 2, metric: 'mse' },
    }
    const report = async (backend: 'cpu' | 'webgpu', fused: boolean): Promise<TrainedModel[]> => {
      const started = await gbdtWorkerFamily.init(backend)
      const data = gbdtWorkerFamily.prepare(started, workload)
      try {
        const out: TrainedModel[] = []
        await gbdtWorkerFamily.train(
          started,
          data,
          workload,
          [0, 1, 2],
          { fused },
          { onProgress: () => {}, onModelDone: (m) => void out.push(m), shouldStop: () => false },
        )
        return out.sort((a, b) => a.index - b.index)
      } finally {
        gbdtWorkerFamily.disposeData(started, data)
        started.runtime.release()
      }
    }
    const fields = (ms: TrainedModel[]) => ms.map((m) => [m.fingerprint, m.roundsTrained, m.bestRound, m.testMse, m.validationMse])
    const cpu = await report('cpu', true)
    expect(cpu[0].roundsTrained).toBeLessThan(20)
    expect(fields(await report('webgpu', true))).toEqual(fields(cpu))
    expect(fields(await report('webgpu', false))).toEqual(fields(cpu))
  })
})
