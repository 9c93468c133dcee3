// The tree rules both engines follow (this CPU engine and the WGSL one in ../gbdt-webgpu/): XGBoost
// 1.7's float32 split arithmetic, when a split is applied, how it is written into the tree, which
// child's histogram is built, and the per-model sampling with its RNG streams. Written once here so
// the two engines cannot drift apart: their trees are bit-identical only while they agree. The
// formulas: README.md, "What is XGBoost's, exactly".
import type { HeldOutRows } from '@shared/contract/model-set'
import { featuresPerTree, type GbdtParams, minSplitRows, resolveGbdtParams } from '@shared/families/gbdt'
import { Rng } from '../random'
import { counterKey, keyedBits, probabilityThreshold } from './counter-random'
import { QUANT_MAX_ROWS } from './quantise'
import type { TreeBuilder } from './tree'

const f32 = Math.fround

/** XGBoost's kRtEps: a split must reduce the loss by more than this. */
export const KRT_EPS = f32(1e-6)

/** The largest training set: the quantised gradients' sums stay exact doubles up to it (quantise.ts). */
export const MAX_TRAIN_ROWS = QUANT_MAX_ROWS

/** The per-model random streams (of the model's seed) that sampling draws from: columns from a stateful Rng, rows from the counter-based generator. */
const COLUMN_STREAM = 1
export const ROW_STREAM = 2

/** The split parameters as XGBoost sees them: float32. */
export interface SplitCoefs {
  lambda: number
  alpha: number
  mcw: number
  gamma: number
  eta: number
  /** the fewest rows a node needs to be searched for a split */
  minSplitH: number
}

export function splitCoefs(p: GbdtParams): SplitCoefs {
  const mcw = f32(p.minChildWeight)
  return { lambda: f32(p.lambda), alpha: f32(p.alpha), mcw, gamma: f32(p.gamma), eta: f32(p.eta), minSplitH: minSplitRows(mcw) }
}

/**
 * A node at `depth` whose quantised hessian sum is `h` (squared error: its rows) is searched for a
 * split iff it is above maxDepth and each child could get min_child_weight and a non-zero share.
 * Squared error: h ≥ minSplitH = max(2, 2·mcw). A classifier (`invH` its hessian scale 2^−k, `rows`
 * the node's rows): two rows or more, h ≥ 2 and H = h·invH ≥ 2·mcw.
 */
export function isEvaluated(h: number, depth: number, maxDepth: number, c: SplitCoefs, invH?: number, rows?: number): boolean {
  if (invH === undefined) return depth < maxDepth && h >= c.minSplitH
  return depth < maxDepth && rows! >= 2 && h >= 2 && h * invH >= 2 * c.mcw
}

/** T(G): the L1 soft threshold. */
function thresholdL1(g: number, alpha: number): number {
  if (g > alpha) return g - alpha
  if (g < -alpha) return g + alpha
  return 0
}

/** gain of one side, float32 as XGBoost's CalcGainGivenWeight (max_delta_step 0, no constraints) */
export function sideGain(g: number, h: number, lambda: number, alpha: number): number {
  if (h <= 0) return 0
  const t = thresholdL1(g, alpha)
  return f32(f32(t * t) / f32(h + lambda))
}

/** f32(gain_L + gain_R), the sum a candidate is compared by (G dequantised). */
export function childrenGain(gl: number, hl: number, gr: number, hr: number, c: SplitCoefs): number {
  return f32(sideGain(gl, hl, c.lambda, c.alpha) + sideGain(gr, hr, c.lambda, c.alpha))
}

/** loss_chg of a split from its children's gain and the node's own. */
export function lossChange(childrenGainSum: number, nodeGain: number): number {
  return f32(childrenGainSum - nodeGain)
}

/** A candidate replaces the best so far only when strictly greater (ties keep the earlier one in scan order). */
export function beatsBest(loss: number, best: number): boolean {
  return loss > best && loss !== Infinity
}

/** The best split found is applied iff it beats kRtEps and gamma and leaves rows on both sides. */
export function splitApplies(found: boolean, best: number, hl: number, h: number, c: SplitCoefs): boolean {
  return found && best > KRT_EPS && !(best < c.gamma) && hl !== 0 && hl !== h
}

/** leaf weight w, float32 as XGBoost's CalcWeight */
export function leafWeight(g: number, h: number, lambda: number, alpha: number, mcw: number): number {
  if (h < mcw || h <= 0) return 0
  return f32(-thresholdL1(g, alpha) / (h + lambda))
}

/** The stored leaf value f32(w · f32(eta)) of a node with dequantised gradient sum g over h rows. */
export function leafValue(g: number, h: number, c: SplitCoefs): number {
  return f32(leafWeight(g, h, c.lambda, c.alpha, c.mcw) * c.eta)
}

/**
 * Of two siblings whose histograms are both needed, the one built from rows (the other is the
 * parent minus it): the second iff it has strictly fewer rows, as XGBoost. Either way the sums are
 * exact; the rule only has to be the same in both engines' bookkeeping.
 */
export function buildsSecond(firstRows: number, secondRows: number): boolean {
  return secondRows < firstRows
}

/**
 * A node's split search. It runs one feature at a time (features ascending), so the running best
 * lives here: `best` is the best loss_chg so far (0 at first: a split must beat 0), `sBest` its
 * f32(gain_L + gain_R) (the node's own gain at first). Once done, it is the node's AppliedSplit.
 */
export class SplitSearch {
  rootGain = 0
  best = 0
  sBest = 0
  found = false
  feature = -1
  /** non-missing rows with bin ≤ bin go left */
  bin = -1
  defaultLeft = false
  /** integer (quantised) gradient and hessian sums of the left child (squared error: its row count) */
  glq = 0
  hl = 0
  constructor(
    /** Σq (integer) and quantised hessian sum of the node (squared error: its row count) */
    readonly gq: number,
    readonly h: number,
  ) {}

  /** Before the node's first feature is scanned (Σq dequantised by inv, the hessian sum by invH). */
  startSearch(inv: number, c: SplitCoefs, invH = 1): void {
    this.rootGain = sideGain(this.gq * inv, this.h * invH, c.lambda, c.alpha)
    this.best = 0
    this.sBest = this.rootGain
    this.found = false
  }

  /**
   * A candidate with f32(gain_L + gain_R) = sum becomes the best iff its loss_chg is strictly
   * greater than the best so far (candidates come in scan order, so ties keep the earlier one).
   */
  offer(sum: number, feature: number, bin: number, defaultLeft: boolean, glq: number, hl: number): boolean {
    const loss = lossChange(sum, this.rootGain)
    if (!beatsBest(loss, this.best)) return false
    this.best = loss
    this.sBest = sum
    this.found = true
    this.feature = feature
    this.bin = bin
    this.defaultLeft = defaultLeft
    this.glq = glq
    this.hl = hl
    return true
  }
}

/** the estimate's threshold for a best f32(gain_L + gain_R) of sBest: S < it ⇒ S·(1 + 1e-6) + 1e-37 < sBest */
function estimateThreshold(sBest: number): number {
  return (sBest - 1e-37) / (1 + 1e-6)
}

/**
 * The forward scan's pre-filter (alpha = 0, missing values right): from bin b on, with
 * `state` = [Σq, rows] of the bins before b, adds bins into state until one's candidate could beat
 * the best so far (S in quantised units, Σq_L²/(rows_L + λ) + Σq_R²/(rows_R + λ), ≥ thrQ; see
 * scanFeature) and returns that bin; −1 when the scan
 * ends (the right side below min_child_weight or empty, or no bins left). This loop is per bin of
 * every node and feature, so a kernel may run it elsewhere (kernel.ts: WebAssembly) with the same
 * float64 operations in the same order; this is the reference, and the exact float32 arithmetic on
 * what it returns stays in scanFeature.
 */
export interface CandidateFilter {
  readonly state: Float64Array
  next(hist: Float64Array, o: number, b: number, nb: number, gq: number, h: number, mcw: number, thrQ: number, lambda: number): number
}

const referenceState = new Float64Array(2)

export const forwardCandidates: CandidateFilter = {
  state: referenceState,
  next(hist, o, b, nb, gq, h, mcw, thrQ, lambda) {
    let glq = referenceState[0]
    let hl = referenceState[1]
    for (; b < nb; b++) {
      // no test for an empty bin: its candidate repeats the previous one, which it cannot strictly
      // beat, and on small nodes (most bins empty, at random) that branch was mispredicted half the time
      glq += hist[o + 2 * b]
      hl += hist[o + 2 * b + 1]
      const hr = h - hl
      if (hr < mcw || hr <= 0) return -1
      if (hl < mcw) continue
      const grq = gq - glq
      if ((glq * glq) / (hl + lambda) + (grq * grq) / (hr + lambda) < thrQ) continue
      referenceState[0] = glq
      referenceState[1] = hl
      return b
    }
    return -1
  },
}

/**
 * Scans one feature of a node's histogram (interleaved [Σq, Σqh] per slot, the feature's slots
 * from `o`; squared error's Σqh is the row count, invH = 1) and updates the node's best split.
 * Hessian sums are dequantised by invH = 2^−kh exactly, so a comparison in quantised units (hl < mcw/invH)
 * is the same comparison (powers of two scale without rounding).
 *
 * Empty bins are not tested for: such a bin's candidate equals the previous one, which it cannot
 * strictly beat (a branch on it was mispredicted half the time on small nodes). One shortcut, which
 * cannot change the result either:
 * - a candidate is computed exactly (XGBoost's float32 steps, two divisions) only when a float64
 *   estimate S ≈ gain_L + gain_R (T_L²/(H_L+λ) + T_R²/(H_R+λ), divisions: a table of 1/(H+λ)
 *   indexed by a double row count measured slower) could beat the best so far. The float32
 *   path rounds 4 times at most, so its f32(gain_L + gain_R) ≤ S·(1 + 2.4e-7); if S·(1 + 1e-6) is
 *   below the best's f32(gain_L + gain_R), its loss_chg ≤ the best's (rounding is monotone), and a
 *   later candidate must be strictly greater to win. Without L1 (alpha = 0) and with missing values
 *   right, that estimate is `filter`'s (forwardCandidates, or a kernel's copy of it).
 */
export function scanFeature(
  node: SplitSearch,
  hist: Float64Array,
  o: number,
  nb: number,
  hasMissing: boolean,
  f: number,
  inv: number,
  c: SplitCoefs,
  filter: CandidateFilter = forwardCandidates,
  invH = 1,
): void {
  const missH = hasMissing ? hist[o + 2 * nb + 1] : 0
  if (nb <= 1 && missH === 0) return
  const { alpha, mcw, lambda } = c
  const gq = node.gq
  const h = node.h
  const hd = h * invH
  // skip a candidate whose estimate S < thr: it cannot beat the best so far
  let thr = estimateThreshold(node.sBest)
  // forward: left = bins ≤ b, missing right
  if (alpha === 0) {
    // the estimate in quantised units: (Σq·2^−k)² = (Σq)²·2^−2k exactly (a power of two), so
    // comparing Σq-squares with thr·2^2k is the same comparison, bit for bit, with fewer products
    // and the hessians in theirs: H = Σqh·invH, so (H + λ) = invH·(Σqh + λ/invH), mcw likewise
    const s2 = invH / (inv * inv)
    const mcwQ = mcw / invH
    const lambdaQ = lambda / invH
    const state = filter.state
    state[0] = 0
    state[1] = 0
    for (let b = filter.next(hist, o, 0, nb, gq, h, mcwQ, thr * s2, lambdaQ); b >= 0; b = filter.next(hist, o, b + 1, nb, gq, h, mcwQ, thr * s2, lambdaQ)) {
      const glq = state[0]
      const hl = state[1]
      if (node.offer(childrenGain(glq * inv, hl * invH, (gq - glq) * inv, (h - hl) * invH, c), f, b, false, glq, hl)) thr = estimateThreshold(node.sBest)
    }
  } else {
    let glq = 0
    let hl = 0
    for (let b = 0; b < nb; b++) {
      glq += hist[o + 2 * b]
      hl += hist[o + 2 * b + 1]
      const hld = hl * invH
      const hrd = hd - hld
      if (hrd < mcw || hrd <= 0) break
      if (hld < mcw) continue
      const tl = thresholdL1(glq * inv, alpha)
      const tr = thresholdL1((gq - glq) * inv, alpha)
      const tl2 = tl * tl
      const tr2 = tr * tr
      if (tl2 / (hld + lambda) + tr2 / (hrd + lambda) < thr) continue
      if (node.offer(childrenGain(glq * inv, hld, (gq - glq) * inv, hrd, c), f, b, false, glq, hl)) thr = estimateThreshold(node.sBest)
    }
  }
  if (missH !== 0) {
    // backward: right = bins ≥ b, missing left (runs only when the node has missing values here)
    let grq = 0
    let hr = 0
    for (let b = nb - 1; b >= 0; b--) {
      grq += hist[o + 2 * b]
      hr += hist[o + 2 * b + 1]
      const hrd = hr * invH
      const hld = hd - hrd
      if (hld < mcw || hld <= 0) break
      if (hrd < mcw) continue
      const tl = thresholdL1((gq - grq) * inv, alpha)
      const tr = thresholdL1(grq * inv, alpha)
      const tl2 = tl * tl
      const tr2 = tr * tr
      if (tl2 / (hld + lambda) + tr2 / (hrd + lambda) < thr) continue
      if (node.offer(childrenGain((gq - grq) * inv, hld, grq * inv, hrd, c), f, b - 1, true, gq - grq, h - hr)) thr = estimateThreshold(node.sBest)
    }
  }
}

/** The split of a node, in quantised units: feature, split bin, default direction, the left child's Σq and Σqh (squared error: rows). */
export interface AppliedSplit {
  feature: number
  /** non-missing rows with bin ≤ bin go left (−1: none do) */
  bin: number
  defaultLeft: boolean
  glq: number
  hl: number
}

/**
 * Turns leaf `nodeId` (Σq = gq, Σqh = h: squared error's rows) into a split node: its two children
 * are added in breadth-first order with their leaf values, the threshold is the float32 cut. Returns
 * the left child's id (the right one's is that + 1).
 */
export function applySplit(
  tree: TreeBuilder,
  nodeId: number,
  s: AppliedSplit,
  gq: number,
  h: number,
  inv: number,
  c: SplitCoefs,
  /** quantile.ts GbdtCuts, the fields a threshold reads (named by shape: quantile.ts imports the kernel, which imports this file) */
  cuts: { values: Float32Array; ptrs: Int32Array; minValues: Float32Array },
  invH = 1,
): number {
  const lid = tree.add(leafValue(s.glq * inv, s.hl * invH, c))
  tree.add(leafValue((gq - s.glq) * inv, (h - s.hl) * invH, c))
  tree.feature[nodeId] = s.feature
  tree.splitBin[nodeId] = s.bin
  tree.threshold[nodeId] = s.bin >= 0 ? cuts.values[cuts.ptrs[s.feature] + s.bin] : cuts.minValues[s.feature]
  tree.defaultLeft[nodeId] = s.defaultLeft ? 1 : 0
  tree.left[nodeId] = lid
  tree.leafValue[nodeId] = 0
  return lid
}

/** Histogram slots one node needs: the sum of the `perTree` widest features (bins + missing slot). */
export function histogramSlots(widths: ArrayLike<number>, perTree: number): number {
  const w = Array.from(widths).sort((a, b) => b - a)
  let s = 0
  for (let i = 0; i < perTree && i < w.length; i++) s += w[i]
  return s
}

/** Every row is in every tree (no row draws at all): subsample ≥ 1. */
export function samplesEveryRow(p: Pick<GbdtParams, 'subsample'>): boolean {
  return p.subsample >= 1
}

/**
 * Training rows [begin, end) a model never trains on: its fold's validation rows, in a model set
 * with folds (contract/model-set.ts foldRows), so a set's folds share one binned data set and fuse
 * like subsampled models. They still follow its trees (their predictions are updated), they are
 * just never sampled.
 */
export type { HeldOutRows }

/** the problem with a model's held-out rows for a training set of n rows, or null */
export function heldOutProblem(h: HeldOutRows | null | undefined, n: number): string | null {
  if (!h) return null
  return Number.isInteger(h.begin) && Number.isInteger(h.end) && h.begin >= 0 && h.begin < h.end && h.end <= n && h.end - h.begin < n
    ? null
    : `heldOut rows must be a range [begin, end) inside the ${n} training rows that leaves some to train on, got [${h.begin}, ${h.end})`
}

/**
 * How one tree's rows are drawn (ModelSampler.rowDraw), for an engine that draws them elsewhere (the
 * WGSL engine, on the device): row r is in the tree iff (everyRow or keyedBits(key, r) < threshold)
 * and r is not in [heldBegin, heldEnd), key = counterKey(seed, ROW_STREAM, tree) (counter-random.ts).
 */
export interface RowDraw {
  key: number
  everyRow: boolean
  /** probabilityThreshold(subsample) (0 when everyRow) */
  threshold: number
  /** the held-out rows (an empty range when none) */
  heldBegin: number
  heldEnd: number
}

/**
 * One model's row and column samples, from its seed: columns from COLUMN_STREAM (a stateful Rng, a
 * few draws a tree), rows from ROW_STREAM by the counter-based generator (counter-random.ts): tree t's
 * draw for row r is a function of (seed, t, r) alone. Not XGBoost's RNG (results with sampling cannot
 * be compared tree by tree with XGBoost's). Held-out rows are never sampled.
 */
export class ModelSampler {
  /** features each tree samples */
  readonly perTree: number
  private readonly everyColumn: boolean
  private readonly everyRow: boolean
  private readonly rowThreshold: number
  private readonly columnRng: Rng

  constructor(
    private readonly seed: number,
    private readonly features: number,
    params: Pick<GbdtParams, 'colsampleBytree' | 'subsample'>,
    private readonly heldOut: HeldOutRows | null = null,
  ) {
    this.perTree = featuresPerTree(params.colsampleBytree, features)
    this.everyColumn = f32(params.colsampleBytree) === 1
    this.everyRow = samplesEveryRow(params)
    this.rowThreshold = this.everyRow ? 0 : probabilityThreshold(params.subsample)
    this.columnRng = new Rng(seed, COLUMN_STREAM)
  }

  /**
   * The next tree's features into feats[0, perTree), ascending: a partial Fisher–Yates over 0..F−1,
   * below(F − i) for i < perTree, then sorted. No draw when colsample is 1. Trees draw in order.
   */
  columns(feats: Int32Array): void {
    const F = this.features
    for (let f = 0; f < F; f++) feats[f] = f
    if (this.everyColumn) return
    for (let i = 0; i < this.perTree; i++) {
      const j = i + this.columnRng.below(F - i)
      const t = feats[i]
      feats[i] = feats[j]
      feats[j] = t
    }
    feats.subarray(0, this.perTree).sort()
  }

  /** every row is in every tree: no draws and nothing held out */
  get takesEveryRow(): boolean {
    return this.everyRow && this.heldOut === null
  }

  /** tree `tree`'s row rule (the model's trees counted from 0, round-major: a K-class model's tree of class k in round i is i·K + k) */
  rowDraw(tree: number): RowDraw {
    const h = this.heldOut
    const key = counterKey(this.seed, ROW_STREAM, tree)
    return { key, everyRow: this.everyRow, threshold: this.rowThreshold, heldBegin: h ? h.begin : 0, heldEnd: h ? h.end : 0 }
  }

  /** Tree `tree`'s rows (rowDraw's rule): sampled[r] = 1 iff row r is in it. Returns the count. */
  rows(sampled: Uint8Array, tree: number): number {
    const d = this.rowDraw(tree)
    let count = 0
    if (d.everyRow) {
      sampled.fill(1)
      count = sampled.length
    } else {
      const { key, threshold } = d
      for (let r = 0; r < sampled.length; r++) {
        const take = keyedBits(key, r) < threshold ? 1 : 0
        sampled[r] = take
        count += take
      }
    }
    for (let r = d.heldBegin; r < d.heldEnd; r++) count -= sampled[r]
    sampled.fill(0, d.heldBegin, d.heldEnd)
    return count
  }
}

/** The parameters a trainer call trains with, after checking what both engines require of their inputs. */
export function trainingParams(paramsIn: Partial<GbdtParams>, rows: number, binnedMaxBin: number, seeds: readonly number[]): GbdtParams {
  const params = resolveGbdtParams(paramsIn)
  if (rows > MAX_TRAIN_ROWS) throw new RangeError(`at most ${MAX_TRAIN_ROWS} training rows`)
  if (binnedMaxBin !== params.maxBin) throw new RangeError(`data was binned with maxBin ${binnedMaxBin}, params ask for ${params.maxBin}`)
  for (const s of seeds) if (!Number.isInteger(s)) throw new RangeError(`seed must be an integer, got ${s}`)
  return params
}

/** Thrown by the trainers when `shouldStop()` returns true (unless the caller supplies its own error). */
export class GbdtCancelledError extends Error {
  constructor(message = 'GBDT training cancelled') {
    super(message)
    this.name = 'GbdtCancelledError'
  }
}

/** Throws the caller's cancel error (or a GbdtCancelledError) when it asks to stop. */
export function throwIfStopped(options: { shouldStop?: () => boolean; cancelError?: () => Error }): void {
  if (options.shouldStop?.()) throw options.cancelError ? options.cancelError() : new GbdtCancelledError()
}
