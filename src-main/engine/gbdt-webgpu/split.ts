// The split decision on the host, where the device cannot take it (gains that could overflow
// float32, or α·2^k not an integer) and in the tests that check the device's: the CPU engine's own
// scan (../gbdt/rules.ts scanFeature) on a node's whole histogram read back, from exact integers,
// so the choice is the CPU engine's bit for bit.
import { scanFeature, type SplitCoefs, splitApplies, SplitSearch } from '../gbdt/rules'

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
  /** the left child's hessian sum (squared error: its rows) */
  hl: number
  /** the left child's rows (squared error: hl) */
  rowsL: number
}

const NOT_FOUND: SplitChoice = { found: false, best: 0, j: -1, bin: -1, defaultLeft: false, glq: 0, hl: 0, rowsL: 0 }

/** One node's histogram as read back: per sampled feature j, its slots from offset[j] (nBins[j] value bins, then the missing slot if any). */
export interface NodeHistogram {
  /** per slot [Σq, rows] (a classifier's [Σq, Σqh]), interleaved (exact integers): the CPU engine's layout */
  slots: Float64Array
  offset: Int32Array
  nBins: Int32Array
  hasMissing: Uint8Array
}

/** The CPU engine's choice from a node's whole histogram: its own scan (the fallback, and the tests' oracle for the filter). */
export function chooseFromHistogram(hist: NodeHistogram, gq: number, h: number, inv: number, c: SplitCoefs, invH = 1): SplitChoice {
  const search = new SplitSearch(gq, h)
  search.startSearch(inv, c, invH)
  for (let j = 0; j < hist.offset.length; j++) {
    scanFeature(search, hist.slots, 2 * hist.offset[j], hist.nBins[j], hist.hasMissing[j] === 1, j, inv, c, undefined, invH)
  }
  return choiceOf(search)
}

/** a finished search as the node's choice */
function choiceOf(search: SplitSearch): SplitChoice {
  if (!search.found) return NOT_FOUND
  return {
    found: true,
    best: search.best,
    j: search.feature,
    bin: search.bin,
    defaultLeft: search.defaultLeft,
    glq: search.glq,
    hl: search.hl,
    rowsL: search.hl,
  }
}

/** Whether the node (hessian sum h: squared error's rows) is split by its choice (rules.ts: splitApplies). */
export function choiceApplies(s: SplitChoice, h: number, c: SplitCoefs): boolean {
  return splitApplies(s.found, s.best, s.hl, h, c)
}
