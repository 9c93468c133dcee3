// The binned training matrix, computed once per data set and shared by every model trained on it.
// Feature-major (bins[f·rows + r]): the histogram loop reads one feature's column at a time, which
// stays in L1/L2 while every node (and, batched, every model) that samples the feature uses it.
import { MAX_TRAIN_ROWS } from './params'
import { computeCuts, type GbdtCuts } from './quantile'

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
  const hasMissing = new Uint8Array(features)
  const width = new Int32Array(features)
  for (let f = 0; f < features; f++) {
    nBins[f] = cuts.ptrs[f + 1] - cuts.ptrs[f]
    for (let r = 0; r < rows; r++) {
      if (Number.isNaN(x[r * features + f])) {
        hasMissing[f] = 1
        break
      }
    }
    width[f] = nBins[f] + hasMissing[f]
  }
  const wide = width.some((w) => w > 256)
  const bins = wide ? new Uint16Array(rows * features) : new Uint8Array(rows * features)
  const cv = cuts.values
  for (let f = 0; f < features; f++) {
    const lo0 = cuts.ptrs[f]
    const end = cuts.ptrs[f + 1]
    const missingBin = nBins[f]
    const base = f * rows
    for (let r = 0; r < rows; r++) {
      const v = x[r * features + f]
      if (v !== v) {
        bins[base + r] = missingBin
        continue
      }
      let lo = lo0
      let hi = end
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (cv[mid] > v) hi = mid
        else lo = mid + 1
      }
      bins[base + r] = (lo === end ? end - 1 : lo) - lo0
    }
  }
  return { rows, features, cuts, nBins, hasMissing, width, bins, y: yf }
}
