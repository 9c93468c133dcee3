// The trainer: XGBoost 1.7 `hist`, squared error, depth-wise growth, for a GROUP of models that share
// one binned matrix. A group of one is the ordinary single-model trainer: `sequential` and `pool`
// run this very code with one seed, `batched` with many, so model i's trees are the same either way
// (all histogram sums are integers, see quantise.ts, so the order in which rows, nodes or models
// are visited cannot change a bit).
//
// One round, per model: sample columns and rows (own RNG streams from the model's seed), quantise
// the gradients, then grow the tree level by level. Per level, ONE pass over the binned matrix
// (features outermost, then models, then nodes) builds every model's node histograms, one feature
// region at a time; for each split parent only the child with fewer rows is built and the sibling
// is the parent minus it (in the parent's buffer); each region is scanned for splits while hot.
// Split finding, leaf values and the stored leaf value eta·w follow XGBoost 1.7.4's CPU code,
// including where it rounds to float32: the rules, and the split scan, are in rules.ts (shared with
// the WGSL engine).
import { CPU_SLOT_BYTES, defaultTreeGroup, featuresPerTree, type GbdtParams, HISTOGRAM_BUDGET_BYTES } from '@shared/families/gbdt'
import type { GbdtData } from './binning'
import { quantExponent } from './quantise'
import {
  applySplit,
  buildsSecond,
  histogramSlots,
  isEvaluated,
  leafValue,
  ModelSampler,
  scanFeature,
  splitApplies,
  splitCoefs,
  SplitSearch,
  throwIfStopped,
  trainingParams,
} from './rules'
import { type GbdtModel, type GbdtTree, TreeBuilder } from './tree'

const f32 = Math.fround

/** global features per block of the level pass (16 columns: 128 KiB of bins at 8 000 rows) */
const FEATURE_BLOCK = 16
/** models per chunk of the level pass: their built rows' indices and gradients (8 B/row) fit in this */
const MODEL_CHUNK_BYTES = 256 * 1024

export interface GbdtTrainOptions {
  /** after every round (1-based), for the whole group */
  onRound?: (round: number, rounds: number) => void
  /** checked before every round and between steps of a round; true → throw cancelError() (default: a GbdtCancelledError) */
  shouldStop?: () => boolean
  cancelError?: () => Error
  /** when model `index` (of the group) has all its trees */
  onModelDone?: (index: number, model: GbdtModel) => void
  /** histogram memory for the whole group (default HISTOGRAM_BUDGET_BYTES); above it the level pass is split (results unchanged) */
  histogramBudgetBytes?: number
  /** how many models of the group grow their trees together, one level pass for all (default: defaultTreeGroup) */
  treeGroup?: number
  /** filled in when training ends (what the family's memory model, gbdtMemory, has to bound) */
  stats?: GbdtTrainStats
}

export interface GbdtTrainStats {
  /** the most node histogram buffers alive at once, all models of the group together */
  peakNodeHistograms: number
}

/** A node being grown: its rows [begin, end) and, while it has one, its histogram buffer. */
class Node extends SplitSearch {
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

// ---------------------------------------------------------------------------------------------
// Histogram building: hot loops.
// ---------------------------------------------------------------------------------------------

// hist[o + 2·bin] += q and hist[o + 2·bin + 1] += 1 for the rows of one node. A plain one-feature
// loop runs at ~4 ns per row here (each iteration waits on the previous one's read-modify-write);
// two rows per iteration, or several features per row, overlap them: ~2.4 and ~1.5 ns.
type Bins = Uint8Array | Uint16Array

function build1(bins: Bins, c: number, rows: Int32Array, q: Int32Array, begin: number, end: number, hist: Float64Array, o: number): void {
  let k = begin
  for (; k + 1 < end; k += 2) {
    const i0 = o + 2 * bins[c + rows[k]]
    const i1 = o + 2 * bins[c + rows[k + 1]]
    const g0 = q[k]
    const g1 = q[k + 1]
    hist[i0] += g0
    hist[i0 + 1] += 1
    hist[i1] += g1
    hist[i1 + 1] += 1
  }
  if (k < end) {
    const i = o + 2 * bins[c + rows[k]]
    hist[i] += q[k]
    hist[i + 1] += 1
  }
}

function build2(
  bins: Bins,
  c0: number,
  c1: number,
  rows: Int32Array,
  q: Int32Array,
  begin: number,
  end: number,
  hist: Float64Array,
  o0: number,
  o1: number,
): void {
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const g = q[k]
    const i0 = o0 + 2 * bins[c0 + r]
    const i1 = o1 + 2 * bins[c1 + r]
    hist[i0] += g
    hist[i0 + 1] += 1
    hist[i1] += g
    hist[i1 + 1] += 1
  }
}

function build4(
  bins: Bins,
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  rows: Int32Array,
  q: Int32Array,
  begin: number,
  end: number,
  hist: Float64Array,
  o0: number,
  o1: number,
  o2: number,
  o3: number,
): void {
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const g = q[k]
    const i0 = o0 + 2 * bins[c0 + r]
    const i1 = o1 + 2 * bins[c1 + r]
    const i2 = o2 + 2 * bins[c2 + r]
    const i3 = o3 + 2 * bins[c3 + r]
    hist[i0] += g
    hist[i0 + 1] += 1
    hist[i1] += g
    hist[i1 + 1] += 1
    hist[i2] += g
    hist[i2 + 1] += 1
    hist[i3] += g
    hist[i3 + 1] += 1
  }
}

function zero(hist: Float64Array, o: number, len: number): void {
  for (let i = o; i < o + len; i++) hist[i] = 0
}

/** out[i] = parent[po + i] − sub[so + i] for i in [0, len) */
function difference(out: Float64Array, parent: Float64Array, po: number, sub: Float64Array, so: number, len: number): void {
  for (let i = 0; i < len; i++) out[i] = parent[po + i] - sub[so + i]
}

/** target[i] −= sub[i] for i in [o, o+len) */
function subtractRange(target: Float64Array, sub: Float64Array, o: number, len: number): void {
  for (let i = o; i < o + len; i++) target[i] -= sub[i]
}

// ---------------------------------------------------------------------------------------------
// Per-model state
// ---------------------------------------------------------------------------------------------

/** children of one split node, and the parent's histogram if it was kept for the subtraction trick */
interface Pair {
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
interface Unit {
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


class ModelState {
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

  constructor(
    readonly seed: number,
    n: number,
    features: number,
    params: GbdtParams,
  ) {
    this.sampler = new ModelSampler(seed, features, params)
    this.pred = new Float32Array(n).fill(f32(params.baseScore))
    this.rows = new Int32Array(n)
    this.q = new Int32Array(n)
    this.sampled = new Uint8Array(n)
    this.feats = new Int32Array(features)
    this.slotOf = new Int32Array(features)
  }
}

/** A fixed-size set of histogram buffers, at most `capacity` alive at once. */
class HistPool {
  private free: Float64Array[] = []
  alive = 0
  peak = 0
  constructor(
    readonly length: number,
    readonly capacity: number,
  ) {}

  get available(): number {
    return this.capacity - this.alive
  }

  acquire(): Float64Array {
    if (this.alive >= this.capacity) throw new Error('histogram pool exhausted')
    this.alive++
    if (this.alive > this.peak) this.peak = this.alive
    return this.free.pop() ?? new Float64Array(this.length)
  }

  release(b: Float64Array | null): void {
    if (!b) return
    this.alive--
    this.free.push(b)
  }
}

/**
 * The trainer as a generator: it yields after every feature of every level pass (a few
 * milliseconds of work at most) and after every round, and checks shouldStop() at each yield.
 * trainGbdtGroup runs it to the end; trainGbdtGroupAsync gives the event loop a turn now and then.
 */
function* groupTrainer(
  data: GbdtData,
  paramsIn: Partial<GbdtParams>,
  seeds: readonly number[],
  options: GbdtTrainOptions,
): Generator<void, GbdtModel[]> {
  const params = trainingParams(paramsIn, data.rows, data.cuts.maxBin, seeds)
  const n = data.rows
  const F = data.features
  const c = splitCoefs(params)
  const baseScore = f32(params.baseScore)
  const perTree = featuresPerTree(params.colsampleBytree, F)
  const slots = histogramSlots(data.width, perTree)
  const bufBytes = slots * CPU_SLOT_BYTES
  const budget = options.histogramBudgetBytes ?? HISTOGRAM_BUDGET_BYTES
  const pool = new HistPool(2 * slots, Math.max(2, Math.floor(budget / bufBytes)))
  const models = seeds.map((s) => new ModelState(s, n, F, params))
  const scratchRows = new Int32Array(n)
  const scratchQ = new Int32Array(n)
  const gbuf = new Float32Array(n)
  let maxWidth = 1
  for (let f = 0; f < F; f++) maxWidth = Math.max(maxWidth, data.width[f])
  const scratchA = new Float64Array(4 * 2 * maxWidth)
  const scratchB = new Float64Array(2 * maxWidth)
  const recip = new Float64Array(n + 1)
  for (let i = 0; i <= n; i++) recip[i] = 1 / (i + c.lambda)

  const evaluable = (node: Node, depth: number) => isEvaluated(node.h, depth, params.maxDepth, c)

  // ---- per round: sampling, gradients, quantisation -------------------------------------------
  const startRound = (m: ModelState) => {
    const feats = m.feats
    m.sampler.columns(feats)
    m.slotOf.fill(-1)
    let slot = 0
    for (let j = 0; j < perTree; j++) {
      m.slotOf[feats[j]] = slot
      slot += data.width[feats[j]]
    }
    m.sampler.rows(m.sampled)
    const y = data.y
    const pred = m.pred
    const sampled = m.sampled
    let ns = 0
    let maxAbs = 0
    for (let r = 0; r < n; r++) {
      if (sampled[r] === 0) continue
      const g = f32(pred[r] - y[r])
      gbuf[ns] = g
      m.rows[ns++] = r
      const a = g < 0 ? -g : g
      if (a > maxAbs) maxAbs = a
    }
    m.nSampled = ns
    const k = quantExponent(maxAbs)
    const scale = 2 ** k
    m.inv = 2 ** -k
    let gq = 0
    for (let i = 0; i < ns; i++) {
      const qi = (gbuf[i] * scale) | 0
      m.q[i] = qi
      gq += qi
    }
    m.tree = new TreeBuilder()
    m.leafSegs.length = 0
    const root = new Node(0, 0, ns, gq, ns)
    m.tree.add(leafValue(gq * m.inv, ns, c))
    m.pairs = []
    m.levelNodes = []
    m.root = null
    if (evaluable(root, 0)) m.root = root
    else m.leafSegs.push(0, ns, m.tree.leafValue[0])
  }

  // ---- per level: plan which histograms to build or derive ------------------------------------
  /** the last level that is evaluated: its histograms are never parents, so they are not stored */
  const terminal = (depth: number) => depth === params.maxDepth - 1

  /** fresh buffers model m's level plan needs */
  const freshNeeded = (m: ModelState, depth: number): number => {
    if (terminal(depth)) return 0
    let need = m.root ? 1 : 0
    for (const p of m.pairs) {
      const eL = evaluable(p.left, depth)
      const eR = evaluable(p.right, depth)
      if (!eL && !eR) continue
      if (p.hist) need += 1
      else need += (eL ? 1 : 0) + (eR ? 1 : 0)
    }
    return need
  }

  /** turns model m's pending root/pairs into the level's nodes (BFS order) and units */
  const plan = (m: ModelState, depth: number) => {
    const term = terminal(depth)
    m.keepHists = true
    const unit = (built: Node | null, rowsOf: Node, derived: Node | null, parent: Float64Array | null) => {
      let buf: Float64Array | null = null
      if (!term) {
        buf = pool.acquire()
        if (built) built.hist = buf
        else m.releaseAfter.push(buf)
        if (derived) derived.hist = parent
      }
      m.units.push({ begin: rowsOf.begin, end: rowsOf.end, built, buf, derived, parent })
    }
    if (m.root) {
      const root = m.root
      m.root = null
      m.levelNodes.push(root)
      unit(root, root, null, null)
    }
    for (const p of m.pairs) {
      const L = p.left
      const R = p.right
      const eL = evaluable(L, depth)
      const eR = evaluable(R, depth)
      if (eL) m.levelNodes.push(L)
      if (eR) m.levelNodes.push(R)
      if (!eL && !eR) {
        pool.release(p.hist)
        continue
      }
      if (p.hist && term) m.releaseAfter.push(p.hist)
      if (p.hist && eL && eR) {
        const [small, big] = buildsSecond(L.h, R.h) ? [R, L] : [L, R]
        unit(small, small, big, p.hist)
      } else if (p.hist) {
        const [x, other] = eL ? [L, R] : [R, L]
        if (buildsSecond(x.h, other.h)) {
          unit(null, other, x, p.hist)
        } else {
          if (!term) pool.release(p.hist)
          unit(x, x, null, null)
        }
      } else {
        if (eL) unit(L, L, null, null)
        if (eR) unit(R, R, null, null)
      }
    }
    m.pairs = []
  }

  // ---- the level pass: one sweep over the binned matrix for every model in `group` -------------
  // Models go in chunks whose reused row/gradient segments stay in cache; per chunk, 16-feature
  // blocks of the binned matrix are read once for all its models; per model, its sampled features
  // of the block go 4 at a time: per unit, build their regions of the histogram in one pass over
  // the rows, derive the sibling's regions, and scan both (features ascending per node).
  const stopCheck = () => throwIfStopped(options)

  const groupFeats = new Int32Array(4)
  const colOf = new Int32Array(4)
  const offOf = new Int32Array(4)
  const lenOf = new Int32Array(4)
  const blockFeats = new Int32Array(FEATURE_BLOCK)

  const featureGroup = (m: ModelState, k: number, term: boolean) => {
    const rows = m.rows
    const q = m.q
    const inv = m.inv
    const bins = data.bins
    for (let t = 0; t < k; t++) {
      const f = groupFeats[t]
      colOf[t] = f * n
      lenOf[t] = 2 * data.width[f]
      offOf[t] = term ? t * 2 * maxWidth : 2 * m.slotOf[f]
    }
    for (const u of m.units) {
      const buf = term ? scratchA : u.buf!
      for (let t = 0; t < k; t++) zero(buf, offOf[t], lenOf[t])
      if (k === 4) build4(bins, colOf[0], colOf[1], colOf[2], colOf[3], rows, q, u.begin, u.end, buf, offOf[0], offOf[1], offOf[2], offOf[3])
      else if (k >= 2) {
        build2(bins, colOf[0], colOf[1], rows, q, u.begin, u.end, buf, offOf[0], offOf[1])
        if (k === 3) build1(bins, colOf[2], rows, q, u.begin, u.end, buf, offOf[2])
      } else build1(bins, colOf[0], rows, q, u.begin, u.end, buf, offOf[0])
      for (let t = 0; t < k; t++) {
        const f = groupFeats[t]
        const nb = data.nBins[f]
        const miss = data.hasMissing[f] === 1
        const o = offOf[t]
        const len = lenOf[t]
        if (u.built) scanFeature(u.built, buf, o, nb, miss, f, inv, c, recip)
        if (u.derived) {
          const po = 2 * m.slotOf[f]
          if (term) {
            difference(scratchB, u.parent!, po, buf, o, len)
            scanFeature(u.derived, scratchB, 0, nb, miss, f, inv, c, recip)
          } else {
            subtractRange(u.parent!, buf, o, len)
            scanFeature(u.derived, u.parent!, o, nb, miss, f, inv, c, recip)
          }
        }
      }
    }
  }

  const levelPass = function* (group: ModelState[], depth: number): Generator<void> {
    const term = terminal(depth)
    for (const m of group) {
      for (const node of m.levelNodes) node.startSearch(m.inv, c)
    }
    for (let c0 = 0; c0 < group.length; ) {
      let c1 = c0
      let bytes = 0
      while (c1 < group.length) {
        let rowsBuilt = 0
        for (const u of group[c1].units) rowsBuilt += u.end - u.begin
        if (c1 > c0 && bytes + 8 * rowsBuilt > MODEL_CHUNK_BYTES) break
        bytes += 8 * rowsBuilt
        c1++
      }
      for (let f0 = 0; f0 < F; f0 += FEATURE_BLOCK) {
        const f1 = Math.min(F, f0 + FEATURE_BLOCK)
        for (let mi = c0; mi < c1; mi++) {
          const m = group[mi]
          let cnt = 0
          for (let f = f0; f < f1; f++) if (m.slotOf[f] >= 0) blockFeats[cnt++] = f
          for (let j = 0; j < cnt; j += 4) {
            const k = Math.min(4, cnt - j)
            for (let t = 0; t < k; t++) groupFeats[t] = blockFeats[j + t]
            featureGroup(m, k, term)
          }
        }
        stopCheck()
        yield
      }
      c0 = c1
    }
    for (const m of group) {
      for (const b of m.releaseAfter) pool.release(b)
      m.releaseAfter.length = 0
      m.units.length = 0
    }
  }

  // ---- apply the level's best splits of one model (or make leaves), partition rows ------------------
  const applyLevel = (m: ModelState, nodes: Node[], depth: number) => {
    const t = m.tree
    for (const node of nodes) {
      if (!splitApplies(node.found, node.best, node.hl, node.h, c)) {
        pool.release(node.hist)
        node.hist = null
        m.leafSegs.push(node.begin, node.end, t.leafValue[node.id])
        continue
      }
      const lid = applySplit(t, node.id, node, node.gq, node.h, m.inv, c, data.cuts)
      const f = node.feature
      const b = node.bin
      const gl = node.glq
      const hl = node.hl
      const gr = node.gq - gl
      const hr = node.h - hl
      // stable partition of the node's rows (and their q) by the split
      const mid = partition(m, node.begin, node.end, f, b, node.defaultLeft)
      if (mid - node.begin !== hl) throw new Error(`partition disagrees with the histogram (${mid - node.begin} ≠ ${hl})`)
      const L = new Node(lid, node.begin, mid, gl, hl)
      const R = new Node(lid + 1, mid, node.end, gr, hr)
      const eL = evaluable(L, depth + 1)
      const eR = evaluable(R, depth + 1)
      if (!eL) m.leafSegs.push(L.begin, L.end, t.leafValue[L.id])
      if (!eR) m.leafSegs.push(R.begin, R.end, t.leafValue[R.id])
      if (eL || eR) {
        m.pairs.push({ left: L, right: R, hist: m.keepHists ? node.hist : null })
        if (!m.keepHists) pool.release(node.hist)
      } else {
        pool.release(node.hist)
      }
      node.hist = null
    }
  }

  // Stable partition of a node's rows (and their q) by the split: left ones stay in place, in order,
  // right ones go through the scratch arrays. Branch-free (the side of a row is unpredictable):
  // every row is written to both places and only the index of its side advances.
  const partition = (m: ModelState, begin: number, end: number, f: number, b: number, defLeft: boolean): number => {
    const rows = m.rows
    const q = m.q
    const bins = data.bins
    const colBase = f * n
    let wl = begin
    let nr = 0
    if (data.hasMissing[f] === 1) {
      const missing = data.nBins[f]
      const dl = defLeft ? 1 : 0
      for (let k = begin; k < end; k++) {
        const r = rows[k]
        const qk = q[k]
        const bin = bins[colBase + r]
        const left = bin === missing ? dl : ((b - bin) >> 31) + 1
        rows[wl] = r
        q[wl] = qk
        scratchRows[nr] = r
        scratchQ[nr] = qk
        wl += left
        nr += 1 - left
      }
    } else {
      for (let k = begin; k < end; k++) {
        const r = rows[k]
        const qk = q[k]
        const left = ((b - bins[colBase + r]) >> 31) + 1 // 1 iff bin ≤ b
        rows[wl] = r
        q[wl] = qk
        scratchRows[nr] = r
        scratchQ[nr] = qk
        wl += left
        nr += 1 - left
      }
    }
    rows.set(scratchRows.subarray(0, nr), wl)
    q.set(scratchQ.subarray(0, nr), wl)
    return wl
  }

  /** process the planned level of `group` (their builds/derives fit in the pool) */
  const runLevel = function* (group: ModelState[], depth: number): Generator<void> {
    yield* levelPass(group, depth)
    for (const m of group) {
      const nodes = m.levelNodes
      m.levelNodes = []
      applyLevel(m, nodes, depth)
    }
  }

  /** a model whose level does not fit: no subtraction, nodes in slices that fit, keep nothing */
  const runLevelLowMemory = function* (m: ModelState, depth: number, others: ModelState[]): Generator<void> {
    for (const p of m.pairs) {
      pool.release(p.hist)
      p.hist = null
    }
    m.keepHists = false
    for (const o of others) {
      if (pool.available > 0) break
      if (o === m) continue
      for (const p of o.pairs) {
        pool.release(p.hist)
        p.hist = null
      }
    }
    if (pool.available < 1) throw new Error('histogram budget too small for one node histogram')
    const nodes: Node[] = []
    if (m.root) nodes.push(m.root)
    m.root = null
    for (const p of m.pairs) {
      if (evaluable(p.left, depth)) nodes.push(p.left)
      if (evaluable(p.right, depth)) nodes.push(p.right)
    }
    m.pairs = []
    for (let i = 0; i < nodes.length; ) {
      const slice = nodes.slice(i, i + pool.available)
      for (const x of slice) {
        x.hist = pool.acquire()
        m.units.push({ begin: x.begin, end: x.end, built: x, buf: x.hist, derived: null, parent: null })
      }
      m.levelNodes = slice
      yield* levelPass([m], depth)
      m.levelNodes = []
      applyLevel(m, slice, depth)
      i += slice.length
    }
  }

  // ---- finish a tree: predictions of every training row ---------------------------------------
  const finishTree = (m: ModelState) => {
    const tree = m.tree.finish()
    m.trees.push(tree)
    const pred = m.pred
    const rows = m.rows
    const segs = m.leafSegs
    for (let s = 0; s < segs.length; s += 3) {
      const v = segs[s + 2]
      for (let k = segs[s]; k < segs[s + 1]; k++) pred[rows[k]] += v
    }
    if (m.nSampled === n) return
    const { feature, splitBin, defaultLeft, left, leafValue } = tree
    const bins = data.bins
    const nBins = data.nBins
    for (let r = 0; r < n; r++) {
      if (m.sampled[r] === 1) continue
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

  // ---- the rounds -------------------------------------------------------------------------------
  // Each round, the group's trees grow `treeGroup` models at a time: per level, one pass over the
  // binned matrix serves every model of that set. On a CPU the set is kept small enough for its
  // histograms to stay in cache (see defaultTreeGroup); the trees do not depend on it.
  const treeGroup = Math.max(1, Math.min(models.length, options.treeGroup ?? defaultTreeGroup(params.maxDepth, slots)))
  for (let round = 0; round < params.rounds; round++) {
    stopCheck()
    for (let t0 = 0; t0 < models.length; t0 += treeGroup) {
      const set = models.slice(t0, t0 + treeGroup)
      for (const m of set) startRound(m)
      for (let depth = 0; depth < params.maxDepth; depth++) {
        const group: ModelState[] = []
        for (const m of set) {
          if (m.pairs.length === 0 && !m.root) continue
          let need = freshNeeded(m, depth)
          if (need > pool.available && group.length > 0) {
            yield* runLevel(group, depth)
            group.length = 0
            need = freshNeeded(m, depth)
          }
          if (need > pool.available) {
            yield* runLevelLowMemory(m, depth, set)
            continue
          }
          plan(m, depth)
          group.push(m)
        }
        if (group.length > 0) yield* runLevel(group, depth)
      }
      for (const m of set) {
        // at maxDepth nothing is evaluated: any pairs left are leaves already recorded
        for (const p of m.pairs) pool.release(p.hist)
        m.pairs = []
        finishTree(m)
      }
    }
    options.onRound?.(round + 1, params.rounds)
    yield
  }

  if (options.stats) options.stats.peakNodeHistograms = pool.peak
  const out = models.map<GbdtModel>((m) => ({ params, seed: m.seed, features: F, baseScore, trees: m.trees }))
  if (options.onModelDone) out.forEach((model, i) => options.onModelDone!(i, model))
  return out
}

/**
 * Trains one model per seed on `data`, all together (the batched strategy; one seed = one model
 * alone), synchronously. Model i's trees depend only on (data, params, seeds[i]).
 */
export function trainGbdtGroup(
  data: GbdtData,
  params: Partial<GbdtParams>,
  seeds: readonly number[],
  options: GbdtTrainOptions = {},
): GbdtModel[] {
  const it = groupTrainer(data, params, seeds, options)
  for (;;) {
    const r = it.next()
    if (r.done) return r.value
  }
}

const nextTurn: () => Promise<void> =
  typeof setImmediate === 'function' ? () => new Promise((r) => setImmediate(r)) : () => new Promise((r) => setTimeout(r, 0))

/**
 * trainGbdtGroup that hands the event loop a turn at least every `sliceMs` (default 20 ms), so a
 * worker's cancel messages and heartbeats get through; shouldStop() is checked at every step, and
 * the trees are the same as the synchronous trainer's.
 */
export async function trainGbdtGroupAsync(
  data: GbdtData,
  params: Partial<GbdtParams>,
  seeds: readonly number[],
  options: GbdtTrainOptions & { sliceMs?: number } = {},
): Promise<GbdtModel[]> {
  const slice = options.sliceMs ?? 20
  const it = groupTrainer(data, params, seeds, options)
  let last = performance.now()
  for (;;) {
    const r = it.next()
    if (r.done) return r.value
    const now = performance.now()
    if (now - last >= slice) {
      await nextTurn()
      last = performance.now()
    }
  }
}

/** One model alone (the sequential and pool strategies): exactly trainGbdtGroup with one seed. */
export function trainGbdt(data: GbdtData, params: Partial<GbdtParams>, seed: number, options: GbdtTrainOptions = {}): GbdtModel {
  return trainGbdtGroup(data, params, [seed], options)[0]
}
