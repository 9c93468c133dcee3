// The trainer's host side, from the words the device reads back (commands.ts): each model's
// quantisation exponent and ModelInfo, a device-planned round's trees rebuilt with the CPU engine's
// code and checked against the device's leaf values, and a host-planned level decided and applied.
// Every number is an exact integer sum or the CPU engine's float32 arithmetic (README.md).
import type { GbdtData } from '../gbdt'
import { quantExponent } from '../gbdt/quantise'
import { applySplit, isEvaluated, KRT_EPS, leafValue, type SplitCoefs } from '../gbdt/rules'
import { TreeBuilder } from '../gbdt/tree'
import type { PassResult } from './commands'
import { DEC_WORDS, ERR_ROOT, ERR_SLOTS, ERR_SUMS, hessianWords, NONE } from './tree-kernels'
import type { HostModel, LevelNode } from './level'
import type { WebgpuTrainStats } from './options'
import { choiceApplies, chooseFromHistogram, type NodeHistogram, type SplitChoice } from './split'

const f32 = Math.fround
/** above this, a model-round's float32 gains could overflow: the host decides its splits from whole histograms */
const EXACT_HOST_SUM = 2 ** 60

/** a 64-bit two's complement integer from its u32 words (exact below 2^53) */
function int64(lo: number, hi: number): number {
  return (hi | 0) * 4294967296 + lo
}

const bits = new Float32Array(1)
const bitsU = new Uint32Array(bits.buffer)
function f32Bits(v: number): number {
  bits[0] = v
  return bitsU[0]
}
function bitsF32(u: number): number {
  bitsU[0] = u
  return bits[0]
}

/** f32(x), clamped to the finite float32 range */
function finiteF32(x: number): number {
  return Math.min(f32(x), 3.4e38)
}

/** checkFilter: the device's choice and the CPU engine's scan agree (both leave, or the same split) */
function sameChoice(a: SplitChoice, b: SplitChoice, h: number, c: SplitCoefs): boolean {
  const a1 = choiceApplies(a, h, c)
  const a2 = choiceApplies(b, h, c)
  return a1 === a2 && (!a1 || (a.j === b.j && a.bin === b.bin && a.defaultLeft === b.defaultLeft && a.glq === b.glq && a.hl === b.hl && a.best === b.best))
}

/** The device's error bits, said (a bug in the engine, never the data's fault). */
function throwOnErrors(errors: Uint32Array, ms: readonly HostModel[]): void {
  errors.forEach((e, i) => {
    if (e === 0) return
    const what = [
      e & ERR_ROOT ? 'its root is not its sampled rows' : '',
      e & ERR_SUMS ? "a node's histogram does not sum to the node" : '',
      e & ERR_SLOTS ? 'its node slots ran out (planning error)' : '',
    ]
    throw new Error(`webgpu: model ${ms[i].seed} on the device: ${what.filter(Boolean).join('; ')}`)
  })
}

/** Rows a pair's plan builds from rows (level.ts, the plan kernel): the smaller sibling's (the other is derived, or built directly when it is the smaller); none when neither is evaluated. */
function builtRows(evalL: boolean, hL: number, evalR: boolean, hR: number): number {
  return evalL || evalR ? Math.min(hL, hR) : 0
}

/** an integer's u32 words (lo, hi), for 0 ≤ v < 2^64 (exact integers below 2^53, or capped) */
function words64(v: number): [number, number] {
  const x = Math.min(v, 2 ** 64 - 2 ** 12)
  const hi = Math.floor(x / 4294967296)
  return [(x - hi * 4294967296) >>> 0, hi >>> 0]
}

export class HostDecider {
  /** words of a ModelInfo, choice and tree record (hessianWords) */
  private readonly words: ReturnType<typeof hessianWords>

  constructor(
    private host: GbdtData,
    private stats: WebgpuTrainStats,
    private checkFilter: boolean,
    /** per-row hessians (a classifier's): nodes carry Σqh beside their rows */
    private hess = false,
    /** rows are drawn (on the device): each gradient's read-back carries every model's sampled count; else each model has every row */
    private rowsDrawn = false,
  ) {
    this.words = hessianWords(hess)
  }

  /**
   * The CPU engine's quantisation rule per model, from its largest |gradient| (f32 bits; with
   * hessians then its largest hessian's, maxBits[C + i]; with rows drawn then its sampled rows, the
   * device's count, its ns): k, 2^−k (kh, 2^−kh), whether the host
   * decides its splits this round; the device's per-model block (tree-kernels.ts, ModelInfo) with the
   * model's own coefficients. With hessians the bracket's units are scaled by 2^-64 (search) and the
   * min_child_weight bounds are integers on Σqh: ⌈mcw·2^kh⌉ and max(2, ⌈2·mcw·2^kh⌉) (rules.ts isEvaluated).
   */
  quantise(ms: readonly HostModel[], maxBits: Uint32Array): ArrayBuffer {
    const W = this.words.modelInfo
    const hess = this.hess
    const bracket = hess ? 2 ** -32 : 1
    const info = new ArrayBuffer(ms.length * W * 4)
    const iv = new Int32Array(info)
    const uv = new Uint32Array(info)
    const fv = new Float32Array(info)
    const countsAt = (hess ? 2 : 1) * ms.length
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i]
      m.ns = this.rowsDrawn ? maxBits[countsAt + i] : this.host.rows
      const c = m.coefs
      const minGain = Math.max(KRT_EPS, c.gamma) * 0.98
      const maxAbs = bitsF32(maxBits[i])
      m.k = quantExponent(maxAbs)
      m.inv = 2 ** -m.k
      // T(G) = G − α is exact on the device's integers iff α·2^k is one (else the host's float64 decides)
      const alphaQ = c.alpha * 2 ** m.k
      m.hostDecides = m.ns * maxAbs >= EXACT_HOST_SUM || !Number.isInteger(alphaQ)
      if (m.hostDecides) this.stats.exactHostRounds++
      const alphaInt = Math.min(alphaQ, 2 ** 53)
      iv[W * i] = m.k
      uv[W * i + 1] = m.hostDecides ? 1 : 0
      uv[W * i + 2] = Number.isInteger(alphaInt) ? alphaInt >>> 0 : 0
      uv[W * i + 3] = Number.isInteger(alphaInt) ? Math.floor(alphaInt / 4294967296) >>> 0 : 0
      fv[W * i + 4] = finiteF32(alphaQ * bracket)
      fv[W * i + 5] = finiteF32(minGain * 2 ** (2 * m.k) * bracket * bracket)
      fv[W * i + 6] = c.mcw
      fv[W * i + 7] = c.lambda
      fv[W * i + 8] = c.gamma
      fv[W * i + 9] = c.eta
      fv[W * i + 10] = c.minSplitH
      uv[W * i + 11] = m.maxDepth
      uv[W * i + 12] = m.ns
      if (!hess) continue
      m.kh = quantExponent(bitsF32(maxBits[ms.length + i]))
      m.invH = 2 ** -m.kh
      const scale = 2 ** m.kh
      iv[W * i + 13] = m.kh
      ;[uv[W * i + 16], uv[W * i + 17]] = words64(Math.ceil(c.mcw * scale))
      ;[uv[W * i + 18], uv[W * i + 19]] = words64(Math.max(2, Math.ceil(2 * c.mcw * scale)))
    }
    return info
  }

  // ---- a device-planned round ----------------------------------------------------------------------

  /**
   * Each model's tree of the round from its records (tree-kernels.ts `tree`: per node its feature, split
   * bin, default direction, sums, leaf value), built with the CPU engine's applySplit on the
   * records' exact sums, its leaf values checked against the device's (which its predictions got).
   */
  roundTrees(ms: readonly HostModel[], invs: readonly number[], invHs: readonly number[], words: Uint32Array, T: number, errors: Uint32Array): void {
    throwOnErrors(errors, ms)
    const TW = this.words.tree
    const hess = this.hess
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i]
      const inv = invs[i]
      const invH = invHs[i]
      const c = m.coefs
      const base = i * T * TW
      const rec = (id: number) => base + id * TW
      const sums = (id: number) => int64(words[rec(id) + 2], words[rec(id) + 3])
      // a node's hessian sum: Σqh with per-row hessians, else its rows
      const hsum = (id: number) => (hess ? int64(words[rec(id) + 6], words[rec(id) + 7]) : words[rec(id) + 4])
      const t = new TreeBuilder()
      const depth = [0]
      t.add(leafValue(sums(0) * inv, hsum(0) * invH, c))
      const evaluated = (id: number) =>
        hess ? isEvaluated(hsum(id), depth[id], m.maxDepth, c, invH, words[rec(id) + 4]) : isEvaluated(words[rec(id) + 4], depth[id], m.maxDepth, c)
      const built = (level: number, rows: number) => {
        const updates = rows * m.sampler.perTree
        this.stats.histogramUpdates += updates
        const byLevel = this.stats.histogramUpdatesByLevel
        byLevel[level] = (byLevel[level] ?? 0) + updates
      }
      if (evaluated(0)) built(0, words[rec(0) + 4])
      for (let id = 0; id < t.feature.length; id++) {
        const r = rec(id)
        const h = words[r + 4]
        if (evaluated(id)) this.stats.evaluatedNodes++
        if (words[r] === NONE) {
          if (f32Bits(t.leafValue[id]) !== words[r + 5]) {
            throw new Error(`webgpu: leaf ${id} of model ${m.seed}: the device's value ${bitsF32(words[r + 5])} is not the CPU engine's ${t.leafValue[id]}`)
          }
          continue
        }
        const lid = t.feature.length
        if (lid + 1 >= T) throw new Error(`webgpu: model ${m.seed}'s tree outgrew its ${T} records (planning error)`)
        const binField = words[r + 1]
        const rowsL = words[rec(lid) + 4]
        const hl = hsum(lid)
        const glq = sums(lid)
        const gq = sums(id)
        if (rowsL + words[rec(lid + 1) + 4] !== h || hl + hsum(lid + 1) !== hsum(id) || glq + sums(lid + 1) !== gq)
          throw new Error(`webgpu: node ${id} of model ${m.seed}: its children's sums on the device are not its own`)
        const split = { feature: words[r], bin: (binField & 0x7fffffff) - 1, defaultLeft: binField >>> 31 === 1, glq, hl }
        applySplit(t, id, split, gq, hsum(id), inv, c, this.host.cuts, invH)
        depth.push(depth[id] + 1, depth[id] + 1)
        this.stats.splits++
        built(depth[id] + 1, builtRows(evaluated(lid), rowsL, evaluated(lid + 1), h - rowsL))
      }
      m.trees.push(t.finish())
    }
  }

  // ---- a host-planned round -----------------------------------------------------------------------

  /** The roots' sums (Σq lo, hi, count per model; with hessians then Σqh lo, hi per model): checked against the sampled rows, the root leaves. */
  takeRootSums(ms: readonly HostModel[], words: Uint32Array): void {
    const C = ms.length
    for (let i = 0; i < C; i++) {
      const m = ms[i]
      const gq = int64(words[3 * i], words[3 * i + 1])
      if (words[3 * i + 2] !== m.ns) throw new Error(`webgpu: root of model ${m.seed} has ${words[3 * i + 2]} rows, ${m.ns} sampled`)
      const root = m.level[0]
      root.gq = gq
      root.hq = this.hess ? int64(words[3 * C + 2 * i], words[3 * C + 2 * i + 1]) : m.ns
      root.evaluable = m.evaluable(m.ns, root.hq, 0, this.hess)
      m.tb.add(leafValue(gq * m.inv, root.hq * m.invH, m.coefs))
    }
  }

  /**
   * The device's choice for every node a pass evaluated. Returns the nodes to decide from their
   * whole histograms instead: those of models whose splits the host decides this round, and every
   * node when checking the device's choices.
   */
  fromChoices(ms: readonly HostModel[], evaluated: readonly { m: number; li: number }[], pass: PassResult): { m: number; li: number }[] {
    throwOnErrors(pass.errors, ms)
    const w = pass.choices
    const full: { m: number; li: number }[] = []
    for (const x of evaluated) {
      const m = ms[x.m]
      const node = m.level[x.li]
      const c = x.m * pass.stride + x.li * this.words.choice
      const j = w[c]
      const binField = w[c + 1]
      const lossBits = w[c + 5]
      if (j !== NONE) {
        node.choice = {
          found: true,
          best: bitsF32(lossBits),
          j,
          bin: (binField & 0x7fffffff) - 1,
          defaultLeft: binField >>> 31 === 1,
          glq: int64(w[c + 2], w[c + 3]),
          hl: this.hess ? int64(w[c + 8], w[c + 9]) : w[c + 4],
          rowsL: w[c + 4],
        }
      } else {
        // a leaf: the best loss the device found does not apply (below kRtEps or γ)
        node.choice = { found: lossBits !== 0, best: bitsF32(lossBits), j: -1, bin: -1, defaultLeft: false, glq: 0, hl: 0, rowsL: 0 }
      }
      if (m.hostDecides) {
        node.choice = null
        this.stats.hostDecidedNodes++
      }
      if (node.choice === null || this.checkFilter) full.push(x)
    }
    return full
  }

  /** The fallback (and checkFilter): the CPU engine's scan on a node's whole histogram `w`, read back. */
  fromHistogram(m: HostModel, node: LevelNode, w: Uint32Array, S: number): void {
    const hist = this.nodeHistogram(m, w, S)
    const exact = chooseFromHistogram(hist, node.gq, node.hq, m.inv, m.coefs, m.invH)
    if (exact.found && this.hess) exact.rowsL = leftRows(w, this.words.slot, hist, exact, node.h)
    if (node.choice && this.checkFilter) {
      this.stats.filterChecks++
      if (!sameChoice(node.choice, exact, node.hq, m.coefs)) {
        throw new Error(
          `webgpu: the device's split of node ${node.id} of model ${m.seed} is not the CPU engine's: ${JSON.stringify(node.choice)} vs ${JSON.stringify(exact)}`,
        )
      }
    }
    node.choice = exact
  }

  /**
   * Splits or leaves for every node of the level (in level order = the tree's BFS order), the next
   * level, and per model the device's row-update entries (tree-kernels.ts, `dec`).
   */
  decideLevel(ms: readonly HostModel[], depth: number): Uint32Array[] {
    return ms.map((m) => {
      const entries = new Uint32Array(m.level.length * DEC_WORDS)
      this.decideModel(m, depth, entries)
      return entries
    })
  }

  /** One model's level applied: its row-update entries; its next level and parent slots. */
  private decideModel(m: HostModel, depth: number, entries: Uint32Array): void {
    const c = m.coefs
    const lv = m.level
    const next: LevelNode[] = []
    const nextParents: number[] = []
    const t = m.tb
    for (let li = 0; li < lv.length; li++) {
      const node = lv[li]
      const ch = node.evaluable ? node.choice : null
      const e = DEC_WORDS * li
      if (!ch || !choiceApplies(ch, node.hq, c)) {
        entries[e] = NONE
        entries[e + 5] = f32Bits(t.leafValue[node.id])
        if (node.slot >= 0 && m.single) m.free.push(node.slot)
        continue
      }
      const f = m.feats[ch.j]
      const b = ch.bin
      const gl = ch.glq
      const hl = ch.hl
      const gr = node.gq - gl
      const hr = node.hq - hl
      const rowsL = ch.rowsL
      const rowsR = node.h - rowsL
      const lid = applySplit(t, node.id, { feature: f, bin: b, defaultLeft: ch.defaultLeft, glq: gl, hl }, node.gq, node.hq, m.inv, c, this.host.cuts, m.invH)
      entries.set([f, b >>> 0, ch.defaultLeft ? 1 : 0, next.length, next.length + 1, 0], e)
      this.stats.splits++
      next.push(
        { id: lid, gq: gl, h: rowsL, hq: hl, evaluable: m.evaluable(rowsL, hl, depth + 1, this.hess), slot: -1, choice: null },
        { id: lid + 1, gq: gr, h: rowsR, hq: hr, evaluable: m.evaluable(rowsR, hr, depth + 1, this.hess), slot: -1, choice: null },
      )
      // the parent's histogram slot, kept for the subtraction trick when the level had one slice
      nextParents.push(m.single ? node.slot : -1)
    }
    m.level = next
    m.parentSlots = m.single && next.length > 0 ? nextParents : null
  }

  /** A node's histogram words as the CPU engine's scan reads them, for this round's features. */
  private nodeHistogram(m: HostModel, w: Uint32Array, S: number): NodeHistogram {
    const perTree = m.sampler.perTree
    const host = this.host
    const SW = this.words.slot
    const slots = new Float64Array(2 * S)
    for (let s = 0; s < S; s++) {
      slots[2 * s] = int64(w[SW * s], w[SW * s + 1])
      slots[2 * s + 1] = this.hess ? int64(w[SW * s + 3], w[SW * s + 4]) : w[SW * s + 2]
    }
    const nBins = new Int32Array(perTree)
    const hasMissing = new Uint8Array(perTree)
    for (let j = 0; j < perTree; j++) {
      nBins[j] = host.nBins[m.feats[j]]
      hasMissing[j] = host.hasMissing[m.feats[j]]
    }
    return { slots, offset: m.slotOff, nBins, hasMissing }
  }
}

/**
 * The left child's rows of a split chosen from a classifier's whole node histogram `w` (SW words a
 * slot, its count in word 2): the CPU engine's scan compares hessian sums, the device's plan needs rows.
 */
function leftRows(w: Uint32Array, SW: number, hist: NodeHistogram, s: SplitChoice, rows: number): number {
  const o = hist.offset[s.j]
  let below = 0
  for (let b = 0; b <= s.bin; b++) below += w[SW * (o + b) + 2]
  if (!s.defaultLeft) return below
  // missing values left: every row but those above the split bin
  let above = 0
  for (let b = s.bin + 1; b < hist.nBins[s.j]; b++) above += w[SW * (o + b) + 2]
  return rows - above
}
