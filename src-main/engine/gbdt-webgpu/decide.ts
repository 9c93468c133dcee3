// The trainer's host-side decisions, from the words the device reads back (commands.ts): each
// model's quantisation exponent, the root's sums, each evaluated node's split — from the filter's
// candidates, or from its whole histogram when the candidates overflowed, the gradients are too
// large for float32 gains, or a test checks the filter — and then the level applied: splits or
// leaves into the tree, the next level's nodes, the decision table for the device's row update.
// The arithmetic and tie rules are the CPU engine's (../gbdt/rules.ts, split.ts), on exact integer
// sums, so the trees are its own bit for bit.
import type { GbdtData } from '../gbdt'
import { quantExponent } from '../gbdt/quantise'
import { applySplit, isEvaluated, KRT_EPS, leafValue, type SplitCoefs } from '../gbdt/rules'
import type { PassResult } from './commands'
import { MODEL_INFO_WORDS, NONE } from './kernels'
import type { HostModel, LevelNode, TrainShape } from './level'
import type { WebgpuTrainStats } from './options'
import { type Candidate, choiceApplies, chooseFromCandidates, chooseFromHistogram, type NodeHistogram, type SplitChoice } from './split'

const f32 = Math.fround
/** above this, a model-round's float32 gains could overflow: its splits are chosen from whole histograms */
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

/** checkFilter: the filtered choice and the whole-histogram one agree (both leave, or the same split) */
function sameChoice(a: SplitChoice, b: SplitChoice, h: number, c: SplitCoefs): boolean {
  const a1 = choiceApplies(a, h, c)
  const a2 = choiceApplies(b, h, c)
  return a1 === a2 && (!a1 || (a.j === b.j && a.bin === b.bin && a.defaultLeft === b.defaultLeft && a.glq === b.glq && a.hl === b.hl && a.best === b.best))
}

export class HostDecider {
  constructor(
    private shape: TrainShape,
    private host: GbdtData,
    private stats: WebgpuTrainStats,
    private checkFilter: boolean,
  ) {}

  /**
   * The CPU engine's quantisation rule per model, from its largest |gradient| (f32 bits): k, 2^−k,
   * whether its gains need the exact host path; the device's per-model block (kernels.ts, ModelInfo)
   * with the model's own coefficients.
   */
  quantise(ms: readonly HostModel[], maxBits: Uint32Array): ArrayBuffer {
    const W = MODEL_INFO_WORDS
    const info = new ArrayBuffer(ms.length * W * 4)
    const iv = new Int32Array(info)
    const uv = new Uint32Array(info)
    const fv = new Float32Array(info)
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i]
      const c = m.coefs
      const minGain = Math.max(KRT_EPS, c.gamma) * 0.98
      const maxAbs = bitsF32(maxBits[i])
      m.k = quantExponent(maxAbs)
      m.inv = 2 ** -m.k
      m.exactHost = m.ns * maxAbs >= EXACT_HOST_SUM
      if (m.exactHost) this.stats.exactHostRounds++
      iv[W * i] = m.k
      uv[W * i + 1] = m.exactHost ? 1 : 0
      fv[W * i + 2] = finiteF32(c.alpha * 2 ** m.k)
      fv[W * i + 3] = finiteF32(minGain * 2 ** (2 * m.k))
      fv[W * i + 4] = c.mcw
      fv[W * i + 5] = c.lambda
    }
    return info
  }

  /** The roots' sums (Σq lo, hi, count per model): checked against the sampled rows, the root leaves. */
  takeRootSums(ms: readonly HostModel[], words: Uint32Array): void {
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i]
      const gq = int64(words[3 * i], words[3 * i + 1])
      if (words[3 * i + 2] !== m.ns) throw new Error(`webgpu: root of model ${m.seed} has ${words[3 * i + 2]} rows, ${m.ns} sampled`)
      m.level[0].gq = gq
      m.tb.add(leafValue(gq * m.inv, m.ns, m.coefs))
    }
  }

  /**
   * Each evaluated node of a pass decided from its candidates (after checking the device's sums
   * against the host's). Returns the pass entries to decide from whole histograms instead: overflow,
   * exact-host rounds, and every node when checking the filter.
   */
  fromCandidates(ms: readonly HostModel[], pass: PassResult): number[] {
    const { words, entries } = pass
    const E = entries.length
    const K = this.shape.K
    const full: number[] = []
    for (let e = 0; e < E; e++) {
      const { m: i, li } = entries[e]
      const m = ms[i]
      const node = m.level[li]
      const G = int64(words[2 * E + 3 * e], words[2 * E + 3 * e + 1])
      const H = words[2 * E + 3 * e + 2]
      if (G !== node.gq || H !== node.h) {
        throw new Error(`webgpu: node ${node.id} of model ${m.seed} sums to (${G}, ${H}) on the device, (${node.gq}, ${node.h}) on the host`)
      }
      const count = words[E + e]
      this.stats.candidates += Math.min(count, K)
      this.stats.maxCandidatesPerNode = Math.max(this.stats.maxCandidatesPerNode, count)
      if (!m.exactHost && count <= K) {
        node.choice = chooseFromCandidates(this.candidates(words, E, e, count), node.gq, node.h, m.inv, m.coefs)
      } else {
        node.choice = null
        if (!m.exactHost) this.stats.overflowNodes++
      }
      if (node.choice === null || this.checkFilter) full.push(e)
    }
    return full
  }

  /** The fallback (and checkFilter): the CPU engine's scan on a node's whole histogram `w`, read back. */
  fromHistogram(m: HostModel, node: LevelNode, w: Uint32Array): void {
    const exact = chooseFromHistogram(this.nodeHistogram(m, w), node.gq, node.h, m.inv, m.coefs)
    if (node.choice && this.checkFilter) {
      this.stats.filterChecks++
      if (!sameChoice(node.choice, exact, node.h, m.coefs)) {
        throw new Error(`webgpu: the split filter missed node ${node.id} of model ${m.seed}: ${JSON.stringify(node.choice)} vs ${JSON.stringify(exact)}`)
      }
    }
    node.choice = exact
  }

  /**
   * Splits or leaves for every node of the level (in level order = the tree's BFS order), the next
   * level, and the device's decision table (kernels.ts, `dec`).
   */
  decideLevel(ms: readonly HostModel[], depth: number): Uint32Array {
    const Cn = ms.length
    const parts: Uint32Array[] = []
    let total = Cn
    for (const m of ms) {
      const entries = this.decideModel(m, depth)
      parts.push(entries)
      total += entries.length
    }
    const dec = new Uint32Array(total)
    let at = Cn
    parts.forEach((p, i) => {
      dec[i] = at
      dec.set(p, at)
      at += p.length
    })
    return dec
  }

  /** One model's level applied: its 6 decision words per node; its next level and parent slots. */
  private decideModel(m: HostModel, depth: number): Uint32Array {
    const c = m.coefs
    const lv = m.level
    const entries = new Uint32Array(lv.length * 6)
    const next: LevelNode[] = []
    const nextParents: number[] = []
    const t = m.tb
    const maxDepth = m.maxDepth
    for (let li = 0; li < lv.length; li++) {
      const node = lv[li]
      const ch = node.evaluable ? node.choice : null
      if (!ch || !choiceApplies(ch, node.h, c)) {
        entries[6 * li] = NONE
        entries[6 * li + 5] = f32Bits(t.leafValue[node.id])
        if (node.slot >= 0 && m.single) m.free.push(node.slot)
        continue
      }
      const f = m.feats[ch.j]
      const b = ch.bin
      const gl = ch.glq
      const hl = ch.hl
      const gr = node.gq - gl
      const hr = node.h - hl
      const lid = applySplit(t, node.id, { feature: f, bin: b, defaultLeft: ch.defaultLeft, glq: gl, hl }, node.gq, node.h, m.inv, c, this.host.cuts)
      entries.set([f, b >>> 0, ch.defaultLeft ? 1 : 0, next.length, next.length + 1, 0], 6 * li)
      next.push(
        { id: lid, gq: gl, h: hl, evaluable: isEvaluated(hl, depth + 1, maxDepth, c), slot: -1, choice: null },
        { id: lid + 1, gq: gr, h: hr, evaluable: isEvaluated(hr, depth + 1, maxDepth, c), slot: -1, choice: null },
      )
      // the parent's histogram slot, kept for the subtraction trick when the level had one slice
      nextParents.push(m.single ? node.slot : -1)
    }
    m.level = next
    m.parentSlots = m.single && next.length > 0 ? nextParents : null
    return entries
  }

  /** Entry e's `count` candidate records (kernels.ts, `out`). */
  private candidates(words: Uint32Array, E: number, e: number, count: number): Candidate[] {
    const K = this.shape.K
    const cands: Candidate[] = []
    for (let c = 0; c < count; c++) {
      const w = 5 * E + (e * K + c) * 5
      const b = words[w + 1]
      cands.push({ j: words[w], bin: b & 0x7fffffff, backward: b >>> 31 === 1, glq: int64(words[w + 2], words[w + 3]), hl: words[w + 4] })
    }
    return cands
  }

  /** A node's histogram words as the CPU engine's scan reads them, for this round's features. */
  private nodeHistogram(m: HostModel, w: Uint32Array): NodeHistogram {
    const S = this.shape.S
    const perTree = m.sampler.perTree
    const host = this.host
    const slots = new Float64Array(2 * S)
    for (let s = 0; s < S; s++) {
      slots[2 * s] = int64(w[3 * s], w[3 * s + 1])
      slots[2 * s + 1] = w[3 * s + 2]
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
