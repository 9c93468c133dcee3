// The split decision on the host, exact: the tree rules both engines follow (../gbdt/rules.ts: the
// float32 arithmetic, the first-strictly-greater rule over features ascending, forward bins
// ascending, backward bins descending, when a split applies), applied either to the few candidates
// the GPU's filter sends back (with their exact integer sums) or, as a fallback, to a node's whole
// histogram read back (there the CPU engine's own scanFeature runs). Inputs are integers (Σq, row counts), so both paths give the CPU engine's
// choice bit for bit.
import { childrenGain, scanFeature, type SplitCoefs, splitApplies, SplitSearch } from '../gbdt/rules'

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

/**
 * The node's split from the filter's candidates (any order): offered to the CPU engine's split
 * search in its scan order, the first whose loss is strictly greater than every earlier one's and
 * than 0 wins. The filter sends every candidate that can hold the maximum loss, so this is the CPU
 * engine's choice.
 */
export function chooseFromCandidates(cands: readonly Candidate[], gq: number, h: number, inv: number, c: SplitCoefs): SplitChoice {
  if (cands.length === 0) return NOT_FOUND
  const search = new SplitSearch(gq, h)
  search.startSearch(inv, c)
  for (const k of [...cands].sort(scanOrder)) {
    search.offer(childrenGain(k.glq * inv, k.hl, (gq - k.glq) * inv, h - k.hl, c), k.j, k.backward ? k.bin - 1 : k.bin, k.backward, k.glq, k.hl)
  }
  return choiceOf(search)
}

/** One node's histogram as read back: per sampled feature j, its slots from offset[j] (nBins[j] value bins, then the missing slot if any). */
export interface NodeHistogram {
  /** per slot [Σq, rows], interleaved (exact integers): the CPU engine's layout */
  slots: Float64Array
  offset: Int32Array
  nBins: Int32Array
  hasMissing: Uint8Array
}

/** The CPU engine's choice from a node's whole histogram: its own scan (the fallback, and the tests' oracle for the filter). */
export function chooseFromHistogram(hist: NodeHistogram, gq: number, h: number, inv: number, c: SplitCoefs): SplitChoice {
  const search = new SplitSearch(gq, h)
  search.startSearch(inv, c)
  for (let j = 0; j < hist.offset.length; j++) {
    scanFeature(search, hist.slots, 2 * hist.offset[j], hist.nBins[j], hist.hasMissing[j] === 1, j, inv, c)
  }
  return choiceOf(search)
}

/** a finished search as the node's choice */
function choiceOf(search: SplitSearch): SplitChoice {
  if (!search.found) return NOT_FOUND
  return { found: true, best: search.best, j: search.feature, bin: search.bin, defaultLeft: search.defaultLeft, glq: search.glq, hl: search.hl }
}

/** Whether the node (h rows) is split by its choice (rules.ts: splitApplies). */
export function choiceApplies(s: SplitChoice, h: number, c: SplitCoefs): boolean {
  return splitApplies(s.found, s.best, s.hl, h, c)
}
