// Gradient quantisation: the one rule the CPU engine and the WGSL engine share, so their histogram
// sums, and hence their trees, are bit-identical.
//
// Per model and per round, over the rows sampled for that round:
//   g_r  = fround(pred_r − y_r)                      float32, as XGBoost computes it (h_r = 1)
//   M    = max_r |g_r|
//   e    = the integer with 2^(e−1) ≤ M < 2^e        (e = 0 when M = 0, which makes every q_r 0)
//   k    = 30 − e                                    scale = 2^k (a power of two: g·2^k is exact)
//   q_r  = trunc(g_r · 2^k)                          toward zero; |q_r| ≤ 2^30 − 1, fits an i32
// Histogram sums are plain integer sums of q_r (gradient) and of 1 per row (hessian = row count).
// With at most 2^23 training rows, |any sum| < 2^23 · 2^30 = 2^53, so float64 holds it exactly in
// any order (and 2^53 < 2^63 for the GPU's two-u32 sums). Dequantised: G = Σq · 2^−k (exact).

/** Most training rows for which every sum of quantised gradients is an exact double. */
export const QUANT_MAX_ROWS = 2 ** 23
/** Per-row bound: |q| < 2^QUANT_BITS. */
export const QUANT_BITS = 30

/** The exponent k of the scale 2^k for gradients whose largest magnitude is `maxAbs`. */
export function quantExponent(maxAbs: number): number {
  if (!(maxAbs > 0)) return QUANT_BITS
  if (!Number.isFinite(maxAbs)) throw new RangeError('gradient is not finite')
  let e = Math.floor(Math.log2(maxAbs)) + 1
  while (maxAbs >= 2 ** e) e++
  while (maxAbs < 2 ** (e - 1)) e--
  return QUANT_BITS - e
}

/** q = trunc(g · 2^k). */
export function quantise(g: number, k: number): number {
  return Math.trunc(g * 2 ** k)
}
