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
