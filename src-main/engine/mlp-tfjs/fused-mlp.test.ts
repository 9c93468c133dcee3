// In-process checks of the fused program on the cpu backend (real worker processes are covered by
// pool/pool.integration.test.ts).
import * as tf from '@tensorflow/tfjs-core'
import '@tensorflow/tfjs-backend-cpu'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Workload } from '@shared/contract'
import type { MlpParams } from '@shared/families'
import type { TrainedModel, TrainOptions } from '../backend/types'
import { datasetFor } from '../datasets/generated'
import { type DataTensors, disposeData, trainModels as trainWithHooks, uploadData, warmUp } from './tfjs-training'
import { FusedMlp } from './fused-mlp'
import { ADAM_DEFAULTS } from '../mlp/adam'
import { selectModels } from '../mlp/fused-layout'
import { Rng } from '../random'

type W = Workload<MlpParams>
const workload: W = {
  size: 600,
  features: 12,
  seed: 3,
  target: 'teacher',
  testSplit: 0.2,
  model: { kind: 'mlp', epochs: 3, batchSize: 64, hidden: [16], lr: 0.01 },
}

/** trains and collects the models as the worker would report them */
async function trainModels(
  engine: typeof tf,
  data: DataTensors,
  w: W,
  indices: number[],
  fused: boolean,
  heldOutOf?: TrainOptions['heldOutOf'],
): Promise<TrainedModel[]> {
  const done: TrainedModel[] = []
  await trainWithHooks(
    engine,
    data,
    w,
    indices,
    { fused, ...(heldOutOf ? { heldOutOf } : {}) },
    { onProgress: () => {}, onModelDone: (m) => done.push(m), shouldStop: () => false },
  )
  return done
}

beforeAll(async () => {
  await tf.setBackend('cpu')
})

describe('fused N-model program', () => {
  for (const hidden of [[16], [16, 8]]) {
    for (const placement of ['host', 'device'] as const) {
      it(`matches one-model-at-a-time training per model (hidden ${hidden}, ${placement} batches)`, async () => {
        const w = { ...workload, model: { ...workload.model, hidden } }
        const data = uploadData(tf, datasetFor(w), w, placement)
        const fused = await trainModels(tf, data, w, [0, 1, 2, 3], true)
        const single = await trainModels(tf, data, w, [0, 1, 2, 3], false)
        disposeData(data)
        expect(fused.map((m) => m.index)).toEqual([0, 1, 2, 3])
        for (let i = 0; i < 4; i++) {
          expect(Math.abs(fused[i].testMse - single[i].testMse) / single[i].testMse).toBeLessThan(1e-5)
          expect(fused[i].seed).toBe(workload.seed + i + 1)
        }
        // different seeds → different models
        expect(new Set(fused.map((m) => m.testMse.toFixed(7))).size).toBe(4)
      })
    }
  }

  it("a model set's folds fused: held-out rows weigh nothing (their labels change no bit), the rest weigh 1/(rows in the batch); fused = one at a time", async () => {
    const dataset = datasetFor(workload)
    const folds = [0, 1, 2].map((f) => ({ begin: Math.floor((f * dataset.train) / 3), end: Math.floor(((f + 1) * dataset.train) / 3) }))
    const heldOutOf = (i: number) => folds[i % 3]
    const data = uploadData(tf, dataset, workload, 'host')
    const fused = await trainModels(tf, data, workload, [0, 1, 2], true, heldOutOf)
    const single = await trainModels(tf, data, workload, [0, 1, 2], false, heldOutOf)
    disposeData(data)
    for (let i = 0; i < 3; i++) {
      expect(Math.abs(fused[i].testMse - single[i].testMse) / single[i].testMse).toBeLessThan(1e-5)
      expect(fused[i].validationMse).toBeCloseTo(single[i].validationMse!, 5)
    }
    // fold 1's labels scrambled: the model that holds fold 1 out is the same, bit for bit; the others are not
    const yTrain = Float32Array.from(dataset.yTrain)
    for (let r = folds[1].begin; r < folds[1].end; r++) yTrain[r] = 100 * Math.sin(r)
    const scrambled = uploadData(tf, { ...dataset, yTrain }, workload, 'host')
    const again = await trainModels(tf, scrambled, workload, [0, 1, 2], true, heldOutOf)
    disposeData(scrambled)
    expect(again[1].testMse).toBe(fused[1].testMse)
    expect(again[0].testMse).not.toBe(fused[0].testMse)
  })

  it('host and device batch placement give the same models', async () => {
    const host = uploadData(tf, datasetFor(workload), workload, 'host')
    const device = uploadData(tf, datasetFor(workload), workload, 'device')
    const a = await trainModels(tf, host, workload, [0, 1], true)
    const b = await trainModels(tf, device, workload, [0, 1], true)
    disposeData(host)
    disposeData(device)
    expect(a.map((m) => m.testMse)).toEqual(b.map((m) => m.testMse))
  })

  it('learns the teacher: loss falls and test MSE ends well below the target variance', async () => {
    const w = { ...workload, size: 2000, model: { ...workload.model, epochs: 8 } }
    const data = uploadData(tf, datasetFor(w), w, 'host')
    const one = await trainModels(tf, data, { ...w, model: { ...w.model, epochs: 1 } }, [0], true)
    const many = await trainModels(tf, data, w, [0], true)
    disposeData(data)
    expect(many[0].finalLoss!).toBeLessThan(one[0].finalLoss!)
    expect(many[0].testMse).toBeLessThan(0.9)
  })

  it('returns tf.memory().numTensors to baseline after a job', async () => {
    const before = tf.memory().numTensors
    const data = uploadData(tf, datasetFor(workload), workload, 'host')
    await trainModels(tf, data, workload, [0, 1, 2], true)
    await trainModels(tf, data, workload, [0, 1], false)
    disposeData(data)
    expect(tf.memory().numTensors).toBe(before)
  })

  it('warm-up (one step and one evaluation on the real shapes) leaves no tensor behind', async () => {
    const data = uploadData(tf, datasetFor(workload), workload, 'host')
    const before = tf.memory().numTensors
    await warmUp(tf, data, workload, [0, 1, 2])
    expect(tf.memory().numTensors).toBe(before)
    disposeData(data)
  })
})

describe('a compacted program (early stopping: stopped models leave)', () => {
  for (const hidden of [[16], [16, 8]]) {
    it(`its survivors train on exactly as in the uncompacted program, bit for bit on cpu (hidden ${hidden}, per-model rates)`, async () => {
      const features = 6
      const rows = 40
      const rng = new Rng(9, 2)
      const batch = () => {
        const x = Array.from({ length: rows }, () => [...Array.from({ length: features }, () => rng.uniform()), 1])
        const xs = tf.tensor2d(x)
        return { x: xs, xT: tf.transpose(xs) as tf.Tensor2D, y: tf.tensor2d(x.map((r) => [r[0] - r[1]])) }
      }
      const batches = Array.from({ length: 6 }, batch)
      const lr = [0.01, 0.03, 0.02, 0.05]
      const full = new FusedMlp(tf, { features, hidden, seeds: [4, 5, 6, 7], adam: { lr, ...ADAM_DEFAULTS } })
      const step = (mlp: FusedMlp, b: (typeof batches)[number]) => mlp.trainStep(b.x, b.xT, b.y).dispose()
      for (const b of batches.slice(0, 3)) step(full, b)
      // models 1 and 3 leave (0 and 2 stopped): the survivors in a program of their own
      const survivors = await full.survivors([3, 1])
      expect(survivors.n).toBe(2)
      for (const b of batches.slice(3)) {
        step(full, b)
        step(survivors, b)
      }
      const [a, b] = [await full.state(), await survivors.state()]
      const select = (p: Float32Array[]) => selectModels(p, 4, hidden[0], [3, 1])
      expect(b.values).toEqual(select(a.values))
      expect(b.adam.m).toEqual(select(a.adam.m))
      expect(b.adam.v).toEqual(select(a.adam.v))
      expect(b.adam.step).toBe(6)
      // and it scores as the full program does
      const probe = batches[0]
      const [pa, pb] = [full.predict(probe.x), survivors.predict(probe.x)]
      const fullOut = (await pa.array()) as number[][]
      expect(await pb.array()).toEqual(fullOut.map((r) => [r[3], r[1]]))
      tf.dispose([pa, pb, ...batches.flatMap((x) => [x.x, x.xT, x.y])])
      full.dispose()
      survivors.dispose()
    })
  }

  it('refuses a starting state whose shapes are not the layout of its models', () => {
    const values = [new Float32Array(3)]
    expect(() => new FusedMlp(tf, { features: 2, hidden: [4], seeds: [1], adam: { lr: 0.01, ...ADAM_DEFAULTS }, start: { values } })).toThrow(
      /start: 1 parameters, the layout has 3/,
    )
  })
})
