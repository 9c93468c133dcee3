// The training loop: mini-batches in the shared (data seed, epoch) order, Adam, per-model test MSE.
// No host reads inside an epoch; one `await data()` per epoch (the loss, which also closes the
// clock on asynchronous backends), and a yield per step so cancel/shutdown messages get through.
import type * as TF from '@tensorflow/tfjs-core'
import { type FromWorker, modelSeed, splitRows, type Workload } from '@shared/contract'
import { epochOrder, generateDataset, type Dataset } from './data'
import { ADAM_DEFAULTS, FusedMlp } from './fused-mlp'

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
}

/** what the worker posts as a 'progress' message, minus the envelope */
export type StepProgress = Omit<Extract<FromWorker, { type: 'progress' }>, 'type' | 'jobId'>

export interface TrainedModel {
  index: number
  seed: number
  trainMs: number
  testMse: number
  finalLoss: number | null
}

export interface TrainHooks {
  onProgress?: (progress: StepProgress) => void
  onModelDone?: (model: TrainedModel) => void
  /** checked every step; true stops training with a CancelledError */
  shouldStop?: () => boolean
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled')
    this.name = 'CancelledError'
  }
}

export function dataKey(w: Workload): string {
  return `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}`
}

export function placementFor(backend: string): Placement {
  return backend === 'wasm' || backend === 'cpu' ? 'host' : 'device'
}

/** Generates the data set from the seed and uploads it once (a worker keeps it across jobs). */
export function uploadData(tf: Tf, workload: Workload, placement: Placement = placementFor(tf.getBackend())): DataTensors {
  const dataset = generateDataset(workload)
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
  }
}

/** [rows, F] → [rows, F+1] with a last column of ones. */
function withOnesColumn(x: Float32Array, rows: number, F: number): Float32Array {
  const out = new Float32Array(rows * (F + 1))
  for (let r = 0; r < rows; r++) {
    out.set(x.subarray(r * F, r * F + F), r * (F + 1))
    out[r * (F + 1) + F] = 1
  }
  return out
}

export function disposeData(data: DataTensors): void {
  data.xTrain?.dispose()
  data.yTrain?.dispose()
  data.xTest.dispose()
  data.yTest.dispose()
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

export function batchesPerEpoch(workload: Workload): number {
  return Math.ceil(splitRows(workload.size, workload.testSplit).train / workload.batchSize)
}

/** Training FLOPs of one model (or n fused models) over the whole workload. */
export function trainingFlops(workload: Workload, n: number): number {
  const { train } = splitRows(workload.size, workload.testSplit)
  const full = Math.floor(train / workload.batchSize)
  const rest = train - full * workload.batchSize
  const perEpoch =
    full * FusedMlp.stepFlops(workload.batchSize, n, workload.features, workload.hidden) +
    (rest > 0 ? FusedMlp.stepFlops(rest, n, workload.features, workload.hidden) : 0)
  return perEpoch * workload.epochs
}

/**
 * Warm-up on the real shapes, before the clock: one training step on the first batch and one
 * evaluation of the test set, so every kernel (and, on GPU backends, every shader) the job will
 * use is compiled. Leaves no tensor behind.
 */
export async function warmUp(tf: Tf, data: DataTensors, workload: Workload, modelIndices: readonly number[]): Promise<void> {
  const model = new FusedMlp(tf, {
    features: workload.features,
    hidden: workload.hidden,
    seeds: modelIndices.map((i) => modelSeed(workload.seed, i)),
    adam: { lr: workload.lr, ...ADAM_DEFAULTS },
  })
  const batches = epochBatches(tf, data, epochOrder(data.dataset.train, workload.seed, 0))
  try {
    const rows = Math.min(workload.batchSize, data.dataset.train)
    const loss = tf.tidy(() => {
      const { x, xT, y } = batches.batch(0, rows)
      return model.trainStep(x, xT, y)
    })
    const mse = model.evaluate(data.xTest, data.yTest)
    await Promise.all([loss.data(), mse.data()])
    tf.dispose([loss, mse])
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
  workload: Workload,
  modelIndices: readonly number[],
  fused: boolean,
  hooks: TrainHooks = {},
): Promise<TrainedModel[]> {
  const groups = fused ? [modelIndices] : modelIndices.map((i) => [i])
  const results: TrainedModel[] = []
  for (const group of groups) {
    const trained = await trainGroup(tf, data, workload, group, hooks)
    for (const m of trained) {
      results.push(m)
      hooks.onModelDone?.(m)
    }
  }
  return results
}

async function trainGroup(
  tf: Tf,
  data: DataTensors,
  workload: Workload,
  indices: readonly number[],
  hooks: TrainHooks,
): Promise<TrainedModel[]> {
  const seeds = indices.map((i) => modelSeed(workload.seed, i))
  const started = performance.now()
  const model = new FusedMlp(tf, {
    features: workload.features,
    hidden: workload.hidden,
    seeds,
    adam: { lr: workload.lr, ...ADAM_DEFAULTS },
  })
  try {
    const { train } = data.dataset
    const batches = Math.ceil(train / workload.batchSize)
    let epochLoss: Float32Array | null = null
    /** mean over the models of the last finished epoch's loss (what progress reports) */
    let lastEpochMeanLoss: number | null = null
    for (let epoch = 0; epoch < workload.epochs; epoch++) {
      const batchesOfEpoch = epochBatches(tf, data, epochOrder(train, workload.seed, epoch))
      let lossSum: TF.Tensor1D = tf.zeros([indices.length])
      try {
        for (let b = 0; b < batches; b++) {
          if (hooks.shouldStop?.()) throw new CancelledError()
          const start = b * workload.batchSize
          const rows = Math.min(workload.batchSize, train - start)
          const next = tf.tidy(() => {
            const { x, xT, y } = batchesOfEpoch.batch(start, rows)
            const batchLoss = model.trainStep(x, xT, y)
            return tf.add(lossSum, tf.mul(batchLoss, rows)) as TF.Tensor1D
          })
          lossSum.dispose()
          lossSum = next
          hooks.onProgress?.({
            modelIndices: [...indices],
            epoch,
            epochs: workload.epochs,
            batch: b + 1,
            batchesPerEpoch: batches,
            loss: lastEpochMeanLoss,
          })
          await yieldToEventLoop()
        }
        // the epoch's per-model mean training loss; reading it syncs the device
        epochLoss = (await lossSum.data()) as Float32Array
        for (let i = 0; i < epochLoss.length; i++) epochLoss[i] /= train
        lastEpochMeanLoss = mean(epochLoss)
      } finally {
        lossSum.dispose()
        batchesOfEpoch.dispose()
      }
    }
    const trainMs = performance.now() - started
    const mseTensor = model.evaluate(data.xTest, data.yTest)
    const mse = await mseTensor.data()
    mseTensor.dispose()
    return indices.map((index, k) => ({
      index,
      seed: seeds[k],
      trainMs,
      testMse: mse[k],
      finalLoss: epochLoss ? epochLoss[k] : null,
    }))
  } finally {
    model.dispose()
  }
}

function mean(values: Float32Array): number {
  let s = 0
  for (const v of values) s += v
  return s / values.length
}
