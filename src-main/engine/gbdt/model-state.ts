// What the CPU trainer keeps per model of a group: its sampler, predictions, the sampled rows with
// their quantised gradients (partitioned in place, so a node is a range), the tree under
// construction and the level to grow; and a round's per-model steps, startRound and finishTree.
// A model keeps its own parameters, so a group may fuse configurations (grow.ts grows the levels).
import type { GbdtParams } from '@shared/families/gbdt'
import type { GbdtData } from './binning'
import { quantExponent } from './quantise'
import { type HeldOutRows, isEvaluated, leafValue, ModelSampler, type SplitCoefs, SplitSearch } from './rules'
import { type GbdtTree, TreeBuilder } from './tree'

const f32 = Math.fround

/** A node being grown: its rows [begin, end) and, while it has one, its histogram buffer. */
export class Node extends SplitSearch {
  hist: Float64Array | null = null
  constructor(
    /** index in the tree under construction */
    readonly id: number,
    readonly begin: number,
    readonly end: number,
    gq: number,
    h: number,
  ) {
    super(gq, h)
  }
}

/** children of one split node, and the parent's histogram if it was kept for the subtraction trick */
export interface Pair {
  left: Node
  right: Node
  hist: Float64Array | null
}

/**
 * One unit of a level's histogram work: build a histogram from rows [begin, end) and, optionally,
 * derive a sibling as parent − built. Stored mode: the built histogram lives in `buf` and the
 * derived one in the parent's buffer (both kept for the next level). Terminal mode (the last level
 * evaluated, whose histograms are never parents): both live in two small scratch regions, one
 * feature at a time, and nothing is stored.
 */
export interface Unit {
  begin: number
  end: number
  /** the node built from the rows; null when they are built only to derive `derived` */
  built: Node | null
  /** stored mode: the built histogram's buffer */
  buf: Float64Array | null
  derived: Node | null
  /** the parent's histogram (derived = parent − built) */
  parent: Float64Array | null
}

export class ModelState {
  readonly sampler: ModelSampler
  readonly pred: Float32Array
  readonly rows: Int32Array
  readonly q: Int32Array
  readonly sampled: Uint8Array
  readonly feats: Int32Array
  /** histogram slot offset of feature f this round, −1 if not sampled */
  readonly slotOf: Int32Array
  nSampled = 0
  inv = 1
  readonly trees: GbdtTree[] = []
  tree = new TreeBuilder()
  /** the current level: nodes to evaluate (BFS order), and pairs of children awaiting it */
  pairs: Pair[] = []
  levelNodes: Node[] = []
  units: Unit[] = []
  /** buffers to release once the level pass is over (temporaries; parents read in terminal mode) */
  releaseAfter: Float64Array[] = []
  /** leaf segments of the current tree, for the prediction update: begin, end, leaf value */
  leafSegs: number[] = []
  /** in low-memory mode a level keeps no histograms for the next one */
  keepHists = true
  /** the root, while it waits for its histogram (depth 0) */
  root: Node | null = null
  /** this model's boosting rounds (in a group fused across rounds it sits out the rest) */
  readonly rounds: number
  /** this model's tree depth: its nodes at maxDepth are leaves, whatever the group's deepest model does */
  readonly maxDepth: number

  constructor(
    readonly seed: number,
    n: number,
    features: number,
    /** this model's own parameters (its configuration's, in a model set) */
    params: GbdtParams,
    /** this model's split coefficients (float32 lambda, alpha, mcw, gamma, eta), shared by the group's models that agree on them */
    readonly c: SplitCoefs,
    /** where rows and q live (the histogram kernel reads them) */
    int32: (length: number) => Int32Array = (length) => new Int32Array(length),
    /** rows this model never trains on (its fold's, in a model set with folds) */
    heldOut: HeldOutRows | null = null,
  ) {
    this.rounds = params.rounds
    this.maxDepth = params.maxDepth
    this.sampler = new ModelSampler(seed, features, params, heldOut)
    this.pred = new Float32Array(n).fill(f32(params.baseScore))
    this.rows = int32(n)
    this.q = int32(n)
    this.sampled = new Uint8Array(n)
    this.feats = new Int32Array(features)
    this.slotOf = new Int32Array(features)
  }

  /**
   * A new tree: sample its columns and rows (columns first: the sampler's RNG streams are used in
   * this order), quantise the sampled rows' gradients, and make the root — pending in `root` if it
   * is evaluated, else a leaf already. `gbuf` is scratch of ≥ n floats, shared by the group.
   */
  startRound(data: GbdtData, gbuf: Float32Array): void {
    const c = this.c
    this.sampleColumns(data.width, this.sampler.perTree)
    const gq = this.quantisedGradients(data, gbuf)
    const ns = this.nSampled
    this.tree = new TreeBuilder()
    this.leafSegs.length = 0
    const root = new Node(0, 0, ns, gq, ns)
    this.tree.add(leafValue(gq * this.inv, ns, c))
    this.pairs = []
    this.levelNodes = []
    this.root = null
    if (isEvaluated(root.h, 0, this.maxDepth, c)) this.root = root
    else this.leafSegs.push(0, ns, this.tree.leafValue[0])
  }

  /** this tree's features and their histogram slots (sampled features side by side, ascending) */
  private sampleColumns(width: Int32Array, perTree: number): void {
    const feats = this.feats
    this.sampler.columns(feats)
    this.slotOf.fill(-1)
    let slot = 0
    for (let j = 0; j < perTree; j++) {
      this.slotOf[feats[j]] = slot
      slot += width[feats[j]]
    }
  }

  /**
   * Samples the rows, writes them to `rows` and their gradients, quantised with one power-of-two
   * scale for the tree (see quantise.ts), to `q`; returns the root's Σq.
   */
  private quantisedGradients(data: GbdtData, gbuf: Float32Array): number {
    const n = data.rows
    this.sampler.rows(this.sampled)
    const y = data.y
    const pred = this.pred
    const sampled = this.sampled
    let ns = 0
    let maxAbs = 0
    for (let r = 0; r < n; r++) {
      if (sampled[r] === 0) continue
      const g = f32(pred[r] - y[r])
      gbuf[ns] = g
      this.rows[ns++] = r
      const a = g < 0 ? -g : g
      if (a > maxAbs) maxAbs = a
    }
    this.nSampled = ns
    const k = quantExponent(maxAbs)
    const scale = 2 ** k
    this.inv = 2 ** -k
    let gq = 0
    for (let i = 0; i < ns; i++) {
      const qi = (gbuf[i] * scale) | 0
      this.q[i] = qi
      gq += qi
    }
    return gq
  }

  /**
   * The tree is grown: keep it and add its leaf values to every training row's prediction — the
   * sampled rows by their leaf segments, the others by walking the tree.
   */
  finishTree(data: GbdtData): void {
    const n = data.rows
    const tree = this.tree.finish()
    this.trees.push(tree)
    const pred = this.pred
    const rows = this.rows
    const segs = this.leafSegs
    for (let s = 0; s < segs.length; s += 3) {
      const v = segs[s + 2]
      for (let k = segs[s]; k < segs[s + 1]; k++) pred[rows[k]] += v
    }
    if (this.nSampled === n) return
    const { feature, splitBin, defaultLeft, left, leafValue } = tree
    const bins = data.bins
    const nBins = data.nBins
    for (let r = 0; r < n; r++) {
      if (this.sampled[r] === 1) continue
      let node = 0
      let f = feature[0]
      while (f >= 0) {
        const bin = bins[f * n + r]
        const goLeft = bin === nBins[f] ? defaultLeft[node] === 1 : bin <= splitBin[node]
        node = goLeft ? left[node] : left[node] + 1
        f = feature[node]
      }
      pred[r] += leafValue[node]
    }
  }
}
