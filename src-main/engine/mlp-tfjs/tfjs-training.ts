// The training loop: mini-batches in the shared (data seed, epoch) order, Adam, per-model test scores
// (MSE; a classifier's metrics from its logits, mlp/objective.ts).
// In a model set with folds fused (options.heldOutOf), each model's fold rows stay in the shared
// order but weigh 0 in its loss (dataset.ts heldOutRowWeights), and it is scored on them.
// No host reads inside an epoch; one `await data()` per epoch (the loss, which also closes the
// clock on asynchronous backends), and a yield per step so cancel/shutdown messages get through.
// With early stopping (workload.earlyStopping), after each epoch every live model is scored on its
// held-out rows (mlp/early-stopping.ts decides); stopped models leave the fused program, and each
// model's result is its best epoch's weights.
import type * as TF from '@tensorflow/tfjs-core'
import { type HeldOutRows, modelSeed, type Workload } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { epochOrder, type Dataset } from '../datasets/generated'
import { heldOutRowWeights, heldOutScores, trainingRowsOf, withOnesColumn } from '../datasets/dataset'
import { ADAM_DEFAULTS, learningRates } from '../mlp/adam'
import { FusedMlp, type FusedMlpState } from './fused-mlp'
import { dataKey } from '../mlp/data-key'
import { CancelledError, type TrainedModel, type TrainHooks, type TrainOptions } from '../backend/types'
import { mlpArtifacts } from '../mlp/artifact'
import { classifierScores, type ModelScores, mseScores } from '../mlp/objective'
import { trainedModels, trainInGroups } from '../mlp/results'
import { EpochWatches } from '../mlp/early-stopping'

type Tf = typeof TF

/**
 * Where the training rows live. `device`: uploaded once; each epoch gathers its order on the device
 * and steps slice from it (GPU backends, where host copies cost a transfer). `host`: rows stay in
 * JS memory and each step copies its batch in (wasm/cpu, where the backend's memory IS host memory
 * and its gather/slice kernels are far slower than a memcpy). Both feed identical values.
 */
export type Placement = 'host' | 'device'

export interface DataTensors {
  key: string
  placement: Placement
  dataset: Dataset
  /** device placement only; every X carries a last column of ones (the first layer's bias input) */
  xTrain: TF.Tensor2D | null
  yTrain: TF.Tensor2D | null
  xTest: TF.Tensor2D
  yTest: TF.Tensor2D
  /** a fold's validation rows (model sets with folds), with the ones column; null otherwise */
  xVal: TF.Tensor2D | null
  yVal: TF.Tensor2D | null
}

type MlpWorkload = Workload<MlpParams>

/** Places the family's data set once (a worker keeps it across jobs). */
export function uploadData(tf: Tf, dataset: Dataset, workload: MlpWorkload, placement: Placement): DataTensors {
  const { train, test } = dataset
  const F = workload.features
  const onDevice = placement === 'device'
  return {
    key: dataKey(workload),
    placement,
    dataset,
    xTrain: onDevice ? tf.tensor2d(withOnesColumn(dataset.xTrain, train, F), [train, F + 1]) : null,
    yTrain: onDevice ? tf.tensor2d(dataset.yTrain, [train, 1]) : null,
    xTest: tf.tensor2d(withOnesColumn(dataset.xTest, test, F), [test, F + 1]),
    yTest: tf.tensor2d(dataset.yTest, [test, 1]),
    xVal: dataset.validation ? tf.tensor2d(withOnesColumn(dataset.validation.x, dataset.validation.rows, F), [dataset.validation.rows, F + 1]) : null,
    yVal: dataset.validation ? tf.tensor2d(dataset.validation.y, [dataset.validation.rows, 1]) : null,
  }
}

export function disposeData(data: DataTensors): void {
  data.xTrain?.dispose()
  data.yTrain?.dispose()
  data.xTest.dispose()
  data.yTest.dispose()
  data.xVal?.dispose()
  data.yVal?.dispose()
}

interface Batch {
  x: TF.Tensor2D
  xT: TF.Tensor2D
  y: TF.Tensor2D
}

/** Serves one epoch's mini-batches in the shared order; see Placement. */
interface EpochBatches {
  batch(start: number, rows: number): Batch
  dispose(): void
}

function epochBatches(tf: Tf, data: DataTensors, order: Int32Array): EpochBatches {
  if (data.placement === 'device') {
    const idx = tf.tensor1d(order, 'int32')
    const xPerm = tf.gather(data.xTrain!, idx) as TF.Tensor2D
    const xPermT = tf.transpose(xPerm) as TF.Tensor2D
    const yPerm = tf.gather(data.yTrain!, idx) as TF.Tensor2D
    idx.dispose()
    return {
      batch: (start, rows) => ({
        x: tf.slice(xPerm, [start, 0], [rows, -1]),
        xT: tf.slice(xPermT, [0, start], [-1, rows]),
        y: tf.slice(yPerm, [start, 0], [rows, -1]),
      }),
      dispose: () => tf.dispose([xPerm, xPermT, yPerm]),
    }
  }
  const { xTrain, yTrain } = data.dataset
  const F = data.dataset.spec.features
  return {
    batch: (start, rows) => {
      // fresh arrays: the cpu backend keeps a reference to the values it is given
      const x = new Float32Array(rows * (F + 1))
      const xT = new Float32Array(rows * (F + 1))
      const y = new Float32Array(rows)
      for (let r = 0; r < rows; r++) {
        const src = order[start + r]
        const row = xTrain.subarray(src * F, src * F + F)
        x.set(row, r * (F + 1))
        x[r * (F + 1) + F] = 1
        for (let f = 0; f < F; f++) xT[f * rows + r] = row[f]
        xT[F * rows + r] = 1
        y[r] = yTrain[src]
      }
      return { x: tf.tensor2d(x, [rows, F + 1]), xT: tf.tensor2d(xT, [F + 1, rows]), y: tf.tensor2d(y, [rows, 1]) }
    },
    dispose: () => {},
  }
}

/**
 * Warm-up on the real shapes, before the clock: one training step on the first batch and one
 * evaluation of the test set, so every kernel (and, on GPU backends, every shader) the job will
 * use is compiled. Leaves no tensor behind.
 */
export async function warmUp(tf: Tf, data: DataTensors, workload: MlpWorkload, modelIndices: readonly number[]): Promise<void> {
  const model = new FusedMlp(tf, {
    features: workload.features,
    hidden: workload.model.hidden,
    seeds: modelIndices.map((i) => modelSeed(workload.seed, i)),
    adam: { lr: workload.model.lr, ...ADAM_DEFAULTS },
    ...(workload.task ? { task: workload.task } : {}),
  })
  const batches = epochBatches(tf, data, epochOrder(data.dataset.train, workload.seed, 0))
  try {
    const rows = Math.min(workload.model.batchSize, data.dataset.train)
    const loss = tf.tidy(() => {
      const { x, xT, y } = batches.batch(0, rows)
      return model.trainStep(x, xT, y)
    })
    if (workload.task) {
      await loss.data()
      await model.outputs(data.xTest)
      loss.dispose()
    } else {
      const mse = model.evaluate(data.xTest, data.yTest)
      await Promise.all([loss.data(), mse.data()])
      tf.dispose([loss, mse])
    }
  } finally {
    batches.dispose()
    model.dispose()
  }
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Trains the given models. `fused` trains them all in one program (batched); otherwise one after
 * another (sequential, pool). Per-model results are reported as each model finishes.
 */
export async function trainModels(
  tf: Tf,
  data: DataTensors,
  workload: MlpWorkload,
  modelIndices: readonly number[],
  options: TrainOptions,
  hooks: TrainHooks,
): Promise<void> {
  await trainInGroups(modelIndices, options.fused, hooks, (group) => trainGroup(tf, data, workload, group, options, hooks))
}

async function trainGroup(
  tf: Tf,
  data: DataTensors,
  workload: MlpWorkload,
  indices: readonly number[],
  options: TrainOptions,
  hooks: TrainHooks,
): Promise<TrainedModel[]> {
  const { fused, keep = false } = options
  const seeds = indices.map((i) => modelSeed(workload.seed, i))
  // a model set's folds fused: each model's fold rows held out of the shared batch order (row weights)
  const heldOut = options.heldOutOf ? indices.map((i) => options.heldOutOf!(i)) : null
  const started = performance.now()
  const programOf = (start?: FusedMlpState) =>
    new FusedMlp(tf, {
      features: workload.features,
      hidden: workload.model.hidden,
      seeds,
      adam: { lr: learningRates(workload, indices, options), ...ADAM_DEFAULTS },
      ...(workload.task ? { task: workload.task } : {}),
      ...(start ? { start } : {}),
    })
  const group: GroupTraining = { tf, model: programOf(), data, workload, indices, heldOut, hooks, lastEpochMeanLoss: null }
  try {
    const watches = EpochWatches.of(workload, indices.length)
    let epochLoss: Float32Array | null = null
    for (let epoch = 0; epoch < workload.model.epochs; epoch++) {
      epochLoss = await trainEpoch(group, epoch)
      if (watches && (await watchEpoch(group, watches, epochLoss)) === 0) break
    }
    const elapsedMs = performance.now() - started
    if (watches) {
      // the kept models, each its best epoch's weights, scored as one program of the whole group
      const kept = watches.kept()
      group.model.dispose()
      group.model = programOf({ values: kept.params })
      group.indices = indices
      group.heldOut = heldOut
      const test = await scoresOn(group, data.xTest, data.yTest, data.dataset.yTest)
      const artifacts = keep
        ? mlpArtifacts(kept.params, workload.features, workload.model.hidden, indices.length, data.dataset.preprocess, workload.task)
        : null
      return trainedModels({ indices, seeds, fused, elapsedMs, test, epochLoss: kept.loss, validation: kept.validation, artifacts, rounds: kept.rounds })
    }
    const test = await scoresOn(group, data.xTest, data.yTest, data.dataset.yTest)
    const validation = await validationOf(group)
    const artifacts = keep
      ? mlpArtifacts(await group.model.parameters(), workload.features, workload.model.hidden, indices.length, data.dataset.preprocess, workload.task)
      : null
    return trainedModels({ indices, seeds, fused, elapsedMs, test, epochLoss, validation, artifacts })
  } finally {
    group.model.dispose()
  }
}

/**
 * Early stopping after an epoch (mlp/early-stopping.ts): the live models scored on their held-out
 * rows and fed to their rules. Models that stopped leave the program: it is compacted to the
 * survivors whenever any stops — copying the survivors' weights and Adam moments (three times their
 * parameters, read and uploaded once) costs less than one training step over a batch, while a
 * stopped model left in would cost its share of every step to the end. Returns the models still training.
 */
async function watchEpoch(g: GroupTraining, watches: EpochWatches, epochLoss: Float32Array): Promise<number> {
  const verdict = await watches.afterEpoch(await validationOf(g), epochLoss, () => g.model.parameters())
  const survivors = verdict.continuing
  if (verdict.stopped.length === 0 || survivors.length === 0) return survivors.length
  const smaller = await g.model.survivors(survivors)
  g.model.dispose()
  g.model = smaller
  g.indices = survivors.map((k) => g.indices[k])
  g.heldOut = g.heldOut ? survivors.map((k) => g.heldOut![k]) : null
  return survivors.length
}

/** A fused group in training: its program, data, the models it holds now and their held-out rows, and the loss progress reports. */
interface GroupTraining {
  tf: Tf
  /** the program: the group's models, or (early stopping) the survivors of a compaction */
  model: FusedMlp
  data: DataTensors
  workload: MlpWorkload
  /** the models the program holds, in its order */
  indices: readonly number[]
  heldOut: readonly (HeldOutRows | null)[] | null
  hooks: TrainHooks
  /** mean over the models of the last finished epoch's loss (what progress reports) */
  lastEpochMeanLoss: number | null
}

/** One epoch's steps in the shared order; returns each model's mean training loss (one read, which syncs the device). */
async function trainEpoch(g: GroupTraining, epoch: number): Promise<Float32Array> {
  const { tf, model, data, workload, indices, heldOut, hooks } = g
  const { epochs, batchSize } = workload.model
  const { train } = data.dataset
  const n = indices.length
  // from the rows this data set trains on (a fold's are fewer than the workload's split)
  const batches = Math.ceil(train / batchSize)
  const weights = heldOut ? new Float32Array(batchSize * n) : null
  const counts = new Float32Array(n)
  const order = epochOrder(train, workload.seed, epoch)
  const batchesOfEpoch = epochBatches(tf, data, order)
  let lossSum: TF.Tensor1D = tf.zeros([n])
  try {
    for (let b = 0; b < batches; b++) {
      if (hooks.shouldStop()) throw new CancelledError()
      const start = b * batchSize
      const rows = Math.min(batchSize, train - start)
      if (heldOut) heldOutRowWeights(order, start, rows, heldOut, weights!, counts)
      const next = tf.tidy(() => {
        const { x, xT, y } = batchesOfEpoch.batch(start, rows)
        if (!heldOut) return tf.add(lossSum, tf.mul(model.trainStep(x, xT, y), rows)) as TF.Tensor1D
        const batchLoss = model.trainStep(x, xT, y, tf.tensor2d(weights!.slice(0, rows * n), [rows, n]))
        return tf.add(lossSum, tf.mul(batchLoss, tf.tensor1d(counts))) as TF.Tensor1D
      })
      lossSum.dispose()
      lossSum = next
      hooks.onProgress(indices, { done: epoch * batches + b + 1, total: epochs * batches, unit: 'batch', loss: g.lastEpochMeanLoss })
      await yieldToEventLoop()
    }
    const trainRows = heldOut ? trainingRowsOf(train, heldOut) : null
    const epochLoss = (await lossSum.data()) as Float32Array
    for (let i = 0; i < epochLoss.length; i++) epochLoss[i] /= trainRows ? trainRows[i] : train
    g.lastEpochMeanLoss = mean(epochLoss)
    return epochLoss
  } finally {
    lossSum.dispose()
    batchesOfEpoch.dispose()
  }
}

/** Every fused model's scores on rows x [rows, F+1], y [rows, 1] (labels: y's values on the host): its MSE, a classifier's metrics from its logits. */
async function scoresOn(g: GroupTraining, x: TF.Tensor2D, y: TF.Tensor2D, labels: ArrayLike<number>): Promise<ModelScores[]> {
  const { model, workload } = g
  if (workload.task) return classifierScores(workload.task, await model.outputs(x), x.shape[0], model.n, labels)
  const t = model.evaluate(x, y)
  const mse = await t.data()
  t.dispose()
  return mseScores(mse)
}

/** Validation scores: a fold's own data set's validation rows, or each model's held-out rows (fused folds); null without. */
async function validationOf(g: GroupTraining): Promise<(ModelScores | null)[] | null> {
  const { tf, data, workload, heldOut } = g
  if (data.xVal && data.yVal) return scoresOn(g, data.xVal, data.yVal, data.dataset.validation!.y)
  if (!heldOut?.some(Boolean)) return null
  const F1 = workload.features + 1
  return heldOutScores(data.dataset, heldOut, async (xs, ys, rows) => {
    const [x, y] = [tf.tensor2d(xs, [rows, F1]), tf.tensor2d(ys, [rows, 1])]
    const scores = await scoresOn(g, x, y, ys)
    tf.dispose([x, y])
    return scores
  })
}

function mean(values: Float32Array): number {
  let s = 0
  for (const v of values) s += v
  return s / values.length
}
