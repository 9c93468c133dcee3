// Growing one level of the trees of a group of models, depth-wise: plan which node histograms to
// build and which to derive by subtraction, ONE pass over the binned matrix for all trees that
// builds them a feature region at a time and scans each region for splits while hot, then each
// tree's splits applied and its rows partitioned. A tree is one model's (a K-class model grows K
// side by side); every parameter is its model's own, read once per tree and feature group; the
// rest: README.md, "Level pass, tree groups and memory".
import type { GbdtData } from './binning'
import type { Bins, HistPool } from './histograms'
import type { HistKernel } from './kernel'
import { Node, type TreeState } from './model-state'
import { applySplit, buildsSecond, isEvaluated, scanFeature, splitApplies, throwIfStopped } from './rules'

/** global features per block of the level pass (16 columns: 128 KiB of bins at 8 000 rows) */
const FEATURE_BLOCK = 16
/** models per chunk of the level pass: their built rows' indices and gradients (8 B/row) fit in this */
const MODEL_CHUNK_BYTES = 256 * 1024

/** a node's rows (its hessian sum is not: a classifier's hessians are its rows' own) */
function rowsIn(node: Node): number {
  return node.end - node.begin
}

/** what the level pass checks between feature blocks (GbdtTrainOptions' cancel hooks) */
export type StopHooks = Parameters<typeof throwIfStopped>[0]

export class LevelGrower {
  private readonly n: number
  private readonly F: number
  /** partition's right-hand rows and their q (and qh), before they are copied after the left ones (in the kernel's memory) */
  private readonly scratchRows: Int32Array
  private readonly scratchQ: Int32Array
  private readonly scratchQH: Int32Array
  /** the widest feature's histogram region, in slots */
  private readonly maxWidth: number
  /** terminal mode: up to 4 built regions, and one derived region */
  private readonly scratchA: Float64Array
  private readonly scratchB: Float64Array
  /** the features of the current group of ≤ 4, and their columns, offsets and lengths in the histogram */
  private readonly groupFeats = new Int32Array(4)
  private readonly colOf = new Int32Array(4)
  private readonly offOf = new Int32Array(4)
  private readonly lenOf = new Int32Array(4)
  private readonly blockFeats = new Int32Array(FEATURE_BLOCK)
  /** the binned matrix where the kernel reads it */
  private readonly bins: Bins

  constructor(
    private readonly data: GbdtData,
    readonly pool: HistPool,
    private readonly stop: StopHooks,
    /** the histogram loops and the partition, and the memory they read (data.bins' copy, scratchA/B, the partition's scratches, pool buffers, rows, q and qh) */
    private readonly kernel: HistKernel,
    /** the trees have hessians of their own (a classifier's), not 1 a row */
    hessians = false,
  ) {
    const n = data.rows
    const F = data.features
    this.n = n
    this.F = F
    this.scratchRows = kernel.int32(n)
    this.scratchQ = kernel.int32(n)
    this.scratchQH = kernel.int32(hessians ? n : 0)
    let maxWidth = 1
    for (let f = 0; f < F; f++) maxWidth = Math.max(maxWidth, data.width[f])
    this.maxWidth = maxWidth
    this.scratchA = kernel.float64(LevelGrower.scratchALength(maxWidth))
    this.scratchB = kernel.float64(LevelGrower.scratchBLength(maxWidth))
    this.bins = kernel.bins(data)
  }

  /** the partition's scratch arrays of one int32 a training row (rows, q and a classifier's qh), in the kernel's memory */
  static partitionScratchArrays(hessians: boolean): number {
    return hessians ? 3 : 2
  }

  /** terminal mode's built regions: 4 features of the widest width */
  static scratchALength(maxWidth: number): number {
    return 4 * 2 * maxWidth
  }

  /** terminal mode's derived region: one feature of the widest width */
  static scratchBLength(maxWidth: number): number {
    return 2 * maxWidth
  }

  private evaluable(m: TreeState, node: Node, depth: number): boolean {
    return m.qh ? isEvaluated(node.h, depth, m.maxDepth, m.c, m.invH, rowsIn(node)) : isEvaluated(node.h, depth, m.maxDepth, m.c)
  }

  /** model m's last level that is evaluated: its histograms are never parents, so they are not stored */
  private terminal(m: TreeState, depth: number): boolean {
    return depth === m.maxDepth - 1
  }

  /**
   * Grows level `depth` of every model of `set` that still has nodes to evaluate: as many models
   * together as the pool's free buffers allow (one level pass for them all), a model that does not
   * fit even alone in low-memory mode.
   */
  *growLevel(set: readonly TreeState[], depth: number): Generator<void> {
    const pool = this.pool
    const group: TreeState[] = []
    for (const m of set) {
      if (m.pairs.length === 0 && !m.root) continue
      let need = this.freshNeeded(m, depth)
      if (need > pool.available && group.length > 0) {
        yield* this.runLevel(group, depth)
        group.length = 0
        need = this.freshNeeded(m, depth)
      }
      if (need > pool.available) {
        yield* this.runLevelLowMemory(m, depth, set)
        continue
      }
      this.plan(m, depth)
      group.push(m)
    }
    if (group.length > 0) yield* this.runLevel(group, depth)
  }

  /** after the deepest model's last level: at a model's maxDepth nothing is evaluated, so any pairs left are leaves already recorded */
  endTree(m: TreeState): void {
    for (const p of m.pairs) this.pool.release(p.hist)
    m.pairs = []
  }

  // ---- per level: plan which histograms to build or derive ------------------------------------

  /** fresh buffers model m's level plan needs */
  private freshNeeded(m: TreeState, depth: number): number {
    if (this.terminal(m, depth)) return 0
    let need = m.root ? 1 : 0
    for (const p of m.pairs) {
      const eL = this.evaluable(m, p.left, depth)
      const eR = this.evaluable(m, p.right, depth)
      if (!eL && !eR) continue
      if (p.hist) need += 1
      else need += (eL ? 1 : 0) + (eR ? 1 : 0)
    }
    return need
  }

  /** turns model m's pending root/pairs into the level's nodes (BFS order) and units */
  private plan(m: TreeState, depth: number): void {
    const pool = this.pool
    const term = this.terminal(m, depth)
    m.keepHists = true
    if (m.root) {
      const root = m.root
      m.root = null
      m.levelNodes.push(root)
      this.addUnit(m, term, root, root, null, null)
    }
    for (const p of m.pairs) {
      const L = p.left
      const R = p.right
      const eL = this.evaluable(m, L, depth)
      const eR = this.evaluable(m, R, depth)
      if (eL) m.levelNodes.push(L)
      if (eR) m.levelNodes.push(R)
      if (!eL && !eR) {
        pool.release(p.hist)
        continue
      }
      if (p.hist && term) m.releaseAfter.push(p.hist)
      if (p.hist && eL && eR) {
        const [small, big] = buildsSecond(rowsIn(L), rowsIn(R)) ? [R, L] : [L, R]
        this.addUnit(m, term, small, small, big, p.hist)
      } else if (p.hist) {
        const [x, other] = eL ? [L, R] : [R, L]
        if (buildsSecond(rowsIn(x), rowsIn(other))) {
          this.addUnit(m, term, null, other, x, p.hist)
        } else {
          if (!term) pool.release(p.hist)
          this.addUnit(m, term, x, x, null, null)
        }
      } else {
        if (eL) this.addUnit(m, term, L, L, null, null)
        if (eR) this.addUnit(m, term, R, R, null, null)
      }
    }
    m.pairs = []
  }

  /** one unit of m's plan: build from rowsOf's rows (into a fresh buffer unless terminal), derive `derived` from `parent` */
  private addUnit(m: TreeState, term: boolean, built: Node | null, rowsOf: Node, derived: Node | null, parent: Float64Array | null): void {
    let buf: Float64Array | null = null
    if (!term) {
      buf = this.pool.acquire()
      if (built) built.hist = buf
      else m.releaseAfter.push(buf)
      if (derived) derived.hist = parent
    }
    m.units.push({ begin: rowsOf.begin, end: rowsOf.end, built, buf, derived, parent })
  }

  // ---- the level pass: one sweep over the binned matrix for every model in `group` -------------
  // Models go in chunks whose reused row/gradient segments stay in cache; per chunk, 16-feature
  // blocks of the binned matrix are read once for all its models; per model, its sampled features
  // of the block go 4 at a time: per unit, build their regions of the histogram in one pass over
  // the rows, derive the sibling's regions, and scan both (features ascending per node). Whether a
  // model's level is terminal, and its coefficients, are the model's own.

  /** the features groupFeats[0..k) of model m: build, derive and scan them for every unit */
  private featureGroup(m: TreeState, k: number, term: boolean): void {
    const data = this.data
    const n = this.n
    const c = m.c
    const maxWidth = this.maxWidth
    const scratchA = this.scratchA
    const scratchB = this.scratchB
    const groupFeats = this.groupFeats
    const colOf = this.colOf
    const offOf = this.offOf
    const lenOf = this.lenOf
    const rows = m.rows
    const q = m.q
    const qh = m.qh
    const inv = m.inv
    const invH = m.invH
    const bins = this.bins
    const kernel = this.kernel
    const filter = kernel.filter
    for (let t = 0; t < k; t++) {
      const f = groupFeats[t]
      colOf[t] = f * n
      lenOf[t] = 2 * data.width[f]
      offOf[t] = term ? t * 2 * maxWidth : 2 * m.slotOf[f]
    }
    for (const u of m.units) {
      const buf = term ? scratchA : u.buf!
      // a unit of all n rows is a root that samples every row: its rows are 0 … n − 1 in order
      kernel.buildRegions(k, bins, colOf, rows, q, qh, u.begin, u.end, buf, offOf, lenOf, u.end - u.begin === n)
      for (let t = 0; t < k; t++) {
        const f = groupFeats[t]
        const nb = data.nBins[f]
        const miss = data.hasMissing[f] === 1
        const o = offOf[t]
        const len = lenOf[t]
        if (u.built) scanFeature(u.built, buf, o, nb, miss, f, inv, c, filter, invH)
        if (u.derived) {
          const po = 2 * m.slotOf[f]
          if (term) {
            kernel.difference(scratchB, u.parent!, po, buf, o, len)
            scanFeature(u.derived, scratchB, 0, nb, miss, f, inv, c, filter, invH)
          } else {
            kernel.subtractRange(u.parent!, buf, o, len)
            scanFeature(u.derived, u.parent!, o, nb, miss, f, inv, c, filter, invH)
          }
        }
      }
    }
  }

  /** builds and scans the planned units of `group`; yields (after a stop check) once per feature block */
  private *levelPass(group: TreeState[], depth: number): Generator<void> {
    const F = this.F
    const blockFeats = this.blockFeats
    const groupFeats = this.groupFeats
    for (const m of group) {
      for (const node of m.levelNodes) node.startSearch(m.inv, m.c, m.invH)
    }
    for (let c0 = 0; c0 < group.length;) {
      let c1 = c0
      let bytes = 0
      while (c1 < group.length) {
        let rowsBuilt = 0
        for (const u of group[c1].units) rowsBuilt += u.end - u.begin
        const rowBytes = group[c1].qh ? 12 : 8
        if (c1 > c0 && bytes + rowBytes * rowsBuilt > MODEL_CHUNK_BYTES) break
        bytes += rowBytes * rowsBuilt
        c1++
      }
      for (let f0 = 0; f0 < F; f0 += FEATURE_BLOCK) {
        const f1 = Math.min(F, f0 + FEATURE_BLOCK)
        for (let mi = c0; mi < c1; mi++) {
          const m = group[mi]
          const term = this.terminal(m, depth)
          let cnt = 0
          for (let f = f0; f < f1; f++) if (m.slotOf[f] >= 0) blockFeats[cnt++] = f
          for (let j = 0; j < cnt; j += 4) {
            const k = Math.min(4, cnt - j)
            for (let t = 0; t < k; t++) groupFeats[t] = blockFeats[j + t]
            this.featureGroup(m, k, term)
          }
        }
        throwIfStopped(this.stop)
        yield
      }
      c0 = c1
    }
    for (const m of group) {
      for (const b of m.releaseAfter) this.pool.release(b)
      m.releaseAfter.length = 0
      m.units.length = 0
    }
  }

  // ---- apply the level's best splits of one model (or make leaves), partition rows ------------------

  private applyLevel(m: TreeState, nodes: Node[], depth: number): void {
    const pool = this.pool
    const c = m.c
    const t = m.tree
    for (const node of nodes) {
      if (!splitApplies(node.found, node.best, node.hl, node.h, c)) {
        pool.release(node.hist)
        node.hist = null
        m.leafSegs.push(node.begin, node.end, t.leafValue[node.id])
        continue
      }
      const lid = applySplit(t, node.id, node, node.gq, node.h, m.inv, c, this.data.cuts, m.invH)
      const f = node.feature
      const b = node.bin
      const gl = node.glq
      const hl = node.hl
      const gr = node.gq - gl
      const hr = node.h - hl
      // stable partition of the node's rows (and their q, qh) by the split
      const data = this.data
      const missing = data.hasMissing[f] === 1 ? data.nBins[f] : -1
      const mid = this.kernel.partition(
        this.bins,
        f * this.n,
        m.rows,
        m.q,
        m.qh,
        node.begin,
        node.end,
        b,
        missing,
        node.defaultLeft,
        this.scratchRows,
        this.scratchQ,
        this.scratchQH,
      )
      if (!m.qh && mid - node.begin !== hl) throw new Error(`partition disagrees with the histogram (${mid - node.begin} ≠ ${hl})`)
      const L = new Node(lid, node.begin, mid, gl, hl)
      const R = new Node(lid + 1, mid, node.end, gr, hr)
      const eL = this.evaluable(m, L, depth + 1)
      const eR = this.evaluable(m, R, depth + 1)
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

  /** process the planned level of `group` (their builds/derives fit in the pool) */
  private *runLevel(group: TreeState[], depth: number): Generator<void> {
    yield* this.levelPass(group, depth)
    for (const m of group) {
      const nodes = m.levelNodes
      m.levelNodes = []
      this.applyLevel(m, nodes, depth)
    }
  }

  /** a model whose level does not fit: no subtraction, nodes in slices that fit, keep nothing */
  private *runLevelLowMemory(m: TreeState, depth: number, others: readonly TreeState[]): Generator<void> {
    const pool = this.pool
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
      if (this.evaluable(m, p.left, depth)) nodes.push(p.left)
      if (this.evaluable(m, p.right, depth)) nodes.push(p.right)
    }
    m.pairs = []
    for (let i = 0; i < nodes.length;) {
      const slice = nodes.slice(i, i + pool.available)
      for (const x of slice) {
        x.hist = pool.acquire()
        m.units.push({ begin: x.begin, end: x.end, built: x, buf: x.hist, derived: null, parent: null })
      }
      m.levelNodes = slice
      yield* this.levelPass([m], depth)
      m.levelNodes = []
      this.applyLevel(m, slice, depth)
      i += slice.length
    }
  }
}
