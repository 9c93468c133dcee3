// Gradient quantisation: the one rule the CPU engine and the WGSL engine share, so their histogram
// sums, and hence their trees, are bit-identical. Per model and round, g = fround(pred − y), scaled
// by 2^k (k = 30 − the exponent of max |g|) and truncated to an i32; histogram sums are integer
// sums below 2^53, exact in any order. A classifier's hessians are quantised by the same rule with
// their own k (squared error's are 1 a row, scale 1). The rule step by step: README.md, "Gradient
// quantisation".

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
