// Seeded pseudo-random numbers in plain JS, so data and initial weights are the same bytes on every
// backend and in every process (tfjs's own RNG treats seed 0 as "unseeded"; ours never sees 0). In the
// vocabulary because the service draws the user's data's row sample exactly as a worker does
// (src-main/data/row-sample.ts), and only workers import the engine.

/** sfc32: small, fast, well-distributed 32-bit generator (PractRand-clean). */
export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number
  private spare: number | null = null

  constructor(seed: number, stream = 0) {
    this.a = 0x9e3779b9
    this.b = 0x243f6a88 ^ (stream >>> 0)
    this.c = 0xb7e15162
    this.d = seed >>> 0
    for (let i = 0; i < 15; i++) this.nextUint32()
  }

  nextUint32(): number {
    this.a >>>= 0
    this.b >>>= 0
    this.c >>>= 0
    this.d >>>= 0
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** uniform in [0, 1) */
  uniform(): number {
    return this.nextUint32() / 4294967296
  }

  /** standard normal (Box–Muller, both values used) */
  normal(): number {
    if (this.spare !== null) {
      const s = this.spare
      this.spare = null
      return s
    }
    let u = 0
    while (u === 0) u = this.uniform()
    const v = this.uniform()
    const r = Math.sqrt(-2 * Math.log(u))
    this.spare = r * Math.sin(2 * Math.PI * v)
    return r * Math.cos(2 * Math.PI * v)
  }

  /** integer in [0, n) */
  below(n: number): number {
    return Math.floor(this.uniform() * n)
  }
}

/** Mixes two integers into one 32-bit seed (for per-epoch shuffles derived from the data seed). */
export function mixSeed(a: number, b: number): number {
  let h = Math.imul((a ^ 0x85ebca6b) >>> 0, 0xc2b2ae35) ^ Math.imul((b + 0x27d4eb2f) >>> 0, 0x165667b1)
  h ^= h >>> 15
  h = Math.imul(h, 0x2c1b3c6d)
  h ^= h >>> 12
  return h >>> 0
}

/** Fisher–Yates permutation of 0..n-1. */
export function permutation(n: number, rng: Rng): Int32Array {
  const p = new Int32Array(n)
  for (let i = 0; i < n; i++) p[i] = i
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1)
    const t = p[i]
    p[i] = p[j]
    p[j] = t
  }
  return p
}
