// Trained trees, prediction on raw features, test MSE and the per-model tree hash.
import type { GbdtParams } from '@shared/families/gbdt'
import type { ModelArtifact } from '@shared/contract/model-artifact'

/**
 * One regression tree, nodes in breadth-first order of expansion (node 0 = root; the children of a
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
  /** fround(params.baseScore): every prediction starts here */
  baseScore: number
  trees: GbdtTree[]
}

/** Predictions for row-major float32 x[rows × features]: base_score plus the trees' leaves, summed in float32 in tree order (XGBoost's order). */
export function predictGbdt(model: GbdtModel, x: Float32Array, rows: number, features = model.features): Float32Array {
  if (features !== model.features) throw new RangeError(`model has ${model.features} features, data has ${features}`)
  if (x.length !== rows * features) throw new RangeError(`x has ${x.length} values, expected ${rows}×${features}`)
  const out = new Float32Array(rows).fill(model.baseScore)
  for (const t of model.trees) {
    const { feature, threshold, defaultLeft, left, leafValue } = t
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
      out[r] += leafValue[node]
    }
  }
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
 * FNV-1a 64-bit over a canonical little-endian encoding: the tag, the float32 bits of baseScore, the
 * tree count, then per tree its node count and per node (BFS order) either
 * [0, leafValue f32 bits] or [1, feature u32, splitBin i32, threshold f32 bits, defaultLeft u8,
 * left u32]. Equal hashes ⇔ (up to 2^-64) the same trees, bit for bit. 16 hex digits.
 */
export function treeHash(model: GbdtModel): string {
  let nodes = 0
  for (const t of model.trees) nodes += t.feature.length
  const buf = new ArrayBuffer(TREE_HASH_TAG.length + 8 + model.trees.length * 4 + nodes * 18)
  const dv = new DataView(buf)
  let o = 0
  for (let i = 0; i < TREE_HASH_TAG.length; i++) dv.setUint8(o++, TREE_HASH_TAG.charCodeAt(i))
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

/** A trained model as a run keeps it (contract/model-artifact.ts): its trees in plain arrays. */
export function treesArtifact(model: GbdtModel): Extract<ModelArtifact, { format: 'gbdt-trees' }> {
  return {
    format: 'gbdt-trees',
    features: model.features,
    baseScore: model.baseScore,
    trees: model.trees.map((t) => ({
      feature: [...t.feature],
      threshold: [...t.threshold],
      defaultLeft: [...t.defaultLeft].map((d) => (d ? 1 : 0)),
      left: [...t.left],
      leafValue: [...t.leafValue],
    })),
  }
}
