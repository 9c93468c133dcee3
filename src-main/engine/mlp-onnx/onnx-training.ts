// Training on onnxruntime: the MLP family's data, warm-up and training on the `onnxruntime`
// backend. Same work as engine/mlp-tfjs/tfjs-training.ts (initial weights, batch order, Adam, the
// objective's loss, test scores). Weights and Adam state ping-pong between two preallocated sets of ort Tensors (Node's
// binding has no IOBinding); each step yields to the event loop (README.md, "Weights between
// steps"). With early stopping (workload.earlyStopping), after each epoch every live model is scored
// on its held-out rows (mlp/early-stopping.ts decides); stopped models leave the fused program (a
// smaller OrtMlp continues the survivors' state), and each model's result is its best epoch's weights.
import type * as Ort from 'onnxruntime-node'
import { modelSeed, type Workload, type WorkloadTask } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { epochOrder, type Dataset } from '../datasets/generated'
import { initialParams } from '../mlp/fused-layout'
import { heldOutRowWeights, heldOutScores, trainingRowsOf, withOnesColumn } from '../datasets/dataset'
import { ADAM_DEFAULTS, type AdamSettings, learningRates } from '../mlp/adam'
import { CancelledError, type TrainedModel, type TrainHooks, type TrainOptions } from '../backend/types'
import { mlpArtifacts } from '../mlp/artifact'
import { classifierScores, type ModelScores, mseScores, outputUnits } from '../mlp/objective'
import type { HeldOutRows } from '@shared/contract'
import { trainedModels, trainInGroups } from '../mlp/results'
import { EpochWatches, type ProgramState, survivorsState } from '../mlp/early-stopping'
import { adamMName, adamVName, evaluateGraph, graphParamShapes, nextName, paramName, trainStepGraph, type MlpGraphSpec } from './graph'
import { type OnnxRuntime, sessionFor } from './ort-runtime'

type MlpWorkload = Workload<MlpParams>

/** Rows of the test set evaluated per run, bounded so n·H activations stay small (FusedMlp's bound). */
const EVAL_ELEMENTS_PER_CHUNK = 8 * 1024 * 1024

export interface OrtData {
  key: string
  dataset: Dataset
  /** the test rows with a last column of ones, [test, F+1] */
  xTest: Float32Array
  /** a fold's validation rows laid out the same way (model sets with folds); null otherwise */
  xVal: Float32Array | null
}

/** The family's data set, with the test (and validation) rows laid out for the graph. */
export function prepareOrtData(key: string, dataset: Dataset, workload: MlpWorkload): OrtData {
  const F = workload.features
  const v = dataset.validation
  return { key, dataset, xTest: withOnesColumn(dataset.xTest, dataset.test, F), xVal: v ? withOnesColumn(v.x, v.rows, F) : null }
}

export interface OrtMlpOptions {
  features: number
  hidden: readonly number[]
  seeds: readonly number[]
  adam: AdamSettings
  /** a model set's folds fused: each step takes per-model row weights (batch(rows).w) */
  rowWeights?: boolean
  /** what the models learn; absent: regression */
  task?: WorkloadTask
  /** where training starts instead of the seeds' initial weights: parameters in the fused layout, and Adam's moments and step (absent: zero, step 0) */
  start?: ProgramState
}

interface BatchBuffers {
  x: Float32Array
  y: Float32Array
  /** row weights [rows, n] (rowWeights only) */
  w: Float32Array
  feeds: Record<string, Ort.Tensor>
}

/** n MLPs (n = 1: one) trained by the generated step graph; the ORT twin of FusedMlp. */
export class OrtMlp {
  readonly n: number
  private readonly spec: MlpGraphSpec
  private readonly sets: Record<string, Ort.Tensor>[]
  private current = 0
  private step = 0
  private readonly scalars: Partial<Record<'rows' | 'two_over_rows' | 'one_over_rows', Ort.Tensor>> & Record<'lr_c1' | 'c2', Ort.Tensor>
  private readonly loss: Ort.Tensor
  private readonly batches = new Map<number, BatchBuffers>()

  private constructor(
    private readonly rt: OnnxRuntime,
    private readonly options: OrtMlpOptions,
    private readonly train: Ort.InferenceSession,
    private readonly evaluator: Ort.InferenceSession,
  ) {
    const { Tensor } = rt.ort
    this.n = options.seeds.length
    this.spec = graphSpec(options)
    const shapes = graphParamShapes(this.spec)
    const { start } = options
    const sizes = shapes.map((shape) => shape.reduce((a, b) => a * b, 1))
    // the graph holds W1ᵀ (graph.ts, w1Transposed): the fused layout's W1 (and its moments) transposed in
    const graphLayout = (fused: Float32Array[], what: string) => {
      if (fused.length !== shapes.length) throw new RangeError(`start: ${fused.length} ${what}, the layout has ${shapes.length}`)
      return fused.map((p, i) => {
        if (p.length !== sizes[i]) throw new RangeError(`start: ${what} ${i} holds ${p.length} values, the layout of ${this.n} models ${sizes[i]}`)
        return i === 0 ? transposed(p, options.features + 1) : p.slice()
      })
    }
    const initial = graphLayout(start?.values ?? initialParams(options.features, options.hidden, options.seeds, outputUnits(options.task)), 'parameters')
    const moments = start?.adam ? { m: graphLayout(start.adam.m, "Adam's first moments"), v: graphLayout(start.adam.v, "Adam's second moments") } : null
    this.step = start?.adam?.step ?? 0
    this.sets = [0, 1].map((s) => {
      const set: Record<string, Ort.Tensor> = {}
      shapes.forEach((shape, i) => {
        const first = (values: Float32Array | undefined) => (s === 0 && values ? values : new Float32Array(sizes[i]))
        set[paramName(i)] = new Tensor('float32', first(initial[i]), shape)
        set[adamMName(i)] = new Tensor('float32', first(moments?.m[i]), shape)
        set[adamVName(i)] = new Tensor('float32', first(moments?.v[i]), shape)
      })
      return set
    })
    const scalar = () => new Tensor('float32', new Float32Array(1), [])
    this.scalars = {
      ...(options.rowWeights ? {} : options.task ? { rows: scalar(), one_over_rows: scalar() } : { rows: scalar(), two_over_rows: scalar() }),
      lr_c1: new Tensor('float32', new Float32Array(this.n), [this.n]),
      c2: scalar(),
    }
    this.loss = new Tensor('float32', new Float32Array(this.n), [this.n])
  }

  /** Creates the model; its sessions come from the runtime's cache (created on first use). */
  static async create(rt: OnnxRuntime, options: OrtMlpOptions): Promise<OrtMlp> {
    const spec = graphSpec(options)
    const task = options.task ? `:${options.task.objective} ${options.task.classes}` : ''
    const key = `${options.features}:${options.hidden.join(',')}:${options.seeds.length}:${spec.adam.beta1}:${spec.adam.beta2}:${spec.adam.epsilon}${task}`
    const [train, evaluator] = await Promise.all([
      sessionFor(rt, `train:${key}${spec.rowWeights ? ':row-weights' : ''}`, () => trainStepGraph(spec)),
      sessionFor(rt, `eval:${key}`, () => evaluateGraph(spec)),
    ])
    return new OrtMlp(rt, options, train, evaluator)
  }

  /** The batch buffers for `rows` rows, to be filled in place before trainStep(rows). */
  batch(rows: number): { x: Float32Array; y: Float32Array; w: Float32Array } {
    let b = this.batches.get(rows)
    if (!b) {
      const F1 = this.options.features + 1
      const x = new Float32Array(rows * F1)
      const y = new Float32Array(rows)
      const w = new Float32Array(this.options.rowWeights ? rows * this.n : 0)
      const { Tensor } = this.rt.ort
      const feeds: Record<string, Ort.Tensor> = { x: new Tensor('float32', x, [rows, F1]), y: new Tensor('float32', y, [rows, 1]) }
      if (this.options.rowWeights) feeds.row_weights = new Tensor('float32', w, [rows, this.n])
      b = { x, y, w, feeds }
      this.batches.set(rows, b)
    }
    return b
  }

  /** One Adam step on the batch filled through batch(rows). Returns the per-model batch loss (before the update); valid until the next step. */
  async trainStep(rows: number): Promise<Float32Array> {
    const b = this.batches.get(rows)
    if (!b) throw new Error(`no batch buffers for ${rows} rows: fill batch(${rows}) first`)
    const { lr, beta1, beta2 } = this.options.adam
    this.step += 1
    const c1 = 1 - beta1 ** this.step
    const c2 = 1 - beta2 ** this.step
    if (this.scalars.rows) (this.scalars.rows.data as Float32Array)[0] = rows
    if (this.scalars.two_over_rows) (this.scalars.two_over_rows.data as Float32Array)[0] = 2 / rows
    if (this.scalars.one_over_rows) (this.scalars.one_over_rows.data as Float32Array)[0] = 1 / rows
    const lrC1 = this.scalars.lr_c1.data as Float32Array
    for (let i = 0; i < this.n; i++) lrC1[i] = (typeof lr === 'number' ? lr : lr[i]) / c1
    ;(this.scalars.c2.data as Float32Array)[0] = c2
    const from = this.sets[this.current]
    const to = this.sets[1 - this.current]
    const fetches: Record<string, Ort.Tensor> = { loss: this.loss }
    for (const name of Object.keys(to)) fetches[nextName(name)] = to[name]
    await this.train.run({ ...b.feeds, ...this.scalars, ...from }, fetches)
    this.current = 1 - this.current
    return this.loss.data as Float32Array
  }

  /** The trained parameters, in the fused layout (mlp/artifact.ts reads each model out of it): W1 transposed back, the others as they are. */
  parameters(): Float32Array[] {
    const set = this.sets[this.current]
    return graphParamShapes(this.spec).map((shape, i) => {
      const p = set[paramName(i)].data as Float32Array
      return i === 0 ? transposed(p, shape[0]) : p
    })
  }

  /** The training state (parameters, Adam's moments and step) in the fused layout: copies, W1 and its moments transposed back. */
  state(): Required<ProgramState> {
    const set = this.sets[this.current]
    const read = (name: (i: number) => string) =>
      graphParamShapes(this.spec).map((shape, i) => {
        const p = set[name(i)].data as Float32Array
        return i === 0 ? transposed(p, shape[0]) : p.slice()
      })
    return { values: read(paramName), adam: { m: read(adamMName), v: read(adamVName), step: this.step } }
  }

  /**
   * A smaller program of models `positions` (in that order) continuing from their current weights and
   * Adam moments at the same step, with their own seeds and learning rates: each trains on exactly as
   * it would have here, since no model's step reads another's. This program stays as it was.
   */
  async survivors(positions: readonly number[]): Promise<OrtMlp> {
    const { options, n } = this
    const lr = options.adam.lr
    return OrtMlp.create(this.rt, {
      ...options,
      seeds: positions.map((i) => options.seeds[i]),
      adam: { ...options.adam, lr: typeof lr === 'number' ? lr : positions.map((i) => lr[i]) },
      start: survivorsState(this.state(), n, options.hidden[0], positions),
    })
  }

  /** Each model's scores on rows of x [rows, F+1] (ones last) and y [rows]: its MSE, a classifier's metrics from its logits. */
  async scores(x: Float32Array, y: Float32Array, rows: number): Promise<ModelScores[]> {
    const { task } = this.options
    return task ? classifierScores(task, await this.logits(x, rows), rows, this.n, y) : mseScores(await this.evaluate(x, y, rows))
  }

  /** The current parameters as the evaluation graph's inputs. */
  private currentParams(): Record<string, Ort.Tensor> {
    const params: Record<string, Ort.Tensor> = {}
    const set = this.sets[this.current]
    for (const name of Object.keys(set)) if (name.startsWith('p')) params[name] = set[name]
    return params
  }

  /** Rows evaluated per run, bounded so n·H activations stay small (FusedMlp's bound). */
  private evalChunk(rows: number): number {
    const widest = Math.max(...this.options.hidden, outputUnits(this.options.task))
    return Math.max(1, Math.min(rows, Math.floor(EVAL_ELEMENTS_PER_CHUNK / (this.n * widest))))
  }

  /** A classifier's logits on rows of x [rows, F+1], rows first ([rows, n·K]), in chunks. */
  async logits(x: Float32Array, rows: number): Promise<Float32Array> {
    const { Tensor } = this.rt.ort
    const F1 = this.options.features + 1
    const K = outputUnits(this.options.task)
    const chunk = this.evalChunk(rows)
    const params = this.currentParams()
    const out = new Float32Array(rows * this.n * K)
    for (let start = 0; start < rows; start += chunk) {
      const size = Math.min(chunk, rows - start)
      const result = await this.evaluator.run({ x: new Tensor('float32', x.subarray(start * F1, (start + size) * F1), [size, F1]), ...params })
      out.set(result.logits.data as Float32Array, start * this.n * K)
      result.logits.dispose()
    }
    return out
  }

  /** Per-model mean squared error on rows of x [rows, F+1] (ones last) and y [rows], in chunks. */
  async evaluate(x: Float32Array, y: Float32Array, rows: number): Promise<Float64Array> {
    const { Tensor } = this.rt.ort
    const F1 = this.options.features + 1
    const chunk = this.evalChunk(rows)
    const params = this.currentParams()
    const total = new Float64Array(this.n)
    for (let start = 0; start < rows; start += chunk) {
      const size = Math.min(chunk, rows - start)
      const out = await this.evaluator.run({
        x: new Tensor('float32', x.subarray(start * F1, (start + size) * F1), [size, F1]),
        y: new Tensor('float32', y.subarray(start, start + size), [size, 1]),
        ...params,
      })
      const sse = out.sse.data as Float32Array
      for (let i = 0; i < this.n; i++) total[i] += sse[i]
      out.sse.dispose()
    }
    for (let i = 0; i < this.n; i++) total[i] /= rows
    return total
  }
}

function graphSpec(o: OrtMlpOptions): MlpGraphSpec {
  const { beta1, beta2, epsilon } = o.adam
  return {
    features: o.features,
    hidden: o.hidden,
    n: o.seeds.length,
    adam: { beta1, beta2, epsilon },
    w1Transposed: true,
    ...(o.rowWeights ? { rowWeights: true } : {}),
    ...(o.task ? { task: o.task } : {}),
  }
}

/** A row-major [rows, length / rows] matrix transposed, as a new array. */
function transposed(m: Float32Array, rows: number): Float32Array {
  const cols = m.length / rows
  const out = new Float32Array(m.length)
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = m[r * cols + c]
  return out
}

function modelOptions(workload: MlpWorkload, indices: readonly number[], options?: TrainOptions): OrtMlpOptions {
  return {
    features: workload.features,
    hidden: workload.model.hidden,
    seeds: indices.map((i) => modelSeed(workload.seed, i)),
    adam: { lr: learningRates(workload, indices, options), ...ADAM_DEFAULTS },
    ...(options?.heldOutOf ? { rowWeights: true } : {}),
    ...(workload.task ? { task: workload.task } : {}),
  }
}

/** Copies rows order[start…start+rows) of the training set into the batch buffers (X with its ones column). */
function fillBatch(data: OrtData, order: Int32Array, start: number, rows: number, into: { x: Float32Array; y: Float32Array }): void {
  const { xTrain, yTrain } = data.dataset
  const F = data.dataset.spec.features
  for (let r = 0; r < rows; r++) {
    const src = order[start + r]
    into.x.set(xTrain.subarray(src * F, src * F + F), r * (F + 1))
    into.x[r * (F + 1) + F] = 1
    into.y[r] = yTrain[src]
  }
}

/** Warm-up before the clock: sessions for this shape created, one step and one evaluation run. */
export async function warmUpOrt(rt: OnnxRuntime, data: OrtData, workload: MlpWorkload, indices: readonly number[]): Promise<void> {
  const model = await OrtMlp.create(rt, modelOptions(workload, indices))
  const rows = Math.min(workload.model.batchSize, data.dataset.train)
  fillBatch(data, epochOrder(data.dataset.train, workload.seed, 0), 0, rows, model.batch(rows))
  await model.trainStep(rows)
  await model.scores(data.xTest, data.dataset.yTest, data.dataset.test)
}

/** Trains the models: all in one program when `fused` (batched), else one after another. */
export async function trainOrt(
  rt: OnnxRuntime,
  data: OrtData,
  workload: MlpWorkload,
  indices: readonly number[],
  options: TrainOptions,
  hooks: TrainHooks,
): Promise<void> {
  await trainInGroups(indices, options.fused, hooks, (group) => trainGroup(rt, data, workload, group, options, hooks))
}

async function trainGroup(
  rt: OnnxRuntime,
  data: OrtData,
  workload: MlpWorkload,
  indices: readonly number[],
  { fused, keep = false, paramsOf, heldOutOf }: TrainOptions,
  hooks: TrainHooks,
): Promise<TrainedModel[]> {
  const options = modelOptions(workload, indices, { fused, keep, paramsOf, heldOutOf })
  // a model set's folds fused: each model's fold rows held out of the shared batch order (row weights)
  const heldOut = heldOutOf ? indices.map((i) => heldOutOf(i)) : null
  const started = performance.now()
  const group: GroupTraining = { model: await OrtMlp.create(rt, options), data, workload, indices, heldOut, hooks, lastEpochMeanLoss: null }
  const watches = EpochWatches.of(workload, indices.length)
  let epochLoss: Float32Array | null = null
  for (let epoch = 0; epoch < workload.model.epochs; epoch++) {
    epochLoss = await trainEpoch(group, epoch)
    if (watches && (await watchEpoch(group, watches, epochLoss)) === 0) break
  }
  const elapsedMs = performance.now() - started
  const {
    features,
    model: { hidden },
  } = workload
  if (watches) {
    // the kept models, each its best epoch's weights, scored as one program of the whole group
    const kept = watches.kept()
    const model = await OrtMlp.create(rt, { ...options, start: { values: kept.params } })
    const test = await model.scores(data.xTest, data.dataset.yTest, data.dataset.test)
    const artifacts = keep ? mlpArtifacts(kept.params, features, hidden, indices.length, data.dataset.preprocess, workload.task) : null
    return trainedModels({
      indices,
      seeds: options.seeds,
      fused,
      elapsedMs,
      test,
      epochLoss: kept.loss,
      validation: kept.validation,
      artifacts,
      rounds: kept.rounds,
    })
  }
  const { model } = group
  const test = await model.scores(data.xTest, data.dataset.yTest, data.dataset.test)
  const validation = await validationOf(group)
  const artifacts = keep ? mlpArtifacts(model.parameters(), features, hidden, indices.length, data.dataset.preprocess, workload.task) : null
  return trainedModels({ indices, seeds: options.seeds, fused, elapsedMs, test, epochLoss, validation, artifacts })
}

/** A fused group in training: its program, the models it holds now and their held-out rows, and the loss progress reports. */
interface GroupTraining {
  /** the program: the group's models, or (early stopping) the survivors of a compaction */
  model: OrtMlp
  data: OrtData
  workload: MlpWorkload
  /** the models the program holds, in its order */
  indices: readonly number[]
  heldOut: readonly (HeldOutRows | null)[] | null
  hooks: TrainHooks
  /** mean over the models of the last finished epoch's loss (what progress reports) */
  lastEpochMeanLoss: number | null
}

/** One epoch's steps in the shared order; returns each model's mean training loss. */
async function trainEpoch(g: GroupTraining, epoch: number): Promise<Float32Array> {
  const { model, data, workload, indices, heldOut, hooks } = g
  const { epochs, batchSize } = workload.model
  const { train } = data.dataset
  // from the rows this data set trains on (a fold's are fewer than the workload's split)
  const batches = Math.ceil(train / batchSize)
  const n = indices.length
  const counts = new Float32Array(n)
  const order = epochOrder(train, workload.seed, epoch)
  const lossSum = new Float32Array(n) // float32 sums, as the tfjs loop keeps them
  for (let b = 0; b < batches; b++) {
    if (hooks.shouldStop()) throw new CancelledError()
    const start = b * batchSize
    const rows = Math.min(batchSize, train - start)
    const batch = model.batch(rows)
    fillBatch(data, order, start, rows, batch)
    if (heldOut) heldOutRowWeights(order, start, rows, heldOut, batch.w, counts)
    const loss = await model.trainStep(rows)
    for (let i = 0; i < n; i++) lossSum[i] += loss[i] * (heldOut ? counts[i] : rows)
    hooks.onProgress(indices, { done: epoch * batches + b + 1, total: epochs * batches, unit: 'batch', loss: g.lastEpochMeanLoss })
  }
  const trainRows = heldOut ? trainingRowsOf(train, heldOut) : null
  for (let i = 0; i < n; i++) lossSum[i] /= trainRows ? trainRows[i] : train
  g.lastEpochMeanLoss = lossSum.reduce((s, v) => s + v, 0) / n
  return lossSum
}

/**
 * Early stopping after an epoch (mlp/early-stopping.ts): the live models scored on their held-out
 * rows and fed to their rules. Models that stopped leave the program: whenever any stops, a smaller
 * OrtMlp continues the survivors' weights, Adam moments and step (three times their parameters copied
 * once, and a cached session per program size) — less than one step over a batch, while a stopped
 * model left in would cost its share of every step to the end. Returns the number of models still training.
 */
async function watchEpoch(g: GroupTraining, watches: EpochWatches, epochLoss: Float32Array): Promise<number> {
  const verdict = await watches.afterEpoch(await validationOf(g), epochLoss, async () => g.model.parameters())
  const survivors = verdict.continuing
  if (verdict.stopped.length === 0 || survivors.length === 0) return survivors.length
  g.model = await g.model.survivors(survivors)
  g.indices = survivors.map((k) => g.indices[k])
  g.heldOut = g.heldOut ? survivors.map((k) => g.heldOut![k]) : null
  return survivors.length
}

/** Validation scores: a fold's own data set's validation rows, or each model's held-out rows (fused folds); null without. */
async function validationOf(g: GroupTraining): Promise<(ModelScores | null)[] | null> {
  const { model, data, heldOut } = g
  const v = data.dataset.validation
  if (data.xVal && v) return model.scores(data.xVal, v.y, v.rows)
  if (!heldOut?.some(Boolean)) return null
  return heldOutScores(data.dataset, heldOut, (x, y, rows) => model.scores(x, y, rows))
}
