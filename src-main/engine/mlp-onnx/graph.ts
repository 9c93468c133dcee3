// The ONNX graphs of the MLP on onnxruntime: one Adam training step (forward, hand-written
// backward, Adam) and the test-set evaluation, generated from the same hyperparameters as the tfjs
// engine for any number n of fused models (n = 1 is one plain MLP, so every strategy runs the same
// graph). The math is FusedMlp's node for node; how, and its inputs and outputs: README.md, "Same
// work as the tfjs engine" and "Weights between steps".
import { onnx } from 'onnx-proto'
import { Builder } from '../../onnx-graph/builder'
import { paramShapes } from '../mlp/fused-layout'

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
}

const BATCH = 'B'

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
  /** prediction − target: [B, n] when there is one hidden layer, else [n, B] */
  err: string
  /** the axis of err that runs over rows */
  rowAxis: number
  /** the first layer's activations [B, n·H1] (its ReLU's mask comes from them) */
  a1: string
  /** layers 2..L: their inputs and their (ReLU) outputs, layout [n, B, H] */
  as: string[]
  outs: string[]
  /** the activations feeding the output layer, [B, n, HL] or [n, B, HL] */
  last: string
  /** Wo reshaped to broadcast against `last` */
  woB: string
}

function forward(g: Builder, spec: MlpGraphSpec, x: string, y: string, params: string[]): Forward {
  const { n, hidden } = spec
  const L = hidden.length
  const h1 = hidden[0]
  const hl = hidden[L - 1]
  const a1 = g.op('Relu', [g.op('Gemm', [x, params[0]])]) // [B, n·H1], bias included
  const as: string[] = []
  const outs: string[] = []
  const wo = params[2 * L - 1]
  const bo = params[2 * L]
  if (L === 1) {
    const last = g.reshape(a1, [-1, n, h1]) // [B, n, H1]
    const woB = g.reshape(wo, [1, n, hl])
    const pred = g.op('Add', [g.reduceSum(g.op('Mul', [last, woB]), 2), bo]) // [B, n]
    return { err: g.op('Sub', [pred, y]), rowAxis: 0, a1, as, outs, last, woB }
  }
  let a = g.op('Transpose', [g.reshape(a1, [-1, n, h1])], { perm: [1, 0, 2] }) // [n, B, H1]
  for (let k = 1; k < L; k++) {
    as.push(a)
    a = g.op('Relu', [g.op('Add', [g.op('MatMul', [a, params[2 * k - 1]]), params[2 * k]])])
    outs.push(a)
  }
  const woB = g.reshape(wo, [n, 1, hl])
  const pred = g.op('Add', [g.reduceSum(g.op('Mul', [a, woB]), 2), g.reshape(bo, [n, 1])]) // [n, B]
  return { err: g.op('Sub', [pred, g.reshape(y, [1, -1])]), rowAxis: 1, a1, as, outs, last: a, woB }
}

/** Gradients of the summed per-model mean squared errors, FusedMlp.lossAndGradients' backward pass; dPred = 2·err/B (or 2·err·w). */
function backward(g: Builder, spec: MlpGraphSpec, x: string, params: string[], f: Forward, dPred: string): string[] {
  const { n, hidden } = spec
  const L = hidden.length
  const h1 = hidden[0]
  const grads: string[] = new Array(2 * L + 1)
  const dPred3 = g.op('Unsqueeze', [dPred, g.ints([2])])
  grads[2 * L] = g.reduceSum(dPred, f.rowAxis) // [n]
  grads[2 * L - 1] = g.reduceSum(g.op('Mul', [dPred3, f.last]), f.rowAxis) // [n, HL]
  let dLast = g.op('Mul', [dPred3, f.woB]) // [B, n, HL] or [n, B, HL]
  if (L > 1) {
    for (let k = L - 1; k >= 1; k--) {
      const dz = g.reluGrad(dLast, f.outs[k - 1])
      grads[2 * k - 1] = g.op('MatMul', [g.op('Transpose', [f.as[k - 1]], { perm: [0, 2, 1] }), dz]) // [n, Hin, Hout]
      grads[2 * k] = g.reduceSum(dz, 1, 1) // [n, 1, Hout]
      dLast = g.op('MatMul', [dz, g.op('Transpose', [params[2 * k - 1]], { perm: [0, 2, 1] })]) // [n, B, Hin]
    }
    dLast = g.op('Transpose', [dLast], { perm: [1, 0, 2] }) // [B, n, H1]
  }
  const dz1 = g.reluGrad(g.reshape(dLast, [-1, n * h1]), f.a1) // [B, n·H1]
  grads[0] = g.op('Gemm', [x, dz1], { transA: 1 }) // X^T·dZ1 [F+1, n·H1]; the last row is the bias gradient
  return grads
}

/**
 * A per-model vector [n] shaped to broadcast against each parameter: W1 [F+1, n·H1] → [1, n·H1]
 * (each model's value over its H1 columns), Wk and bk → [n, 1, 1], Wo → [n, 1], bo → [n].
 */
function perModelLayouts(g: Builder, spec: MlpGraphSpec, perModel: string): string[] {
  const { n, hidden } = spec
  const L = hidden.length
  const out: string[] = new Array(2 * L + 1)
  out[0] = g.reshape(g.op('Expand', [g.reshape(perModel, [n, 1]), g.ints([n, hidden[0]])]), [1, n * hidden[0]])
  for (let k = 1; k < L; k++) out[2 * k - 1] = out[2 * k] = g.reshape(perModel, [n, 1, 1])
  out[2 * L - 1] = g.reshape(perModel, [n, 1])
  out[2 * L] = perModel
  return out
}

/**
 * The training step. Inputs: x [B, F+1] (last column ones), y [B, 1], the scalars rows, 2/rows,
 * lr/(1−β1^t) per model [n], 1−β2^t, and p_i, m_i, v_i. Outputs: loss [n] (per-model mean squared error of the
 * batch, before the update) and p_i.next, m_i.next, v_i.next. With `outputs: 'gradients'` it
 * outputs loss and g_i instead, and takes no Adam inputs (the gradient check).
 */
export function trainStepGraph(spec: MlpGraphSpec, outputs: 'step' | 'gradients' = 'step'): Uint8Array {
  const g = new Builder(elemTypeOf(spec))
  const { features, hidden, n } = spec
  const shapes = paramShapes(features, hidden, n)
  const x = g.input('x', [BATCH, features + 1])
  const y = g.input('y', [BATCH, 1])
  let rows = ''
  let twoOverRows = ''
  let rowWeights = ''
  if (spec.rowWeights) rowWeights = g.input('row_weights', [BATCH, n])
  else {
    rows = g.input('rows', [])
    twoOverRows = g.input('two_over_rows', [])
  }
  const params = shapes.map((s, i) => g.input(paramName(i), s))
  const f = forward(g, spec, x, y, params)
  let dPred: string
  if (spec.rowWeights) {
    // laid out as err ([B, n], or [n, B] with several hidden layers), in FusedMlp's order of operations
    const w = f.rowAxis === 0 ? rowWeights : g.op('Transpose', [rowWeights], { perm: [1, 0] })
    g.op('ReduceSum', [g.op('Mul', [g.op('Mul', [f.err, f.err]), w]), g.ints([f.rowAxis])], { keepdims: 0 }, 'loss')
    dPred = g.op('Mul', [g.op('Mul', [f.err, w]), g.scalar(2)])
  } else {
    g.op('Div', [g.reduceSum(g.op('Mul', [f.err, f.err]), f.rowAxis), rows], {}, 'loss')
    dPred = g.op('Mul', [f.err, twoOverRows])
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

/** Evaluation: inputs x [R, F+1], y [R, 1], p_i; output sse [n], each model's sum of squared errors over the R rows. */
export function evaluateGraph(spec: MlpGraphSpec): Uint8Array {
  const g = new Builder(elemTypeOf(spec))
  const shapes = paramShapes(spec.features, spec.hidden, spec.n)
  const x = g.input('x', ['R', spec.features + 1])
  const y = g.input('y', ['R', 1])
  const params = shapes.map((s, i) => g.input(paramName(i), s))
  const f = forward(g, spec, x, y, params)
  g.op('ReduceSum', [g.op('Mul', [f.err, f.err]), g.ints([f.rowAxis])], { keepdims: 0 }, 'sse')
  g.output('sse', [spec.n])
  return g.encode('trainpool_mlp_evaluate')
}
