// N independent MLPs fused into one tensor program: every step advances all N models in the same
// kernels. N = 1 is one ordinary MLP, so `sequential` and `pool` run this very program with one
// model at a time and the comparison measures fusion, not different code. Shapes suit wasm's fast
// path; the loss is the SUM of per-model means, so no gradient is divided by N (../README.md,
// "FusedMlp's shapes"). A regressor minimises squared error; a binary classifier the cross-entropy
// of its logit (the stable form, as PyTorch's BCEWithLogitsLoss), a multiclass one the softmax
// cross-entropy of its K logits (mlp/objective.ts). A program can start from another's state
// (survivors(): stopped models leave, the rest train on exactly as they would have) or from given
// weights (early stopping's kept ones, scored).
import type * as TF from '@tensorflow/tfjs-core'
import type { Objective, WorkloadTask } from '@shared/contract'
import type { AdamSettings } from '../mlp/adam'
import { initialParams, paramShapes, selectModels } from '../mlp/fused-layout'
import { objectiveOf, outputUnits } from '../mlp/objective'

type Tf = typeof TF

interface Param {
  value: TF.Variable
  m: TF.Variable
  v: TF.Variable
}

export interface FusedMlpOptions {
  features: number
  hidden: readonly number[]
  /** per-model initialisation seeds, one per fused model */
  seeds: readonly number[]
  adam: AdamSettings
  /** what the models learn; absent: regression */
  task?: WorkloadTask
  /** where training starts instead of the seeds' initial weights: parameters in the fused layout, and Adam's moments and step (absent: zero, step 0) */
  start?: FusedMlpState
}

/** A program's training state, in the fused layout (mlp/fused-layout.ts): parameters, Adam's moments, steps taken. */
export interface FusedMlpState {
  values: Float32Array[]
  adam?: { m: Float32Array[]; v: Float32Array[]; step: number }
}

/** A forward pass's intermediate tensors, as the backward pass reads them. */
interface Forward {
  /** first layer's pre-activations [B, n·H1] */
  z1: TF.Tensor
  /** layers 2..L: pre-activations and inputs, [n, B, H] */
  zs: TF.Tensor[]
  as: TF.Tensor[]
  /** activations feeding the output layer: [B, n, HL] with one hidden layer and one output unit, else [n, B, HL] */
  last: TF.Tensor
  modelsFirst: boolean
  /** the output layer's values (predictions or logits): [B, n] or [n, B]; [n, B, K] with K output units */
  out: TF.Tensor
}

/** Rows of the test set evaluated per chunk, bounded so N·H activations stay small. */
const EVAL_ELEMENTS_PER_CHUNK = 8 * 1024 * 1024

export class FusedMlp {
  readonly n: number
  readonly features: number
  readonly hidden: readonly number[]
  readonly objective: Objective
  /** units of the output layer (K for multiclass, else 1) */
  readonly outputUnits: number
  private readonly params: Param[]
  private step = 0
  /** [1, rows] of ones: sums over the batch rows are GEMMs with it (reductions over axis 0 are slow on wasm) */
  private readonly onesByRows = new Map<number, TF.Tensor2D>()

  constructor(
    private readonly tf: Tf,
    private readonly options: FusedMlpOptions,
  ) {
    this.n = options.seeds.length
    this.features = options.features
    this.hidden = [...options.hidden]
    this.objective = objectiveOf(options.task)
    this.outputUnits = outputUnits(options.task)
    const start = options.start
    this.params = start ? this.startingParams(start) : this.initialParams().map((t) => this.param(t))
    this.step = start?.adam?.step ?? 0
  }

  /** Tensors of a given state, each checked against the layout's shape for n models. */
  private startingParams(start: FusedMlpState): Param[] {
    const { tf, n, features, hidden, outputUnits } = this
    const shapes = paramShapes(features, hidden, n, outputUnits)
    const variable = (values: Float32Array | undefined, s: number) => {
      const size = shapes[s].reduce((a, b) => a * b, 1)
      if (values && values.length !== size) throw new RangeError(`start: parameter ${s} holds ${values.length} values, the layout of ${n} models ${size}`)
      // a copy: the cpu backend keeps a reference to the values it is given
      const source = values ? tf.tensor(values.slice(), shapes[s]) : tf.zeros(shapes[s])
      const v = tf.variable(source, false)
      source.dispose()
      return v
    }
    if (start.values.length !== shapes.length) throw new RangeError(`start: ${start.values.length} parameters, the layout has ${shapes.length}`)
    return shapes.map((_, s) => ({ value: variable(start.values[s], s), m: variable(start.adam?.m[s], s), v: variable(start.adam?.v[s], s) }))
  }

  /** The shared fused layout's initial weights (fused-layout.ts) as tensors. */
  private initialParams(): TF.Tensor[] {
    const { tf, n, features, hidden, outputUnits } = this
    const shapes = paramShapes(features, hidden, n, outputUnits)
    return initialParams(features, hidden, this.options.seeds, outputUnits).map((values, s) => tf.tensor(values, shapes[s]))
  }

  private param(initial: TF.Tensor): Param {
    const { tf } = this
    const zeros = tf.zerosLike(initial)
    const p = {
      value: tf.variable(initial, false),
      m: tf.variable(zeros, false),
      v: tf.variable(zeros, false),
    }
    // variables hold their own references: the source tensors can go
    initial.dispose()
    zeros.dispose()
    return p
  }

  /**
   * One Adam step on a batch. x [B,F+1] and xT [F+1,B] (last column/row all ones), y [B,1] (a
   * classifier's: class indices). Returns the per-model mean loss of this batch (shape [n], before
   * the update); the caller owns it. `rowWeights` [B, n] (a model
   * set's folds fused: 1/(the model's rows in the batch) for its rows, 0 for its held-out ones)
   * replaces each model's 1/B, so a model's loss is the mean over its own rows only.
   */
  trainStep(x: TF.Tensor2D, xT: TF.Tensor2D, y: TF.Tensor2D, rowWeights?: TF.Tensor2D): TF.Tensor1D {
    return this.tf.tidy(() => {
      const { loss, grads } = this.lossAndGradients(x, xT, y, rowWeights)
      this.applyAdam(grads)
      return loss
    })
  }

  private ones(rows: number): TF.Tensor2D {
    let ones = this.onesByRows.get(rows)
    if (!ones) {
      ones = this.tf.keep(this.tf.ones([1, rows]) as TF.Tensor2D)
      this.onesByRows.set(rows, ones)
    }
    return ones
  }

  /** Σ over rows of a [rows, cols] matrix, as the plain GEMM ones[1,rows]·m → [cols]. */
  private sumRows(m: TF.Tensor, rows: number, cols: number): TF.Tensor1D {
    const { tf } = this
    return tf.reshape(tf.matMul(this.ones(rows), tf.reshape(m, [rows, cols]) as TF.Tensor2D), [cols]) as TF.Tensor1D
  }

  private lossAndGradients(x: TF.Tensor2D, xT: TF.Tensor2D, y: TF.Tensor2D, rowWeights?: TF.Tensor2D): { loss: TF.Tensor1D; grads: TF.Tensor[] } {
    const { tf, n } = this
    const rows = x.shape[0]
    const f = this.forward(x)
    // each model's weights laid out as the rows of its outputs
    const w = rowWeights ? (f.modelsFirst ? tf.transpose(rowWeights) : rowWeights) : null
    const sumOverRows = (t: TF.Tensor) => (f.modelsFirst ? tf.sum(t, 1) : this.sumRows(t, rows, n)) as TF.Tensor1D
    const meanOverRows = (perRow: TF.Tensor) => (w ? sumOverRows(tf.mul(perRow, w)) : (tf.div(sumOverRows(perRow), rows) as TF.Tensor1D)) // [n]
    const target = f.modelsFirst ? tf.reshape(y, [1, rows]) : y // broadcasts over models
    if (this.objective === 'regression') {
      const err = tf.sub(f.out, target)
      // d(sum of per-model means)/dpred = 2·err / B (weighted: 2·err·w)
      const dOut = w ? tf.mul(tf.mul(err, w), 2) : tf.mul(err, 2 / rows)
      return { loss: meanOverRows(tf.square(err)), grads: this.backward(f, dOut, xT, rows) }
    }
    if (this.objective === 'binary') {
      const z = f.out
      // max(z, 0) − z·y + log(1 + e^−|z|); d/dz = sigmoid(z) − y
      const perRow = tf.add(tf.sub(tf.relu(z), tf.mul(z, target)), tf.log1p(tf.exp(tf.neg(tf.abs(z)))))
      const residual = tf.sub(tf.sigmoid(z), target)
      const dOut = w ? tf.mul(residual, w) : tf.mul(residual, 1 / rows)
      return { loss: meanOverRows(perRow), grads: this.backward(f, dOut, xT, rows) }
    }
    // multiclass, logits [n, B, K]: log-sum-exp − the true class's logit; d/dz = softmax(z) − onehot(y)
    const oneHot = this.oneHot(y, rows)
    const perRow = tf.neg(tf.sum(tf.mul(tf.logSoftmax(f.out), oneHot), 2)) // [n, B]
    const residual = tf.sub(tf.softmax(f.out), oneHot)
    const dOut = w ? tf.mul(residual, tf.reshape(w, [n, rows, 1])) : tf.mul(residual, 1 / rows)
    return { loss: meanOverRows(perRow), grads: this.backward(f, dOut, xT, rows) }
  }

  /** Class indices y [B, 1] as one-hot rows [1, B, K] (y = k exactly: labels are small integers in float32). */
  private oneHot(y: TF.Tensor2D, rows: number): TF.Tensor {
    const { tf, outputUnits } = this
    const classes = tf.reshape(tf.range(0, outputUnits, 1, 'float32'), [1, 1, outputUnits])
    return tf.cast(tf.equal(tf.reshape(y, [1, rows, 1]), classes), 'float32')
  }

  /** The forward pass: each layer's pre-activations and inputs, and the output layer's values. */
  private forward(x: TF.Tensor2D): Forward {
    const { tf, n, hidden, outputUnits } = this
    const L = hidden.length
    const rows = x.shape[0]
    const vals = this.params.map((p) => p.value)
    const h1 = hidden[0]
    const z1 = tf.matMul(x, vals[0] as TF.Tensor2D) // [B, n·H1], bias included
    const a1 = tf.relu(z1)
    const zs: TF.Tensor[] = [] // pre-activations of layers 2..L, layout [n, B, H]
    const as: TF.Tensor[] = [] // their inputs, layout [n, B, H]
    const wo = vals[2 * L - 1] // [n, HL], or [n, HL, K]
    const bo = vals[2 * L] // [n], or [n, K]
    const hl = hidden[L - 1]
    if (L === 1 && outputUnits === 1) {
      const last = tf.reshape(a1, [rows, n, h1])
      const out = tf.add(tf.sum(tf.mul(last, tf.reshape(wo, [1, n, hl])), 2), bo) // [B, n]
      return { z1, zs, as, last, modelsFirst: false, out }
    }
    let a: TF.Tensor = tf.transpose(tf.reshape(a1, [rows, n, h1]), [1, 0, 2]) // [n, B, H1]
    for (let k = 1; k < L; k++) {
      as.push(a)
      const z = tf.add(tf.matMul(a as TF.Tensor3D, vals[2 * k - 1] as TF.Tensor3D), vals[2 * k])
      zs.push(z)
      a = tf.relu(z)
    }
    if (outputUnits > 1) {
      const out = tf.add(tf.matMul(a as TF.Tensor3D, wo as TF.Tensor3D), tf.reshape(bo, [n, 1, outputUnits])) // [n, B, K]
      return { z1, zs, as, last: a, modelsFirst: true, out }
    }
    const out = tf.add(tf.sum(tf.mul(a, tf.reshape(wo, [n, 1, hl])), 2), tf.reshape(bo, [n, 1])) // [n, B]
    return { z1, zs, as, last: a, modelsFirst: true, out }
  }

  /** The gradients by hand, from dL/d(outputs) back to W1 (whose last row, the bias's, comes out of the same GEMM). */
  private backward(f: Forward, dPred: TF.Tensor, xT: TF.Tensor2D, rows: number): TF.Tensor[] {
    const { tf, n, hidden, outputUnits } = this
    const L = hidden.length
    const vals = this.params.map((p) => p.value)
    const wo = vals[2 * L - 1] as TF.Tensor2D
    const hl = hidden[L - 1]
    const grads: TF.Tensor[] = new Array(2 * L + 1)
    let dLast: TF.Tensor
    if (!f.modelsFirst) {
      const dPred3 = tf.reshape(dPred, [rows, n, 1])
      grads[2 * L] = this.sumRows(dPred, rows, n)
      grads[2 * L - 1] = tf.reshape(this.sumRows(tf.mul(dPred3, f.last), rows, n * hl), [n, hl]) // [n, HL]
      dLast = tf.mul(dPred3, tf.reshape(wo, [1, n, hl])) // [B, n, HL]
    } else {
      if (outputUnits > 1) {
        // dPred [n, B, K]
        grads[2 * L] = tf.sum(dPred, 1) // [n, K]
        grads[2 * L - 1] = tf.matMul(f.last as TF.Tensor3D, dPred as TF.Tensor3D, true, false) // [n, HL, K]
        dLast = tf.matMul(dPred as TF.Tensor3D, wo as unknown as TF.Tensor3D, false, true) // [n, B, HL]
      } else {
        const dPred3 = tf.reshape(dPred, [n, rows, 1])
        grads[2 * L] = tf.sum(dPred, 1)
        grads[2 * L - 1] = tf.sum(tf.mul(dPred3, f.last), 1) // [n, HL]
        dLast = tf.mul(dPred3, tf.reshape(wo, [n, 1, hl])) // [n, B, HL]
      }
      // These per-model 3-D products keep transposeA: unlike the 2-D GEMM above, wasm's batched
      // kernel is no slower with it (50×512×64: 71 ms vs 81 ms with a materialised transpose).
      for (let k = L - 1; k >= 1; k--) {
        const dz = tf.mul(dLast, tf.step(f.zs[k - 1]))
        grads[2 * k - 1] = tf.matMul(f.as[k - 1] as TF.Tensor3D, dz as TF.Tensor3D, true, false) // [n, Hin, Hout]
        grads[2 * k] = tf.sum(dz, 1, true) // [n, 1, Hout]
        dLast = tf.matMul(dz as TF.Tensor3D, vals[2 * k - 1] as TF.Tensor3D, false, true) // [n, B, Hin]
      }
      dLast = tf.transpose(dLast, [1, 0, 2]) // [B, n, H1]
    }
    const dz1 = tf.mul(tf.reshape(dLast, [rows, n * hidden[0]]), tf.step(f.z1)) // [B, n·H1]
    grads[0] = tf.matMul(xT, dz1 as TF.Tensor2D) // [F+1, n·H1]: plain GEMM, fast path; last row = bias gradient
    return grads
  }

  private applyAdam(grads: TF.Tensor[]): void {
    const { tf } = this
    const { lr, beta1, beta2, epsilon } = this.options.adam
    this.step += 1
    const c1 = 1 - beta1 ** this.step
    const c2 = 1 - beta2 ** this.step
    // per-model lr/c1 laid out over each parameter's model axis: each element is multiplied by the
    // same float32 value a scalar lr/c1 would give, so a model's steps are its own either way
    const lrC1 = typeof lr === 'number' ? null : this.perModelLayouts(Float32Array.from(lr, (l) => l / c1))
    this.params.forEach((p, i) => {
      const g = grads[i]
      const m = tf.add(tf.mul(p.m, beta1), tf.mul(g, 1 - beta1))
      const v = tf.add(tf.mul(p.v, beta2), tf.mul(tf.square(g), 1 - beta2))
      const update = tf.div(tf.mul(m, lrC1 ? lrC1[i] : (lr as number) / c1), tf.add(tf.sqrt(tf.div(v, c2)), epsilon))
      p.m.assign(m)
      p.v.assign(v)
      p.value.assign(tf.sub(p.value, update))
    })
  }

  /** A per-model vector shaped to broadcast against each parameter (W1 [1, n·H1], Wk and bk [n,1,1], Wo [n,1], bo [n]; K outputs: Wo [n,1,1], bo [n,1]). */
  private perModelLayouts(values: Float32Array): TF.Tensor[] {
    const { tf, n, hidden, outputUnits } = this
    const L = hidden.length
    const h1 = hidden[0]
    const out: TF.Tensor[] = new Array(2 * L + 1)
    const w1 = new Float32Array(n * h1)
    for (let i = 0; i < n; i++) w1.fill(values[i], i * h1, (i + 1) * h1)
    out[0] = tf.tensor2d(w1, [1, n * h1])
    for (let k = 1; k < L; k++) out[2 * k - 1] = out[2 * k] = tf.tensor3d(values, [n, 1, 1])
    out[2 * L - 1] = outputUnits > 1 ? tf.tensor3d(values, [n, 1, 1]) : tf.tensor2d(values, [n, 1])
    out[2 * L] = outputUnits > 1 ? tf.tensor2d(values, [n, 1]) : tf.tensor1d(values)
    return out
  }

  /** The trained parameters, in the fused layout (mlp/artifact.ts reads each model out of it); reading syncs the device. */
  async parameters(): Promise<Float32Array[]> {
    return Promise.all(this.params.map(async (p) => (await p.value.data()) as Float32Array))
  }

  /** The training state (parameters, Adam's moments and step), read to the host. */
  async state(): Promise<Required<FusedMlpState>> {
    const read = (ts: TF.Variable[]) => Promise.all(ts.map(async (t) => (await t.data()) as Float32Array))
    const [values, m, v] = await Promise.all([read(this.params.map((p) => p.value)), read(this.params.map((p) => p.m)), read(this.params.map((p) => p.v))])
    return { values, adam: { m, v, step: this.step } }
  }

  /**
   * A smaller program of models `positions` (in that order) continuing from their current weights and
   * Adam moments at the same step, with their own seeds and learning rates: each trains on exactly as
   * it would have here, since no model's step reads another's. This program stays as it was (the caller disposes it).
   */
  async survivors(positions: readonly number[]): Promise<FusedMlp> {
    const { n, hidden, options } = this
    const { values, adam } = await this.state()
    const select = (params: Float32Array[]) => selectModels(params, n, hidden[0], positions)
    const lr = options.adam.lr
    return new FusedMlp(this.tf, {
      ...options,
      seeds: positions.map((i) => options.seeds[i]),
      adam: { ...options.adam, lr: typeof lr === 'number' ? lr : positions.map((i) => lr[i]) },
      start: { values: select(values), adam: { m: select(adam.m), v: select(adam.v), step: adam.step } },
    })
  }

  /** Per-model mean squared error on a data set (x [rows,F+1], ones last; y [rows,1]), evaluated in chunks. */
  evaluate(x: TF.Tensor2D, y: TF.Tensor2D): TF.Tensor1D {
    const { tf, n, hidden } = this
    const rows = x.shape[0]
    const widest = Math.max(...hidden)
    const chunk = Math.max(1, Math.min(rows, Math.floor(EVAL_ELEMENTS_PER_CHUNK / (n * widest))))
    if (chunk >= rows) {
      return tf.tidy(() => tf.div(tf.sum(tf.square(tf.sub(this.predict(x), y)), 0), rows) as TF.Tensor1D)
    }
    let total: TF.Tensor1D = tf.zeros([n])
    for (let start = 0; start < rows; start += chunk) {
      const size = Math.min(chunk, rows - start)
      const next = tf.tidy(() => {
        const xs = tf.slice(x, [start, 0], [size, -1])
        const ys = tf.slice(y, [start, 0], [size, -1])
        const pred = this.predict(xs) // [size, n]
        return tf.add(total, tf.sum(tf.square(tf.sub(pred, ys)), 0)) as TF.Tensor1D
      })
      total.dispose()
      total = next
    }
    const mse = tf.div(total, rows) as TF.Tensor1D
    total.dispose()
    return mse
  }

  /** Predictions [rows, n] of every fused model (a regressor's; a classifier's are its logits); x [rows, F+1] with a last column of ones. */
  predict(x: TF.Tensor2D): TF.Tensor2D {
    const { tf, n, hidden } = this
    return tf.tidy(() => {
      const L = hidden.length
      const rows = x.shape[0]
      const vals = this.params.map((p) => p.value)
      const a1 = tf.reshape(tf.relu(tf.matMul(x, vals[0] as TF.Tensor2D)), [rows, n, hidden[0]])
      const hl = hidden[L - 1]
      if (L === 1 && this.outputUnits === 1) {
        // [rows, n, H] · wo[1, n, H] summed over H: no transpose (transposes are slow on wasm)
        return tf.add(tf.sum(tf.mul(a1, tf.reshape(vals[1], [1, n, hl])), 2), vals[2]) as TF.Tensor2D
      }
      let a: TF.Tensor = tf.transpose(a1, [1, 0, 2]) // [n, rows, H1]
      for (let k = 1; k < L; k++) {
        a = tf.relu(tf.add(tf.matMul(a as TF.Tensor3D, vals[2 * k - 1] as TF.Tensor3D), vals[2 * k]))
      }
      if (this.outputUnits > 1) {
        const K = this.outputUnits
        const logits = tf.add(tf.matMul(a as TF.Tensor3D, vals[2 * L - 1] as TF.Tensor3D), tf.reshape(vals[2 * L], [n, 1, K])) // [n, rows, K]
        return tf.reshape(tf.transpose(logits, [1, 0, 2]), [rows, n * K]) as TF.Tensor2D
      }
      const out = tf.add(tf.sum(tf.mul(a, tf.reshape(vals[2 * L - 1], [n, 1, hl])), 2), tf.reshape(vals[2 * L], [n, 1])) // [n, rows]
      return tf.transpose(out) as TF.Tensor2D
    })
  }

  /** Every fused model's outputs (a classifier's logits) on x [rows, F+1] (ones last), rows first ([rows, n·K]), evaluated in chunks and read to the host. */
  async outputs(x: TF.Tensor2D): Promise<Float32Array> {
    const { tf, n, hidden } = this
    const K = this.outputUnits
    const rows = x.shape[0]
    const chunk = Math.max(1, Math.min(rows, Math.floor(EVAL_ELEMENTS_PER_CHUNK / (n * Math.max(...hidden, K)))))
    const out = new Float32Array(rows * n * K)
    for (let start = 0; start < rows; start += chunk) {
      const size = Math.min(chunk, rows - start)
      const values = chunk >= rows ? this.predict(x) : tf.tidy(() => this.predict(tf.slice(x, [start, 0], [size, -1])))
      out.set((await values.data()) as Float32Array, start * n * K)
      values.dispose()
    }
    return out
  }

  dispose(): void {
    for (const ones of this.onesByRows.values()) ones.dispose()
    this.onesByRows.clear()
    for (const p of this.params) {
      p.value.dispose()
      p.m.dispose()
      p.v.dispose()
    }
  }
}
