// The wasm histogram kernel against its reference, histograms.ts's loops and rules.ts's
// forwardCandidates: the same sums bit for bit on random inputs (every builder, both bin widths;
// zero and the subtractions), the same partitions, the same candidate bins from the split scan's
// pre-filter, the same trees through the trainer, and the committed bytes are what
// src-wasm/gbdt-hist.ts compiles to; an array's memory is checked once per argument position, not per call;
// a finished training's kernel serves the next one, with the same trees, never two trainings at once.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compileHistWasm, GENERATED, generatedSource } from '../../../scripts/build-wasm.mjs'
import { Rng } from '../random'
import { prepareGbdtData } from './binning'
import {
  addToRows,
  build1,
  build1H,
  build2,
  build2H,
  build4,
  build4H,
  difference,
  partition,
  quantiseRows,
  squaredErrorRows,
  subtractRange,
  zero,
} from './histograms'
import { arenaBytes, countsArenaBytes, createHistKernel, kernelInstances, releaseHistKernel, wasmKernelAvailable } from './kernel'
import { forwardCandidates } from './rules'
import { syntheticClassification, syntheticRegression } from './synthetic'
import { trainGbdt, trainGbdtGroup, trainGbdtGroupAsync } from './train'
import { treeHash } from './tree'

const root = join(__dirname, '..', '..', '..')

describe('gbdt wasm histogram kernel', () => {
  it('is available here (WebAssembly SIMD)', () => {
    expect(wasmKernelAvailable()).toBe(true)
  })

  it('the committed module is what the AssemblyScript source compiles to', async () => {
    const text = generatedSource(await compileHistWasm())
    expect(readFileSync(join(root, GENERATED), 'utf8')).toBe(text)
  }, 60_000)

  for (const wide of [false, true]) {
    it(`build1/build2/build4 add the same (Σq, count) as the TypeScript loops (${wide ? 'uint16' : 'uint8'} bins)`, () => {
      const rng = new Rng(wide ? 7 : 3)
      const n = 1537
      const F = 5
      const W = wide ? 700 : 256
      const slots = F * W
      const k = createHistKernel('wasm', arenaBytes(n * F * (wide ? 2 : 1)) + arenaBytes(4 * n, 2) + arenaBytes(16 * slots))
      expect(k.name).toBe('wasm')
      const src = wide ? new Uint16Array(n * F) : new Uint8Array(n * F)
      for (let i = 0; i < src.length; i++) src[i] = Math.floor(rng.uniform() * W)
      const bins = k.bins({ bins: src } as Parameters<typeof k.bins>[0])
      const rows = k.int32(n)
      const q = k.int32(n)
      const hist = k.float64(2 * slots)
      const ref = new Float64Array(2 * slots)
      for (let trial = 0; trial < 20; trial++) {
        // a node: an ascending subset of the rows, with the q of a quantised gradient (±2^20)
        let m = 0
        const keep = rng.uniform()
        for (let r = 0; r < n; r++) if (rng.uniform() < keep) rows[m++] = r
        for (let i = 0; i < n; i++) q[i] = Math.floor((rng.uniform() - 0.5) * 2 ** 21)
        const begin = Math.floor(rng.uniform() * Math.min(m, 9))
        const end = Math.max(begin, m - Math.floor(rng.uniform() * 4))
        const c = (f: number) => f * n
        const o = (f: number) => 2 * f * W
        for (let i = 0; i < hist.length; i++) hist[i] = ref[i] = Math.floor((rng.uniform() - 0.5) * 1000)
        k.build1(bins, c(0), rows, q, begin, end, hist, o(0))
        build1(src, c(0), rows, q, begin, end, ref, o(0))
        k.build2(bins, c(1), c(2), rows, q, begin, end, hist, o(1), o(2))
        build2(src, c(1), c(2), rows, q, begin, end, ref, o(1), o(2))
        k.build4(bins, c(3), c(4), c(0), c(2), rows, q, begin, end, hist, o(3), o(4), o(0), o(2))
        build4(src, c(3), c(4), c(0), c(2), rows, q, begin, end, ref, o(3), o(4), o(0), o(2))
        expect(Array.from(hist)).toEqual(Array.from(ref))
      }
    })
  }

  it("buildRegions gives the TypeScript loops' (Σq, count) on every path: f64x2 (few rows), packed 8-byte slots (in chunks past 2^16 − 1 rows), every row in order (packed and Σq with counted bins), over whatever the regions held", () => {
    const rng = new Rng(41)
    // 70 000 rows: a node of every row takes the Σq-and-counts path (≥ 2^16 rows), a node of most
    // rows the packed slots in two chunks, a few hundred to 65 535 in one; q at the quantisation's bound ±(2^30 − 1)
    const n = 70_000
    const F = 7
    const W = 256
    const slots = F * W
    const k = createHistKernel('wasm', arenaBytes(n * F) + arenaBytes(4 * n, 3) + arenaBytes(16 * slots, 2) + countsArenaBytes(F))
    expect(k.name).toBe('wasm')
    const src = new Uint8Array(n * F)
    // skewed bins (bin 0 for a third of the rows), feature 5 narrower than 256 bins, feature 6 constant (every row in bin 0: the most one bin can hold)
    for (let f = 0; f < F - 1; f++) for (let r = 0; r < n; r++) src[f * n + r] = rng.uniform() < 0.33 ? 0 : Math.floor(rng.uniform() * (f === 5 ? 40 : W))
    const bins = k.bins({ bins: src } as Parameters<typeof k.bins>[0])
    const rows = k.int32(n)
    const q = k.int32(n)
    const qh = k.int32(n)
    const hist = k.float64(2 * slots)
    const ref = k.float64(2 * slots)
    const features = [0, 1, 2, 3, 4, 5, 6]
    const cols = features.map((f) => f * n)
    const lens = features.map((f) => 2 * (f === 5 ? 40 : W))
    const offs = features.map((f) => 2 * f * W)
    const ts = createHistKernel('ts', 0)
    const cases = [
      { name: 'every row in order (Σq and counts)', m: n, every: true },
      { name: 'every row of a smaller set (packed, no index)', m: 50_000, every: true },
      { name: 'most rows (packed, two chunks)', m: 69_000, every: false },
      { name: 'a deep node (packed)', m: 20_000, every: false },
      { name: 'the largest packed node', m: 65_535, every: false },
      { name: 'a small node (f64x2)', m: 100, every: false },
    ]
    for (const { name, m, every } of cases) {
      for (const extreme of [false, true]) {
        // rows: 0 … m − 1 when every, else an ascending subset of m of the n rows
        let at = 0
        for (let r = 0; r < n && at < m; r++) if (every || rng.uniform() < m / n || n - r <= m - at) rows[at++] = r
        expect(at, name).toBe(m)
        for (let i = 0; i < m; i++) q[i] = extreme ? (rng.uniform() < 0.5 ? -1 : 1) * (2 ** 30 - 1) : Math.floor((rng.uniform() - 0.5) * 2 ** 31)
        for (let i = 0; i < m; i++) qh[i] = extreme ? 2 ** 30 - 1 : Math.floor(rng.uniform() * 2 ** 30)
        for (const hessians of [null, qh]) {
          for (const group of [[0, 1, 2, 3], [4, 5], [5, 0, 6], [6], [6, 2, 4, 1]]) {
            const c = group.map((f) => cols[f])
            const o = group.map((f) => offs[f])
            const l = group.map((f) => lens[f])
            // the regions are written whole: what they held is gone, and the slots outside them are untouched
            hist.fill(-12345.5)
            ref.fill(-12345.5)
            k.buildRegions(group.length, bins, c, rows, q, hessians, 0, m, hist, o, l, every)
            ts.buildRegions(group.length, src, c, rows, q, hessians, 0, m, ref, o, l, every)
            const what = `${name}${hessians ? ", a classifier's (Σq, Σqh)" : ''}, features ${group}${extreme ? ', q at ±(2^30 − 1)' : ''}`
            expect(Array.from(hist), what).toEqual(Array.from(ref))
          }
        }
      }
    }
  })

  for (const wide of [false, true]) {
    it(`build1H/build2H/build4H add the same (Σq, Σqh) as the TypeScript loops, a classifier's hessians (${wide ? 'uint16' : 'uint8'} bins)`, () => {
      const rng = new Rng(wide ? 29 : 23)
      const n = 1031
      const F = 5
      const W = wide ? 700 : 256
      const slots = F * W
      const k = createHistKernel('wasm', arenaBytes(n * F * (wide ? 2 : 1)) + arenaBytes(4 * n, 3) + arenaBytes(16 * slots))
      const src = wide ? new Uint16Array(n * F) : new Uint8Array(n * F)
      for (let i = 0; i < src.length; i++) src[i] = Math.floor(rng.uniform() * W)
      const bins = k.bins({ bins: src } as Parameters<typeof k.bins>[0])
      const [rows, q, qh] = [k.int32(n), k.int32(n), k.int32(n)]
      const hist = k.float64(2 * slots)
      const ref = new Float64Array(2 * slots)
      for (let trial = 0; trial < 12; trial++) {
        let m = 0
        const keep = rng.uniform()
        for (let r = 0; r < n; r++) if (rng.uniform() < keep) rows[m++] = r
        for (let i = 0; i < n; i++) {
          q[i] = Math.floor((rng.uniform() - 0.5) * 2 ** 31)
          qh[i] = Math.floor(rng.uniform() * 2 ** 30) // hessians ≥ 0, < 2^30
        }
        const begin = Math.floor(rng.uniform() * Math.min(m, 9))
        const end = Math.max(begin, m - Math.floor(rng.uniform() * 4))
        const c = (f: number) => f * n
        const o = (f: number) => 2 * f * W
        for (let i = 0; i < hist.length; i++) hist[i] = ref[i] = Math.floor((rng.uniform() - 0.5) * 1000)
        k.build1H(bins, c(0), rows, q, qh, begin, end, hist, o(0))
        build1H(src, c(0), rows, q, qh, begin, end, ref, o(0))
        k.build2H(bins, c(1), c(2), rows, q, qh, begin, end, hist, o(1), o(2))
        build2H(src, c(1), c(2), rows, q, qh, begin, end, ref, o(1), o(2))
        k.build4H(bins, c(3), c(4), c(0), c(2), rows, q, qh, begin, end, hist, o(3), o(4), o(0), o(2))
        build4H(src, c(3), c(4), c(0), c(2), rows, q, qh, begin, end, ref, o(3), o(4), o(0), o(2))
        expect(Array.from(hist)).toEqual(Array.from(ref))
      }
    })
  }

  it("zero, difference and subtractRange give the TypeScript loops' doubles (even and odd lengths, any offsets)", () => {
    const rng = new Rng(13)
    const L = 600
    const k = createHistKernel('wasm', arenaBytes(8 * L, 4))
    const [a, b, out] = [k.float64(L), k.float64(L), k.float64(L)]
    const [ra, rb, rout] = [new Float64Array(L), new Float64Array(L), new Float64Array(L)]
    const fill = () => {
      for (let i = 0; i < L; i++) {
        a[i] = ra[i] = Math.floor((rng.uniform() - 0.5) * 2 ** 40)
        b[i] = rb[i] = Math.floor((rng.uniform() - 0.5) * 2 ** 40)
        out[i] = rout[i] = rng.uniform()
      }
    }
    for (let trial = 0; trial < 30; trial++) {
      const len = 1 + Math.floor(rng.uniform() * 200)
      const o = Math.floor(rng.uniform() * 100)
      const po = Math.floor(rng.uniform() * 100)
      fill()
      k.zero(a, o, len)
      zero(ra, o, len)
      k.difference(out, a, po, b, o, len)
      difference(rout, ra, po, rb, o, len)
      k.subtractRange(b, a, po, len)
      subtractRange(rb, ra, po, len)
      expect(Array.from(a)).toEqual(Array.from(ra))
      expect(Array.from(b)).toEqual(Array.from(rb))
      expect(Array.from(out)).toEqual(Array.from(rout))
    }
  })

  it("the row loops give the TypeScript loops' gradients, rows, largest |g|, quantised sums and margins (every row and a sample; NaN passed over)", () => {
    const rng = new Rng(17)
    const n = 1031 // not a multiple of the four-row step
    const k = createHistKernel('wasm', arenaBytes(4 * n, 8) + arenaBytes(n))
    const [pred, y, g] = [k.float32(n), k.float32(n), k.float32(n)]
    const [rows, q] = [k.int32(n), k.int32(n)]
    const sampled = k.uint8(n)
    const [rPred, rG] = [new Float32Array(n), new Float32Array(n)]
    const [rRows, rQ] = [new Int32Array(n), new Int32Array(n)]
    for (let trial = 0; trial < 12; trial++) {
      const every = trial % 2 === 0
      for (let r = 0; r < n; r++) {
        pred[r] = rPred[r] = (rng.uniform() - 0.5) * 10 ** (trial % 5)
        y[r] = (rng.uniform() - 0.5) * 3
        sampled[r] = every || rng.uniform() < 0.7 ? 1 : 0
      }
      // a NaN margin in an unsampled row, and in a sampled one: the largest |g| skips both
      if (trial % 3 === 2) pred[5] = rPred[5] = NaN
      g.fill(0)
      rG.fill(0)
      const got = k.squaredErrorRows(pred, y, sampled, every, g, rows)
      const want = squaredErrorRows(rPred, y, sampled, every, rG, rRows)
      expect(got).toBe(want)
      expect(want).toBeGreaterThan(0)
      const ns = sampled.reduce((a, b) => a + b, 0)
      expect(Array.from(g.subarray(0, ns))).toEqual(Array.from(rG.subarray(0, ns)))
      expect(Array.from(rows.subarray(0, ns))).toEqual(Array.from(rRows.subarray(0, ns)))
      const scale = 2 ** (29 - Math.ceil(Math.log2(want)))
      for (let i = 0; i < ns; i++) if (Number.isNaN(g[i])) g[i] = rG[i] = 0
      expect(k.quantiseRows(g, q, ns, scale)).toBe(quantiseRows(rG, rQ, ns, scale))
      expect(Array.from(q.subarray(0, ns))).toEqual(Array.from(rQ.subarray(0, ns)))
      for (const [b, e] of [
        [0, ns >> 1],
        [ns >> 1, ns],
      ]) {
        const v = Math.fround((rng.uniform() - 0.5) * 0.3)
        k.addToRows(pred, rows, b, e, v)
        addToRows(rPred, rRows, b, e, v)
      }
      expect(Array.from(pred)).toEqual(Array.from(rPred))
    }
  })

  for (const wide of [false, true]) {
    it(`partition splits rows, q and qh as the TypeScript loop does (stable; with and without missing values, a regressor's and a classifier's; ${wide ? 'uint16' : 'uint8'} bins)`, () => {
      const rng = new Rng(wide ? 37 : 31)
      const n = 1499
      const F = 3
      const W = wide ? 700 : 256
      const k = createHistKernel('wasm', arenaBytes(n * F * (wide ? 2 : 1)) + arenaBytes(4 * n, 6))
      const src = wide ? new Uint16Array(n * F) : new Uint8Array(n * F)
      for (let i = 0; i < src.length; i++) src[i] = Math.floor(rng.uniform() * W)
      const bins = k.bins({ bins: src } as Parameters<typeof k.bins>[0])
      const [rows, q, qh, sRows, sQ, sQH] = [k.int32(n), k.int32(n), k.int32(n), k.int32(n), k.int32(n), k.int32(n)]
      const [rRows, rQ, rQH, rsRows, rsQ, rsQH] = Array.from({ length: 6 }, () => new Int32Array(n))
      let moved = 0
      for (let trial = 0; trial < 24; trial++) {
        let m = 0
        const keep = rng.uniform()
        for (let r = 0; r < n; r++) if (rng.uniform() < keep) rows[m++] = r
        for (let i = 0; i < n; i++) {
          if (i >= m) rows[i] = Math.floor(rng.uniform() * n)
          q[i] = Math.floor((rng.uniform() - 0.5) * 2 ** 31)
          qh[i] = Math.floor(rng.uniform() * 2 ** 30)
        }
        rRows.set(rows)
        rQ.set(q)
        rQH.set(qh)
        const begin = Math.floor(rng.uniform() * Math.min(m, 9))
        const end = Math.max(begin, m - Math.floor(rng.uniform() * 4))
        const c = Math.floor(rng.uniform() * F) * n
        const splitBin = Math.floor(rng.uniform() * W) - (trial % 5 === 0 ? 1 : 0)
        const missing = trial % 2 === 0 ? -1 : Math.floor(rng.uniform() * W) // a bin that is the missing one here
        const defaultLeft = trial % 3 === 0
        const classifier = trial % 4 < 2
        const got = k.partition(bins, c, rows, q, classifier ? qh : null, begin, end, splitBin, missing, defaultLeft, sRows, sQ, sQH)
        const want = partition(src, c, rRows, rQ, classifier ? rQH : null, begin, end, splitBin, missing, defaultLeft, rsRows, rsQ, rsQH)
        expect(got).toBe(want)
        expect(Array.from(rows)).toEqual(Array.from(rRows))
        expect(Array.from(q)).toEqual(Array.from(rQ))
        expect(Array.from(qh)).toEqual(Array.from(rQH))
        if (got > begin && got < end) moved++
      }
      expect(moved).toBeGreaterThan(10)
    })
  }

  it("reads an array's buffer once per argument position, and still refuses another array outside its memory", () => {
    const n = 64
    const k = createHistKernel('wasm', arenaBytes(n) + arenaBytes(4 * n, 2) + arenaBytes(16 * 256))
    const bins = k.bins({ bins: new Uint8Array(n) } as Parameters<typeof k.bins>[0])
    const [rows, q] = [k.int32(n), k.int32(n)]
    const hist = k.float64(2 * 256)
    // `buffer` of one view, counted: the check is ~50 ns a call, more than a small node's build
    let reads = 0
    const buffer = rows.buffer
    Object.defineProperty(rows, 'buffer', {
      get: () => {
        reads++
        return buffer
      },
    })
    for (let i = 0; i < 10; i++) k.build1(bins, 0, rows, q, 0, n, hist, 0)
    expect(reads).toBe(1)
    expect(() => k.build1(bins, 0, new Int32Array(n), q, 0, n, hist, 0)).toThrow(/not in the kernel memory/)
    expect(() => k.build1(bins, 0, rows, q, 0, n, new Float64Array(512), 0)).toThrow(/not in the kernel memory/)
    // a refused array leaves the position's last one; another one in the memory replaces it
    k.build1(bins, 0, rows, q, 0, n, hist, 0)
    expect(reads).toBe(1)
    k.build1(bins, 0, q, q, 0, n, hist, 0)
    k.build1(bins, 0, rows, q, 0, n, hist, 0)
    expect(reads).toBe(2)
  })

  it("the split scan's pre-filter returns the reference's bins and left sums, call after call", () => {
    const rng = new Rng(17)
    const n = 5000
    const nb = 256
    const k = createHistKernel('wasm', arenaBytes(16 * nb))
    const hist = k.float64(2 * nb)
    let passed = 0
    for (let trial = 0; trial < 40; trial++) {
      // a node: h rows spread over the bins (many empty on small nodes), Σq of either sign
      const h = 1 + Math.floor(rng.uniform() ** 2 * n)
      hist.fill(0)
      let gq = 0
      for (let r = 0; r < h; r++) {
        const bin = Math.floor(rng.uniform() ** (1 + (trial % 3)) * nb)
        const q = Math.floor((rng.uniform() - 0.3) * 2 ** 20)
        hist[2 * bin] += q
        hist[2 * bin + 1] += 1
        gq += q
      }
      const mcw = [0, 1, 5][trial % 3]
      const lambda = [1, 0, 0.5][trial % 3]
      // the threshold moves as the caller's best does: here, up by the estimate at each returned bin
      for (const filter of [k.filter, forwardCandidates]) filter.state.fill(0)
      let thrQ = trial % 4 === 0 ? -1 : (gq * gq) / (h + lambda)
      let b = 0
      for (;;) {
        const got = k.filter.next(hist, 0, b, nb, gq, h, mcw, thrQ, lambda)
        const want = forwardCandidates.next(hist, 0, b, nb, gq, h, mcw, thrQ, lambda)
        expect(got).toBe(want)
        expect(Array.from(k.filter.state)).toEqual(Array.from(forwardCandidates.state))
        if (got < 0) break
        passed++
        const [glq, hl] = forwardCandidates.state
        thrQ = Math.max(thrQ, (glq * glq) / (hl + lambda) + ((gq - glq) * (gq - glq)) / (h - hl + lambda))
        b = got + 1
      }
    }
    expect(passed).toBeGreaterThan(40)
  })

  it('refuses arrays outside its memory', () => {
    const k = createHistKernel('wasm', arenaBytes(64, 4))
    const bins = k.bins({ bins: new Uint8Array(8) } as Parameters<typeof k.bins>[0])
    expect(() => k.build1(bins, 0, new Int32Array(4), k.int32(4), 0, 4, k.float64(8), 0)).toThrow(/not in the kernel memory/)
    expect(() => k.zero(new Float64Array(8), 0, 8)).toThrow(/not in the kernel memory/)
    expect(() => k.subtractRange(k.float64(8), new Float64Array(8), 0, 8)).toThrow(/not in the kernel memory/)
    expect(() => k.filter.next(new Float64Array(8), 0, 0, 4, 0, 4, 1, 0, 1)).toThrow(/not in the kernel memory/)
  })

  it('trains the same trees as the TypeScript kernel (one model, a group, uint16 bins, low memory)', () => {
    const d = syntheticRegression({ rows: 3000, features: 13, seed: 5, missing: 0.05 })
    for (const maxBin of [64, 256]) {
      const data = prepareGbdtData(d.x, d.y, d.rows, d.features, maxBin)
      expect(data.bins instanceof Uint16Array).toBe(maxBin === 256)
      const p = { rounds: 6, maxDepth: 5, maxBin, subsample: 0.8, colsampleBytree: 0.9 }
      const one = (kernel: 'ts' | 'wasm') => treeHash(trainGbdt(data, p, 11, { kernel }))
      expect(one('wasm')).toBe(one('ts'))
      const group = (kernel: 'ts' | 'wasm', histogramBudgetBytes?: number) =>
        trainGbdtGroup(data, p, [1, 2, 3], { kernel, histogramBudgetBytes, perModel: [{}, { maxDepth: 3 }, { lambda: 0 }] }).map(treeHash)
      expect(group('wasm')).toEqual(group('ts'))
      expect(group('wasm', 1)).toEqual(group('ts'))
    }
  })

  it('trains the same classifiers as the TypeScript kernel (binary and 3 classes, uint16 bins, low memory)', () => {
    for (const classes of [2, 3]) {
      const d = syntheticClassification({ rows: 2000, features: 9, seed: 6, missing: 0.05, classes })
      const data = prepareGbdtData(d.x, d.y, d.rows, d.features, 256)
      const task = { objective: classes === 2 ? 'binary' : 'multiclass', classes } as const
      const group = (kernel: 'ts' | 'wasm', histogramBudgetBytes?: number) =>
        trainGbdtGroup(data, { rounds: 4, maxDepth: 4, subsample: 0.8 }, [1, 2], { kernel, histogramBudgetBytes, task }).map(treeHash)
      expect(group('wasm')).toEqual(group('ts'))
      expect(group('wasm', 1)).toEqual(group('ts'))
    }
  })

  it('a later training reuses the last one’s kernel, whatever that one trained, and grows the same trees', async () => {
    const small = syntheticRegression({ rows: 800, features: 6, seed: 8, missing: 0.1 })
    const big = syntheticClassification({ rows: 3000, features: 11, seed: 9, classes: 3 })
    const smallData = prepareGbdtData(small.x, small.y, small.rows, small.features)
    const bigData = prepareGbdtData(big.x, big.y, big.rows, big.features)
    const p = { rounds: 3, maxDepth: 5 }
    const reference = treeHash(trainGbdt(smallData, p, 4, { kernel: 'ts' }))
    trainGbdt(bigData, p, 1, { kernel: 'wasm', task: { objective: 'multiclass', classes: 3 } }) // leaves its arrays' bytes behind
    const made = kernelInstances.hist
    expect(treeHash(trainGbdt(smallData, p, 4, { kernel: 'wasm' }))).toBe(reference)
    expect(treeHash(trainGbdt(smallData, p, 4, { kernel: 'wasm' }))).toBe(reference)
    expect(kernelInstances.hist).toBe(made)
    // two trainings in flight at once (each yields between steps) each have a kernel of their own
    const both = await Promise.all([0, 1].map(() => trainGbdtGroupAsync(smallData, p, [4], { kernel: 'wasm', sliceMs: 0 })))
    expect(both.map((m) => treeHash(m[0]))).toEqual([reference, reference])
    expect(kernelInstances.hist).toBe(made + 1)
  })

  it('a reused kernel hands out zeroed arrays, as a new memory does', () => {
    const first = createHistKernel('wasm', arenaBytes(4000, 2))
    first.int32(1000).fill(-1)
    first.float64(500).fill(0.5)
    releaseHistKernel(first)
    const again = createHistKernel('wasm', arenaBytes(4000, 2))
    expect(again).toBe(first)
    expect(again.int32(1000).every((v) => v === 0)).toBe(true)
    expect(again.float64(500).every((v) => v === 0)).toBe(true)
  })
})
