// Training on onnxruntime: the MLP family's data, warm-up and training on the `onnxruntime`
// backend. Same work as engine/mlp-tfjs/tfjs-training.ts (initial weights, batch order, Adam, the
// objective's loss, test scores). Weights and Adam state ping-pong between two preallocated sets of ort Tensors (Node's
// binding has no IOBinding); each step yields to the event loop (README.md, "Weights between
// steps").
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
import { trainedModels, trainInGroups } from '../mlp/results'
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
    const initial = initialParams(options.features, options.hidden, options.seeds, outputUnits(options.task))
    initial[0] = transposed(initial[0], options.features + 1) // the graph holds W1ᵀ (graph.ts, w1Transposed)
    this.sets = [0, 1].map((s) => {
      const set: Record<string, Ort.Tensor> = {}
      shapes.forEach((shape, i) => {
        set[paramName(i)] = new Tensor('float32', s === 0 ? initial[i] : new Float32Array(initial[i].length), shape)
        set[adamMName(i)] = new Tensor('float32', new Float32Array(initial[i].length), shape)
        set[adamVName(i)] = new Tensor('float32', new Float32Array(initial[i].length), shape)
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
  const counts = new Float32Array(indices.length)
  const started = performance.now()
  const model = await OrtMlp.create(rt, options)
  const { epochs, batchSize } = workload.model
  const { train } = data.dataset
  // from the rows this data set trains on (a fold's are fewer than the workload's split)
  const batches = Math.ceil(train / batchSize)
  const n = indices.length
  const trainRows = heldOut ? trainingRowsOf(train, heldOut) : null
  let epochLoss: Float32Array | null = null
  let lastEpochMeanLoss: number | null = null
  for (let epoch = 0; epoch < epochs; epoch++) {
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
      hooks.onProgress(indices, { done: epoch * batches + b + 1, total: epochs * batches, unit: 'batch', loss: lastEpochMeanLoss })
    }
    for (let i = 0; i < n; i++) lossSum[i] /= trainRows ? trainRows[i] : train
    epochLoss = lossSum
    lastEpochMeanLoss = lossSum.reduce((s, v) => s + v, 0) / n
  }
  const elapsedMs = performance.now() - started
  const test = await model.scores(data.xTest, data.dataset.yTest, data.dataset.test)
  const v = data.dataset.validation
  const validation =
    data.xVal && v
      ? await model.scores(data.xVal, v.y, v.rows)
      : heldOut?.some(Boolean)
        ? await heldOutScores(data.dataset, heldOut, (x, y, rows) => model.scores(x, y, rows))
        : null
  const artifacts = keep ? mlpArtifacts(model.parameters(), workload.features, workload.model.hidden, n, data.dataset.preprocess, workload.task) : null
  return trainedModels({ indices, seeds: options.seeds, fused, elapsedMs, test, epochLoss, validation, artifacts })
}
