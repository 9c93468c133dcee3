// The binned training matrix, computed once per data set and shared by every model trained on it.
// Feature-major (bins[f·rows + r]): the histogram loop reads one feature's column at a time, which
// stays in L1/L2 while every node (and, batched, every model) that samples the feature uses it.
import { aligned, createScratchKernel, kernelName, type KernelName, type ScratchKernel } from './kernel'
import { COLUMN_BLOCK, copyColumns, CutsBuilder, type GbdtCuts } from './quantile'
import { MAX_TRAIN_ROWS } from './rules'

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
 * `maxBin` (computeCuts's, unless given), and keeps the float32 labels. The same inputs give the same
 * bytes in every process, and with either `kernel` (who runs the sketch and binFeature: the wasm
 * kernel, or the TypeScript loops).
 */
export function prepareGbdtData(
  x: Float32Array,
  y: Float32Array | Float64Array | readonly number[],
  rows: number,
  features: number,
  maxBin = 256,
  cutsGiven?: GbdtCuts,
  kernel: KernelName = kernelName(),
): GbdtData {
  if (!Number.isInteger(rows) || rows < 1 || rows > MAX_TRAIN_ROWS) {
    throw new RangeError(`rows must be an integer in [1, ${MAX_TRAIN_ROWS}], got ${rows}`)
  }
  if (!Number.isInteger(features) || features < 1) throw new RangeError(`features must be an integer ≥ 1, got ${features}`)
  if (x.length !== rows * features) throw new RangeError(`x has ${x.length} values, expected ${rows}×${features}`)
  if (y.length !== rows) throw new RangeError(`y has ${y.length} values, expected ${rows}`)
  if (cutsGiven && cutsGiven.features !== features) throw new RangeError('cuts were computed for another feature count')
  const yf = Float32Array.from(y)
  for (let r = 0; r < rows; r++) if (!Number.isFinite(yf[r])) throw new RangeError(`label of row ${r} is not finite`)

  // which features have missing values is found while binning them (no pass of its own over x); a
  // feature of 256 bins that has some needs 257 slots, so the rare matrix found wide then is binned
  // again as Uint16
  const hasMissing = new Uint8Array(features)
  // without cuts given, each block of x is binned from the copy its cuts were computed on (a feature has
  // ≤ maxBin bins, so Uint8 unless maxBin > 256)
  const fused = cutsGiven || maxBin > 256 ? null : cutsAndBins(x, rows, features, maxBin, hasMissing, kernel)
  const cuts = cutsGiven ?? fused?.cuts ?? CutsBuilder.cuts(x, rows, features, maxBin, kernel)
  const nBins = new Int32Array(features)
  for (let f = 0; f < features; f++) nBins[f] = cuts.ptrs[f + 1] - cuts.ptrs[f]
  const wide = nBins.some((nb) => nb > 256)
  const bin = (wide: boolean) => binMatrix(x, rows, features, cuts, nBins, hasMissing, wide, kernel)
  const bins = fused?.bins ?? bin(wide) ?? bin(true)!
  const width = new Int32Array(features)
  for (let f = 0; f < features; f++) width[f] = nBins[f] + hasMissing[f]
  return { rows, features, cuts, nBins, hasMissing, width, bins, y: yf }
}

/**
 * The cuts, and the Uint8 feature-major bins with each feature's hasMissing (null if a feature turns out to
 * need 257 slots), in one pass over x: a block's columns, copied once, give the block's cuts, then its bins.
 */
function cutsAndBins(x: Float32Array, rows: number, features: number, maxBin: number, hasMissing: Uint8Array, kernel: KernelName) {
  const builder = new CutsBuilder(x, rows, features, maxBin, kernel, binScratchBytes(rows, maxBin))
  try {
    let bins: Uint8Array | null = new Uint8Array(rows * features)
    const binner = featureBinner(builder.kernel, builder.extraAt, rows, maxBin)
    const cols = builder.cols
    for (let f0 = 0; f0 < features; f0 += COLUMN_BLOCK) {
      const f1 = Math.min(features, f0 + COLUMN_BLOCK)
      builder.copyBlock(f0, f1)
      for (let f = f0; f < f1; f++) builder.addFeature(f)
      if (!bins) continue
      // the sketch moved non-missing values to the front of some column: the block again, as in x
      if (builder.compacted) builder.copyBlock(f0, f1)
      for (let f = f0; f < f1 && bins; f++) {
        const cv = builder.featureCuts(f)
        const missing = binner(cols.subarray((f - f0) * rows, (f - f0 + 1) * rows), cv, 0, cv.length, bins.subarray(f * rows, (f + 1) * rows))
        hasMissing[f] = missing ? 1 : 0
        if (missing && cv.length + 1 > 256) bins = null
      }
    }
    return { cuts: builder.finish(), bins }
  } finally {
    builder.release()
  }
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
  kernel: KernelName,
): Uint8Array | Uint16Array | null {
  const bins = wide ? new Uint16Array(rows * features) : new Uint8Array(rows * features)
  const block = Math.min(COLUMN_BLOCK, features)
  // features in blocks copied out of row-major x: one sequential read of x per block; the wasm kernel's
  // memory holds the block, then binFeature's scratch
  const colsBytes = aligned(4 * rows * block)
  let k = kernel === 'wasm' ? createScratchKernel() : null
  if (k && !k.reserve(colsBytes + binScratchBytes(rows, cuts.maxBin))) k = null
  const binner = featureBinner(k, colsBytes, rows, cuts.maxBin)
  const cols = k ? new Float32Array(k.buffer, 0, rows * block) : new Float32Array(rows * block)
  for (let f0 = 0; f0 < features; f0 += COLUMN_BLOCK) {
    const f1 = Math.min(features, f0 + COLUMN_BLOCK)
    copyColumns(x, rows, features, f0, f1, cols)
    for (let f = f0; f < f1; f++) {
      const values = cols.subarray((f - f0) * rows, (f - f0 + 1) * rows)
      const missing = binner(values, cuts.values, cuts.ptrs[f], nBins[f], bins.subarray(f * rows, (f + 1) * rows))
      hasMissing[f] = missing ? 1 : 0
      if (missing && !wide && nBins[f] + 1 > 256) return null
    }
  }
  return bins
}

/** the scratch bytes of featureBinner's wasm kernel: a feature's cuts (≤ maxBin), the grid and a feature's bins */
function binScratchBytes(rows: number, maxBin: number): number {
  return aligned(4 * maxBin) + aligned(4 * BIN_GRID) + 2 * rows
}

/**
 * binFeature(values, cv, lo0, nb, out) for one feature: the wasm kernel's binValues when `k` is given
 * (values then a view of its memory; its scratch, binScratchBytes, at `at`), else the TypeScript loop.
 */
function featureBinner(k: ScratchKernel | null, at: number, rows: number, maxBin: number) {
  if (!k) {
    const grid = new Int32Array(BIN_GRID)
    return (values: Float32Array, cv: Float32Array, lo0: number, nb: number, out: Uint8Array | Uint16Array) => binFeature(values, cv, lo0, nb, out, grid)
  }
  const buffer = k.buffer
  const cutsAt = at
  const gridAt = cutsAt + aligned(4 * maxBin)
  const outAt = gridAt + aligned(4 * BIN_GRID)
  const cuts = new Float32Array(buffer, cutsAt, maxBin)
  const grid = new Int32Array(buffer, gridAt, BIN_GRID)
  const out8 = new Uint8Array(buffer, outAt, rows)
  const out16 = new Uint16Array(buffer, outAt, rows)
  return (values: Float32Array, cv: Float32Array, lo0: number, nb: number, out: Uint8Array | Uint16Array): boolean => {
    cuts.set(cv.subarray(lo0, lo0 + nb))
    const start = valueGrid(cuts, 0, nb, grid)
    const wide = out instanceof Uint16Array
    const cells = start ? BIN_GRID : 0
    const missing = k.exports.binValues(values.byteOffset, values.length, cutsAt, nb, gridAt, cells, start?.c0 ?? 0, start?.perCell ?? 0, outAt, wide ? 1 : 0)
    out.set(wide ? out16 : out8)
    return missing !== 0
  }
}

/** cells of the value grid that gives binFeature its starting bin */
const BIN_GRID = 8192

/**
 * One feature's values → its bins: upper_bound(cuts, v), clamped to the last bin, NaN to the missing
 * bin. A grid over [first cut, last non-sentinel cut] gives a starting bin; the two loops then move
 * it to the exact answer. Returns whether some value was missing (NaN).
 */
function binFeature(values: Float32Array, cv: Float32Array, lo0: number, nb: number, out: Uint8Array | Uint16Array, grid: Int32Array): boolean {
  const missingBin = nb
  const start = valueGrid(cv, lo0, nb, grid)
  const c0 = start?.c0 ?? 0
  const perCell = start?.perCell ?? 0
  let missing = false
  for (let r = 0; r < values.length; r++) {
    const v = values[r]
    if (v !== v) {
      out[r] = missingBin
      missing = true
      continue
    }
    let b = 0
    if (start) {
      // any starting bin is right after the loops below: a product, not an exact division
      const t = (v - c0) * perCell
      b = grid[t < 0 ? 0 : t >= BIN_GRID ? BIN_GRID - 1 : t | 0]
    }
    while (b > 0 && cv[lo0 + b - 1] > v) b--
    while (b < nb - 1 && cv[lo0 + b] <= v) b++
    out[r] = b
  }
  return missing
}

/**
 * The value grid of a feature's nb cuts at cv[lo0 …]: BIN_GRID cells over [first cut, last non-sentinel
 * cut], cell c's bin the first whose cut is above the cell's start; null when the cuts are too few or too
 * close for one (binFeature then starts from bin 0).
 */
function valueGrid(cv: Float32Array, lo0: number, nb: number, grid: Int32Array): { c0: number; perCell: number } | null {
  const c0 = cv[lo0]
  const cL = cv[lo0 + Math.max(0, nb - 2)]
  const w = (cL - c0) / BIN_GRID
  const perCell = 1 / w
  if (!(nb >= 3 && w > 0 && Number.isFinite(w) && Number.isFinite(perCell))) return null
  // the cells' starts ascend, so each cell's bin is found from the previous one's: one walk over the cuts
  let b = 0
  for (let c = 0; c < BIN_GRID; c++) {
    const start = c0 + c * w
    while (b < nb - 1 && cv[lo0 + b] <= start) b++
    grid[c] = b
  }
  return { c0, perCell }
}
