// The MLP family's shared half: features → hidden… (ReLU) → 1 output (a regressor's prediction, a
// binary classifier's logit) or K (a multiclass classifier's logits), Adam, mini-batches in a shared
// (data seed, epoch) order. Its work is counted in FLOPs of the training GEMMs; its progress unit is
// a mini-batch (a lane shows epoch and batch). Training: src-main/engine/families/mlp.ts.
import { splitRows } from '../vocabulary/split'
import { outputsOf } from '../vocabulary/task'
import type { BackendSpec } from './backend'
import { type ModelFamily, paramsSchemaFrom, type ParamField, type Workload } from './family'

export interface MlpParams {
  kind: 'mlp'
  epochs: number
  batchSize: number
  hidden: number[]
  lr: number
}

const FIELDS = [
  { key: 'epochs', vary: true, label: 'Epochs', flag: '--epochs', help: 'passes over the training rows', type: 'int', range: { min: 1, max: 1000 } },
  { key: 'batchSize', vary: true, label: 'Batch size', flag: '--batch-size', help: 'rows per training step', type: 'int', range: { min: 1, max: 65_536 } },
  {
    key: 'hidden',
    vary: true,
    label: 'Hidden layers',
    flag: '--hidden',
    help: 'width of each hidden layer, e.g. 64 or 64,32',
    type: 'intList',
    range: { min: 1, max: 4096 },
    count: { min: 1, max: 4 },
  },
  { key: 'lr', vary: true, label: 'Learning rate', flag: '--lr', help: 'Adam learning rate', type: 'real', range: { min: 1e-6, max: 1 } },
] as const satisfies readonly ParamField[]

const PROCESS_BASE_BYTES = 150 * 1024 * 1024
const F32 = 4

/** Training steps of one model (or one fused group) over the whole workload. */
export function batchesPerEpoch(w: Workload<MlpParams>): number {
  return Math.ceil(splitRows(w.size, w.testSplit).train / w.model.batchSize)
}

/** Units of a workload's output layer: K for a multiclass classifier, else 1 (a regressor's prediction, a binary classifier's logit). */
export function outputUnitsOf(w: Pick<Workload<MlpParams>, 'task'>): number {
  return w.task ? outputsOf(w.task) : 1
}

/** FLOPs of one training step on `rows` rows for n fused models (the forward and backward GEMMs); `outputs`: the output layer's units. */
export function stepFlops(rows: number, n: number, features: number, hidden: readonly number[], outputs = 1): number {
  let flops = 4 * rows * (features + 1) * n * hidden[0] // X·W1 and X^T·dZ1 (bias row included)
  for (let k = 1; k < hidden.length; k++) flops += 6 * rows * n * hidden[k - 1] * hidden[k] // fwd, dW, dA
  flops += 6 * rows * n * hidden[hidden.length - 1] * outputs // output layer fwd, dw, dA
  return flops
}

/** Training FLOPs of n models over the whole workload. */
export function trainingFlops(w: Workload<MlpParams>, n: number): number {
  const { train } = splitRows(w.size, w.testSplit)
  const { batchSize, hidden, epochs } = w.model
  const K = outputUnitsOf(w)
  const full = Math.floor(train / batchSize)
  const rest = train - full * batchSize
  const perEpoch = full * stepFlops(batchSize, n, w.features, hidden, K) + (rest > 0 ? stepFlops(rest, n, w.features, hidden, K) : 0)
  return perEpoch * epochs
}

/** Parameters of one MLP: features → hidden… → outputs (weights + biases). */
export function paramCount(features: number, hidden: readonly number[], outputs = 1): number {
  let prev = features
  let n = 0
  for (const h of [...hidden, outputs]) {
    n += prev * h + h
    prev = h
  }
  return n
}

/**
 * Peak bytes of one worker training n fused models: the data (JS arrays + device copy), one epoch's
 * permuted copies (device placement), parameters with gradients and Adam state, one batch's
 * activations, and a test-set evaluation chunk, plus the process itself. Conservative on purpose:
 * the service refuses a run that would not fit in free memory.
 */
export function mlpWorkerPeakBytes(w: Workload<MlpParams>, n: number): number {
  const { train, test } = splitRows(w.size, w.testSplit)
  const F = w.features
  const { hidden, batchSize } = w.model
  const K = outputUnitsOf(w)
  const widest = Math.max(...hidden, K)
  const data = w.size * (F + 1) * F32 * 2
  const epochCopies = train * (2 * F + 1) * F32
  const rows = Math.min(batchSize, train)
  const activations = rows * n * widest * F32 * 10
  const evalChunk = Math.min(test, Math.ceil((8 * 1024 * 1024) / (n * widest))) * n * widest * F32 * 4
  return PROCESS_BASE_BYTES + data + epochCopies + n * paramCount(F, hidden, K) * F32 * 6 + activations + evalChunk
}

/**
 * The MLP's backends, in `auto`'s order: the GPU backends on GPU hardware, then onnxruntime (ONNX
 * Runtime's CPU provider, native GEMMs), wasm where its native library cannot load (the probe says
 * why), then tfjs's plain-JavaScript cpu. Speeds: fitted to wasm runs on a 2-core machine (smoke ≈
 * 1.5 s, quick ≈ 7 s), the GPU rows scaled from the MLP benchmarks (webgpu: the WGSL engine's ~4 dispatches
 * a step at ~12.5 µs each on an H200, research/gpu.md); onnxruntime measured
 * (benchmarks/onnx/step-bench.mts, 2026-12-06, rows last) ~8.6 ms per step of 50 fused models (0.66 GFLOP:
 * GEMMs plus elementwise passes; more under load), ~0.3 ms per one-model step (mostly fixed cost). Early stopping: every
 * engine (tfjs, ONNX, WGSL; src-main/engine/mlp/early-stopping.ts), so auto may pick any with it.
 */
export const MLP_BACKENDS = [
  {
    name: 'tensorflow',
    gpu: true,
    auto: true,
    batched: true,
    earlyStopping: true,
    speed: { workPerSecond: 2e11, stepMs: 0.6, jobMs: 10, poolStartMs: 5000, sharedDevice: true },
  },
  {
    name: 'webgpu',
    gpu: true,
    auto: true,
    batched: true,
    earlyStopping: true,
    speed: { workPerSecond: 2e12, stepMs: 0.15, jobMs: 5, poolStartMs: 1500, sharedDevice: true },
  },
  {
    name: 'onnxruntime',
    gpu: false,
    auto: true,
    batched: true,
    earlyStopping: true,
    speed: { workPerSecond: 6.5e10, stepMs: 0.3, jobMs: 1, poolStartMs: 250, sharedDevice: false },
  },
  {
    name: 'wasm',
    gpu: false,
    auto: true,
    batched: true,
    earlyStopping: true,
    speed: { workPerSecond: 8e9, stepMs: 1, jobMs: 5, poolStartMs: 300, sharedDevice: false },
  },
  {
    name: 'cpu',
    gpu: false,
    auto: true,
    batched: true,
    earlyStopping: true,
    speed: { workPerSecond: 1e9, stepMs: 1, jobMs: 5, poolStartMs: 400, sharedDevice: false },
  },
] as const satisfies readonly BackendSpec[]

/** The MLP's backends by name: its worker table (src-main/engine/families/mlp.ts) has one entry for each, no other. */
export type MlpBackendName = (typeof MLP_BACKENDS)[number]['name']

export const mlpFamily: ModelFamily<MlpParams, MlpBackendName> = {
  kind: 'mlp',
  label: 'neural network (MLP)',
  shortLabel: 'MLP',
  fields: FIELDS,
  paramsSchema: paramsSchemaFrom<MlpParams>('mlp', FIELDS),
  defaults: { kind: 'mlp', epochs: 3, batchSize: 512, hidden: [64], lr: 0.01 },
  backends: MLP_BACKENDS,
  progressTotal: (w) => batchesPerEpoch(w) * w.model.epochs,
  maxRounds: (model) => model.epochs,
  roundWord: 'epoch',
  describeProgress(p, w) {
    if (p.done <= 0) return 'starting'
    const perEpoch = batchesPerEpoch(w)
    const epoch = Math.min(w.model.epochs, Math.floor((p.done - 1) / perEpoch) + 1)
    const batch = p.done - (epoch - 1) * perEpoch
    return `epoch ${epoch}/${w.model.epochs} · batch ${batch}/${perEpoch}`
  },
  work: { unit: 'FLOP', rateLabel: 'GFLOP/s', rateScale: 1e9 },
  // every FLOP is a row's: a fold's model does rowShare of them
  workCount: (w, n, rowShare = 1) => trainingFlops(w, n) * rowShare,
  workerPeakBytes: mlpWorkerPeakBytes,
  sameWorkTolerance: 1e-4,
  // the same initial weights and batch order everywhere; kernels sum in their own order (float32)
  crossBackend: () => ({ fingerprints: false, tolerance: 1e-3 }),
  // gradient descent needs comparable feature scales and cannot step through a NaN
  userData: { missingValues: 'refuse', standardise: true },
  notes: () => [],
  // the article's batched shape (50 models, batch 512, 100→64→1) for 4 steps: 2 048 training rows, 1 epoch
  calibration: { size: 2560, models: 50, params: { epochs: 1 }, stepsParam: 'epochs', step: 'step' },
  presets: {
    smoke: { params: { epochs: 1 }, note: '1 epoch' },
    quick: { params: { epochs: 2 }, note: '2 epochs' },
    article: { params: {}, note: '3 epochs' },
  },
  describe: (p, features, task) =>
    `${[features, ...p.hidden, task ? outputsOf(task) : 1].join('→')}${task?.objective === 'binary' ? ' (sigmoid)' : task?.objective === 'multiclass' ? ' (softmax)' : ''}, Adam lr ${p.lr}, batch ${p.batchSize}, ${p.epochs} epoch${p.epochs === 1 ? '' : 's'}`,
}
