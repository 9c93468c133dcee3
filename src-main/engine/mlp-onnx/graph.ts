// The ONNX graphs of the MLP on onnxruntime: one Adam training step (forward, hand-written
// backward, Adam) and the test-set evaluation, generated from the same hyperparameters as the tfjs
// engine for any number n of fused models (n = 1 is one plain MLP, so every strategy runs the same
// graph). The math is FusedMlp's node for node — squared error, or a classifier's cross-entropy
// from its logits (mlp/objective.ts) —; how, and its inputs and outputs: README.md, "Same work as
// the tfjs engine" and "Weights between steps".
import { onnx } from 'onnx-proto'
import type { WorkloadTask } from '@shared/contract'
import { Builder } from '../../onnx-graph/builder'
import { paramShapes } from '../mlp/fused-layout'
import { objectiveOf, outputUnits } from '../mlp/objective'

export interface AdamConstants {
  beta1: number
  beta2: number
  epsilon: number
}

export interface MlpGraphSpec {
  /** input features, without the ones column */
  features: number
  hidden: readonly number[]
  /** fused models */
  n: number
  adam: AdamConstants
  precision?: 'float32' | 'float64'
  /**
   * A model set's folds fused: the step takes row_weights [B, n] (FusedMlp.trainStep's rowWeights:
   * 1/(the model's rows in the batch), 0 for its held-out rows) instead of the scalars rows and 2/rows.
   */
  rowWeights?: boolean
  /** what the models learn (y holds a classifier's class indices); absent: regression */
  task?: WorkloadTask
  /**
   * W1 held transposed, W1ᵀ [n·H1, F+1] (p0, m0, v0 and g0 alike): the same sums in the same order,
   * in GEMM shapes MLAS runs faster (README.md, "W1 transposed"). Absent: FusedMlp's layout.
   */
  w1Transposed?: boolean
}

const BATCH = 'B'
/** the axis of the outputs [n, B] (and [n, B, K]) that runs over rows */
const ROWS = 1

/** One hidden layer and one output unit: the first layer is computed transposed (README.md, "Rows last"). */
const rowsLast = (spec: MlpGraphSpec) => spec.hidden.length === 1 && outputUnits(spec.task) === 1

/** The parameters' shapes as the graph takes them: the fused layout's, W1 transposed with `w1Transposed`. */
export function graphParamShapes(spec: MlpGraphSpec): number[][] {
  const shapes = paramShapes(spec.features, spec.hidden, spec.n, outputUnits(spec.task))
  if (spec.w1Transposed) shapes[0] = [shapes[0][1], shapes[0][0]]
  return shapes
}

/** Shapes of the parameters in FusedMlp's order (README.md, "Weights between steps"). */
export const paramName = (i: number) => `p${i}`
export const adamMName = (i: number) => `m${i}`
export const adamVName = (i: number) => `v${i}`
export const nextName = (name: string) => `${name}.next`
export const gradName = (i: number) => `g${i}`

function elemTypeOf(spec: MlpGraphSpec): onnx.TensorProto.DataType {
  return spec.precision === 'float64' ? onnx.TensorProto.DataType.DOUBLE : onnx.TensorProto.DataType.FLOAT
}

interface Forward {
  /** the output layer's values (predictions or logits): [n, B], or [n, B, K] with K units (rows on axis ROWS) */
  out: string
  /** the first layer's activations [B, n·H1] (its ReLU's mask comes from them); rows last: [n·H1, B] */
  a1: string
  /** layers 2..L: their inputs and their (ReLU) outputs, layout [n, B, H] */
  as: string[]
  outs: string[]
  /** the activations feeding the output layer, [n, B, HL]; rows last: [n, H1, B] */
  last: string
  /** Wo reshaped to broadcast against `last` (one output unit; rows last: [n, 1, H1]); Wo [n, HL, K] itself with K */
  woB: string
}

function forward(g: Builder, spec: MlpGraphSpec, x: string, params: string[]): Forward {
  const { n, hidden } = spec
  const K = outputUnits(spec.task)
  const L = hidden.length
  const h1 = hidden[0]
  const hl = hidden[L - 1]
  const wo = params[2 * L - 1]
  const bo = params[2 * L]
  if (rowsLast(spec)) {
    // rows last: Z1ᵀ = W1ᵀ·Xᵀ [n·H1, B], so each model's output is one [1, H1]·[H1, B] product (no
    // [B, n, H1] broadcast product and reduction) and W1ᵀ's gradient a plain Gemm (README.md, "Rows last")
    const a1 = g.op('Relu', [g.op('Gemm', [params[0], x], spec.w1Transposed ? { transB: 1 } : { transA: 1, transB: 1 })])
    const last = g.reshape(a1, [n, h1, -1]) // [n, H1, B]
    const woB = g.reshape(wo, [n, 1, h1])
    const out = g.op('Add', [g.reshape(g.op('MatMul', [woB, last]), [n, -1]), g.reshape(bo, [n, 1])]) // [n, B]
    return { out, a1, as: [], outs: [], last, woB }
  }
  const a1 = g.op('Relu', [g.op('Gemm', [x, params[0]], spec.w1Transposed ? { transB: 1 } : {})]) // [B, n·H1], bias included
  const as: string[] = []
  const outs: string[] = []
  let a = g.op('Transpose', [g.reshape(a1, [-1, n, h1])], { perm: [1, 0, 2] }) // [n, B, H1]
  for (let k = 1; k < L; k++) {
    as.push(a)
    a = g.op('Relu', [g.op('Add', [g.op('MatMul', [a, params[2 * k - 1]]), params[2 * k]])])
    outs.push(a)
  }
  if (K > 1) {
    const out = g.op('Add', [g.op('MatMul', [a, wo]), g.reshape(bo, [n, 1, K])]) // [n, B, K]
    return { out, a1, as, outs, last: a, woB: wo }
  }
  const woB = g.reshape(wo, [n, 1, hl])
  const out = g.op('Add', [g.reduceSum(g.op('Mul', [a, woB]), 2), g.reshape(bo, [n, 1])]) // [n, B]
  return { out, a1, as, outs, last: a, woB }
}

/** y [B, 1] laid out against the outputs [n, B]: [1, B] (broadcast over models). */
function targetOf(g: Builder, y: string): string {
  return g.reshape(y, [1, -1])
}

/** Class indices y [B, 1] as one-hot rows [1, B, K] (y = k exactly: labels are small integers), FusedMlp.oneHot. */
function oneHotOf(g: Builder, y: string, K: number): string {
  const classes = g.reshape(g.op('Range', [g.scalar(0), g.scalar(K), g.scalar(1)]), [1, 1, K])
  return g.op('Cast', [g.op('Equal', [g.reshape(y, [1, -1, 1]), classes])], { to: g.elemType })
}

/**
 * The loss of each row of each model and dL/d(outputs) before the row weighting: squared error and
 * 2·err; binary cross-entropy from the logit max(z, 0) − z·y + log(1 + e^−|z|) and sigmoid(z) − y;
 * softmax cross-entropy (log-sum-exp − the true logit) and softmax(z) − onehot(y), as FusedMlp.
 */
function lossOf(g: Builder, spec: MlpGraphSpec, f: Forward, y: string): { perRow: string; residual: string } {
  const objective = objectiveOf(spec.task)
  if (objective === 'regression') {
    const err = g.op('Sub', [f.out, targetOf(g, y)])
    return { perRow: g.op('Mul', [err, err]), residual: err }
  }
  if (objective === 'binary') {
    const z = f.out
    const target = targetOf(g, y)
    // log(1 + e^−|z|) (tfjs's log1p(exp(−|z|)); ORT has no Log1p, and no float64 Softplus)
    const softplus = g.op('Log', [g.op('Add', [g.op('Exp', [g.op('Neg', [g.op('Abs', [z])])]), g.scalar(1)])])
    const perRow = g.op('Add', [g.op('Sub', [g.op('Relu', [z]), g.op('Mul', [z, target])]), softplus])
    return { perRow, residual: g.op('Sub', [g.op('Sigmoid', [z]), target]) }
  }
  const oneHot = oneHotOf(g, y, outputUnits(spec.task))
  const perRow = g.op('Neg', [g.reduceSum(g.op('Mul', [g.op('LogSoftmax', [f.out], { axis: 2 }), oneHot]), 2)]) // [n, B]
  return { perRow, residual: g.op('Sub', [g.op('Softmax', [f.out], { axis: 2 }), oneHot]) }
}

/** Gradients of the summed per-model mean losses, FusedMlp.lossAndGradients' backward pass; dPred = dL/d(outputs). */
function backward(g: Builder, spec: MlpGraphSpec, x: string, params: string[], f: Forward, dPred: string): string[] {
  const { n, hidden } = spec
  const L = hidden.length
  const h1 = hidden[0]
  const grads: string[] = new Array(2 * L + 1)
  let dLast: string
  if (rowsLast(spec)) {
    // rows last (forward): dPred [n, B]; Wo's gradient [n, H1] = A1ᵀ·dPred per model; W1ᵀ's = Wo ⊙ ((mask ⊙ dPred)·X),
    // Wo applied after the Gemm to the [n·H1, F+1] result rather than to every row of dZ1
    const dPredRows = g.reshape(dPred, [n, 1, -1]) // [n, 1, B]
    grads[2 * L] = g.reduceSum(dPred, ROWS) // [n]
    grads[2 * L - 1] = g.reshape(g.op('MatMul', [f.last, g.reshape(dPred, [n, -1, 1])]), [n, h1]) // [n, H1]
    const masked = g.reshape(g.reluGrad(dPredRows, f.last), [n * h1, -1]) // [n·H1, B]
    const woCol = g.reshape(params[2 * L - 1], spec.w1Transposed ? [n * h1, 1] : [1, n * h1])
    const gemm = spec.w1Transposed ? g.op('Gemm', [masked, x]) : g.op('Gemm', [x, masked], { transA: 1, transB: 1 })
    grads[0] = g.op('Mul', [gemm, woCol])
    return grads
  }
  if (outputUnits(spec.task) > 1) {
    // dPred [n, B, K]
    grads[2 * L] = g.reduceSum(dPred, 1) // [n, K]
    grads[2 * L - 1] = g.op('MatMul', [g.op('Transpose', [f.last], { perm: [0, 2, 1] }), dPred]) // [n, HL, K]
    dLast = g.op('MatMul', [dPred, g.op('Transpose', [f.woB], { perm: [0, 2, 1] })]) // [n, B, HL]
  } else {
    const dPred3 = g.op('Unsqueeze', [dPred, g.ints([2])])
    grads[2 * L] = g.reduceSum(dPred, ROWS) // [n]
    grads[2 * L - 1] = g.reduceSum(g.op('Mul', [dPred3, f.last]), ROWS) // [n, HL]
    dLast = g.op('Mul', [dPred3, f.woB]) // [n, B, HL]
  }
  for (let k = L - 1; k >= 1; k--) {
    const dz = g.reluGrad(dLast, f.outs[k - 1])
    grads[2 * k - 1] = g.op('MatMul', [g.op('Transpose', [f.as[k - 1]], { perm: [0, 2, 1] }), dz]) // [n, Hin, Hout]
    grads[2 * k] = g.reduceSum(dz, 1, 1) // [n, 1, Hout]
    dLast = g.op('MatMul', [dz, g.op('Transpose', [params[2 * k - 1]], { perm: [0, 2, 1] })]) // [n, B, Hin]
  }
  dLast = g.op('Transpose', [dLast], { perm: [1, 0, 2] }) // [B, n, H1]
  const dz1 = g.reluGrad(g.reshape(dLast, [-1, n * h1]), f.a1) // [B, n·H1]
  // X^T·dZ1 [F+1, n·H1] (its last row is the bias gradient), or its transpose dZ1^T·X
  grads[0] = spec.w1Transposed ? g.op('Gemm', [dz1, x], { transA: 1 }) : g.op('Gemm', [x, dz1], { transA: 1 })
  return grads
}

/**
 * A per-model vector [n] shaped to broadcast against each parameter: W1 [F+1, n·H1] → [1, n·H1] (W1ᵀ: [n·H1, 1])
 * (each model's value over its H1 columns), Wk and bk → [n, 1, 1], Wo → [n, 1], bo → [n].
 */
function perModelLayouts(g: Builder, spec: MlpGraphSpec, perModel: string): string[] {
  const { n, hidden } = spec
  const L = hidden.length
  const out: string[] = new Array(2 * L + 1)
  out[0] = g.reshape(g.op('Expand', [g.reshape(perModel, [n, 1]), g.ints([n, hidden[0]])]), spec.w1Transposed ? [n * hidden[0], 1] : [1, n * hidden[0]])
  for (let k = 1; k < L; k++) out[2 * k - 1] = out[2 * k] = g.reshape(perModel, [n, 1, 1])
  const K = outputUnits(spec.task)
  out[2 * L - 1] = g.reshape(perModel, K > 1 ? [n, 1, 1] : [n, 1])
  out[2 * L] = K > 1 ? g.reshape(perModel, [n, 1]) : perModel
  return out
}

/**
 * The training step. Inputs: x [B, F+1] (last column ones), y [B, 1], the scalars rows and 2/rows
 * (a classifier: 1/rows), lr/(1−β1^t) per model [n], 1−β2^t, and p_i, m_i, v_i. Outputs: loss [n]
 * (per-model mean loss of the batch, before the update) and p_i.next, m_i.next, v_i.next. With
 * `outputs: 'gradients'` it outputs loss and g_i instead, and takes no Adam inputs (the gradient check).
 */
export function trainStepGraph(spec: MlpGraphSpec, outputs: 'step' | 'gradients' = 'step'): Uint8Array {
  const g = new Builder(elemTypeOf(spec))
  const { features, n } = spec
  const shapes = graphParamShapes(spec)
  const regression = objectiveOf(spec.task) === 'regression'
  const x = g.input('x', [BATCH, features + 1])
  const y = g.input('y', [BATCH, 1])
  let rows = ''
  let gradScale = ''
  let rowWeights = ''
  if (spec.rowWeights) rowWeights = g.input('row_weights', [BATCH, n])
  else {
    rows = g.input('rows', [])
    gradScale = g.input(regression ? 'two_over_rows' : 'one_over_rows', [])
  }
  const params = shapes.map((s, i) => g.input(paramName(i), s))
  const f = forward(g, spec, x, params)
  const { perRow, residual } = lossOf(g, spec, f, y)
  let dPred: string
  if (spec.rowWeights) {
    // laid out as the outputs' rows ([n, B]; [n, B, 1] against K logits), in FusedMlp's order of operations
    const w = g.op('Transpose', [rowWeights], { perm: [1, 0] })
    g.op('ReduceSum', [g.op('Mul', [perRow, w]), g.ints([ROWS])], { keepdims: 0 }, 'loss')
    const wOut = outputUnits(spec.task) > 1 ? g.op('Unsqueeze', [w, g.ints([2])]) : w
    dPred = regression ? g.op('Mul', [g.op('Mul', [residual, w]), g.scalar(2)]) : g.op('Mul', [residual, wOut])
  } else {
    g.op('Div', [g.reduceSum(perRow, ROWS), rows], {}, 'loss')
    dPred = g.op('Mul', [residual, gradScale])
  }
  g.output('loss', [n])
  const grads = backward(g, spec, x, params, f, dPred)
  if (outputs === 'gradients') {
    grads.forEach((gr, i) => {
      g.op('Identity', [gr], {}, gradName(i))
      g.output(gradName(i), shapes[i])
    })
    return g.encode('trainpool_mlp_gradients')
  }
  // lr/c1 per model (a model set's configurations may differ in learning rate), laid out to
  // broadcast over each parameter's model axis; the same float32 value per element as a scalar gives
  const lrC1 = g.input('lr_c1', [n])
  const c2 = g.input('c2', [])
  const lrPerParam = perModelLayouts(g, spec, lrC1)
  const { beta1, beta2, epsilon } = spec.adam
  // the constants as FusedMlp.applyAdam writes them (JS doubles, rounded to the graph's type)
  const b1 = g.scalar(beta1)
  const oneMinusB1 = g.scalar(1 - beta1)
  const b2 = g.scalar(beta2)
  const oneMinusB2 = g.scalar(1 - beta2)
  const eps = g.scalar(epsilon)
  shapes.forEach((s, i) => {
    const m = g.input(adamMName(i), s)
    const v = g.input(adamVName(i), s)
    const gr = grads[i]
    const mNext = g.op('Add', [g.op('Mul', [m, b1]), g.op('Mul', [gr, oneMinusB1])], {}, nextName(m))
    const vNext = g.op('Add', [g.op('Mul', [v, b2]), g.op('Mul', [g.op('Mul', [gr, gr]), oneMinusB2])], {}, nextName(v))
    const update = g.op('Div', [g.op('Mul', [mNext, lrPerParam[i]]), g.op('Add', [g.op('Sqrt', [g.op('Div', [vNext, c2])]), eps])])
    g.op('Sub', [params[i], update], {}, nextName(params[i]))
    g.output(nextName(params[i]), s)
    g.output(mNext, s)
    g.output(vNext, s)
  })
  return g.encode('trainpool_mlp_train_step')
}

/**
 * Evaluation: inputs x [R, F+1], y [R, 1], p_i; output sse [n], each model's sum of squared errors
 * over the R rows. A classifier's takes no y and outputs its logits rows first, `logits` [R, n]
 * (binary) or [R, n, K]; the host scores them (mlp/objective.ts classifierScores).
 */
export function evaluateGraph(spec: MlpGraphSpec): Uint8Array {
  const g = new Builder(elemTypeOf(spec))
  const K = outputUnits(spec.task)
  const shapes = graphParamShapes(spec)
  const x = g.input('x', ['R', spec.features + 1])
  const y = spec.task ? '' : g.input('y', ['R', 1])
  const params = shapes.map((s, i) => g.input(paramName(i), s))
  const f = forward(g, spec, x, params)
  if (spec.task) {
    g.op('Transpose', [f.out], { perm: K > 1 ? [1, 0, 2] : [1, 0] }, 'logits')
    g.output('logits', K > 1 ? ['R', spec.n, K] : ['R', spec.n])
    return g.encode('trainpool_mlp_logits')
  }
  const err = g.op('Sub', [f.out, targetOf(g, y)])
  g.op('ReduceSum', [g.op('Mul', [err, err]), g.ints([ROWS])], { keepdims: 0 }, 'sse')
  g.output('sse', [spec.n])
  return g.encode('trainpool_mlp_evaluate')
}
