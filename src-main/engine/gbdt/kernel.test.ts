// The wasm histogram kernel against its reference, histograms.ts's loops: the same sums bit for bit
// on random inputs (every builder, both bin widths), the same trees through the trainer, and the
// committed bytes are what src-wasm/gbdt-hist.ts compiles to.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compileHistWasm, GENERATED, generatedSource } from '../../../scripts/build-wasm.mjs'
import { Rng } from '../random'
import { prepareGbdtData } from './binning'
import { build1, build2, build4 } from './histograms'
import { arenaBytes, createHistKernel, wasmKernelAvailable } from './kernel'
import { syntheticRegression } from './synthetic'
import { trainGbdt, trainGbdtGroup } from './train'
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

  it('refuses arrays outside its memory', () => {
    const k = createHistKernel('wasm', arenaBytes(64, 4))
    const bins = k.bins({ bins: new Uint8Array(8) } as Parameters<typeof k.bins>[0])
    expect(() => k.build1(bins, 0, new Int32Array(4), k.int32(4), 0, 4, k.float64(8), 0)).toThrow(/not in the kernel memory/)
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
})
