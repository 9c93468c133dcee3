// Cuts, bins and the gradient quantisation rule.
import { describe, expect, it } from 'vitest'
import { computeCuts, prepareGbdtData, QUANT_BITS, quantExponent, quantise } from './index'
import { binOf } from './quantile'
import { syntheticRegression } from './synthetic'

const f32 = Math.fround

function cutsOf(values: number[], maxBin = 256): number[] {
  const c = computeCuts(Float32Array.from(values), values.length, 1, maxBin)
  return Array.from(c.values.subarray(c.ptrs[0], c.ptrs[1]))
}

describe('quantile cuts (XGBoost 1.7.4 hist)', () => {
  it('≤ maxBin distinct values: the cuts are the values except the smallest, then the sentinel', () => {
    const vals = [0.5, 3, -2, 3, 0.5, 7, -2, 10]
    const sentinel = f32(10 + f32(10 + f32(1e-5)))
    expect(cutsOf(vals)).toEqual([0.5, 3, 7, 10, sentinel])
    // so every distinct value has its own bin, in order
    const d = prepareGbdtData(Float32Array.from(vals), new Float32Array(vals.length), vals.length, 1)
    expect(Array.from(d.bins)).toEqual([1, 2, 0, 2, 1, 3, 0, 4])
    expect(d.nBins[0]).toBe(5)
  })

  it('256 distinct values give 256 bins, one per value; a constant feature gets one bin', () => {
    const vals = Array.from({ length: 256 }, (_, i) => i / 8 - 3)
    const cuts = cutsOf([...vals, ...vals.slice().reverse()])
    expect(cuts.length).toBe(256)
    expect(cuts.slice(0, 255)).toEqual(vals.slice(1).map(f32))
    expect(cutsOf([4, 4, 4])).toEqual([f32(4 + f32(4 + f32(1e-5)))])
  })

  it('more values than bins: at most maxBin strictly increasing cuts, last one above the maximum', () => {
    for (const maxBin of [2, 16, 256]) {
      const d = syntheticRegression({ rows: 5000, features: 3, seed: 9 })
      const c = computeCuts(d.x, d.rows, d.features, maxBin)
      for (let f = 0; f < 3; f++) {
        const cuts = Array.from(c.values.subarray(c.ptrs[f], c.ptrs[f + 1]))
        expect(cuts.length).toBeLessThanOrEqual(maxBin)
        expect(cuts.length).toBeGreaterThanOrEqual(Math.min(maxBin, 2))
        for (let i = 1; i < cuts.length; i++) expect(cuts[i]).toBeGreaterThan(cuts[i - 1])
        let max = -Infinity
        for (let r = 0; r < d.rows; r++) max = Math.max(max, d.x[r * 3 + f])
        expect(cuts[cuts.length - 1]).toBeGreaterThan(max)
      }
    }
  })

  it('bin ≤ b ⇔ value < cut[b] for every training value, and NaN takes the missing bin', () => {
    const d = syntheticRegression({ rows: 3000, features: 6, seed: 4, missing: 0.1 })
    d.x[0] = -1e30
    d.x[7] = 1e30
    const p = prepareGbdtData(d.x, d.y, d.rows, d.features, 64)
    for (let f = 0; f < d.features; f++) {
      expect(p.hasMissing[f]).toBe(1)
      const cuts = p.cuts.values.subarray(p.cuts.ptrs[f], p.cuts.ptrs[f + 1])
      for (let r = 0; r < d.rows; r++) {
        const v = d.x[r * d.features + f]
        const b = p.bins[f * d.rows + r]
        if (Number.isNaN(v)) {
          expect(b).toBe(p.nBins[f])
          continue
        }
        expect(b).toBe(binOf(p.cuts, f, v))
        expect(v < cuts[b]).toBe(true)
        if (b > 0) expect(v < cuts[b - 1]).toBe(false)
      }
    }
  })

  it('is deterministic, and one all-NaN column gets one (unused) bin', () => {
    const d = syntheticRegression({ rows: 20000, features: 2, seed: 2 })
    for (let r = 0; r < d.rows; r++) d.x[r * 2 + 1] = NaN
    const a = computeCuts(d.x, d.rows, 2, 256)
    const b = computeCuts(d.x, d.rows, 2, 256)
    expect(Array.from(a.values)).toEqual(Array.from(b.values))
    expect(a.ptrs[2] - a.ptrs[1]).toBe(1)
    const p = prepareGbdtData(d.x, d.y, d.rows, 2, 256, a)
    expect([p.nBins[1], p.hasMissing[1], p.width[1]]).toEqual([1, 1, 2])
  })

  it('uses 16-bit bins only when a feature needs 257 slots (256 bins + missing)', () => {
    const rows = 600
    const x = new Float32Array(rows)
    for (let r = 0; r < rows; r++) x[r] = r % 300 === 0 ? NaN : r % 256
    expect(prepareGbdtData(x, new Float32Array(rows), rows, 1).bins).toBeInstanceOf(Uint16Array)
    for (let r = 0; r < rows; r++) x[r] = r % 255
    expect(prepareGbdtData(x, new Float32Array(rows), rows, 1).bins).toBeInstanceOf(Uint8Array)
  })

  it('a 256-bin feature with missing values after narrow ones: binned again as 16-bit, every bin and hasMissing as before', () => {
    const rows = 700
    const F = 3
    const x = new Float32Array(rows * F)
    for (let r = 0; r < rows; r++) {
      x[r * F] = (r * 7) % 40 // narrow, no missing values
      x[r * F + 1] = r % 97 === 5 ? NaN : (r * 3) % 50 // narrow, missing values
      x[r * F + 2] = r % 300 === 7 ? NaN : r % 256 // 256 bins and missing values: 257 slots
    }
    const d = prepareGbdtData(x, new Float32Array(rows), rows, F)
    expect(d.bins).toBeInstanceOf(Uint16Array)
    expect(Array.from(d.hasMissing)).toEqual([0, 1, 1])
    expect(Array.from(d.width)).toEqual([40, 51, 257])
    for (let f = 0; f < F; f++) {
      for (let r = 0; r < rows; r++) {
        const v = x[r * F + f]
        expect(d.bins[f * rows + r]).toBe(Number.isNaN(v) ? d.nBins[f] : binOf(d.cuts, f, v))
      }
    }
  })

  it('reads x once when the cuts are given (which features have missing values is found while binning)', () => {
    const d = syntheticRegression({ rows: 300, features: 4, seed: 2, missing: 0.1 })
    const cuts = computeCuts(d.x, d.rows, d.features, 64)
    let reads = 0
    const counted = new Proxy(d.x, {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++
        const v = Reflect.get(target, key)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
    const p = prepareGbdtData(counted, d.y, d.rows, d.features, 64, cuts)
    expect(reads).toBe(d.x.length)
    expect(Array.from(p.bins)).toEqual(Array.from(prepareGbdtData(d.x, d.y, d.rows, d.features, 64, cuts).bins))
    expect(Array.from(p.hasMissing)).toEqual([1, 1, 1, 1])
  })

  it("finds a value's starting bin from a grid built in one walk over a feature's cuts, not one per grid cell", () => {
    const d = syntheticRegression({ rows: 3000, features: 1, seed: 4 })
    const cuts = computeCuts(d.x, d.rows, 1, 256)
    expect(cuts.ptrs[1]).toBe(256)
    let reads = 0
    const values = new Proxy(cuts.values, {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++
        const v = Reflect.get(target, key)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
    const p = prepareGbdtData(d.x, d.y, d.rows, 1, 256, { ...cuts, values })
    for (let r = 0; r < d.rows; r++) expect(p.bins[r]).toBe(binOf(cuts, 0, d.x[r]))
    // the grid's 1024 cells and 256 cuts once, then a few steps a value; one walk per cell would be ~1024 · 128
    expect(reads).toBeLessThan(1024 + 256 + 8 * d.rows)
  })
})

describe('binning in the wasm kernel (binValues) ≡ the TypeScript loop (binFeature)', () => {
  it('the same bins and missing flags: continuous, few values, constant, all missing, extremes, uint16', () => {
    const rows = 5000
    const d = syntheticRegression({ rows, features: 7, seed: 12, missing: 0.05 })
    for (let r = 0; r < rows; r++) {
      d.x[r * 7 + 1] = Math.floor(d.x[r * 7 + 1] * 5) // few values
      d.x[r * 7 + 2] = 3 // constant: no grid
      d.x[r * 7 + 3] = NaN // all missing
      d.x[r * 7 + 4] = [1e30, -1e30, Infinity, -Infinity, 0, -0, 1e-40, NaN][r % 8] // extremes
      d.x[r * 7 + 5] = r % 3 === 0 ? d.x[r * 7 + 5] * 1e-30 : d.x[r * 7 + 5] // cuts far apart and close together
    }
    for (const maxBin of [2, 16, 256]) {
      const cuts = computeCuts(d.x, rows, 7, maxBin, 'ts')
      const wasm = prepareGbdtData(d.x, d.y, rows, 7, maxBin, cuts, 'wasm')
      const ts = prepareGbdtData(d.x, d.y, rows, 7, maxBin, cuts, 'ts')
      // 256 bins and missing values: 257 slots, so uint16 (found while binning, then binned again)
      expect(wasm.bins instanceof Uint16Array).toBe(maxBin === 256)
      expect(ts.bins instanceof Uint16Array).toBe(maxBin === 256)
      expect(Array.from(wasm.bins)).toEqual(Array.from(ts.bins))
      expect(Array.from(wasm.hasMissing)).toEqual(Array.from(ts.hasMissing))
      expect(Array.from(wasm.hasMissing)).toEqual([1, 1, 0, 1, 1, 1, 1])
    }
  })
})

describe('prepareGbdtData without cuts: cuts and bins from one copy of each block', () => {
  it('reads x once (no missing values), and gives computeCuts’ cuts and the same bins', () => {
    const d = syntheticRegression({ rows: 2000, features: 20, seed: 13 })
    let reads = 0
    const counted = new Proxy(d.x, {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++
        const v = Reflect.get(target, key)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
    for (const kernel of ['wasm', 'ts'] as const) {
      reads = 0
      const p = prepareGbdtData(counted, d.y, d.rows, d.features, 64, undefined, kernel)
      expect(reads).toBe(d.x.length)
      const cuts = computeCuts(d.x, d.rows, d.features, 64, kernel)
      expect(Array.from(p.cuts.values)).toEqual(Array.from(cuts.values))
      expect(Array.from(p.bins)).toEqual(Array.from(prepareGbdtData(d.x, d.y, d.rows, d.features, 64, cuts, kernel).bins))
    }
  })

  it('the same as with the cuts given: missing values, 256 bins and missing (uint16), either kernel', () => {
    const d = syntheticRegression({ rows: 3000, features: 18, seed: 14, missing: 0.02 })
    for (let r = 0; r < d.rows; r++) d.x[r * 18 + 17] = r % 5 === 0 ? NaN : -0 // a constant −0 column with missing values
    for (const maxBin of [16, 256]) {
      for (const kernel of ['wasm', 'ts'] as const) {
        const p = prepareGbdtData(d.x, d.y, d.rows, d.features, maxBin, undefined, kernel)
        const q = prepareGbdtData(d.x, d.y, d.rows, d.features, maxBin, computeCuts(d.x, d.rows, d.features, maxBin, kernel), kernel)
        expect(p.bins instanceof Uint16Array).toBe(maxBin === 256)
        expect(Array.from(p.bins)).toEqual(Array.from(q.bins))
        expect([Array.from(p.cuts.values), Array.from(p.cuts.ptrs), Array.from(p.cuts.minValues)]).toEqual([
          Array.from(q.cuts.values),
          Array.from(q.cuts.ptrs),
          Array.from(q.cuts.minValues),
        ])
        expect(Array.from(p.hasMissing)).toEqual(Array.from(q.hasMissing))
      }
    }
  })
})

describe('gradient quantisation', () => {
  it('scale 2^k with 2^(e−1) ≤ max|g| < 2^e and k = 30 − e', () => {
    expect(quantExponent(1)).toBe(29)
    expect(quantExponent(0.75)).toBe(30)
    expect(quantExponent(0.5)).toBe(30)
    expect(quantExponent(2 ** -3)).toBe(32)
    expect(quantExponent(1000)).toBe(20)
    expect(quantExponent(0)).toBe(QUANT_BITS)
  })

  it('|q| < 2^30 per row, truncation toward zero, exact power-of-two scaling', () => {
    for (const m of [f32(1e-30), f32(0.3), 1, f32(123.456), f32(3e20)]) {
      const k = quantExponent(m)
      expect(Math.abs(quantise(m, k))).toBeLessThan(2 ** 30)
      expect(Math.abs(quantise(m, k))).toBeGreaterThanOrEqual(2 ** 29)
      expect(quantise(-m, k)).toBe(-quantise(m, k))
    }
    expect(quantise(f32(-0.7), 0)).toBe(-0)
    expect(quantise(2.75, 2)).toBe(11)
  })
})
