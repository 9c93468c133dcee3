// Early stopping on the MLP's onnxruntime engine (issue 39), in-process: each model stops at the same
// epoch alone (sequential, pool) and fused (batched), and as on the tfjs engine; a stopped model leaves
// the fused program, and the compacted program trains the survivors exactly as the uncompacted one
// would; the model kept is its best epoch's (the model a run of that many epochs without early stopping trains).
import * as tf from '@tensorflow/tfjs-core'
import '@tensorflow/tfjs-backend-cpu'
import { beforeAll, describe, expect, it } from 'vitest'
import { foldRows, modelSeed, validationRows, type Workload, type WorkloadTask } from '@shared/contract'
import type { MlpParams } from '@shared/families'
import { skipWithout } from '../../testing/capability'
import { BackendUnavailableError, type TrainedModel, type TrainOptions } from '../backend/types'
import { datasetFor, epochOrder } from '../datasets/generated'
import { withOnesColumn } from '../datasets/dataset'
import { ADAM_DEFAULTS } from '../mlp/adam'
import { selectModels } from '../mlp/fused-layout'
import { disposeData, trainModels, uploadData } from '../mlp-tfjs/tfjs-training'
import { OrtMlp, prepareOrtData, trainOrt } from './onnx-training'
import { type OnnxRuntime, startOnnxRuntime } from './ort-runtime'

type W = Workload<MlpParams>

/** The tfjs engine's early-stopping case: small data, a high learning rate, models that overfit within a few epochs, at different ones. */
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
/** against the tfjs engine: the MLP's cross-backend tolerance */
const CROSS_BACKEND = 1e-3

let rt: OnnxRuntime | null = null
let why = ''
beforeAll(async () => {
  try {
    rt = await startOnnxRuntime()
  } catch (err) {
    if (!(err instanceof BackendUnavailableError)) throw err
    why = err.reason
  }
  await tf.setBackend('cpu')
})
const missing = () => skipWithout('onnxruntime', rt !== null, why)

interface Trained {
  models: TrainedModel[]
  /** the models each progress report named, in order */
  progress: number[][]
}

type Options = Omit<TrainOptions, 'heldOutOf'> & { heldOutOf?: TrainOptions['heldOutOf'] }

/** As the seam tells a backend that holds rows out itself: the validation fraction's rows for every model. */
function withHeldOut(w: W, options: Options): TrainOptions {
  const train = datasetFor(w).train
  const heldOutOf = options.heldOutOf ?? (w.validation !== undefined ? () => validationRows(train, w.validation!) : undefined)
  return { ...options, ...(heldOutOf ? { heldOutOf } : {}) }
}

async function trainOnOrt(w: W, indices: number[], options: Options): Promise<Trained> {
  const data = prepareOrtData('test', datasetFor(w), w)
  const out: Trained = { models: [], progress: [] }
  await trainOrt(rt!, data, w, indices, withHeldOut(w, options), {
    onProgress: (models) => out.progress.push([...models]),
    onModelDone: (m) => out.models.push(m),
    shouldStop: () => false,
  })
  return out
}

async function trainOnTfjs(w: W, indices: number[], options: Options): Promise<TrainedModel[]> {
  const data = uploadData(tf, datasetFor(w), w, 'host')
  const models: TrainedModel[] = []
  try {
    await trainModels(tf, data, w, indices, withHeldOut(w, options), { onProgress: () => {}, onModelDone: (m) => models.push(m), shouldStop: () => false })
  } finally {
    disposeData(data)
  }
  return models
}

const rounds = (models: readonly TrainedModel[]) => models.map((m) => [m.index, m.roundsTrained, m.bestRound])
const relative = (a: number, b: number) => Math.abs(a - b) / Math.abs(b)

describe('early stopping on the onnxruntime engine', () => {
  it('stops each model at the same epoch alone, fused and on the tfjs engine; a stopped model leaves the fused program', async (ctx) => {
    if (missing()) return ctx.skip()
    const indices = [0, 1, 2, 3]
    const alone = await trainOnOrt(workload, indices, { fused: false })
    const fused = await trainOnOrt(workload, indices, { fused: true })
    expect(rounds(fused.models)).toEqual(rounds(alone.models))
    expect(rounds(await trainOnTfjs(workload, indices, { fused: true }))).toEqual(rounds(alone.models))
    for (const m of alone.models) {
      expect(m.bestRound! >= 1 && m.bestRound! < m.roundsTrained! && m.roundsTrained! <= EPOCHS).toBe(true)
      const f = fused.models.find((x) => x.index === m.index)!
      expect(relative(f.testMse, m.testMse), `model ${m.index}`).toBeLessThan(SAME_WORK)
      expect(relative(f.validationMse!, m.validationMse!), `model ${m.index}`).toBeLessThan(SAME_WORK)
    }
    // clear stops, at different epochs, all before the last
    const trained = alone.models.map((m) => m.roundsTrained!)
    expect(Math.max(...trained)).toBeLessThan(EPOCHS)
    expect(new Set(trained).size).toBeGreaterThan(1)

    // the fused program's progress names only the models still training: each one's reports end with its last epoch
    const batchesPerEpoch = Math.ceil(datasetFor(workload).train / workload.model.batchSize)
    for (const m of alone.models) {
      expect(fused.progress.filter((models) => models.includes(m.index)).length, `model ${m.index}`).toBe(m.roundsTrained! * batchesPerEpoch)
    }
    const last = Math.max(...trained)
    expect(fused.progress.at(-1)).toEqual(alone.models.filter((m) => m.roundsTrained === last).map((m) => m.index))
  })

  it("keeps each model's best epoch: its test score, validation score, loss and weights are those of a run of bestRound epochs without early stopping", async (ctx) => {
    if (missing()) return ctx.skip()
    const stopped = await trainOnOrt(workload, [0, 1, 2, 3], { fused: true, keep: true })
    for (const m of stopped.models) {
      const { earlyStopping: _off, ...plain } = workload
      const best = (await trainOnOrt({ ...plain, model: { ...plain.model, epochs: m.bestRound! } }, [m.index], { fused: false, keep: true })).models[0]
      expect(best.roundsTrained).toBeUndefined()
      expect(m.testMse, `model ${m.index}`).toBe(best.testMse)
      expect(m.validationMse, `model ${m.index}`).toBe(best.validationMse)
      expect(m.finalLoss, `model ${m.index}`).toBe(best.finalLoss)
      expect(m.artifact, `model ${m.index}`).toEqual(best.artifact)
    }
  })

  it("fused folds and a classifier's metric (binary, log loss): each model stops at the same epoch alone and fused", async (ctx) => {
    if (missing()) return ctx.skip()
    const task: WorkloadTask = { objective: 'binary', classes: 2 }
    const { validation: _none, ...noFraction } = workload
    const w: W = { ...noFraction, task, earlyStopping: { rounds: 2, metric: 'logloss' }, model: { ...workload.model, lr: 0.05 } }
    const train = datasetFor(w).train
    const heldOutOf = (i: number) => foldRows(train, 3, i % 3)
    const alone = await trainOnOrt(w, [0, 1, 2], { fused: false, heldOutOf })
    const fused = await trainOnOrt(w, [0, 1, 2], { fused: true, heldOutOf })
    expect(rounds(fused.models)).toEqual(rounds(alone.models))
    for (const m of alone.models) {
      expect(m.roundsTrained!).toBeLessThan(EPOCHS)
      expect(m.validationMetrics?.logloss).toBeDefined()
      const f = fused.models.find((x) => x.index === m.index)!
      expect(relative(f.metrics!.logloss!, m.metrics!.logloss!)).toBeLessThan(SAME_WORK)
    }
    // and the tfjs engine stops them at the same epochs, scoring them within the cross-backend tolerance
    const tfjs = await trainOnTfjs(w, [0, 1, 2], { fused: true, heldOutOf })
    expect(rounds(tfjs)).toEqual(rounds(alone.models))
    for (const m of alone.models) expect(relative(tfjs.find((x) => x.index === m.index)!.metrics!.logloss!, m.metrics!.logloss!)).toBeLessThan(CROSS_BACKEND)
  })
})

describe('a compacted OrtMlp', () => {
  it('trains the survivors exactly as the uncompacted program: weights, Adam moments and step carried over', async (ctx) => {
    if (missing()) return ctx.skip()
    const w: W = { ...workload, model: { ...workload.model, hidden: [16, 8] } }
    const dataset = datasetFor(w)
    const F = w.features
    const n = 5
    const keep = [4, 1, 3] // in a new order: the compacted program follows `positions`
    const full = await OrtMlp.create(rt!, {
      features: F,
      hidden: w.model.hidden,
      seeds: Array.from({ length: n }, (_, i) => modelSeed(w.seed, i)),
      adam: { lr: [0.01, 0.02, 0.03, 0.04, 0.05], ...ADAM_DEFAULTS },
    })
    const rows = 32
    const step = async (model: OrtMlp, b: number) => {
      const order = epochOrder(dataset.train, w.seed, 0)
      const batch = model.batch(rows)
      for (let r = 0; r < rows; r++) {
        const src = order[b * rows + r]
        batch.x.set(dataset.xTrain.subarray(src * F, (src + 1) * F), r * (F + 1))
        batch.x[r * (F + 1) + F] = 1
        batch.y[r] = dataset.yTrain[src]
      }
      return Array.from(await model.trainStep(rows))
    }
    for (let b = 0; b < 3; b++) await step(full, b)
    const compacted = await full.survivors(keep)
    expect(compacted.n).toBe(keep.length)
    // the same steps on both: every survivor's loss, parameters and moments as the full program's
    for (let b = 3; b < 6; b++) {
      const fullLoss = await step(full, b)
      expect(await step(compacted, b)).toEqual(keep.map((i) => fullLoss[i]))
    }
    const [a, c] = [full.state(), compacted.state()]
    const select = (params: Float32Array[]) => selectModels(params, n, w.model.hidden[0], keep)
    expect(c.values).toEqual(select(a.values))
    expect(c.adam.m).toEqual(select(a.adam.m))
    expect(c.adam.v).toEqual(select(a.adam.v))
    expect(c.adam.step).toBe(a.adam.step)
    const scores = async (model: OrtMlp) => model.scores(withOnesColumn(dataset.xTest, dataset.test, F), dataset.yTest, dataset.test)
    const fullScores = await scores(full)
    expect(await scores(compacted)).toEqual(keep.map((i) => fullScores[i]))
  })
})
