// The WGSL MLP's training loop: FusedMlp's (engine/mlp-tfjs/tfjs-training.ts) — same seeds, batch order, Adam
// step count and per-model learning rates, a set's folds as held-out rows, the objective's loss and
// scores (mlp/objective.ts) — with the epoch on the
// device. A few submits per epoch, the next queued before the host waits on the last, so the device
// never waits for the host inside an epoch; the epoch's summed loss is its one readback. With early
// stopping (workload.earlyStopping), after each epoch every live model is scored on its held-out rows
// (mlp/early-stopping.ts decides); stopped models leave the fused program (the worker's program for
// the survivors' count continues their state), and each model's result is its best epoch's weights.
import { type HeldOutRows, modelSeed, type Workload } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { epochOrder, type Dataset } from '../datasets/generated'
import { heldOutScores, trainingRowsOf, withOnesColumn } from '../datasets/dataset'
import { ADAM_DEFAULTS, learningRates } from '../mlp/adam'
import { CancelledError, type TrainedModel, type TrainHooks, type TrainOptions } from '../backend/types'
import { mlpArtifacts } from '../mlp/artifact'
import { classifierScores, type ModelScores, mseScores } from '../mlp/objective'
import { trainedModels, trainInGroups } from '../mlp/results'
import { EpochWatches, survivorsState } from '../mlp/early-stopping'
import { USAGE, type WgslDevice } from '../webgpu/device'
import { type DeviceRows, WgslMlp } from './wgsl-mlp'

type MlpWorkload = Workload<MlpParams>

/** A worker's data on the device (the family's data set, placed once), and the fused models it trains. */
export interface WgslMlpData {
  key: string
  dataset: Dataset
  train: DeviceRows
  test: DeviceRows
  /** a fold's validation rows (a set whose folds get their own data sets); null otherwise */
  validation: DeviceRows | null
  /** models by shape, newest last (a worker trains a few shapes; their buffers are reused) */
  models: Map<string, WgslMlp>
}

/** Steps per submit: about 8 submits an epoch, at most 64 steps each (cancel and progress stay responsive). */
const SUBMITS_PER_EPOCH = 8
const MAX_STEPS_PER_SUBMIT = 64
/** fused models kept per worker (their buffers); older shapes are freed */
const MODELS_KEPT = 4

/** Rows → device buffers: X [rows, F+1] (its ones column already in), y, and an order buffer (identity for evaluation sets). */
function uploadRows(dev: WgslDevice, xWithOnes: Float32Array, y: Float32Array, rows: number, label: string, order: Uint32Array | null): DeviceRows {
  const storage = USAGE.STORAGE | USAGE.COPY_DST
  const xs = dev.createBuffer(xWithOnes.byteLength, storage, `${label}.x`)
  const ys = dev.createBuffer(rows * 4, storage, `${label}.y`)
  const os = dev.createBuffer(rows * 4, storage, `${label}.order`)
  const { queue } = dev.device
  queue.writeBuffer(xs, 0, xWithOnes)
  queue.writeBuffer(ys, 0, y)
  queue.writeBuffer(os, 0, order ?? Uint32Array.from({ length: rows }, (_, i) => i))
  return { rows, x: xs, y: ys, order: os }
}

function destroyRows(dev: WgslDevice, rows: DeviceRows | null): void {
  if (!rows) return
  for (const b of [rows.x, rows.y, rows.order]) dev.destroyBuffer(b)
}

export function uploadMlpData(dev: WgslDevice, key: string, dataset: Dataset): WgslMlpData {
  const F = dataset.spec.features
  const v = dataset.validation
  return {
    key,
    dataset,
    train: uploadRows(dev, withOnesColumn(dataset.xTrain, dataset.train, F), dataset.yTrain, dataset.train, 'mlp.train', new Uint32Array(dataset.train)),
    test: uploadRows(dev, withOnesColumn(dataset.xTest, dataset.test, F), dataset.yTest, dataset.test, 'mlp.test', null),
    validation: v ? uploadRows(dev, withOnesColumn(v.x, v.rows, F), v.y, v.rows, 'mlp.validation', null) : null,
    models: new Map(),
  }
}

export function disposeMlpData(dev: WgslDevice, data: WgslMlpData): void {
  for (const model of data.models.values()) model.destroy()
  data.models.clear()
  for (const rows of [data.train, data.test, data.validation]) destroyRows(dev, rows)
}

/** The fused program for n models of this workload's shape, made once per worker and shape. */
function modelFor(dev: WgslDevice, data: WgslMlpData, workload: MlpWorkload, n: number): WgslMlp {
  const batchRows = Math.min(workload.model.batchSize, data.dataset.train)
  const task = workload.task ? `:${workload.task.objective} ${workload.task.classes}` : ''
  const key = `${n}:${workload.model.hidden.join(',')}:${batchRows}${task}`
  let model = data.models.get(key)
  if (model) {
    data.models.delete(key) // re-inserted as the newest
  } else {
    model = new WgslMlp(
      dev,
      {
        n,
        features: workload.features,
        hidden: workload.model.hidden,
        batchRows,
        trainRows: data.dataset.train,
        ...(workload.task ? { task: workload.task } : {}),
      },
      data.train,
      ADAM_DEFAULTS,
    )
    const oldest = data.models.keys().next()
    if (data.models.size >= MODELS_KEPT && !oldest.done) {
      data.models.get(oldest.value)!.destroy()
      data.models.delete(oldest.value)
    }
  }
  data.models.set(key, model)
  return model
}

const lrPerModel = (workload: MlpWorkload, indices: readonly number[], options?: TrainOptions): number[] => {
  const lr = learningRates(workload, indices, options)
  return typeof lr === 'number' ? indices.map(() => lr) : lr
}

/** Warm-up before the clock: the program for this shape built (shaders compiled), one step and one evaluation run. */
export async function warmUpWgsl(dev: WgslDevice, data: WgslMlpData, workload: MlpWorkload, indices: readonly number[]): Promise<void> {
  const model = modelFor(dev, data, workload, indices.length)
  model.reset(
    indices.map((i) => modelSeed(workload.seed, i)),
    null,
  )
  const rows = model.beginEpoch(epochOrder(data.dataset.train, workload.seed, 0), lrPerModel(workload, indices))
  const encoder = dev.device.createCommandEncoder()
  model.encodeSteps(encoder, 0, 1, rows)
  model.encodeLossCopy(encoder)
  dev.submit([encoder.finish()])
  await model.readLoss()
  await scoresOn(model, workload, data.test, data.dataset.yTest)
}

/** Trains the models: all in one program when `fused` (batched), else one after another. */
export async function trainWgsl(
  dev: WgslDevice,
  data: WgslMlpData,
  workload: MlpWorkload,
  indices: readonly number[],
  options: TrainOptions,
  hooks: TrainHooks,
): Promise<void> {
  await trainInGroups(indices, options.fused, hooks, (group) => trainGroup(dev, data, workload, group, options, hooks))
}

async function trainGroup(
  dev: WgslDevice,
  data: WgslMlpData,
  workload: MlpWorkload,
  indices: readonly number[],
  options: TrainOptions,
  hooks: TrainHooks,
): Promise<TrainedModel[]> {
  const seeds = indices.map((i) => modelSeed(workload.seed, i))
  const heldOut = options.heldOutOf ? indices.map((i) => options.heldOutOf!(i)) : null
  const started = performance.now()
  const model = modelFor(dev, data, workload, indices.length)
  model.reset(seeds, heldOut)
  const g: GroupTraining = { dev, data, workload, model, indices, seeds, heldOut, lr: lrPerModel(workload, indices, options), hooks, lastEpochMeanLoss: null }
  const watches = EpochWatches.of(workload, indices.length)
  let epochLoss: Float64Array | null = null
  for (let epoch = 0; epoch < workload.model.epochs; epoch++) {
    epochLoss = await trainEpoch(g, epoch)
    if (watches && (await watchEpoch(g, watches, epochLoss)) === 0) break
  }
  const elapsedMs = performance.now() - started
  const {
    features,
    model: { hidden },
  } = workload
  if (watches) {
    // the kept models, each its best epoch's weights, scored as one program of the whole group
    const kept = watches.kept()
    const all = modelFor(dev, data, workload, indices.length)
    all.reset(seeds, heldOut, { values: kept.params })
    const test = await scoresOn(all, workload, data.test, data.dataset.yTest)
    const artifacts = options.keep ? mlpArtifacts(kept.params, features, hidden, indices.length, data.dataset.preprocess, workload.task) : null
    return trainedModels({
      indices,
      seeds,
      fused: options.fused,
      elapsedMs,
      test,
      epochLoss: kept.loss,
      validation: kept.validation,
      artifacts,
      rounds: kept.rounds,
    })
  }
  const test = await scoresOn(model, workload, data.test, data.dataset.yTest)
  const validation = await validationOf(g)
  const artifacts = options.keep ? mlpArtifacts(await model.parameters(), features, hidden, indices.length, data.dataset.preprocess, workload.task) : null
  return trainedModels({ indices, seeds, fused: options.fused, elapsedMs, test, epochLoss, validation, artifacts })
}

/** A fused group in training: its program, the models it holds now (their seeds, held-out rows and learning rates), and the loss progress reports. */
interface GroupTraining {
  dev: WgslDevice
  data: WgslMlpData
  workload: MlpWorkload
  /** the program: the group's models, or (early stopping) the survivors of a compaction */
  model: WgslMlp
  /** the models the program holds, in its order */
  indices: readonly number[]
  seeds: readonly number[]
  heldOut: readonly (HeldOutRows | null)[] | null
  lr: readonly number[]
  hooks: TrainHooks
  /** mean over the models of the last finished epoch's loss (what progress reports) */
  lastEpochMeanLoss: number | null
}

/** One epoch on the device, a few submits; returns each model's mean training loss (the epoch's one readback). */
async function trainEpoch(g: GroupTraining, epoch: number): Promise<Float64Array> {
  const { dev, model, data, workload, indices, heldOut, hooks } = g
  const { epochs } = workload.model
  const { train } = data.dataset
  const trainRows = heldOut ? trainingRowsOf(train, heldOut) : indices.map(() => train)
  const steps = model.stepsPerEpoch
  const perSubmit = Math.min(MAX_STEPS_PER_SUBMIT, Math.max(1, Math.ceil(steps / SUBMITS_PER_EPOCH)))
  const rows = model.beginEpoch(epochOrder(train, workload.seed, epoch), g.lr)
  /** the submit before the newest: waited for while the newest keeps the device busy */
  let previous: { done: Promise<void>; upTo: number } | null = null
  const reportDone = (upTo: number) =>
    hooks.onProgress(indices, { done: epoch * steps + upTo, total: epochs * steps, unit: 'batch', loss: g.lastEpochMeanLoss })
  for (let from = 0; from < steps; from += perSubmit) {
    if (hooks.shouldStop()) throw new CancelledError()
    const to = Math.min(steps, from + perSubmit)
    const encoder = dev.device.createCommandEncoder()
    model.encodeSteps(encoder, from, to, rows)
    if (to === steps) model.encodeLossCopy(encoder)
    dev.submit([encoder.finish()])
    const done = dev.drained()
    if (previous) {
      await previous.done
      reportDone(previous.upTo)
    }
    previous = { done, upTo: to }
  }
  // the epoch's one readback (it waits for the epoch's last submit)
  const sums = await model.readLoss()
  const epochLoss = Float64Array.from(sums, (s, i) => s / trainRows[i])
  g.lastEpochMeanLoss = epochLoss.reduce((a, b) => a + b, 0) / epochLoss.length
  reportDone(steps)
  return epochLoss
}

/**
 * Early stopping after an epoch (mlp/early-stopping.ts): the live models scored on their held-out
 * rows and fed to their rules. Models that stopped leave the program: whenever any stops, the
 * worker's program for the survivors' count continues their weights, Adam moments and step (three
 * reads and writes of their parameters), so a stopped model no longer costs its share of every step.
 * Returns the number of models still training.
 */
async function watchEpoch(g: GroupTraining, watches: EpochWatches, epochLoss: Float64Array): Promise<number> {
  const verdict = await watches.afterEpoch(await validationOf(g), epochLoss, () => g.model.parameters())
  const survivors = verdict.continuing
  if (verdict.stopped.length === 0 || survivors.length === 0) return survivors.length
  const state = survivorsState(await g.model.state(), g.model.n, g.workload.model.hidden[0], survivors)
  const pick = <T>(of: readonly T[]) => survivors.map((k) => of[k])
  g.indices = pick(g.indices)
  g.seeds = pick(g.seeds)
  g.heldOut = g.heldOut ? pick(g.heldOut) : null
  g.lr = pick(g.lr)
  g.model = modelFor(g.dev, g.data, g.workload, survivors.length)
  g.model.reset(g.seeds, g.heldOut, state)
  return survivors.length
}

/** Validation scores: a fold's own data set's validation rows, or each model's held-out rows (fused folds); null without. */
async function validationOf(g: GroupTraining): Promise<(ModelScores | null)[] | null> {
  const { dev, model, data, workload, heldOut } = g
  if (data.validation) return scoresOn(model, workload, data.validation, data.dataset.validation!.y)
  if (!heldOut?.some(Boolean)) return null
  return heldOutScores(data.dataset, heldOut, (x, y, rows) => scoresOfRows(dev, model, workload, x, y, rows))
}

/** Every fused model's scores on a set of rows on the device (labels: its y on the host): its MSE, a classifier's metrics from its logits. */
async function scoresOn(model: WgslMlp, workload: MlpWorkload, set: DeviceRows, labels: ArrayLike<number>): Promise<ModelScores[]> {
  if (workload.task) return classifierScores(workload.task, await model.logits(set), set.rows, model.n, labels)
  return mseScores(await model.evaluate(set))
}

/** Every fused model's scores on rows given on the host (x [rows, F+1] with its ones column, as heldOutScores passes them). */
async function scoresOfRows(dev: WgslDevice, model: WgslMlp, workload: MlpWorkload, x: Float32Array, y: Float32Array, rows: number): Promise<ModelScores[]> {
  const set = uploadRows(dev, x, y, rows, 'mlp.heldOut', null)
  try {
    return await scoresOn(model, workload, set, y)
  } finally {
    model.forget(set)
    destroyRows(dev, set)
  }
}
