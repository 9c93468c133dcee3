// Trained trees, prediction on raw features (margins, and a classifier's probabilities), test MSE
// and the per-model tree hash.
import type { GbdtParams } from '@shared/families/gbdt'
import type { StoppedRounds } from '@shared/contract/early-stopping'
import type { ModelArtifact } from '@shared/contract/model-artifact'
import { initialMargin, sigmoidF32, softmaxF32 } from './objective'

/**
 * One tree, nodes in breadth-first order of expansion (node 0 = root; the children of a
 * node are `left` and `left + 1`). A row goes left iff its value is < threshold (XGBoost's rule),
 * or, when it is missing (NaN), iff defaultLeft.
 */
export interface GbdtTree {
  /** split feature, −1 for a leaf */
  feature: Int32Array
  /** training bin of the split: non-missing rows with bin ≤ splitBin go left (−1: none does) */
  splitBin: Int32Array
  /** float32 split value: cut[splitBin], or the feature's minValue when splitBin = −1 */
  threshold: Float32Array
  defaultLeft: Uint8Array
  /** index of the left child, −1 for a leaf */
  left: Int32Array
  /** float32 leaf value eta·w (0 for internal nodes) */
  leafValue: Float32Array
}

export interface GbdtModel {
  params: GbdtParams
  /** the seed this model's row and column samples were drawn from */
  seed: number
  features: number
  /** fround(params.baseScore), XGBoost's base_score: a regressor's every prediction starts here (a classifier's margin: objective.ts initialMargin) */
  baseScore: number
  /** a classifier's trees are round-major: a K-class model's tree t is class t mod K */
  trees: GbdtTree[]
  /** a classifier's objective (binary:logistic, multi:softprob); absent: a regressor */
  objective?: 'binary' | 'multiclass'
  /** a classifier's class count K (2 for binary) */
  classes?: number
  /** with early stopping (early-stopping.ts): the rounds it trained and the round kept (`trees` holds the first bestRound rounds) */
  stoppedRounds?: StoppedRounds
  /** a resumed (halving) job's model: the rounds this job grew (train.ts resume), the counter that shows nothing was grown twice */
  roundsGrown?: number
}

/** Margins per row: 1 (a regressor's prediction, a binary classifier's logit), K for multiclass. */
export function marginsPerRow(model: Pick<GbdtModel, 'objective' | 'classes'>): number {
  return model.objective === 'multiclass' ? model.classes! : 1
}

/**
 * Margins for row-major float32 x[rows × features] (a regressor's predictions): the initial margin
 * plus the trees' leaves, summed in float32 in tree order (XGBoost's order); multiclass: [rows, K]
 * row-major, tree t adding to class t mod K.
 */
export function predictGbdt(model: GbdtModel, x: Float32Array, rows: number, features = model.features): Float32Array {
  if (features !== model.features) throw new RangeError(`model has ${model.features} features, data has ${features}`)
  if (x.length !== rows * features) throw new RangeError(`x has ${x.length} values, expected ${rows}×${features}`)
  const K = marginsPerRow(model)
  const out = new Float32Array(rows * K).fill(initialMargin(model.objective, model.baseScore))
  model.trees.forEach((t, i) => {
    const { feature, threshold, defaultLeft, left, leafValue } = t
    const k = i % K
    for (let r = 0; r < rows; r++) {
      let node = 0
      const base = r * features
      let f = feature[0]
      while (f >= 0) {
        const v = x[base + f]
        const goLeft = v !== v ? defaultLeft[node] === 1 : v < threshold[node]
        node = goLeft ? left[node] : left[node] + 1
        f = feature[node]
      }
      out[r * K + k] += leafValue[node]
    }
  })
  return out
}

/**
 * What the model outputs for rows of x, as XGBoost 1.7 predicts them in float32 (and as
 * @shared/metrics scoreOutputs takes them): a regressor's predictions; binary: p(class 1) =
 * sigmoid(margin); multiclass: softmax of the K margins, [rows, K] row-major.
 */
export function predictGbdtOutputs(model: GbdtModel, x: Float32Array, rows: number, features = model.features): Float32Array {
  return outputsOfMargins(model, predictGbdt(model, x, rows, features), rows)
}

/** predictGbdt's margins of `rows` rows (rows × K) turned into the model's outputs in place (binary: sigmoid, multiclass: softmax per row); returns them. */
export function outputsOfMargins(model: Pick<GbdtModel, 'objective' | 'classes'>, out: Float32Array, rows: number): Float32Array {
  if (model.objective === 'binary') for (let r = 0; r < rows; r++) out[r] = sigmoidF32(out[r])
  else if (model.objective === 'multiclass') for (let r = 0, K = model.classes!; r < rows; r++) softmaxF32(out, r * K, K)
  return out
}

/** Mean squared error in float64 of float32 predictions. */
export function meanSquaredError(pred: ArrayLike<number>, y: ArrayLike<number>): number {
  if (pred.length !== y.length) throw new RangeError('pred and y differ in length')
  let s = 0
  for (let i = 0; i < y.length; i++) {
    const d = pred[i] - y[i]
    s += d * d
  }
  return y.length === 0 ? 0 : s / y.length
}

const TREE_HASH_TAG = 'trainpool-gbdt-trees-v1'

/**
 * FNV-1a 64-bit over a canonical little-endian encoding: the tag (a classifier's followed by
 * ":binary:2" or ":multiclass:K"), the float32 bits of baseScore, the tree count, then per tree its
 * node count and per node (BFS order) either [0, leafValue f32 bits] or [1, feature u32, splitBin
 * i32, threshold f32 bits, defaultLeft u8, left u32]. Equal hashes ⇔ (up to 2^-64) the same trees,
 * bit for bit, of the same objective. 16 hex digits.
 */
export function treeHash(model: GbdtModel): string {
  let nodes = 0
  for (const t of model.trees) nodes += t.feature.length
  const tag = model.objective ? `${TREE_HASH_TAG}:${model.objective}:${model.classes}` : TREE_HASH_TAG
  const buf = new ArrayBuffer(tag.length + 8 + model.trees.length * 4 + nodes * 18)
  const dv = new DataView(buf)
  let o = 0
  for (let i = 0; i < tag.length; i++) dv.setUint8(o++, tag.charCodeAt(i))
  dv.setFloat32(o, model.baseScore, true)
  o += 4
  dv.setUint32(o, model.trees.length, true)
  o += 4
  for (const t of model.trees) {
    dv.setUint32(o, t.feature.length, true)
    o += 4
    for (let i = 0; i < t.feature.length; i++) {
      if (t.feature[i] < 0) {
        dv.setUint8(o++, 0)
        dv.setFloat32(o, t.leafValue[i], true)
        o += 4
      } else {
        dv.setUint8(o++, 1)
        dv.setUint32(o, t.feature[i], true)
        dv.setInt32(o + 4, t.splitBin[i], true)
        dv.setFloat32(o + 8, t.threshold[i], true)
        dv.setUint8(o + 12, t.defaultLeft[i])
        dv.setUint32(o + 13, t.left[i], true)
        o += 17
      }
    }
  }
  return fnv1a64(new Uint8Array(buf, 0, o))
}

/** FNV-1a, 64-bit (offset basis cbf29ce484222325, prime 100000001b3), as 16 hex digits. */
export function fnv1a64(bytes: Uint8Array): string {
  // h = hi·2^32 + lo; h·prime = h·0x1b3 + (h << 40), mod 2^64
  let hi = 0xcbf29ce4
  let lo = 0x84222325
  for (let i = 0; i < bytes.length; i++) {
    lo = (lo ^ bytes[i]) >>> 0
    const loP = lo * 0x1b3 // < 2^41, exact
    const carry = Math.floor(loP / 4294967296)
    const newLo = loP >>> 0
    hi = (Math.imul(hi, 0x1b3) + carry + ((lo << 8) >>> 0)) >>> 0
    lo = newLo
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0')
}

/** Grows one tree node by node (breadth-first ids), then freezes it into typed arrays: both engines (CPU and WebGPU) build their trees with it. */
export class TreeBuilder {
  feature: number[] = []
  splitBin: number[] = []
  threshold: number[] = []
  defaultLeft: number[] = []
  left: number[] = []
  leafValue: number[] = []

  add(leaf: number): number {
    this.feature.push(-1)
    this.splitBin.push(-1)
    this.threshold.push(0)
    this.defaultLeft.push(0)
    this.left.push(-1)
    this.leafValue.push(leaf)
    return this.feature.length - 1
  }

  finish(): GbdtTree {
    return {
      feature: Int32Array.from(this.feature),
      splitBin: Int32Array.from(this.splitBin),
      threshold: Float32Array.from(this.threshold),
      defaultLeft: Uint8Array.from(this.defaultLeft),
      left: Int32Array.from(this.left),
      leafValue: Float32Array.from(this.leafValue),
    }
  }
}

/** A trained model as a run keeps it (contract/model-artifact.ts): its trees in plain arrays, a classifier's objective and K with them. */
export function treesArtifact(model: GbdtModel): Extract<ModelArtifact, { format: 'gbdt-trees' }> {
  return {
    format: 'gbdt-trees',
    features: model.features,
    baseScore: model.baseScore,
    ...(model.objective ? { objective: model.objective, classes: model.classes } : {}),
    trees: model.trees.map((t) => ({
      feature: [...t.feature],
      threshold: [...t.threshold],
      defaultLeft: [...t.defaultLeft].map((d) => (d ? 1 : 0)),
      left: [...t.left],
      leafValue: [...t.leafValue],
    })),
  }
}
