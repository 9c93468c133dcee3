// A counter-based generator: 32 random bits as a pure function of (seed, stream, counter, index),
// in u32 arithmetic only (xor, shifts, wrapping multiplies), so WGSL computes the very same bits
// (COUNTER_RANDOM_WGSL) and a GPU can draw a row's sample itself instead of the host drawing every
// row in order. Both tree engines sample rows with it (rules.ts ModelSampler): a tree's draw for a
// row needs only the tree's index, so nothing is replayed to continue a model and no draw depends
// on another. Decisions compare the bits with a u32 threshold (no floats), so they agree bit for bit.

/** Wellons' lowbias32: a bijection of u32 with low avalanche bias (every input bit flips each output bit with p ≈ ½). */
export function mix32(x: number): number {
  x ^= x >>> 16
  x = Math.imul(x, 0x7feb352d)
  x ^= x >>> 15
  x = Math.imul(x, 0x846ca68b)
  x ^= x >>> 16
  return x >>> 0
}

/** the key of one (seed, stream, counter): each word mixed in through the bijection, one after another (the seed offset: mix32(0) = 0) */
export function counterKey(seed: number, stream: number, counter: number): number {
  return mix32(mix32(mix32((seed ^ SEED_OFFSET) >>> 0) ^ (stream >>> 0)) ^ (counter >>> 0))
}

/** 2^32/φ: keeps seed 0's key off mix32's fixed point 0 */
const SEED_OFFSET = 0x9e3779b9

/**
 * 32 bits for `index` under (seed, stream, counter). Two keyed rounds: with one, two counters' draws
 * would be the same bits at indices xor-shifted by the keys' difference.
 */
export function counterBits(seed: number, stream: number, counter: number, index: number): number {
  return keyedBits(counterKey(seed, stream, counter), index)
}

/** counterBits of `index` under a key made once by counterKey (a loop over indices makes it once) */
export function keyedBits(key: number, index: number): number {
  return mix32(((mix32((index ^ key) >>> 0) + key) | 0) >>> 0)
}

/**
 * The u32 threshold t with (bits < t) ⟺ bits / 2^32 < p for a probability p in [0, 1): ⌈p·2^32⌉
 * (exact: a power-of-two scale), at most 2^32 − 1 (p within 2^−32 of 1 then misses one value in 2^32).
 */
export function probabilityThreshold(p: number): number {
  if (!(p >= 0 && p < 1)) throw new RangeError(`a probability below 1 is drawn against a threshold, got ${p}`)
  return Math.min(Math.ceil(p * 4294967296), 0xffffffff)
}

/** The same functions in WGSL (u32 multiplies wrap, as Math.imul): `mix32`, `counterKey`, `keyedBits`, `counterBits`. */
export const COUNTER_RANDOM_WGSL = /* wgsl */ `
fn mix32(x0: u32) -> u32 {
  var x = x0;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}
fn counterKey(seed: u32, stream: u32, counter: u32) -> u32 { return mix32(mix32(mix32(seed ^ ${SEED_OFFSET}u) ^ stream) ^ counter); }
fn keyedBits(key: u32, index: u32) -> u32 { return mix32(mix32(index ^ key) + key); }
fn counterBits(seed: u32, stream: u32, counter: u32, index: u32) -> u32 { return keyedBits(counterKey(seed, stream, counter), index); }
`
