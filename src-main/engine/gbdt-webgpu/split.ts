// The split decision on the host, exact: the tree rules both engines follow (../gbdt/rules.ts: the
// float32 arithmetic, the first-strictly-greater rule over features ascending, forward bins
// ascending, backward bins descending, when a split applies), applied either to the few candidates
// the GPU's filter sends back (with their exact integer sums) or, as a fallback, to a node's whole
// histogram read back. Inputs are integers (Σq, row counts), so both paths give the CPU engine's
// choice bit for bit.
import { beatsBest, childrenGain, lossChange, sideGain, type SplitCoefs, splitApplies } from '../gbdt/rules'

/** One candidate as the GPU writes it: sampled-feature index j, its scan bin, and the LEFT child's exact sums. */
export interface Candidate {
  j: number
  /** the bin the scan stood at: forward = last bin going left; backward = first bin going right */
  bin: number
  backward: boolean
  /** Σq of the left child (an integer, |·| < 2^53) */
  glq: number
  /** rows of the left child */
  hl: number
}

export interface SplitChoice {
  found: boolean
  /** the best loss_chg (0 when nothing beat 0) */
  best: number
  /** index into the model's sampled features */
  j: number
  /** the tree's splitBin: non-missing rows with bin ≤ it go left (−1: none do) */
  bin: number
  defaultLeft: boolean
  glq: number
  hl: number
}

const NOT_FOUND: SplitChoice = { found: false, best: 0, j: -1, bin: -1, defaultLeft: false, glq: 0, hl: 0 }

/** The CPU engine's order of candidates: feature, forward before backward, forward bins up, backward bins down. */
function scanOrder(a: Candidate, b: Candidate): number {
  if (a.j !== b.j) return a.j - b.j
  if (a.backward !== b.backward) return a.backward ? 1 : -1
  return a.backward ? b.bin - a.bin : a.bin - b.bin
}

/** loss_chg of a split of a node (Σq = gq over h rows, gain rootGain) into left (glq, hl) and the rest. */
function lossOf(glq: number, hl: number, gq: number, h: number, inv: number, rootGain: number, c: SplitCoefs): number {
  return lossChange(childrenGain(glq * inv, hl, (gq - glq) * inv, h - hl, c), rootGain)
}

/**
 * The node's split from the filter's candidates (any order): the first, in the CPU engine's scan
 * order, whose loss is strictly greater than every earlier one's and than 0. The filter sends every
 * candidate that can hold the maximum loss, so this is the CPU engine's choice.
 */
export function chooseFromCandidates(cands: readonly Candidate[], gq: number, h: number, inv: number, c: SplitCoefs): SplitChoice {
  if (cands.length === 0) return NOT_FOUND
  const rootGain = sideGain(gq * inv, h, c.lambda, c.alpha)
  const sorted = [...cands].sort(scanOrder)
  let out = NOT_FOUND
  let best = 0
  for (const k of sorted) {
    const loss = lossOf(k.glq, k.hl, gq, h, inv, rootGain, c)
    if (beatsBest(loss, best)) {
      best = loss
      out = { found: true, best: loss, j: k.j, bin: k.backward ? k.bin - 1 : k.bin, defaultLeft: k.backward, glq: k.glq, hl: k.hl }
    }
  }
  return out
}

/** One node's histogram as read back: per sampled feature j, its slots from offset[j] (nBins[j] value bins, then the missing slot if any). */
export interface NodeHistogram {
  /** Σq per slot (exact integers) */
  g: Float64Array
  /** rows per slot */
  n: Float64Array
  offset: Int32Array
  nBins: Int32Array
  hasMissing: Uint8Array
}

/** Every valid candidate of a whole node histogram, in the CPU engine's scan order (its scanFeature, without shortcuts). */
export function candidatesOfHistogram(hist: NodeHistogram, h: number, gq: number, c: SplitCoefs): Candidate[] {
  const out: Candidate[] = []
  const { g, n, offset, nBins, hasMissing } = hist
  for (let j = 0; j < offset.length; j++) {
    const o = offset[j]
    const nb = nBins[j]
    const missH = hasMissing[j] === 1 ? n[o + nb] : 0
    let glq = 0
    let hl = 0
    for (let b = 0; b < nb; b++) {
      const hb = n[o + b]
      if (hb === 0) continue
      glq += g[o + b]
      hl += hb
      const hr = h - hl
      if (hr < c.mcw || hr <= 0) break
      if (hl < c.mcw) continue
      out.push({ j, bin: b, backward: false, glq, hl })
    }
    if (missH !== 0) {
      let grq = 0
      let hr = 0
      for (let b = nb - 1; b >= 0; b--) {
        const hb = n[o + b]
        if (hb === 0) continue
        grq += g[o + b]
        hr += hb
        const hl2 = h - hr
        if (hl2 < c.mcw || hl2 <= 0) break
        if (hr < c.mcw) continue
        out.push({ j, bin: b, backward: true, glq: gq - grq, hl: hl2 })
      }
    }
  }
  return out
}

/** The CPU engine's choice from a node's whole histogram (the fallback, and the tests' oracle for the filter). */
export function chooseFromHistogram(hist: NodeHistogram, gq: number, h: number, inv: number, c: SplitCoefs): SplitChoice {
  return chooseFromCandidates(candidatesOfHistogram(hist, h, gq, c), gq, h, inv, c)
}

/** Whether the node (h rows) is split by its choice (rules.ts: splitApplies). */
export function choiceApplies(s: SplitChoice, h: number, c: SplitCoefs): boolean {
  return splitApplies(s.found, s.best, s.hl, h, c)
}
