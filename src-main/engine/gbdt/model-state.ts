// What the CPU trainer keeps per model of a group (ModelState: its sampler, margins, objective and
// trees) and per tree it grows (TreeState: the sampled rows with their quantised gradients and
// hessians, partitioned in place so a node is a range, the tree under construction and the level
// to grow). A regressor or a binary classifier grows one tree a round, a K-class one K side by side
// (one per class, in the same level passes), all from one joint gradient step. A model keeps its
// own parameters, so a group may fuse configurations (grow.ts grows the levels).
import type { GbdtParams } from '@shared/families/gbdt'
import type { GbdtData } from './binning'
import { type RowLoops, tsRowLoops } from './kernel'
import { type GbdtTask, initialMargin, logisticGradients, softprobGradients, softprobOfRows, treesPerRound } from './objective'
import { quantExponent } from './quantise'
import { type HeldOutRows, isEvaluated, leafValue, ModelSampler, type SplitCoefs, SplitSearch } from './rules'
import { type GbdtTree, TreeBuilder } from './tree'

/** A node being grown: its rows [begin, end) and, while it has one, its histogram buffer. */
export class Node extends SplitSearch {
  hist: Float64Array | null = null
  constructor(
    /** index in the tree under construction */
    readonly id: number,
    readonly begin: number,
    readonly end: number,
    /** Σq and Σqh (squared error: the row count) */
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

/**
 * Scratch a group's gradient steps share (one model at a time): float32 gradients and hessians of the
 * sampled rows, a multiclass model's probabilities, and the labels where the row loops read them.
 */
export class GradientScratch {
  readonly g: Float32Array
  readonly h: Float32Array
  readonly p: Float32Array
  readonly y: Float32Array
  constructor(data: GbdtData, task?: GbdtTask, loops: RowLoops = tsRowLoops) {
    const n = data.rows
    const objective = task?.objective ?? 'regression'
    this.g = loops.float32(n)
    this.h = loops.float32(objective === 'regression' ? 0 : n)
    this.p = new Float32Array(objective === 'multiclass' ? n * task!.classes : 0)
    this.y = loops.float32(n)
    this.y.set(data.y)
  }

  /** the float32 arrays of a row each that it allocates from the row loops: g, h (a classifier's) and y */
  static loopArrays(hessians: boolean): number {
    return hessians ? 3 : 2
  }
}

/** One tree being grown: its rows and their quantised gradient pairs, its columns, the tree and the level (grow.ts). */
export class TreeState {
  readonly rows: Int32Array
  readonly q: Int32Array
  /** quantised hessians of `rows`; null for squared error (every hessian 1, scale 1: Σqh is the row count) */
  readonly qh: Int32Array | null
  readonly sampled: Uint8Array
  readonly feats: Int32Array
  /** histogram slot offset of feature f this round, −1 if not sampled */
  readonly slotOf: Int32Array
  nSampled = 0
  /** 2^−k of the gradients' and the hessians' quantisation (invH = 1 for squared error) */
  inv = 1
  invH = 1
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

  constructor(
    n: number,
    features: number,
    /** the model's tree depth: its nodes at maxDepth are leaves, whatever the group's deepest model does */
    readonly maxDepth: number,
    /** the model's split coefficients (float32 lambda, alpha, mcw, gamma, eta), shared by the group's models that agree on them */
    readonly c: SplitCoefs,
    hessians: boolean,
    /** its per-row loops, where rows, q, qh and sampled live */
    private readonly loops: RowLoops,
  ) {
    this.rows = loops.int32(n)
    this.q = loops.int32(n)
    this.qh = hessians ? loops.int32(n) : null
    this.sampled = loops.uint8(n)
    this.feats = new Int32Array(features)
    this.slotOf = new Int32Array(features)
  }

  /** this tree's features and their histogram slots (sampled features side by side, ascending) */
  sampleColumns(sampler: ModelSampler, width: Int32Array): void {
    const feats = this.feats
    sampler.columns(feats)
    this.slotOf.fill(-1)
    let slot = 0
    for (let j = 0; j < sampler.perTree; j++) {
      this.slotOf[feats[j]] = slot
      slot += width[feats[j]]
    }
  }

  /** the model's tree `tree`'s rows (rules.ts ModelSampler.rows), in `rows[0, nSampled)` ascending */
  sampleRows(sampler: ModelSampler, tree: number): void {
    sampler.rows(this.sampled, tree)
    const sampled = this.sampled
    const rows = this.rows
    const n = sampled.length
    let ns = 0
    // branch-free: whether a row is drawn is a coin flip; each row is written and only a drawn one kept
    for (let r = 0; r < n; r++) {
      rows[ns] = r
      ns += sampled[r]
    }
    this.nSampled = ns
  }

  /**
   * Squared error: samples the model's tree `tree`'s rows, writes them to `rows` and their gradients
   * f32(pred − y), quantised with one power-of-two scale for the tree (see quantise.ts), to `q`; returns Σq.
   */
  squaredErrorGradients(sampler: ModelSampler, tree: number, pred: Float32Array, y: Float32Array, gbuf: Float32Array): number {
    const ns = sampler.rows(this.sampled, tree)
    const maxAbs = this.loops.squaredErrorRows(pred, y, this.sampled, ns === pred.length, gbuf, this.rows)
    this.nSampled = ns
    return this.quantiseGradients(gbuf, maxAbs)
  }

  /** q = the gradients g[0, nSampled) quantised (one power-of-two scale from maxAbs); returns Σq */
  private quantiseGradients(g: Float32Array, maxAbs: number): number {
    const k = quantExponent(maxAbs)
    this.inv = 2 ** -k
    return this.loops.quantiseRows(g, this.q, this.nSampled, 2 ** k)
  }

  /** A classifier's gradient pairs g, h [0, nSampled) quantised, each with its own power-of-two scale (quantise.ts); returns [Σq, Σqh]. */
  quantisePairs(g: Float32Array, h: Float32Array): [number, number] {
    const ns = this.nSampled
    let maxG = 0
    let maxH = 0
    for (let i = 0; i < ns; i++) {
      const a = Math.abs(g[i])
      maxG = a > maxG ? a : maxG
      const b = h[i]
      maxH = b > maxH ? b : maxH
    }
    const gq = this.quantiseGradients(g, maxG)
    const k = quantExponent(maxH)
    this.invH = 2 ** -k
    return [gq, this.loops.quantiseRows(h, this.qh!, ns, 2 ** k)]
  }

  /** A new tree on the quantised pairs: the root, pending in `root` if it is evaluated, else a leaf already. */
  startTree(gq: number, hq: number): void {
    const c = this.c
    const ns = this.nSampled
    this.tree = new TreeBuilder()
    this.leafSegs.length = 0
    const root = new Node(0, 0, ns, gq, hq)
    this.tree.add(leafValue(gq * this.inv, hq * this.invH, c))
    this.pairs = []
    this.levelNodes = []
    this.root = null
    const evaluated = this.qh ? isEvaluated(hq, 0, this.maxDepth, c, this.invH, ns) : isEvaluated(hq, 0, this.maxDepth, c)
    if (evaluated) this.root = root
    else this.leafSegs.push(0, ns, this.tree.leafValue[0])
  }

  /**
   * The tree is grown: returns it, its leaf values added to every training row's margin `pred` —
   * the sampled rows by their leaf segments, the others by walking the tree.
   */
  finishTree(data: GbdtData, pred: Float32Array): GbdtTree {
    const n = data.rows
    const tree = this.tree.finish()
    const rows = this.rows
    const segs = this.leafSegs
    for (let s = 0; s < segs.length; s += 3) this.loops.addToRows(pred, rows, segs[s], segs[s + 1], segs[s + 2])
    if (this.nSampled === n) return tree
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
    return tree
  }
}

/**
 * One model of a group: its sampler, its margins (one array per class: K for multiclass), the trees
 * it grows this round (`growing`, one per class) and the ones it has, in XGBoost's order (round-major:
 * tree t is class t mod K).
 */
export class ModelState {
  readonly sampler: ModelSampler
  /** training rows' margins, per class */
  readonly margins: Float32Array[]
  readonly growing: TreeState[]
  readonly trees: GbdtTree[] = []
  /** this model's boosting rounds (in a group fused across rounds it sits out the rest) */
  readonly rounds: number
  /** this model's tree depth */
  readonly maxDepth: number
  private readonly objective: GbdtTask['objective']
  /** the rounds it had before this job (resume: a halving rung continues it); it grows from there */
  resumedRounds = 0

  constructor(
    readonly seed: number,
    n: number,
    features: number,
    /** this model's own parameters (its configuration's, in a model set) */
    params: GbdtParams,
    /** this model's split coefficients, shared by the group's models that agree on them */
    c: SplitCoefs,
    /** the trees' per-row loops, where margins, rows, q, qh and sampled live (the histogram kernel reads them) */
    loops: RowLoops = tsRowLoops,
    /** rows this model never trains on (its fold's, in a model set with folds) */
    heldOut: HeldOutRows | null = null,
    /** what it learns; absent: regression */
    task?: GbdtTask,
  ) {
    this.rounds = params.rounds
    this.maxDepth = params.maxDepth
    this.objective = task?.objective ?? 'regression'
    this.sampler = new ModelSampler(seed, features, params, heldOut)
    const K = treesPerRound(task)
    const start = initialMargin(this.objective, params.baseScore)
    const hessians = this.objective !== 'regression'
    this.margins = Array.from({ length: K }, () => loops.float32(n).fill(start))
    this.growing = Array.from({ length: K }, () => new TreeState(n, features, params.maxDepth, c, hessians, loops))
  }

  /**
   * A new round: the trees' gradient step, done once for the model (a K-class model's softmax over
   * its K margins a row), then each tree in class order samples its columns and rows (the column
   * stream gives tree t its t-th draws; rows are drawn for tree t = the trees the model has + its
   * class), quantises its rows' gradient pairs and makes its root. Returns the trees to grow.
   */
  startRound(data: GbdtData, scratch: GradientScratch): readonly TreeState[] {
    const sampler = this.sampler
    const width = data.width
    const firstTree = this.trees.length
    if (this.objective === 'regression') {
      const t = this.growing[0]
      t.sampleColumns(sampler, width)
      t.startTree(t.squaredErrorGradients(sampler, firstTree, this.margins[0], scratch.y, scratch.g), t.nSampled)
      return this.growing
    }
    const K = this.growing.length
    if (this.objective === 'multiclass') softprobOfRows(this.margins, data.rows, scratch.p)
    for (let k = 0; k < K; k++) {
      const t = this.growing[k]
      t.sampleColumns(sampler, width)
      t.sampleRows(sampler, firstTree + k)
      if (this.objective === 'binary') logisticGradients(this.margins[0], data.y, t.rows, t.nSampled, scratch.g, scratch.h)
      else softprobGradients(scratch.p, K, k, data.y, t.rows, t.nSampled, scratch.g, scratch.h)
      const [gq, hq] = t.quantisePairs(scratch.g, scratch.h)
      t.startTree(gq, hq)
    }
    return this.growing
  }

  /**
   * Continues from `trees` (an earlier rung's, round-major, K a round), before its first round here:
   * they become its first trees, each one's leaves added to every training row's margin of its class
   * in tree order, in float32, as finishRound added them; and its sampler draws again those trees'
   * columns (a stateful stream; rows need nothing: a tree's row draw is a function of its index), so
   * the next round samples what an uninterrupted run would. Nothing is grown again: the model then
   * trains on as if it had never stopped.
   */
  resume(trees: readonly GbdtTree[], data: GbdtData): void {
    const K = this.growing.length
    if (this.trees.length > 0) throw new RangeError('a model resumes before its first round only')
    if (trees.length % K !== 0) throw new RangeError(`a model of ${K} trees a round resumes from whole rounds, got ${trees.length} trees`)
    if (trees.length / K >= this.rounds) throw new RangeError(`a model resumed at ${trees.length / K} rounds has nothing left of its ${this.rounds}`)
    const scratch = this.growing[0]
    for (let t = 0; t < trees.length; t++) {
      addTreeToMargins(trees[t], data, this.margins[t % K])
      this.sampler.columns(scratch.feats)
      this.trees.push(trees[t])
    }
    this.resumedRounds = trees.length / K
  }

  /** The round's trees are grown: keep them in class order and add each to its class's margins. */
  finishRound(data: GbdtData): void {
    for (let k = 0; k < this.growing.length; k++) this.trees.push(this.growing[k].finishTree(data, this.margins[k]))
  }
}

/** A grown tree's leaves added to every training row's margin, each row walked down by its bins as finishTree walks the rows it did not sample. */
function addTreeToMargins(tree: GbdtTree, data: GbdtData, margins: Float32Array): void {
  const n = data.rows
  const { feature, splitBin, defaultLeft, left, leafValue } = tree
  const bins = data.bins
  const nBins = data.nBins
  for (let r = 0; r < n; r++) {
    let node = 0
    let f = feature[0]
    while (f >= 0) {
      const bin = bins[f * n + r]
      const goLeft = bin === nBins[f] ? defaultLeft[node] === 1 : bin <= splitBin[node]
      node = goLeft ? left[node] : left[node] + 1
      f = feature[node]
    }
    margins[r] += leafValue[node]
  }
}
