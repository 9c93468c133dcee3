// The device's classifier math (objective-wgsl.ts) against the CPU engine's (../gbdt/objective.ts) bit
// for bit: expF32 = f32(Math.exp(x)) on 2.1 million float32 inputs spread over its whole domain plus
// every rounding-hard one, the constants and the hard cases against an exact exp (BigInt), and the
// gradient pairs and outputs of binary:logistic and multi:softprob (K = 3, 5, 32) on edge margins.
//
// Why the hard list (src-main/testing/objective-wgsl-harness.ts) is complete: every float32 x was run
// through f32(Math.exp(x)) and kept where the float32 rounding changes within Math.exp(x)·(1 ± 2^-50);
// V8's exp errs by < 1 ulp (2^-52) and expF32 by < 2^-61, so everywhere else both round to the same
// float32. That scan, and expF32 on every float32 it computes, take minutes: they are a check of their
// own, not a test (`npm run check:exp-f32`, benchmarks/gbdt/exp-every-f32.mts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logisticGradients, sigmoidF32, softmaxF32, softprobGradients, softprobOfRows } from '../gbdt/objective'
import { Rng } from '../random'
import { BINARY_OBJECTIVE_WGSL, EXP2_SIXTYFOURTHS_Q63, EXP_STEP_Q104, EXPM1_COEFFICIENTS_Q63, OBJECTIVE_WGSL } from './objective-wgsl'
import { type DeviceHolder, noDevice, openForTests } from '../../testing/webgpu-trees'
import { differences, EXP_COMPUTED_BITS, fromBits, HARD_EXP_INPUTS, runKernel, toBits, unaryKernel } from '../../testing/objective-wgsl-harness'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const f32 = Math.fround

// ---- an exact exp: e^y for y a fixed-point BigInt (FRACTION bits), error far below 2^-300 relative

const FRACTION = 400n
const ONE = 1n << FRACTION

/** e^(y · 2^-FRACTION) · 2^FRACTION for |y| ≤ 128·ONE: the Taylor series of y/2^12, squared 12 times */
function expFixed(y: bigint): bigint {
  const small = y >> 12n
  let sum = ONE
  let term = ONE
  for (let k = 1n; term !== 0n; k++) {
    term = (term * small) / ONE / k
    sum += term
  }
  for (let i = 0; i < 12; i++) sum = (sum * sum) >> FRACTION
  return sum
}

/** x (a finite float32) · 2^FRACTION, exactly */
function fixedOfF32(x: number): bigint {
  const u = toBits(x)
  const biased = (u >>> 23) & 0xff
  const mantissa = BigInt(biased === 0 ? (u & 0x7fffff) * 2 : (u & 0x7fffff) | 0x800000)
  const v = mantissa << (FRACTION + BigInt(Math.max(biased, 1) - 150))
  return u >>> 31 ? -v : v
}

function roundShift(v: bigint, s: bigint): bigint {
  return (v + (1n << (s - 1n))) >> s
}

/** the float32 nearest to v · 2^-FRACTION (v > 0), and how far v lies from a rounding boundary in float32 ulps */
function nearestF32(v: bigint): { value: number; fromBoundary: number } {
  const len = BigInt(v.toString(2).length)
  const ulpExp = len - 1n - FRACTION - 23n < -149n ? -149n : len - 1n - FRACTION - 23n
  const s = FRACTION + ulpExp
  const mantissa = v >> s
  const rest = v - (mantissa << s)
  const half = 1n << (s - 1n)
  const rounded = rest > half || (rest === half && (mantissa & 1n) === 1n) ? mantissa + 1n : mantissa
  const fromBoundary = Math.abs(Number(((rest - half) << 64n) >> s) / 2 ** 64)
  return { value: f32(Number(rounded) * 2 ** Number(ulpExp)), fromBoundary }
}

/** e^x correctly rounded to float32 (x finite, |x| ≤ 120) */
function exactExpF32(x: number): { value: number; fromBoundary: number } {
  return nearestF32(expFixed(fixedOfF32(x)))
}

// ---- the device

/** float32 bits from lo to hi (inclusive, as unsigned bit patterns) every `stride`, from `offset` */
function strided(out: number[], lo: number, hi: number, stride: number, offset = 0): void {
  for (let u = lo + offset; u <= hi; u += stride) out.push(u >>> 0)
}
/** the `radius` float32 bit patterns either side of x's (and x's own), both signs */
function around(out: number[], x: number, radius: number): void {
  const u = toBits(Math.abs(f32(x)))
  for (let d = -radius; d <= radius; d++) out.push(u + d, (u + d + 0x80000000) >>> 0)
}

/** expF32's inputs: its whole domain strided, the trivial ranges sparsely, every boundary densely, specials */
function expInputs(rng: Rng): Uint32Array {
  const out: number[] = []
  // the domain where e^x is computed (2^-25 ≤ |x| ≤ 100 or 110): about 1/263 of it, from a random offset
  for (const [lo, hi] of EXP_COMPUTED_BITS) strided(out, lo, hi, 263, rng.below(263))
  // all of float32 (tiny, huge, ∞, NaN) sparsely
  strided(out, 0, 0xffffffff, 65521, rng.below(65521))
  // 1's boundaries, overflow (ln FLT_MAX), the subnormal results' start (2^-126), last one (2^-149), zero (2^-150)
  for (const x of [2 ** -25, 2 ** -24, 88.72283935546875, 87.33654475055310898, 103.27892990343185, 103.97207708399179]) around(out, x, 2048)
  // the range reduction's steps: x next to n·ln2/64 (q and the table index change there)
  for (let i = 0; i < 400; i++) around(out, ((1 + rng.below(9000)) * Math.LN2) / 64, 6)
  for (const x of [0, 2 ** -149, 2 ** -126, 1e-30, 1, 30, 88, 104, 1e30, 3.4028234663852886e38, Infinity]) around(out, x, 0)
  out.push(0x7fc00000, 0xffc00000, 0x7f800001, ...HARD_EXP_INPUTS)
  return new Uint32Array(out)
}

describe('the classifiers on the device = the CPU engine, bit for bit', () => {
  it("the exp's constants: ln2/64, 2^(j/64) and 1/k! against an exact computation", () => {
    // ln2 = Σ 1/(k·2^k)
    let ln2 = 0n
    for (let k = 1n; k < 600n; k++) ln2 += ONE / (k << k)
    expect(roundShift(ln2, FRACTION - 98n)).toBe(EXP_STEP_Q104)
    const table = EXP2_SIXTYFOURTHS_Q63.map((_v, j) => roundShift(expFixed((ln2 * BigInt(j)) / 64n), FRACTION - 63n))
    expect(table).toEqual(EXP2_SIXTYFOURTHS_Q63)
    let factorial = 1n
    const coefficients = EXPM1_COEFFICIENTS_Q63.map((_v, i) => {
      factorial *= BigInt(i + 1)
      return roundShift((1n << 64n) / factorial, 1n)
    })
    expect(coefficients).toEqual(EXPM1_COEFFICIENTS_Q63)
  })

  it('f32(Math.exp) is the correctly rounded exp at every rounding-hard float32 (an exact exp decides)', () => {
    for (const u of HARD_EXP_INPUTS) {
      const x = fromBits(u)
      const exact = exactExpF32(x)
      expect({ x, value: f32(Math.exp(x)) }).toEqual({ x, value: exact.value })
      // the closest is 2^-28.7 ulp from its boundary, far beyond expF32's error (2^-61 relative, ≤ 2^-37 ulp)
      expect(exact.fromBoundary).toBeGreaterThan(2 ** -30)
    }
  })

  it('expF32 = f32(Math.exp(x)) on 2.1 million float32 inputs: the domain strided, every boundary and hard case, ±0, subnormals, ±∞, NaN', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const xs = expInputs(new Rng(381))
    const want = xs.map((u) => toBits(f32(Math.exp(fromBits(u)))))
    const got = await runKernel(dev.gpu!, 'test:objective-exp', unaryKernel('expF32'), [xs], xs.length, xs.length)
    expect(differences(got, want, (i) => `exp(${fromBits(xs[i])}) [${xs[i].toString(16)}]`)).toEqual([])
  })

  it('binary:logistic: logisticGradPair = logisticGradients and sigmoidF32 = sigmoidF32 on margins of every scale, labels 0 and 1', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const rng = new Rng(382)
    const margins: number[] = []
    // random normals with a spread of 10^-4 … 10^3, both signs
    for (let i = 0; i < 20000; i++) margins.push(f32(rng.normal() * 10 ** (rng.uniform() * 7 - 4)))
    // where p rounds to exactly 1 (m ≳ 16.6: 1 − p = 0, the hessian's floor) or the hessian drops under 1e-16 (m ≲ −36.8)
    for (let m = 14; m < 19; m += 1 / 64) margins.push(m, -m - 23)
    // p subnormal (m < −87.3), p = 0 (m < −103.97)
    for (let m = 85; m < 106; m += 1 / 32) margins.push(-m)
    for (const m of [0, 2 ** -149, 1e-40, 2 ** -126, 1e-8, 2 ** -25, 30, 88, 88.72283935546875, 104, 1e30, 3.4028234663852886e38, Infinity, NaN])
      margins.push(m, -m)
    const count = margins.length
    const m = new Float32Array(margins)
    const y = new Float32Array(count).map(() => rng.below(2))
    const g = new Float32Array(count)
    const h = new Float32Array(count)
    logisticGradients(
      m,
      y,
      Int32Array.from({ length: count }, (_v, i) => i),
      count,
      g,
      h,
    )
    const want = new Uint32Array(count * 3)
    for (let i = 0; i < count; i++) want.set([toBits(g[i]), toBits(h[i]), toBits(sigmoidF32(m[i]))], i * 3)
    const kernel = /* wgsl */ `${BINARY_OBJECTIVE_WGSL}
@group(0) @binding(0) var<storage, read> margins: array<u32>;
@group(0) @binding(1) var<storage, read> labels: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= arrayLength(&margins)) { return; }
  let gh = logisticGradPair(margins[i], labels[i]);
  out[i * 3u] = gh.x;
  out[i * 3u + 1u] = gh.y;
  out[i * 3u + 2u] = sigmoidF32(margins[i]);
}`
    const got = await runKernel(dev.gpu!, 'test:objective-logistic', kernel, [new Uint32Array(m.buffer), Uint32Array.from(y)], count * 3, count)
    const what = ['g', 'h', 'sigmoid']
    expect(differences(got, want, (i) => `${what[i % 3]} of margin ${m[Math.floor(i / 3)]}, label ${y[Math.floor(i / 3)]}`)).toEqual([])
  })

  it("multi:softprob's float64 sum: addF32ToF64 = JavaScript's double additions in order, bit for bit (ties, carries, far smaller terms)", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const rng = new Rng(384)
    const terms = 32
    const sequences: number[][] = [
      // 1 + 2^-53 is a tie (to even: 1), twice is still 1, where the exact sum would round up
      [1, 2 ** -53, 2 ** -53, 2 ** -53],
      [1, f32(2 ** -53 + 2 ** -76)],
      [f32(1 + 2 ** -23), 2 ** -53],
      // 2 − 2^-52 (53 ones) + 2^-53: a tie rounding up to 2 (the mantissa carries into the exponent)
      [f32(2 - 2 ** -23), f32(2 ** -23 - 2 ** -46), f32(2 ** -46 - 2 ** -52), 2 ** -53],
      [f32(2 - 2 ** -23), f32(2 ** -23 - 2 ** -46), f32(2 ** -46 - 2 ** -52), 2 ** -53, 2 ** -52],
      [2 ** -149, 2 ** -149, 1, 2 ** -149],
      [0, 0, 2 ** -149],
      [],
    ]
    for (let i = 0; i < 3000; i++) {
      const length = 1 + rng.below(terms)
      const top = -rng.below(60)
      sequences.push(Array.from({ length }, () => (rng.below(10) === 0 ? 0 : f32((1 + rng.uniform()) * 2 ** (top - rng.below(rng.below(2) ? 30 : 150))))))
    }
    const values = new Float32Array(sequences.length * terms)
    const counts = new Uint32Array(sequences.length)
    const want = new Uint32Array(sequences.length * 2)
    const double = new Float64Array(1)
    const doubleWords = new Uint32Array(double.buffer)
    sequences.forEach((sequence, i) => {
      values.set(sequence, i * terms)
      counts[i] = sequence.length
      double[0] = sequence.reduce((sum, v) => sum + v, 0)
      want.set(doubleWords, i * 2)
    })
    const kernel = /* wgsl */ `${OBJECTIVE_WGSL}
@group(0) @binding(0) var<storage, read> counts: array<u32>;
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
fn marginBits(row: u32, c: u32) -> u32 { return 0u; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= arrayLength(&counts)) { return; }
  var sm = vec2<u32>(0u, 0u);
  var se = 0;
  for (var t = 0u; t < counts[i]; t++) { addF32ToF64(&sm, &se, values[i * ${terms}u + t]); }
  // IEEE double bits of sm · 2^se (sm normalised to 53 bits, or 0)
  if (sm.x == 0u && sm.y == 0u) { out[i * 2u] = 0u; out[i * 2u + 1u] = 0u; return; }
  out[i * 2u] = sm.x;
  out[i * 2u + 1u] = (sm.y & 0xFFFFFu) | (u32(se + 52 + 1023) << 20u);
}`
    const got = await runKernel(dev.gpu!, 'test:objective-f64-sum', kernel, [counts, new Uint32Array(values.buffer)], sequences.length * 2, sequences.length)
    const bad = sequences.flatMap((sequence, i) =>
      got[i * 2] === want[i * 2] && got[i * 2 + 1] === want[i * 2 + 1]
        ? []
        : [
            `[${sequence.join(', ')}]: device ${got[i * 2 + 1].toString(16)}:${got[i * 2].toString(16)}, CPU ${want[i * 2 + 1].toString(16)}:${want[i * 2].toString(16)}`,
          ],
    )
    expect(bad.slice(0, 20)).toEqual([])
  })

  /** a row's K margins, by kind: spread, ties, one class far ahead, all far below zero, zeros and subnormals, infinities and NaN */
  function rowMargins(rng: Rng, K: number, kind: number): number[] {
    const normal = (scale: number) => Array.from({ length: K }, () => rng.normal() * scale)
    switch (kind) {
      case 0:
        return normal(2)
      case 1:
        return normal(40)
      case 2: {
        const v = rng.normal() * 5
        return Array.from({ length: K }, () => v)
      }
      case 3: {
        const pair = [rng.normal(), rng.normal() * 3]
        return Array.from({ length: K }, () => pair[rng.below(2)])
      }
      case 4: {
        // p → 1 for the leader, the others' p underflow or sit at the hessian floor
        const lead = rng.below(K)
        const gap = [20, 40, 90, 110][rng.below(4)]
        return Array.from({ length: K }, (_v, k) => (k === lead ? gap / 2 : -gap / 2 + rng.normal()))
      }
      case 5:
        // every margin far below FLT_MIN (wmax stays FLT_MIN): tiny, subnormal or zero sums (0/0 = NaN, as the CPU)
        return Array.from({ length: K }, () => -[40, 86, 95, 101, 104, 120][rng.below(6)] - rng.uniform())
      case 6:
        return Array.from({ length: K }, () => [0, -0, 2 ** -149, -(2 ** -140), 1e-30, 2 ** -126][rng.below(6)])
      default:
        // ±∞ (∞ − ∞ = NaN), ±1e30 and the odd NaN
        return Array.from({ length: K }, () => [1e30, -1e30, Infinity, -Infinity, NaN, 3, -3][rng.below(rng.below(50) === 0 ? 7 : 6)])
    }
  }

  /** per (row, class k): softprobGradPair's (g, h) and softmaxOutputF32; one pipeline for every K (compiling is most of the time on lavapipe) */
  const SOFTPROB_KERNEL = /* wgsl */ `${OBJECTIVE_WGSL}
@group(0) @binding(0) var<storage, read> classes: array<u32>;
@group(0) @binding(1) var<storage, read> margins: array<u32>;
@group(0) @binding(2) var<storage, read> labels: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
fn marginBits(row: u32, c: u32) -> u32 { return margins[row * classes[0] + c]; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= arrayLength(&margins)) { return; }
  let K = classes[0];
  let row = i / K;
  let k = i % K;
  let gh = softprobGradPair(row, k, K, labels[row]);
  out[i * 3u] = gh.x;
  out[i * 3u + 1u] = gh.y;
  out[i * 3u + 2u] = softmaxOutputF32(row, k, K);
}`

  for (const [K, rows] of [
    [3, 3000],
    [5, 1500],
    [32, 200],
  ]) {
    it(`multi:softprob, K = ${K}: softprobGradPair = softprobOfRows + softprobGradients, softmaxOutputF32 = softmaxF32 (ties, gaps, underflow, ∞, NaN)`, async (ctx) => {
      if (noDevice(dev)) return ctx.skip()
      const rng = new Rng(383 + K)
      const byRow = Array.from({ length: rows }, (_v, r) => rowMargins(rng, K, r % 8))
      const margins = Array.from({ length: K }, (_v, k) => Float32Array.from(byRow, (row) => row[k]))
      const y = Float32Array.from({ length: rows }, () => rng.below(K))
      const p = new Float32Array(rows * K)
      softprobOfRows(margins, rows, p)
      const all = Int32Array.from({ length: rows }, (_v, r) => r)
      const g = new Float32Array(rows)
      const h = new Float32Array(rows)
      const want = new Uint32Array(rows * K * 3)
      for (let k = 0; k < K; k++) {
        softprobGradients(p, K, k, y, all, rows, g, h)
        for (let r = 0; r < rows; r++) want.set([toBits(g[r]), toBits(h[r])], (r * K + k) * 3)
      }
      const out = Float32Array.from(byRow.flat())
      for (let r = 0; r < rows; r++) softmaxF32(out, r * K, K)
      for (let i = 0; i < rows * K; i++) want[i * 3 + 2] = toBits(out[i])
      const got = await runKernel(
        dev.gpu!,
        'test:objective-softprob',
        SOFTPROB_KERNEL,
        [new Uint32Array([K]), new Uint32Array(Float32Array.from(byRow.flat()).buffer), Uint32Array.from(y)],
        rows * K * 3,
        rows * K,
      )
      const what = ['g', 'h', 'softmax']
      const describe = (i: number) => {
        const r = Math.floor(i / 3 / K)
        return `${what[i % 3]} of class ${Math.floor(i / 3) % K}, row ${r} [${byRow[r].slice(0, 6).join(', ')}${K > 6 ? ', …' : ''}], label ${y[r]}`
      }
      expect(differences(got, want, describe)).toEqual([])
    })
  }
})
