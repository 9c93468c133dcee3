// Early stopping on the MLP's tfjs engine (issue 39), in-process on the cpu backend: each model stops
// at the same epoch alone (sequential, pool) and fused (batched), stopped models leave the fused
// program, the model kept is its best epoch's (the same model a run of that many epochs without early
// stopping trains, bit for bit), with a validation fraction, fused folds and a classifier's metric.
import * as tf from '@tensorflow/tfjs-core'
import '@tensorflow/tfjs-backend-cpu'
import { beforeAll, describe, expect, it } from 'vitest'
import { foldRows, validationRows, type Workload, type WorkloadTask } from '@shared/contract'
import type { MlpParams } from '@shared/families'
import type { TrainedModel, TrainOptions } from '../backend/types'
import { datasetFor } from '../datasets/generated'
import { disposeData, trainModels, uploadData } from './tfjs-training'

type W = Workload<MlpParams>

/** Small data, a high learning rate and many epochs: the models overfit within a few epochs, at different ones. */
const EPOCHS = 30
const workload: W = {
  size: 400,
  features: 10,
  seed: 3,
  target: 'teacher',
  testSplit: 0.2,
  validation: 0.25,
  earlyStopping: { rounds: 3, metric: 'mse' },
  model: { kind: 'mlp', epochs: EPOCHS, batchSize: 32, hidden: [32], lr: 0.1 },
}
/** batched = one at a time: the family's same-work tolerance */
const SAME_WORK = 1e-5

interface Trained {
  models: TrainedModel[]
  /** the models each progress report named, in order */
  progress: number[][]
}

async function train(w: W, indices: number[], options: Omit<TrainOptions, 'heldOutOf'> & { heldOutOf?: TrainOptions['heldOutOf'] }): Promise<Trained> {
  const dataset = datasetFor(w)
  const data = uploadData(tf, dataset, w, 'host')
  const out: Trained = { models: [], progress: [] }
  // as the seam tells a backend that holds rows out itself: the validation fraction's rows for every model
  const heldOutOf = options.heldOutOf ?? (w.validation !== undefined ? () => validationRows(dataset.train, w.validation!) : undefined)
  try {
    await trainModels(
      tf,
      data,
      w,
      indices,
      { ...options, ...(heldOutOf ? { heldOutOf } : {}) },
      { onProgress: (models) => out.progress.push([...models]), onModelDone: (m) => out.models.push(m), shouldStop: () => false },
    )
  } finally {
    disposeData(data)
  }
  return out
}

const rounds = (models: readonly TrainedModel[]) => models.map((m) => [m.index, m.roundsTrained, m.bestRound])

beforeAll(async () => {
  await tf.setBackend('cpu')
})

describe('early stopping on the tfjs engine', () => {
  it('stops each model at the same epoch alone and fused; a stopped model leaves the fused program', async () => {
    const indices = [0, 1, 2, 3]
    const alone = await train(workload, indices, { fused: false })
    const fused = await train(workload, indices, { fused: true })
    expect(rounds(fused.models)).toEqual(rounds(alone.models))
    for (const m of alone.models) {
      expect(m.bestRound! >= 1 && m.bestRound! < m.roundsTrained! && m.roundsTrained! <= EPOCHS).toBe(true)
      const f = fused.models.find((x) => x.index === m.index)!
      expect(Math.abs(f.testMse - m.testMse) / m.testMse, `model ${m.index}`).toBeLessThan(SAME_WORK)
      expect(Math.abs(f.validationMse! - m.validationMse!) / m.validationMse!, `model ${m.index}`).toBeLessThan(SAME_WORK)
    }
    // clear stops, at different epochs, all before the last
    const trained = alone.models.map((m) => m.roundsTrained!)
    expect(Math.max(...trained)).toBeLessThan(EPOCHS)
    expect(new Set(trained).size).toBeGreaterThan(1)

    // the fused program's progress names only the models still training: each one's last report is in its last epoch
    const batchesPerEpoch = Math.ceil((datasetFor(workload).train as number) / workload.model.batchSize)
    for (const m of alone.models) {
      const reports = fused.progress.filter((models) => models.includes(m.index)).length
      expect(reports, `model ${m.index}`).toBe(m.roundsTrained! * batchesPerEpoch)
    }
    const last = Math.max(...trained)
    expect(fused.progress.at(-1)).toEqual(alone.models.filter((m) => m.roundsTrained === last).map((m) => m.index))
  })

  it("keeps each model's best epoch: its test score, validation score, loss and weights are those of a run of bestRound epochs without early stopping", async () => {
    const indices = [0, 1, 2, 3]
    const stopped = await train(workload, indices, { fused: true, keep: true })
    for (const m of stopped.models) {
      const { earlyStopping: _off, ...plain } = workload
      const best = (await train({ ...plain, model: { ...plain.model, epochs: m.bestRound! } }, [m.index], { fused: false, keep: true })).models[0]
      expect(best.roundsTrained).toBeUndefined()
      expect(m.testMse, `model ${m.index}`).toBe(best.testMse)
      expect(m.validationMse, `model ${m.index}`).toBe(best.validationMse)
      expect(m.finalLoss, `model ${m.index}`).toBe(best.finalLoss)
      expect(m.artifact, `model ${m.index}`).toEqual(best.artifact)
    }
  })

  it("fused folds and a classifier's metric (binary, log loss): each model stops at the same epoch alone and fused", async () => {
    const task: WorkloadTask = { objective: 'binary', classes: 2 }
    const { validation: _none, ...noFraction } = workload
    const w: W = { ...noFraction, task, earlyStopping: { rounds: 2, metric: 'logloss' }, model: { ...workload.model, lr: 0.05 } }
    const train0 = datasetFor(w).train
    const heldOutOf = (i: number) => foldRows(train0, 3, i % 3)
    const alone = await train(w, [0, 1, 2], { fused: false, heldOutOf })
    const fused = await train(w, [0, 1, 2], { fused: true, heldOutOf })
    expect(rounds(fused.models)).toEqual(rounds(alone.models))
    for (const m of alone.models) {
      expect(m.roundsTrained!).toBeLessThan(EPOCHS)
      expect(m.validationMetrics?.logloss).toBeDefined()
      const f = fused.models.find((x) => x.index === m.index)!
      expect(Math.abs(f.metrics!.logloss! - m.metrics!.logloss!) / m.metrics!.logloss!).toBeLessThan(SAME_WORK)
    }
  })

  it('returns tf.memory().numTensors to baseline after jobs that stopped models (compacted programs included)', async () => {
    const before = tf.memory().numTensors
    await train(workload, [0, 1, 2], { fused: true, keep: true })
    await train(workload, [0], { fused: false })
    expect(tf.memory().numTensors).toBe(before)
  })
})
