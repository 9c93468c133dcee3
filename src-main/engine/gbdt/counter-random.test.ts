// The counter-based generator (counter-random.ts) and the row draws both tree engines take from it
// (rules.ts ModelSampler.rows): pinned bits (the WGSL twin is checked against these functions on a
// device in ../gbdt-webgpu/counter-random-wgsl.test.ts), a tree's draw a function of (seed, tree, row)
// alone, the fraction drawn within a binomial bound, trees drawn independently, held-out rows never.
import { describe, expect, it } from 'vitest'
import { counterBits, counterKey, keyedBits, mix32, probabilityThreshold } from './counter-random'
import { ModelSampler, ROW_STREAM } from './rules'

const ROWS = 100_000

/** |count − n·p| within 5 standard deviations of a binomial(n, p): a false alarm about once in 3.5 million */
function expectBinomial(count: number, n: number, p: number): void {
  expect(Math.abs(count - n * p)).toBeLessThan(5 * Math.sqrt(n * p * (1 - p)))
}

describe('the counter-based generator', () => {
  it('is pinned: these bits are the trees of every subsampled model (a change re-draws them all)', () => {
    // lowbias32's own values
    expect([mix32(0), mix32(1), mix32(0xffffffff)]).toEqual([0, 1753845952, 1734902346])
    const cases: [number, number, number, number][] = [
      [0, 0, 0, 0],
      [1, 2, 3, 4],
      [7, 2, 0, 199999],
      [0xffffffff, 1, 99, 0xffffffff],
    ]
    expect(cases.map(([s, st, c, i]) => counterBits(s, st, c, i))).toEqual([2433943828, 3523648730, 3474079218, 2470113154])
    // a negative seed is its u32 (as the Rng takes it)
    expect(counterBits(-1, 1, 99, 0xffffffff)).toBe(counterBits(0xffffffff, 1, 99, 0xffffffff))
    expect(keyedBits(counterKey(7, 2, 0), 199999)).toBe(counterBits(7, 2, 0, 199999))
  })

  it('gives uniform bits: each of the 32 bits set about half the time, the top byte flat', () => {
    const n = 65536
    const ones = new Array<number>(32).fill(0)
    const byTopByte = new Array<number>(256).fill(0)
    for (let i = 0; i < n; i++) {
      const b = counterBits(11, ROW_STREAM, i >>> 8, i & 255)
      for (let k = 0; k < 32; k++) ones[k] += (b >>> k) & 1
      byTopByte[b >>> 24]++
    }
    for (const c of ones) expectBinomial(c, n, 0.5)
    // chi-square with 255 degrees of freedom: mean 255, sd ≈ 22.6; 400 is 6.4 sd out
    const e = n / 256
    const chi2 = byTopByte.reduce((s, c) => s + (c - e) ** 2 / e, 0)
    expect(chi2).toBeLessThan(400)
  })

  it('maps a probability to the u32 threshold of uniform() < p exactly, and refuses what is not one below 1', () => {
    expect(probabilityThreshold(0)).toBe(0)
    expect(probabilityThreshold(0.5)).toBe(2 ** 31)
    expect(probabilityThreshold(0.8)).toBe(Math.ceil(0.8 * 2 ** 32))
    expect(probabilityThreshold(1 - 2 ** -53)).toBe(0xffffffff)
    // bits < t ⟺ bits / 2^32 < p, at the boundary
    const t = probabilityThreshold(0.3)
    expect((t - 1) / 2 ** 32 < 0.3 && t / 2 ** 32 >= 0.3).toBe(true)
    for (const bad of [1, 1.5, -0.1, NaN]) expect(() => probabilityThreshold(bad)).toThrow(/probability below 1/)
  })
})

describe('ModelSampler.rows: the row draws of both engines', () => {
  it('draws tree t from (seed, t, row) alone: in any order, again, the same rows; another tree or seed other rows', () => {
    const a = new ModelSampler(5, 10, { subsample: 0.6, colsampleBytree: 1 })
    const b = new ModelSampler(5, 10, { subsample: 0.6, colsampleBytree: 1 })
    const rowsOf = (s: ModelSampler, tree: number) => {
      const sampled = new Uint8Array(5000)
      s.rows(sampled, tree)
      return sampled
    }
    const tree7 = rowsOf(a, 7)
    rowsOf(b, 3)
    rowsOf(b, 0)
    expect(rowsOf(b, 7)).toEqual(tree7)
    expect(rowsOf(a, 7)).toEqual(tree7)
    for (let r = 0; r < 5000; r++) expect(tree7[r]).toBe(counterBits(5, ROW_STREAM, 7, r) < probabilityThreshold(0.6) ? 1 : 0)
    expect(rowsOf(a, 8)).not.toEqual(tree7)
    expect(rowsOf(new ModelSampler(6, 10, { subsample: 0.6, colsampleBytree: 1 }), 7)).not.toEqual(tree7)
  })

  it('samples a fraction ≈ subsample (binomial bound), each tree independently of the last', () => {
    for (const subsample of [0.05, 0.3, 0.8, 0.97]) {
      const s = new ModelSampler(123, 4, { subsample, colsampleBytree: 1 })
      const prev = new Uint8Array(ROWS)
      const cur = new Uint8Array(ROWS)
      s.rows(prev, 0)
      for (let tree = 1; tree <= 3; tree++) {
        const count = s.rows(cur, tree)
        expect(count).toBe(cur.reduce((x, v) => x + v, 0))
        expectBinomial(count, ROWS, subsample)
        // two trees share a row with p² (independent draws), not p
        let both = 0
        for (let r = 0; r < ROWS; r++) both += prev[r] & cur[r]
        expectBinomial(both, ROWS, subsample * subsample)
        prev.set(cur)
      }
    }
  })

  it('never samples the held-out rows, and takes every other row at subsample 1', () => {
    const heldOut = { begin: 1000, end: 3500 }
    const sampled = new Uint8Array(10_000)
    const s = new ModelSampler(9, 4, { subsample: 0.5, colsampleBytree: 1 }, heldOut)
    for (let tree = 0; tree < 5; tree++) {
      const count = s.rows(sampled, tree)
      expect(sampled.subarray(heldOut.begin, heldOut.end).every((v) => v === 0)).toBe(true)
      expect(count).toBe(sampled.reduce((x, v) => x + v, 0))
      expectBinomial(count, 10_000 - 2500, 0.5)
    }
    const all = new ModelSampler(9, 4, { subsample: 1, colsampleBytree: 1 }, heldOut)
    expect(all.rows(sampled, 3)).toBe(10_000 - 2500)
    expect(sampled.subarray(0, heldOut.begin).every((v) => v === 1) && sampled.subarray(heldOut.end).every((v) => v === 1)).toBe(true)
  })
})
