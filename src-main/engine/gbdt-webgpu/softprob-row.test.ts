// multi:softprob's gradient with K exps a row, not K a class: objective-wgsl.ts's softprobRowTerms +
// softprobClassPair against the CPU engine's softprobOfRows + softprobGradients bit for bit, and the
// engine's multiclass gradient kernel (tree-kernels.ts, as commands.ts dispatches it) run on its own:
// its pairs, maxima and drawn counts, and its exps counted — each drawn row's K once, none for a row
// no class draws. The exps are counted by wrapping expF32 (its WGSL renamed, a counting expF32 in
// front), so the count is of the calls the kernel really makes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyedBits } from '../gbdt/counter-random'
import { softprobGradients, softprobOfRows } from '../gbdt/objective'
import { Rng } from '../random'
import { USAGE } from '../webgpu/device'
import { OBJECTIVE_WGSL } from './objective-wgsl'
import {
  gradientDispatchModels,
  kernelSource,
  ROW_DRAW_WORDS,
  UNIFORM_FIELDS,
  UNIFORM_STRIDE,
  UNSAMPLED,
  WG,
  type KernelOptions,
  type UniformField,
} from './tree-kernels'
import { type DeviceHolder, noDevice, openForTests } from '../../testing/webgpu-trees'
import { differences, runKernel, toBits } from '../../testing/objective-wgsl-harness'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const EXP_SIGNATURE = 'fn expF32(x: u32) -> u32 {'

/** `source` with every expF32 call counted by the WGSL statement `count` before the exp runs */
function countingExps(source: string, count: string): string {
  const parts = source.split(EXP_SIGNATURE)
  if (parts.length !== 2) throw new Error(`the test counts exps at expF32's signature (${EXP_SIGNATURE}), found ${parts.length - 1} times`)
  return `${parts[0]}${EXP_SIGNATURE} ${count} return uncountedExpF32(x); }\nfn uncountedExpF32(x: u32) -> u32 {${parts[1]}`
}

/** a row's K margins: spread, wide (terms underflow), ties, one class far ahead */
function rowMargins(rng: Rng, K: number, kind: number): number[] {
  switch (kind) {
    case 0:
      return Array.from({ length: K }, () => rng.normal() * 2)
    case 1:
      return Array.from({ length: K }, () => rng.normal() * 40)
    case 2: {
      const v = rng.normal() * 5
      return Array.from({ length: K }, () => v)
    }
    default: {
      const lead = rng.below(K)
      return Array.from({ length: K }, (_v, k) => (k === lead ? 45 : -45 + rng.normal()))
    }
  }
}

/** the CPU engine's (g, h) bits of every (row, class): pairs[(r·K + k)·2 …] */
function cpuPairs(byRow: readonly number[][], K: number, y: Float32Array): Uint32Array {
  const rows = byRow.length
  const margins = Array.from({ length: K }, (_v, k) => Float32Array.from(byRow, (row) => row[k]))
  const p = new Float32Array(rows * K)
  softprobOfRows(margins, rows, p)
  const all = Int32Array.from({ length: rows }, (_v, r) => r)
  const g = new Float32Array(rows)
  const h = new Float32Array(rows)
  const pairs = new Uint32Array(rows * K * 2)
  for (let k = 0; k < K; k++) {
    softprobGradients(p, K, k, y, all, rows, g, h)
    for (let r = 0; r < rows; r++) pairs.set([toBits(g[r]), toBits(h[r])], (r * K + k) * 2)
  }
  return pairs
}

describe("multi:softprob's gradient: K exps a row", () => {
  /** per row: its K pairs from one softprobRowTerms, the exps that took, and the exps of K softprobGradPair calls */
  const ROW_KERNEL = /* wgsl */ `${countingExps(OBJECTIVE_WGSL, 'exps += 1u;')}
@group(0) @binding(0) var<storage, read> classes: array<u32>;
@group(0) @binding(1) var<storage, read> margins: array<u32>;
@group(0) @binding(2) var<storage, read> labels: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
var<private> exps: u32;
fn marginBits(row: u32, c: u32) -> u32 { return margins[row * classes[0] + c]; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let row = id.x;
  let rows = arrayLength(&labels);
  if (row >= rows) { return; }
  let K = classes[0];
  var terms: array<u32, MAX_CLASSES>;
  let sum = softprobRowTerms(row, K, &terms);
  for (var c = 0u; c < K; c++) {
    let gh = softprobClassPair(terms[c], sum, c, labels[row]);
    out[(row * K + c) * 2u] = gh.x;
    out[(row * K + c) * 2u + 1u] = gh.y;
  }
  out[rows * K * 2u + row * 2u] = exps;
  exps = 0u;
  for (var c = 0u; c < K; c++) { _ = softprobGradPair(row, c, K, labels[row]); }
  out[rows * K * 2u + row * 2u + 1u] = exps;
}`

  for (const [K, rows] of [
    [3, 400],
    [5, 400],
    [32, 64],
  ]) {
    it(`K = ${K}: softprobRowTerms + softprobClassPair = softprobOfRows + softprobGradients, with K exps a row (softprobGradPair's K calls: K²)`, async (ctx) => {
      if (noDevice(dev)) return ctx.skip()
      const rng = new Rng(90 + K)
      const byRow = Array.from({ length: rows }, (_v, r) => rowMargins(rng, K, r % 4))
      const y = Float32Array.from({ length: rows }, () => rng.below(K))
      const got = await runKernel(
        dev.gpu!,
        'test:softprob-row',
        ROW_KERNEL,
        [new Uint32Array([K]), new Uint32Array(Float32Array.from(byRow.flat()).buffer), Uint32Array.from(y)],
        rows * K * 2 + rows * 2,
        rows,
      )
      const describe = (i: number) => `${i % 2 ? 'h' : 'g'} of class ${Math.floor(i / 2) % K}, row ${Math.floor(i / 2 / K)}, label ${y[Math.floor(i / 2 / K)]}`
      expect(differences(got.subarray(0, rows * K * 2), cpuPairs(byRow, K, y), describe)).toEqual([])
      const counts = got.subarray(rows * K * 2)
      expect(new Set(counts.filter((_v, i) => i % 2 === 0))).toEqual(new Set([K]))
      expect(new Set(counts.filter((_v, i) => i % 2 === 1))).toEqual(new Set([K * K]))
    })
  }

  it("the gradient kernel's dispatch: a K-class model's rows once (C / K), other objectives' per device model; a chunk of part-models refused", () => {
    const multiclass: KernelOptions = { bin16: false, sharedWords: 0, hess: true, gradient: 'multiclass' }
    expect(gradientDispatchModels(multiclass, 10, 5)).toBe(2)
    expect(gradientDispatchModels({ ...multiclass, gradient: 'binary' }, 10, 1)).toBe(10)
    expect(gradientDispatchModels({ ...multiclass, gradient: 'squaredErrorHessians' }, 10, 1)).toBe(10)
    expect(() => gradientDispatchModels(multiclass, 12, 5)).toThrow('webgpu: 12 device models are not whole 5-class models (planning error)')
  })

  it("the engine's multiclass gradient kernel: every drawn (row, class)'s pair, max |g|, max h and drawn rows, its exps K a row drawn by any class, none for the rest", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const gpu = dev.gpu!
    const K = 5
    const models = 2
    const C = models * K
    const nTrain = 150
    const n = 170 // 20 test rows, never drawn
    const rng = new Rng(77)
    const byRowOf = Array.from({ length: models }, () => Array.from({ length: nTrain }, (_v, r) => rowMargins(rng, K, r % 4)))
    const y = Float32Array.from({ length: nTrain }, () => rng.below(K))
    const pred = new Float32Array(C * n)
    byRowOf.forEach((byRow, g) => byRow.forEach((row, r) => row.forEach((v, c) => (pred[(g * K + c) * n + r] = v))))
    // row draws (key, threshold, every row, held-out begin, end): model 0's class 0 takes every row but
    // [40, 60), its other classes about half; model 1's classes a quarter each; none held out elsewhere
    const draws = new Uint32Array(C * ROW_DRAW_WORDS)
    for (let m = 0; m < C; m++)
      draws.set([rng.nextUint32(), m < K ? 2 ** 31 : 2 ** 30, m === 0 ? 1 : 0, m === 0 ? 40 : 0, m === 0 ? 60 : 0], m * ROW_DRAW_WORDS)
    const drawn = (m: number, r: number) => {
      const [key, threshold, every, begin, end] = draws.subarray(m * ROW_DRAW_WORDS, (m + 1) * ROW_DRAW_WORDS)
      return r < nTrain && (every !== 0 || keyedBits(key, r) < threshold) && !(r >= begin && r < end)
    }

    const kopts: KernelOptions = { bin16: false, sharedWords: 0, hess: true, gradient: 'multiclass' }
    const code = `${countingExps(kernelSource('gradient', kopts), 'atomicAdd(&expCount[0], 1u);')}
@group(0) @binding(8) var<storage, read_write> expCount: array<atomic<u32>>;`
    const uniform = new Uint32Array(UNIFORM_STRIDE / 4)
    const set = (f: UniformField, v: number) => (uniform[UNIFORM_FIELDS.indexOf(f)] = v)
    set('n', n)
    set('nTrain', nTrain)
    set('rowsPad', n)
    set('C', C)
    set('K', K)
    set('drawRows', 1)
    set('drawOff', 0)
    const scalWords = 8 * C
    const inputs: [Uint32Array, number][] = [
      [uniform, USAGE.UNIFORM],
      [new Uint32Array(y.buffer), USAGE.STORAGE],
      [new Uint32Array(pred.buffer), USAGE.STORAGE],
      [draws, USAGE.STORAGE],
      [new Uint32Array(C * n), USAGE.STORAGE], // pos
      [new Uint32Array(scalWords), USAGE.STORAGE],
      [new Uint32Array(C * n), USAGE.STORAGE], // q
      [new Uint32Array(C * n), USAGE.STORAGE], // qh
      [new Uint32Array(1), USAGE.STORAGE], // expCount
    ]
    const bufs = inputs.map(([words, usage], i) => {
      const b = gpu.createBuffer(words.byteLength, usage | USAGE.COPY_DST | USAGE.COPY_SRC, `softprob-gradient-${i}`)
      gpu.device.queue.writeBuffer(b, 0, words)
      return b
    })
    const outs = [4, 5, 6, 7, 8]
    const outWords = outs.map((i) => inputs[i][0].length)
    const total = outWords.reduce((a, b) => a + b, 0)
    const staging = gpu.createBuffer(total * 4, USAGE.MAP_READ | USAGE.COPY_DST, 'softprob-gradient-staging')
    let got: Uint32Array
    try {
      const pipeline = gpu.pipeline('test:softprob-gradient-kernel', () => code)
      const enc = gpu.device.createCommandEncoder()
      const pass = enc.beginComputePass()
      pass.setPipeline(pipeline)
      pass.setBindGroup(
        0,
        gpu.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: bufs.map((buffer, binding) => ({ binding, resource: { buffer } })) }),
      )
      pass.dispatchWorkgroups(Math.ceil(n / WG), 1, gradientDispatchModels(kopts, C, K))
      pass.end()
      let at = 0
      outs.forEach((i, j) => {
        enc.copyBufferToBuffer(bufs[i], 0, staging, at * 4, outWords[j] * 4)
        at += outWords[j]
      })
      gpu.submit([enc.finish()])
      got = new Uint32Array(await gpu.read(staging, total * 4))
    } finally {
      for (const b of [...bufs, staging]) gpu.destroyBuffer(b)
    }
    const [pos, scal, q, qh, expCount] = outs.map((_i, j) => {
      const at = outWords.slice(0, j).reduce((a, b) => a + b, 0)
      return got.subarray(at, at + outWords[j])
    })

    const want = {
      pos: new Uint32Array(C * n),
      q: new Uint32Array(C * n),
      qh: new Uint32Array(C * n),
      maxG: new Uint32Array(C),
      maxH: new Uint32Array(C),
      rows: new Uint32Array(C),
    }
    let rowsDrawnByAnyClass = 0
    for (let g = 0; g < models; g++) {
      const pairs = cpuPairs(byRowOf[g], K, y)
      for (let r = 0; r < n; r++) {
        let any = false
        for (let c = 0; c < K; c++) {
          const m = g * K + c
          const i = m * n + r
          if (!drawn(m, r)) {
            want.pos[i] = UNSAMPLED
            continue
          }
          any = true
          want.q[i] = pairs[(r * K + c) * 2]
          want.qh[i] = pairs[(r * K + c) * 2 + 1]
          want.maxG[m] = Math.max(want.maxG[m], want.q[i] & 0x7fffffff)
          want.maxH[m] = Math.max(want.maxH[m], want.qh[i])
          want.rows[m]++
        }
        if (any) rowsDrawnByAnyClass++
      }
    }
    // the draws leave some rows to no class and some classes without a row, so both are checked
    expect(rowsDrawnByAnyClass).toBeGreaterThan(models * 100)
    expect(rowsDrawnByAnyClass).toBeLessThan(models * nTrain)
    expect([...pos]).toEqual([...want.pos])
    const at = (m: number, r: number) => `class ${m % K} of model ${Math.floor(m / K)}, row ${r}`
    expect(differences(q, want.q, (i) => `g of ${at(Math.floor(i / n), i % n)}`)).toEqual([])
    expect(differences(qh, want.qh, (i) => `h of ${at(Math.floor(i / n), i % n)}`)).toEqual([])
    expect([...scal.subarray(0, C)]).toEqual([...want.maxG])
    expect([...scal.subarray(4 * C, 5 * C)]).toEqual([...want.maxH])
    expect([...scal.subarray(7 * C, 8 * C)]).toEqual([...want.rows])
    expect(expCount[0]).toBe(rowsDrawnByAnyClass * K)
  })
})
