// Every MLP engine learns a classifier: the losses and gradients against PyTorch 1.13 (an
// implementation that shares nothing with ours) and by hand on a case worked on paper; then each
// engine (tfjs FusedMlp on the cpu backend, ONNX Runtime, the WGSL engine on the adapter Dawn gives
// here) × binary and multiclass: it learns generated make_classification data (loss falls, accuracy
// well above chance), batched = one model at a time, the engines agree per model, folds give
// validation metrics, and the kept artifact gives the run's probabilities.
import { spawnSync } from 'node:child_process'
import * as tf from '@tensorflow/tfjs-core'
import '@tensorflow/tfjs-backend-cpu'
import type * as Ort from 'onnxruntime-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { foldRows, ModelArtifactSchema, type Workload, type WorkloadTask } from '@shared/contract'
import type { MlpParams } from '@shared/families'
import { scoreOutputs, sigmoid, softmaxInPlace } from '@shared/metrics'
import { skipWithout } from '../../testing/capability'
import { datasetFor } from '../datasets/generated'
import { withOnesColumn } from '../datasets/dataset'
import { BackendUnavailableError, type TrainedModel, type TrainOptions } from '../backend/types'
import { Rng } from '../random'
import { gradName, paramName, trainStepGraph, type MlpGraphSpec } from '../mlp-onnx/graph'
import { prepareOrtData, trainOrt } from '../mlp-onnx/onnx-training'
import { type OnnxRuntime, SESSION_OPTIONS, startOnnxRuntime } from '../mlp-onnx/ort-runtime'
import { FusedMlp } from '../mlp-tfjs/fused-mlp'
import { dataKey } from './data-key'
import { disposeData, trainModels as trainTfjs, uploadData, warmUp } from '../mlp-tfjs/tfjs-training'
import { disposeMlpData, trainWgsl, uploadMlpData } from '../mlp-webgpu/wgsl-training'
import { openWgslDevice, type WgslDevice } from '../webgpu/device'
import { ADAM_DEFAULTS } from './adam'
import { type MlpArtifact, mlpArtifacts } from './artifact'
import { initialParams, paramShapes } from './fused-layout'
import { outputUnits } from './objective'

const PYTHON = '/usr/bin/python3'
/** DESIGN.md: backends agree to ~1e-6; 1e-3 leaves room (the family's cross-backend tolerance) */
const CROSS_BACKEND = 1e-3
/** batched = one at a time: the family's same-work tolerance */
const SAME_WORK = 1e-4

const BINARY: WorkloadTask = { objective: 'binary', classes: 2 }
const MULTICLASS: WorkloadTask = { objective: 'multiclass', classes: 4 }

let rt: OnnxRuntime | null = null
let ortWhy = ''
let dev: WgslDevice | null = null
let gpuWhy = ''
let torchWhy = ''

beforeAll(async () => {
  await tf.setBackend('cpu')
  try {
    rt = await startOnnxRuntime()
  } catch (err) {
    if (!(err instanceof BackendUnavailableError)) throw err
    ortWhy = err.reason
  }
  try {
    dev = await openWgslDevice('trainpool-mlp-classifier-tests')
  } catch (err) {
    if (!(err instanceof BackendUnavailableError)) throw err
    gpuWhy = err.reason
  }
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' })
  if (probe.status !== 0) torchWhy = `${PYTHON} cannot import torch: ${probe.stderr || probe.error?.message}`
})

afterAll(() => dev?.release())

const noOrt = () => skipWithout('onnxruntime', rt !== null, ortWhy)
const noTorch = () => skipWithout('torch', torchWhy === '', torchWhy)

const product = (shape: number[]) => shape.reduce((a, b) => a * b, 1)

/** The fused parameters as dense layers per model (the artifact's reading of the layout), in float64 when given float64. */
function layersOf(params: readonly Float64Array[] | readonly Float32Array[], features: number, hidden: number[], n: number, task: WorkloadTask): MlpArtifact[] {
  return mlpArtifacts(params as readonly Float32Array[], features, hidden, n, undefined, task)
}

/**
 * PyTorch 1.13's mean loss of each model on its kept rows (BCEWithLogitsLoss on the one logit,
 * CrossEntropyLoss on the K logits) and its gradients, layer by layer, in float64.
 */
function torchLossAndGradients(
  task: WorkloadTask,
  models: readonly MlpArtifact[],
  x: Float64Array,
  y: Float64Array,
  rows: number,
  keep: readonly boolean[][],
): { loss: number; grads: { w: number[]; b: number[] }[] }[] {
  const script = `
import json, sys, torch
d = json.load(sys.stdin)
x = torch.tensor(d['x'], dtype=torch.float64).reshape(d['rows'], -1)
y = torch.tensor(d['y'], dtype=torch.float64)
out = []
for m, keep in zip(d['models'], d['keep']):
    rows = torch.tensor(keep, dtype=torch.bool)
    layers = [(torch.tensor(l['w'], dtype=torch.float64).reshape(l['inputs'], l['outputs']).requires_grad_(),
               torch.tensor(l['b'], dtype=torch.float64).requires_grad_()) for l in m['layers']]
    a = x[rows]
    for k, (w, b) in enumerate(layers):
        a = a @ w + b
        if k < len(layers) - 1:
            a = torch.relu(a)
    if d['objective'] == 'binary':
        loss = torch.nn.BCEWithLogitsLoss()(a[:, 0], y[rows])
    else:
        loss = torch.nn.CrossEntropyLoss()(a, y[rows].long())
    loss.backward()
    out.append({'loss': loss.item(), 'grads': [{'w': w.grad.flatten().tolist(), 'b': b.grad.tolist()} for w, b in layers]})
print(json.dumps(out))
`
  const input = JSON.stringify({ objective: task.objective, x: [...x], y: [...y], rows, models, keep })
  const run = spawnSync(PYTHON, ['-c', script], { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (run.status !== 0) throw new Error(`torch failed: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

interface TinyCase {
  spec: MlpGraphSpec
  rows: number
  /** features only (PyTorch's input); the graph's x has the ones column */
  x: Float64Array
  y: Float64Array
  params: Float64Array[]
}

/** A small float64 problem: 2 fused classifiers with random parameters (non-zero biases), 9 rows holding every class. */
function tinyCase(task: WorkloadTask, hidden: number[], seed: number, rowWeights = false): TinyCase {
  const features = 5
  const rows = 9
  const n = 2
  const rng = new Rng(seed, 1)
  const x = Float64Array.from({ length: rows * features }, () => rng.uniform() * 2 - 1)
  const y = Float64Array.from({ length: rows }, (_, r) => (r * 7 + seed) % task.classes)
  const shapes = paramShapes(features, hidden, n, outputUnits(task))
  const params = shapes.map((s) => Float64Array.from({ length: product(s) }, () => (rng.uniform() * 2 - 1) * 0.9))
  return { spec: { features, hidden, n, adam: ADAM_DEFAULTS, precision: 'float64', task, ...(rowWeights ? { rowWeights: true } : {}) }, rows, x, y, params }
}

/** The gradient graph's loss [n] and gradients g_i (fused layout) on a tiny case; `keep[i][r]`: model i trains on row r. */
async function graphLossAndGradients(c: TinyCase, keep: readonly boolean[][]): Promise<{ loss: Float64Array; grads: Float64Array[] }> {
  const { ort } = rt!
  const { features, n } = c.spec
  const shapes = paramShapes(features, c.spec.hidden, n, outputUnits(c.spec.task))
  const tensor = (values: Float64Array, dims: number[]) => new ort.Tensor('float64', values, dims)
  const x = new Float64Array(c.rows * (features + 1)) // the features in float64, a last column of ones
  for (let r = 0; r < c.rows; r++) {
    x.set(c.x.subarray(r * features, (r + 1) * features), r * (features + 1))
    x[r * (features + 1) + features] = 1
  }
  const feeds: Record<string, Ort.Tensor> = { x: tensor(x, [c.rows, features + 1]), y: tensor(c.y, [c.rows, 1]) }
  if (c.spec.rowWeights) {
    const w = new Float64Array(c.rows * n)
    for (let i = 0; i < n; i++) {
      const count = keep[i].filter(Boolean).length
      for (let r = 0; r < c.rows; r++) w[r * n + i] = keep[i][r] ? 1 / count : 0
    }
    feeds.row_weights = tensor(w, [c.rows, n])
  } else {
    feeds.rows = tensor(Float64Array.of(c.rows), [])
    feeds.one_over_rows = tensor(Float64Array.of(1 / c.rows), [])
  }
  shapes.forEach((s, i) => (feeds[paramName(i)] = tensor(c.params[i], s)))
  const session = await ort.InferenceSession.create(trainStepGraph(c.spec, 'gradients'), SESSION_OPTIONS)
  const out = await session.run(feeds)
  await session.release()
  return { loss: out.loss.data as Float64Array, grads: shapes.map((_, i) => out[gradName(i)].data as Float64Array) }
}

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tolerance * (1 + Math.abs(expected)))

describe('classifier losses and gradients', () => {
  for (const task of [BINARY, { objective: 'multiclass', classes: 3 } as WorkloadTask]) {
    for (const hidden of [[4], [4, 3]]) {
      for (const rowWeights of [false, true]) {
        it(`${task.objective}, hidden ${hidden}${rowWeights ? ', rows held out' : ''}: the ONNX graph's loss and gradients = PyTorch 1.13's (float64)`, async (ctx) => {
          if (noOrt() || noTorch()) return ctx.skip()
          const c = tinyCase(task, hidden, 3 + hidden.length, rowWeights)
          // model 1 holds rows 2 and 3 out when rows are held out (a fold), model 0 none
          const keep = [0, 1].map((i) => Array.from({ length: c.rows }, (_, r) => !(rowWeights && i === 1 && (r === 2 || r === 3))))
          const mine = await graphLossAndGradients(c, keep)
          const reference = torchLossAndGradients(task, layersOf(c.params, c.spec.features, hidden, 2, task), c.x, c.y, c.rows, keep)
          const grads = layersOf(mine.grads, c.spec.features, hidden, 2, task)
          let checked = 0
          reference.forEach((ref, i) => {
            close(mine.loss[i], ref.loss, 1e-12, `model ${i} loss`)
            ref.grads.forEach((layer, l) => {
              layer.w.forEach((g, j) => close(grads[i].layers[l].w[j], g, 1e-10, `model ${i} layer ${l} w[${j}]`))
              layer.b.forEach((g, j) => close(grads[i].layers[l].b[j], g, 1e-10, `model ${i} layer ${l} b[${j}]`))
              checked += layer.w.length + layer.b.length
            })
          })
          expect(checked).toBe(c.params.reduce((s, p) => s + p.length, 0))
        })
      }
    }
  }

  it('by hand: with every weight 0 the logits are 0, so the loss is ln 2 (binary) / ln K and the output bias gradient p − the class frequency', async (ctx) => {
    if (noOrt()) return ctx.skip()
    for (const task of [BINARY, { objective: 'multiclass', classes: 3 } as WorkloadTask]) {
      const c = tinyCase(task, [4], 1)
      c.params = c.params.map((p) => new Float64Array(p.length))
      const keep = [0, 1].map(() => Array.from({ length: c.rows }, () => true))
      const { loss, grads } = await graphLossAndGradients(c, keep)
      const K = task.classes
      expect(loss[0]).toBeCloseTo(Math.log(K), 14)
      expect(loss[1]).toBeCloseTo(Math.log(K), 14)
      const bo = grads[grads.length - 1] // [n] binary, [n, K] multiclass
      const frequency = (k: number) => c.y.filter((v) => v === k).length / c.rows
      if (K === 2) expect(bo[0]).toBeCloseTo(0.5 - frequency(1), 14)
      else for (let k = 0; k < K; k++) expect(bo[k]).toBeCloseTo(1 / K - frequency(k), 14)
      // hidden activations are relu(0) = 0: no gradient reaches the output weights
      expect(grads[grads.length - 2].every((g) => g === 0)).toBe(true)
    }
  })

  for (const task of [BINARY, MULTICLASS]) {
    it(`${task.objective}: FusedMlp's first-step loss = PyTorch's on the same initial weights (float32)`, async (ctx) => {
      if (noTorch()) return ctx.skip()
      const w: W = { ...base, task }
      const dataset = datasetFor(w)
      const rows = 64
      const F = w.features
      const seeds = [11, 12, 13]
      const model = new FusedMlp(tf, { features: F, hidden: [16, 8], seeds, adam: { lr: 0.01, ...ADAM_DEFAULTS }, task })
      const xs = withOnesColumn(dataset.xTrain.subarray(0, rows * F), rows, F)
      const xsT = new Float32Array(xs.length)
      for (let r = 0; r < rows; r++) for (let f = 0; f <= F; f++) xsT[f * rows + r] = xs[r * (F + 1) + f]
      const [x, xT, y] = [tf.tensor2d(xs, [rows, F + 1]), tf.tensor2d(xsT, [F + 1, rows]), tf.tensor2d(dataset.yTrain.subarray(0, rows), [rows, 1])]
      const loss = model.trainStep(x, xT, y)
      const mine = await loss.data()
      tf.dispose([x, xT, y, loss])
      model.dispose()
      const initial = layersOf(initialParams(F, [16, 8], seeds, outputUnits(task)), F, [16, 8], 3, task)
      const keep = seeds.map(() => Array.from({ length: rows }, () => true))
      const reference = torchLossAndGradients(
        task,
        initial,
        Float64Array.from(dataset.xTrain.subarray(0, rows * F)),
        Float64Array.from(dataset.yTrain.subarray(0, rows)),
        rows,
        keep,
      )
      reference.forEach((ref, i) => close(mine[i], ref.loss, 1e-5, `model ${i}`))
    })
  }
})

type W = Workload<MlpParams>
const base: W = {
  size: 1000,
  features: 12,
  seed: 3,
  target: 'teacher',
  testSplit: 0.2,
  model: { kind: 'mlp', epochs: 4, batchSize: 64, hidden: [16], lr: 0.01 },
}

const hooks = (done: TrainedModel[]) => ({ onProgress: () => {}, onModelDone: (m: TrainedModel) => done.push(m), shouldStop: () => false })

interface Engine {
  name: string
  /** true (after saying why) when the engine cannot run here */
  missing(): boolean
  train(w: W, indices: number[], options: TrainOptions): Promise<TrainedModel[]>
}

const ENGINES: Engine[] = [
  {
    name: 'tfjs (cpu)',
    missing: () => false,
    async train(w, indices, options) {
      const data = uploadData(tf, datasetFor(w), w, 'host')
      const done: TrainedModel[] = []
      try {
        await trainTfjs(tf, data, w, indices, options, hooks(done))
      } finally {
        disposeData(data)
      }
      return done
    },
  },
  {
    name: 'onnxruntime',
    missing: noOrt,
    async train(w, indices, options) {
      const done: TrainedModel[] = []
      await trainOrt(rt!, prepareOrtData(dataKey(w), datasetFor(w), w), w, indices, options, hooks(done))
      return done
    },
  },
  {
    name: 'webgpu (WGSL)',
    missing: () => skipWithout('webgpu', dev !== null, `no WebGPU adapter: ${gpuWhy}`),
    async train(w, indices, options) {
      const data = uploadMlpData(dev!, dataKey(w), datasetFor(w))
      const done: TrainedModel[] = []
      try {
        await trainWgsl(dev!, data, w, indices, options, hooks(done))
      } finally {
        disposeMlpData(dev!, data)
      }
      return done
    },
  },
]

/** The probabilities of an artifact on raw rows x [rows, F], computed from its layers alone (ReLU between, sigmoid/softmax at the end). */
function artifactProbabilities(a: MlpArtifact, x: Float32Array, rows: number): Float64Array {
  const K = a.layers[a.layers.length - 1].outputs
  const out = new Float64Array(rows * K)
  for (let r = 0; r < rows; r++) {
    let v: number[] = [...x.subarray(r * a.features, (r + 1) * a.features)]
    a.layers.forEach((l, k) => {
      const next = [...l.b]
      for (let o = 0; o < l.outputs; o++) for (let i = 0; i < l.inputs; i++) next[o] += v[i] * l.w[i * l.outputs + o]
      v = k < a.layers.length - 1 ? next.map((z) => Math.max(z, 0)) : next
    })
    out.set(v, r * K)
    if (K > 1) softmaxInPlace(out, r * K, K)
    else out[r] = sigmoid(out[r])
  }
  return out
}

const relative = (a: number, b: number) => Math.abs(a - b) / Math.abs(b)

function expectSameWork(actual: readonly TrainedModel[], expected: readonly TrainedModel[], tolerance: number, what: string): void {
  expect(actual.map((m) => m.index)).toEqual(expected.map((m) => m.index))
  actual.forEach((m, k) => {
    const ref = expected[k]
    expect(relative(m.testMse, ref.testMse), `${what}, model ${m.index} test MSE: ${m.testMse} vs ${ref.testMse}`).toBeLessThan(tolerance)
    expect(relative(m.metrics!.logloss!, ref.metrics!.logloss!), `${what}, model ${m.index} log loss`).toBeLessThan(tolerance)
    expect(relative(m.finalLoss!, ref.finalLoss!), `${what}, model ${m.index} final loss`).toBeLessThan(tolerance)
  })
}

it('tfjs: a classifier job and its warm-up leave no tensor behind (device batches too)', async () => {
  const before = tf.memory().numTensors
  for (const task of [BINARY, MULTICLASS]) {
    for (const placement of ['host', 'device'] as const) {
      const w: W = { ...base, task, model: { ...base.model, epochs: 1, hidden: [16, 8] } }
      const data = uploadData(tf, datasetFor(w), w, placement)
      const inData = tf.memory().numTensors
      await warmUp(tf, data, w, [0, 1])
      await trainTfjs(tf, data, w, [0, 1], { fused: true, keep: true }, hooks([]))
      await trainTfjs(tf, data, w, [0, 1], { fused: false }, hooks([]))
      expect(tf.memory().numTensors).toBe(inData)
      disposeData(data)
    }
  }
  expect(tf.memory().numTensors).toBe(before)
})

describe.each(ENGINES)('$name trains classifiers', (engine) => {
  for (const task of [BINARY, MULTICLASS]) {
    const w: W = { ...base, task }
    const chance = 1 / task.classes

    it(`${task.objective}: learns (loss falls, accuracy well above chance ${chance}), scored in every metric of its objective`, async (ctx) => {
      if (engine.missing()) return ctx.skip()
      const [once] = await engine.train({ ...w, model: { ...w.model, epochs: 1 } }, [0], { fused: true })
      const [trained] = await engine.train(w, [0], { fused: true })
      expect(trained.finalLoss!).toBeLessThan(once.finalLoss!)
      expect(trained.finalLoss!).toBeLessThan(0.8 * Math.log(task.classes)) // below an uninformed model's cross-entropy
      const m = trained.metrics!
      expect(Object.keys(m).sort()).toEqual(task.objective === 'binary' ? ['accuracy', 'auc', 'logloss', 'mse'] : ['accuracy', 'logloss', 'mse'])
      expect(m.accuracy!).toBeGreaterThan(chance + 0.3)
      expect(m.logloss!).toBeLessThan(0.8 * Math.log(task.classes))
      if (task.objective === 'binary') expect(m.auc!).toBeGreaterThan(0.85)
      expect(trained.testMse).toBe(m.mse)
      expect(trained.validationMse).toBeUndefined()
    })

    for (const hidden of [[16], [16, 8]]) {
      it(`${task.objective}, hidden ${hidden}: batched = one model at a time per model`, async (ctx) => {
        if (engine.missing()) return ctx.skip()
        const wh = { ...w, model: { ...w.model, hidden } }
        const fused = await engine.train(wh, [0, 1, 2], { fused: true })
        expectSameWork(fused, await engine.train(wh, [0, 1, 2], { fused: false }), SAME_WORK, 'batched vs sequential')
        expect(new Set(fused.map((m) => m.metrics!.logloss)).size).toBe(3)
      })

      if (engine.name.startsWith('tfjs')) continue
      it(`${task.objective}, hidden ${hidden}: agrees with FusedMlp (tfjs) per model within the cross-backend tolerance`, async (ctx) => {
        if (engine.missing()) return ctx.skip()
        const wh = { ...w, model: { ...w.model, hidden } }
        expectSameWork(await engine.train(wh, [0, 1, 2], { fused: true }), await ENGINES[0].train(wh, [0, 1, 2], { fused: true }), CROSS_BACKEND, engine.name)
      })
    }

    it(`${task.objective}: folds fused (rows held out) give validation metrics, the same one at a time${engine.name.startsWith('tfjs') ? '' : ' and on tfjs'}`, async (ctx) => {
      if (engine.missing()) return ctx.skip()
      const train = datasetFor(w).train
      const options: TrainOptions = { fused: true, heldOutOf: (i) => foldRows(train, 3, i % 3) }
      const fused = await engine.train(w, [0, 1, 2], options)
      const single = await engine.train(w, [0, 1, 2], { ...options, fused: false })
      fused.forEach((m, k) => {
        expect(m.validationMse).toBe(m.validationMetrics!.mse)
        expect(m.validationMetrics!.accuracy!).toBeGreaterThan(chance + 0.2)
        expect(relative(m.validationMetrics!.logloss!, single[k].validationMetrics!.logloss!)).toBeLessThan(SAME_WORK)
      })
      if (engine.name.startsWith('tfjs')) return
      const reference = await ENGINES[0].train(w, [0, 1, 2], options)
      fused.forEach((m, k) => expect(relative(m.validationMetrics!.logloss!, reference[k].validationMetrics!.logloss!)).toBeLessThan(CROSS_BACKEND))
    })

    it(`${task.objective}: the kept artifact says it is a classifier and gives the run's probabilities`, async (ctx) => {
      if (engine.missing()) return ctx.skip()
      const [model] = await engine.train({ ...w, model: { ...w.model, hidden: [16, 8] } }, [1], { fused: true, keep: true })
      const a = model.artifact as MlpArtifact
      expect(a.objective).toBe(task.objective)
      expect(a.classes).toBe(task.classes)
      expect(a.layers.map((l) => l.outputs)).toEqual([16, 8, task.objective === 'multiclass' ? task.classes : 1])
      expect(ModelArtifactSchema.safeParse(a).error?.issues ?? []).toEqual([]) // what a worker may send and the store keeps
      const dataset = datasetFor(w)
      const scores = scoreOutputs(task, artifactProbabilities(a, dataset.xTest, dataset.test), dataset.yTest)
      expect(relative(scores.logloss!, model.metrics!.logloss!)).toBeLessThan(1e-5)
      expect(scores.accuracy).toBeCloseTo(model.metrics!.accuracy!, 2)
    })
  }
})
