// One model's host state while a chunk trains (its own parameters, its columns drawn ahead with the
// rule the device draws its rows by, its trees, a host-planned level's nodes and free slots) and the
// host's plan of a level: which node histograms are built, which derived as parent − sibling, which
// nodes evaluated (its device twin is the plan kernel). Which child is built is the CPU engine's rule (buildsSecond): sums stay its own.
import type { GbdtParams } from '@shared/families/gbdt'
import { buildsSecond, type HeldOutRows, isEvaluated, ModelSampler, type RowDraw, splitCoefs, type SplitCoefs } from '../gbdt/rules'
import { type GbdtTree, TreeBuilder } from '../gbdt/tree'
import type { SplitChoice } from './split'
import type { GradientKind } from './tree-kernels'

/** The sizes one trainer's chunks train with (the same for every chunk of a group: its widest model's). */
export interface TrainShape {
  /** the device's rows (the training rows, then the test rows: GpuGbdtData.testRows), features, features the widest model's trees sample */
  n: number
  /** training rows: the rows ≥ nTrain are never drawn, they follow the trees for their margins */
  nTrain: number
  F: number
  perTree: number
  /** histogram slots of one node (the perTree widest features) */
  S: number
  /** every model has every row in every tree: no row draws */
  rowsAll: boolean
  /** models per chunk (device models: a K-class model is K of them, one per class), node histogram slots per model */
  C: number
  P: number
  /** trees a model grows a round: K for multiclass (device models m … m + K − 1 of a chunk are one model's classes), else 1 */
  K: number
  /** per-row hessians (a classifier's: quantised per tree beside the gradients) instead of the row count */
  hess: boolean
  /** how the device computes each row's gradient pair */
  gradient: GradientKind
}

/** A node of the current level (index = its level index on the device). */
export interface LevelNode {
  /** id in the tree */
  id: number
  /** Σq (exact integer) and sampled rows */
  gq: number
  h: number
  /** with per-row hessians: Σqh (exact integer; else the rows, h) */
  hq: number
  evaluable: boolean
  /** node histogram slot while it has one, −1 otherwise */
  slot: number
  choice: SplitChoice | null
}

/** One model's part of a pass. */
export interface Slice {
  builds: { li: number; slot: number }[]
  derives: { dst: number; src: number }[]
  evals: { li: number; slot: number }[]
  temps: number[]
}

function emptySlice(): Slice {
  return { builds: [], derives: [], evals: [], temps: [] }
}

/** One round's samples of a model: its features (ascending) and their histogram slot offsets, and the rule the device draws its rows by. */
export interface RoundSample {
  feats: Int32Array
  slotOff: Int32Array
  /** histogram slots of the sampled features */
  histSlots: number
  rows: RowDraw
}

export class HostModel {
  readonly coefs: SplitCoefs
  readonly maxDepth: number
  readonly rounds: number
  readonly sampler: ModelSampler
  readonly trees: GbdtTree[] = []
  tb = new TreeBuilder()
  /** the round being trained: its samples (columns drawn ahead, rounds in order, as the CPU engine draws them) */
  feats: Int32Array
  slotOff: Int32Array
  histSlots = 0
  /** rows sampled this round: the device's count of its draws (read back with the round's gradient maxima) */
  ns = 0
  private readonly drawn = new Map<number, RoundSample>()
  k = 0
  inv = 1
  /** the hessians' quantisation this round (with per-row hessians; else kh 0, invH 1: the row count) */
  kh = 0
  invH = 1
  /** this round the host decides the splits (from whole histograms): gains could overflow float32, or α·2^k is not an integer */
  hostDecides = false
  level: LevelNode[] = []
  /** per pair of the current level (nodes 2i, 2i+1): the parent's histogram slot, or null if not kept */
  parentSlots: number[] | null = null
  /** the last planned level kept its histograms (one slice) */
  single = true
  free: number[] = []

  constructor(
    readonly seed: number,
    private readonly features: number,
    readonly params: GbdtParams,
    /** rows this model never trains on (its fold's, in a model set with folds) */
    heldOut: HeldOutRows | null = null,
    /**
     * a K-class model's sampler, shared by its K trees (one HostModel each, drawn in class order every
     * round: tree t's columns are the t-th draws of its column stream and its rows tree t's draw, as
     * the CPU engine draws them)
     */
    sampler?: ModelSampler,
    /** trees the model grows a round (K for multiclass) and this one's class: round i's tree is the model's tree i·K + classIndex */
    private readonly treesPerRound = 1,
    private readonly classIndex = 0,
  ) {
    this.coefs = splitCoefs(params)
    this.maxDepth = params.maxDepth
    this.rounds = params.rounds
    this.sampler = sampler ?? new ModelSampler(seed, features, params, heldOut)
    this.feats = new Int32Array(features)
    this.slotOff = new Int32Array(this.sampler.perTree)
  }

  /** whether a node of `rows` rows and hessian sum hq (the rows, without per-row hessians) at `depth` is searched (rules.ts isEvaluated) */
  evaluable(rows: number, hq: number, depth: number, hess: boolean): boolean {
    return hess ? isEvaluated(hq, depth, this.maxDepth, this.coefs, this.invH, rows) : isEvaluated(rows, depth, this.maxDepth, this.coefs)
  }

  alloc(): number {
    const s = this.free.pop()
    if (s === undefined) throw new Error('webgpu: node histogram slots exhausted (planning error)')
    return s
  }

  /**
   * Round `round`'s columns (and their histogram slot offsets), drawn as the CPU engine draws them
   * (rounds in order), and its rows' rule (rules.ts RowDraw): the device draws each row by it.
   */
  draw(round: number, width: ArrayLike<number>): RoundSample {
    const feats = new Int32Array(this.features)
    this.sampler.columns(feats)
    const slotOff = new Int32Array(this.sampler.perTree)
    let slot = 0
    for (let j = 0; j < this.sampler.perTree; j++) {
      slotOff[j] = slot
      slot += width[feats[j]]
    }
    const s = { feats, slotOff, histSlots: slot, rows: this.sampler.rowDraw(round * this.treesPerRound + this.classIndex) }
    this.drawn.set(round, s)
    return s
  }

  /** Round `round`'s samples as drawn (not yet used): a compacted chunk writes them again at the model's new position. */
  drawnSample(round: number): RoundSample | undefined {
    return this.drawn.get(round)
  }

  /** Round `round`'s samples become the current ones (drawn before). */
  useRound(round: number): void {
    const s = this.drawn.get(round)
    if (!s) throw new Error(`webgpu: round ${round} of model ${this.seed} was not sampled (planning error)`)
    this.drawn.delete(round)
    this.feats = s.feats
    this.slotOff = s.slotOff
    this.histSlots = s.histSlots
  }

  /** A new tree on the host (a host-planned round): the root alone on its level (its sums and whether it is evaluated come with the roots' sums), every one of the P node slots free. */
  startTree(P: number): void {
    this.tb = new TreeBuilder()
    this.level = [{ id: 0, gq: 0, h: this.ns, hq: this.ns, evaluable: false, slot: -1, choice: null }]
    this.parentSlots = null
    this.single = true
    this.free = []
    for (let s = P - 1; s >= 0; s--) this.free.push(s)
  }
}

/**
 * Model m's slices of this level (usually one): which node histograms are built from rows, which
 * are derived as parent − sibling in the parent's slot, and which nodes are evaluated. The CPU
 * engine's choice: of two evaluable siblings, build the one with fewer rows (the right one iff
 * strictly fewer); of one evaluable child, build its sibling if that has fewer rows and derive.
 */
export function planLevel(m: HostModel, depth: number, P: number): Slice[] {
  const lv = m.level
  const ev: number[] = []
  for (let i = 0; i < lv.length; i++) if (lv[i].evaluable) ev.push(i)
  const ps = m.parentSlots
  m.parentSlots = null
  m.single = true
  if (ev.length === 0) {
    if (ps) for (const s of ps) if (s >= 0) m.free.push(s)
    return []
  }
  if (depth === 0) {
    const s = m.alloc()
    lv[0].slot = s
    return [{ builds: [{ li: 0, slot: s }], derives: [], evals: [{ li: 0, slot: s }], temps: [] }]
  }
  if (ps) {
    const sl = deriveFromParents(m, ps, ev)
    if (sl) return [sl]
    for (const s of ps) if (s >= 0) m.free.push(s)
  }
  if (ev.length <= m.free.length) return [buildEvery(m, ev)]
  // too many for the slots: slices of P nodes, no histogram kept for the next level
  m.single = false
  return buildInSlices(m, ev, P)
}

/**
 * The subtraction trick: each pair's parent histogram becomes one child's by subtracting the other,
 * built, child. Releases the slots of pairs with nothing to evaluate; null (nothing else allocated)
 * when the fresh builds do not fit the free slots or a pair that needs its parent lost it.
 */
function deriveFromParents(m: HostModel, ps: number[], ev: readonly number[]): Slice | null {
  const lv = m.level
  let fresh = 0
  for (let i = 0; i < ps.length; i++) {
    const L = lv[2 * i]
    const R = lv[2 * i + 1]
    if (!L.evaluable && !R.evaluable) {
      if (ps[i] >= 0) m.free.push(ps[i])
      ps[i] = -1
    } else if (L.evaluable && R.evaluable) fresh++
    else {
      const [x, o] = L.evaluable ? [L, R] : [R, L]
      if (buildsSecond(x.h, o.h)) fresh++
    }
  }
  if (fresh > m.free.length || !ps.every((s, i) => s >= 0 || (!lv[2 * i].evaluable && !lv[2 * i + 1].evaluable))) return null
  const sl = emptySlice()
  for (let i = 0; i < ps.length; i++) {
    if (ps[i] < 0) continue
    const li = 2 * i
    const ri = 2 * i + 1
    const L = lv[li]
    const R = lv[ri]
    if (L.evaluable && R.evaluable) {
      const [small, big] = buildsSecond(L.h, R.h) ? [ri, li] : [li, ri]
      const s = m.alloc()
      lv[small].slot = s
      lv[big].slot = ps[i]
      sl.builds.push({ li: small, slot: s })
      sl.derives.push({ dst: ps[i], src: s })
    } else {
      const [x, o] = L.evaluable ? [li, ri] : [ri, li]
      lv[x].slot = ps[i]
      if (buildsSecond(lv[x].h, lv[o].h)) {
        // the sibling is built in a temporary slot, freed after the pass
        const t = m.alloc()
        sl.builds.push({ li: o, slot: t })
        sl.derives.push({ dst: ps[i], src: t })
        sl.temps.push(t)
      } else {
        sl.builds.push({ li: x, slot: ps[i] })
      }
    }
  }
  for (const i of ev) sl.evals.push({ li: i, slot: lv[i].slot })
  return sl
}

/** Every evaluable node built from its rows, each in a slot of its own. */
function buildEvery(m: HostModel, ev: readonly number[]): Slice {
  const sl = emptySlice()
  for (const i of ev) {
    const s = m.alloc()
    m.level[i].slot = s
    sl.builds.push({ li: i, slot: s })
    sl.evals.push({ li: i, slot: s })
  }
  return sl
}

/** More evaluable nodes than slots: P at a time, each slice reusing slots 0..P−1. */
function buildInSlices(m: HostModel, ev: readonly number[], P: number): Slice[] {
  const out: Slice[] = []
  for (let a = 0; a < ev.length; a += P) {
    const sl = emptySlice()
    ev.slice(a, a + P).forEach((i, k) => {
      m.level[i].slot = k
      sl.builds.push({ li: i, slot: k })
      sl.evals.push({ li: i, slot: k })
    })
    out.push(sl)
  }
  return out
}
