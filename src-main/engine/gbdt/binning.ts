// The binned training matrix, computed once per data set and shared by every model trained on it.
// Feature-major (bins[f·rows + r]): the histogram loop reads one feature's column at a time, which
// stays in L1/L2 while every node (and, batched, every model) that samples the feature uses it.
import { MAX_TRAIN_ROWS } from './rules'
import { COLUMN_BLOCK, computeCuts, copyColumns, type GbdtCuts } from './quantile'

export interface GbdtData {
  rows: number
  features: number
  cuts: GbdtCuts
  /** per feature: number of value bins (= its number of cuts) */
  nBins: Int32Array
  /** per feature: 1 when some training row is NaN there; missing rows then take bin nBins[f] */
  hasMissing: Uint8Array
  /** per feature: histogram slots = nBins + hasMissing */
  width: Int32Array
  /** feature-major bin ids; Uint16Array only when a feature needs 257 slots (256 bins + missing) */
  bins: Uint8Array | Uint16Array
  /** float32 labels */
  y: Float32Array
}

/**
 * Bins row-major float32 features x[rows × features] (NaN = missing) with XGBoost 1.7's cuts for
 * `maxBin`, and keeps the float32 labels. The same inputs give the same bytes in every process.
 */
export function prepareGbdtData(
  x: Float32Array,
  y: Float32Array | Float64Array | readonly number[],
  rows: number,
  features: number,
  maxBin = 256,
  cuts: GbdtCuts = computeCuts(x, rows, features, maxBin),
): GbdtData {
  if (!Number.isInteger(rows) || rows < 1 || rows > MAX_TRAIN_ROWS) {
    throw new RangeError(`rows must be an integer in [1, ${MAX_TRAIN_ROWS}], got ${rows}`)
  }
  if (!Number.isInteger(features) || features < 1) throw new RangeError(`features must be an integer ≥ 1, got ${features}`)
  if (x.length !== rows * features) throw new RangeError(`x has ${x.length} values, expected ${rows}×${features}`)
  if (y.length !== rows) throw new RangeError(`y has ${y.length} values, expected ${rows}`)
  if (cuts.features !== features) throw new RangeError('cuts were computed for another feature count')
  const yf = Float32Array.from(y)
  for (let r = 0; r < rows; r++) if (!Number.isFinite(yf[r])) throw new RangeError(`label of row ${r} is not finite`)

  const nBins = new Int32Array(features)
  for (let f = 0; f < features; f++) nBins[f] = cuts.ptrs[f + 1] - cuts.ptrs[f]
  // which features have missing values is found while binning them (no pass of its own over x); a
  // feature of 256 bins that has some needs 257 slots, so the rare matrix found wide then is binned
  // again as Uint16
  const hasMissing = new Uint8Array(features)
  const wide = nBins.some((nb) => nb > 256)
  const bins = binMatrix(x, rows, features, cuts, nBins, hasMissing, wide) ?? binMatrix(x, rows, features, cuts, nBins, hasMissing, true)!
  const width = new Int32Array(features)
  for (let f = 0; f < features; f++) width[f] = nBins[f] + hasMissing[f]
  return { rows, features, cuts, nBins, hasMissing, width, bins, y: yf }
}

/**
 * The feature-major bins of x, as Uint16 if `wide`, and each feature's hasMissing; null when Uint8
 * was asked for and a feature turns out to need 257 slots (256 bins and missing values).
 */
function binMatrix(
  x: Float32Array,
  rows: number,
  features: number,
  cuts: GbdtCuts,
  nBins: Int32Array,
  hasMissing: Uint8Array,
  wide: boolean,
): Uint8Array | Uint16Array | null {
  const bins = wide ? new Uint16Array(rows * features) : new Uint8Array(rows * features)
  const grid = new Int32Array(BIN_GRID)
  // features in blocks copied out of row-major x: one sequential read of x per block
  const cols = new Float32Array(rows * Math.min(COLUMN_BLOCK, features))
  for (let f0 = 0; f0 < features; f0 += COLUMN_BLOCK) {
    const f1 = Math.min(features, f0 + COLUMN_BLOCK)
    copyColumns(x, rows, features, f0, f1, cols)
    for (let f = f0; f < f1; f++) {
      const missing = binFeature(cols.subarray((f - f0) * rows, (f - f0 + 1) * rows), cuts, f, nBins[f], bins.subarray(f * rows, (f + 1) * rows), grid)
      hasMissing[f] = missing ? 1 : 0
      if (missing && !wide && nBins[f] + 1 > 256) return null
    }
  }
  return bins
}

/** cells of the value grid that gives binFeature its starting bin */
const BIN_GRID = 1024

/**
 * One feature's values → its bins: upper_bound(cuts, v), clamped to the last bin, NaN to the missing
 * bin. A grid over [first cut, last non-sentinel cut] gives a starting bin; the two loops then move
 * it to the exact answer. Returns whether some value was missing (NaN).
 */
function binFeature(values: Float32Array, cuts: GbdtCuts, f: number, nb: number, out: Uint8Array | Uint16Array, grid: Int32Array): boolean {
  const cv = cuts.values
  const lo0 = cuts.ptrs[f]
  const missingBin = nb
  const c0 = cv[lo0]
  const cL = cv[lo0 + Math.max(0, nb - 2)]
  const w = (cL - c0) / BIN_GRID
  const useGrid = nb >= 3 && w > 0 && Number.isFinite(w)
  if (useGrid) {
    // the cells' starts ascend, so each cell's bin is found from the previous one's: one walk over the cuts
    let b = 0
    for (let c = 0; c < BIN_GRID; c++) {
      const start = c0 + c * w
      while (b < nb - 1 && cv[lo0 + b] <= start) b++
      grid[c] = b
    }
  }
  let missing = false
  for (let r = 0; r < values.length; r++) {
    const v = values[r]
    if (v !== v) {
      out[r] = missingBin
      missing = true
      continue
    }
    let b = 0
    if (useGrid) {
      let c = Math.floor((v - c0) / w)
      c = c < 0 ? 0 : c >= BIN_GRID ? BIN_GRID - 1 : c
      b = grid[c]
    }
    while (b > 0 && cv[lo0 + b - 1] > v) b--
    while (b < nb - 1 && cv[lo0 + b] <= v) b++
    out[r] = b
  }
  return missing
}
