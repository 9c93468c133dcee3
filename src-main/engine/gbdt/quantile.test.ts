// The wasm quantile sketch (src-wasm/gbdt-hist.ts sketchFeature) against quantile.ts's WQSketch, the
// port of XGBoost's that it must equal bit for bit: the same cuts on data of many shapes.
import { describe, expect, it } from 'vitest'
import { Rng } from '../random'
import { kernelInstances, wasmKernelAvailable } from './kernel'
import { computeCuts, type GbdtCuts } from './quantile'

/** a column generator: row r's value */
type Column = (rng: Rng, r: number, rows: number) => number

const columns: Record<string, Column> = {
  continuous: (rng) => Math.fround(rng.uniform() * 200 - 100),
  normalish: (rng) => Math.fround((rng.uniform() + rng.uniform() + rng.uniform() - 1.5) * 1e-3),
  'few values': (rng) => Math.floor(rng.uniform() * 7) - 3,
  '600 values': (rng) => Math.floor(rng.uniform() * 600) / 8,
  'mostly one value': (rng) => (rng.uniform() < 0.9 ? 2.5 : rng.uniform()),
  ascending: (_rng, r) => r * 0.25,
  descending: (_rng, r, rows) => rows - r,
  'runs of equal values': (rng, r) => Math.floor(r / 37) + (rng.uniform() < 0.01 ? 0.5 : 0),
  constant: () => 4,
  'all missing': () => NaN,
  'missing 40%': (rng) => (rng.uniform() < 0.4 ? NaN : rng.uniform()),
  'signed zeros and extremes': (rng) => [0, -0, 1e30, -1e30, Infinity, -Infinity, 1e-40, -1e-40, rng.uniform()][Math.floor(rng.uniform() * 9)],
}

function matrix(rows: number, names: string[], seed: number): Float32Array {
  const rng = new Rng(seed, 3)
  const x = new Float32Array(rows * names.length)
  for (let r = 0; r < rows; r++) for (let f = 0; f < names.length; f++) x[r * names.length + f] = columns[names[f]](rng, r, rows)
  return x
}

const plain = (c: GbdtCuts) => ({ ptrs: Array.from(c.ptrs), values: Array.from(c.values), minValues: Array.from(c.minValues) })

describe('quantile sketch: wasm ≡ the TypeScript reference', () => {
  it('runs in WebAssembly by default here', () => {
    expect(wasmKernelAvailable()).toBe(true)
    const before = kernelInstances.scratch
    computeCuts(matrix(50, ['continuous'], 1), 50, 1, 256)
    expect(kernelInstances.scratch).toBe(before + 1)
    computeCuts(matrix(50, ['continuous'], 1), 50, 1, 256, 'ts')
    expect(kernelInstances.scratch).toBe(before + 1)
  })

  // small maxBin: small queues, so a few thousand rows already go through many flushes and levels
  for (const [rows, maxBin] of [
    [0, 256],
    [1, 256],
    [7, 2],
    [300, 256],
    [5000, 16],
    [20_000, 4],
    [20_000, 64],
    [40_000, 256],
  ]) {
    it(`the same cuts: ${rows} rows, maxBin ${maxBin}, every column shape`, () => {
      const names = Object.keys(columns)
      const x = matrix(rows, names, rows + maxBin)
      expect(plain(computeCuts(x, rows, names.length, maxBin, 'wasm'))).toEqual(plain(computeCuts(x, rows, names.length, maxBin, 'ts')))
    })
  }

  it('the same cuts, 17 features (a second column block), continuous with missing values', () => {
    const names = Array.from({ length: 17 }, (_, f) => (f % 3 === 0 ? 'missing 40%' : f % 3 === 1 ? 'continuous' : 'runs of equal values'))
    const x = matrix(9000, names, 5)
    expect(plain(computeCuts(x, 9000, 17, 32, 'wasm'))).toEqual(plain(computeCuts(x, 9000, 17, 32, 'ts')))
  })
})
