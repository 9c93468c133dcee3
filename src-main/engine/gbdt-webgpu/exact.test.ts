// The device's integer float32 arithmetic (exact.ts) against the CPU engine's (rules.ts, Math.fround
// on float64) bit for bit, on random and edge inputs: squares of 53-bit sums at every quantisation
// exponent (subnormal and overflowing results), correctly rounded division, sums, products, a
// side's gain and a leaf value with λ, α, min_child_weight and η, and both with a classifier's hessian
// sum (a 53-bit integer at any quantisation exponent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leafValue, sideGain, type SplitCoefs } from '../gbdt/rules'
import { Rng } from '../random'
import { EXACT_WGSL } from './exact'
import { USAGE } from '../webgpu/device'
import { type DeviceHolder, noDevice, openForTests } from '../../testing/webgpu-trees'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const f32 = Math.fround
const WORDS = 16
const bits = new Float32Array(1)
const bitsU = new Uint32Array(bits.buffer)
function toBits(v: number): number {
  bits[0] = v
  return bitsU[0]
}
function fromBits(u: number): number {
  bitsU[0] = u
  return bits[0]
}

const KERNEL = /* wgsl */ `${EXACT_WGSL}
@group(0) @binding(0) var<storage, read> cases: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= arrayLength(&out)) { return; }
  let c = i * ${WORDS}u;
  let op = cases[c];
  let a = vec2<u32>(cases[c + 1u], cases[c + 2u]);
  let h = cases[c + 3u];
  let k = bitcast<i32>(cases[c + 4u]);
  let alphaQ = vec2<u32>(cases[c + 5u], cases[c + 6u]);
  let lambda = cases[c + 7u];
  var r = 0u;
  switch (op) {
    case 0u: { r = sqF32(a, k); }
    case 1u: { r = divF32(a.x, a.y); }
    case 2u: { r = addF32(a.x, a.y); }
    case 3u: { r = mulF32(a.x, a.y); }
    case 4u: { r = sideGainF32(a, h, k, alphaQ, lambda); }
    case 6u: { r = sideGainHF32(a, vec2<u32>(cases[c + 10u], cases[c + 11u]), k, bitcast<i32>(cases[c + 12u]), alphaQ, lambda); }
    case 7u: {
      let hq = vec2<u32>(cases[c + 10u], cases[c + 11u]);
      let mcwQ = vec2<u32>(cases[c + 13u], cases[c + 14u]);
      r = leafHF32(thresholdQ(a, alphaQ), (a.y & 0x80000000u) != 0u, k, hq, bitcast<i32>(cases[c + 12u]), lambda, mcwQ, cases[c + 9u]);
    }
    default: {
      let t = thresholdQ(a, alphaQ);
      r = leafF32(t, (a.y & 0x80000000u) != 0u, k, h, lambda, bitcast<f32>(cases[c + 8u]), cases[c + 9u]);
    }
  }
  out[i] = r;
}`

interface Case {
  op: number
  /** op 0: t; ops 4, 5: Σq (signed) */
  big?: bigint
  a?: number
  b?: number
  h?: number
  k?: number
  alphaQ?: bigint
  lambda?: number
  mcw?: number
  eta?: number
  /** ops 6, 7: a classifier's hessian sum hq · 2^-kh, and ⌈mcw · 2^kh⌉ */
  hq?: bigint
  kh?: number
  mcwQ?: bigint
  expect: number
}

async function runCases(cases: Case[]): Promise<Uint32Array> {
  const gpu = dev.gpu!
  const words = new Uint32Array(cases.length * WORDS)
  cases.forEach((c, i) => {
    const w = i * WORDS
    words[w] = c.op
    if (c.big !== undefined) {
      const u = BigInt.asUintN(64, c.big)
      words[w + 1] = Number(u & 0xffffffffn)
      words[w + 2] = Number(u >> 32n)
    } else {
      words[w + 1] = toBits(c.a ?? 0)
      words[w + 2] = toBits(c.b ?? 0)
    }
    words[w + 3] = c.h ?? 0
    words[w + 4] = (c.k ?? 0) >>> 0
    const aq = c.alphaQ ?? 0n
    words[w + 5] = Number(aq & 0xffffffffn)
    words[w + 6] = Number(aq >> 32n)
    words[w + 7] = toBits(c.lambda ?? 0)
    words[w + 8] = toBits(c.mcw ?? 0)
    words[w + 9] = toBits(c.eta ?? 0)
    const hq = c.hq ?? 0n
    words[w + 10] = Number(hq & 0xffffffffn)
    words[w + 11] = Number(hq >> 32n)
    words[w + 12] = (c.kh ?? 0) >>> 0
    const mq = c.mcwQ ?? 0n
    words[w + 13] = Number(mq & 0xffffffffn)
    words[w + 14] = Number(mq >> 32n)
  })
  const inBuf = gpu.createBuffer(words.byteLength, USAGE.STORAGE | USAGE.COPY_DST, 'exact-cases')
  const outBuf = gpu.createBuffer(cases.length * 4, USAGE.STORAGE | USAGE.COPY_SRC, 'exact-out')
  const staging = gpu.createBuffer(cases.length * 4, USAGE.MAP_READ | USAGE.COPY_DST, 'exact-staging')
  try {
    gpu.device.queue.writeBuffer(inBuf, 0, words)
    const pipeline = gpu.pipeline('test:exact', () => KERNEL)
    const enc = gpu.device.createCommandEncoder()
    const pass = enc.beginComputePass()
    pass.setPipeline(pipeline)
    pass.setBindGroup(
      0,
      gpu.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: inBuf } },
          { binding: 1, resource: { buffer: outBuf, size: cases.length * 4 } },
        ],
      }),
    )
    pass.dispatchWorkgroups(Math.ceil(cases.length / 64))
    pass.end()
    enc.copyBufferToBuffer(outBuf, 0, staging, 0, cases.length * 4)
    gpu.submit([enc.finish()])
    return new Uint32Array(await gpu.read(staging, cases.length * 4))
  } finally {
    for (const b of [inBuf, outBuf, staging]) gpu.destroyBuffer(b)
  }
}

/** the cases whose device bits differ from the expected ones, described */
async function mismatches(cases: Case[]): Promise<string[]> {
  const got = await runCases(cases)
  const bad: string[] = []
  cases.forEach((c, i) => {
    const want = c.expect >>> 0
    // a NaN's payload and sign are not arithmetic (x86 makes ∞ − ∞ negative): any NaN never wins a comparison
    const bothNaN = Number.isNaN(fromBits(got[i])) && Number.isNaN(fromBits(want))
    if (got[i] !== want && !bothNaN) {
      const { expect: _e, ...inputs } = c
      bad.push(
        `${JSON.stringify(inputs, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}: device ${got[i].toString(16)} (${fromBits(got[i])}), CPU ${want.toString(16)} (${fromBits(want)})`,
      )
    }
  })
  return bad
}

/** a float32 with a random mantissa and an exponent in [lo, hi] (sometimes subnormal) */
function randomF32(rng: Rng, lo: number, hi: number): number {
  const e = lo + rng.below(hi - lo + 1)
  const m = 1 + rng.uniform()
  const v = f32(m * 2 ** e)
  return rng.below(20) === 0 ? f32(rng.uniform() * 2 ** -126) : v
}

/** |Σq| < 2^53 with a random bit length (and its low bits random), signed */
function randomSum(rng: Rng): bigint {
  const len = 1 + rng.below(53)
  let v = 1n
  for (let i = 1; i < len; i++) v = (v << 1n) | BigInt(rng.below(2))
  return rng.below(2) === 0 ? v : -v
}

function coefs(lambda: number, alpha: number, mcw: number, eta: number): SplitCoefs {
  return { lambda: f32(lambda), alpha: f32(alpha), mcw: f32(mcw), gamma: 0, eta: f32(eta), minSplitH: 2 }
}

const LAMBDAS = [0, 1, 0.1, 1e-3, 7, 1e6, 1e-30, 3e-41, 0.5, 12345.678]
const ALPHAS = [0, 0.5, 0.1, 1, 3.75]

/** α · 2^k when it is an integer (the device's domain), else null */
function alphaQ(alpha: number, k: number): bigint | null {
  const a = f32(alpha) * 2 ** k
  if (!Number.isInteger(a)) return null
  return a >= 2 ** 53 ? 2n ** 53n : BigInt(a)
}

describe("exact float32 on the device = the CPU engine's float32 arithmetic", () => {
  it('squares of 53-bit sums, f32(fl64(t²) · 2^-2k), at every scale: subnormal, normal and overflowing results', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const rng = new Rng(11)
    const cases: Case[] = []
    for (let i = 0; i < 3000; i++) {
      const t = randomSum(rng)
      const mag = t < 0n ? -t : t
      const k = -100 + rng.below(280)
      const g = Number(mag) * 2 ** -k
      cases.push({ op: 0, big: mag, k, expect: toBits(f32(g * g)) })
    }
    // results at the float32 rounding boundaries: t² just around 2^n·(1 + j·2^-24)
    for (const t of [1n, 3n, 4095n, 4097n, 2n ** 26n + 1n, 2n ** 52n + 1n, 2n ** 53n - 1n, 94906265n, 94906267n]) {
      for (const k of [0, 30, 75, 87, 88, 100, 160, -64]) cases.push({ op: 0, big: t, k, expect: toBits(f32((Number(t) * 2 ** -k) ** 2)) })
    }
    expect(await mismatches(cases)).toEqual([])
  })

  it('division, sums and products of float32 values, correctly rounded (subnormals, zeros, infinities)', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const rng = new Rng(12)
    const cases: Case[] = []
    for (let i = 0; i < 3000; i++) {
      const a = randomF32(rng, -149, 127)
      const b = randomF32(rng, -126, 40)
      const divisor = b === 0 || b < 2 ** -126 ? 1 : b
      cases.push({ op: 1, a, b: divisor, expect: toBits(f32(a / divisor)) })
      const c = randomF32(rng, -140, 127) * (rng.below(2) ? -1 : 1)
      const d = rng.below(4) === 0 ? f32(-c * (1 + rng.below(3) * 2 ** -23)) : randomF32(rng, -149, 127) * (rng.below(2) ? -1 : 1)
      cases.push({ op: 2, a: c, b: d, expect: toBits(f32(c + d)) })
      const e = randomF32(rng, -149, 100) * (rng.below(2) ? -1 : 1)
      const p = randomF32(rng, -30, 10)
      cases.push({ op: 3, a: e, b: p, expect: toBits(f32(e * p)) })
    }
    for (const [a, b] of [
      [0, 0],
      [-0, -0],
      [0, -0],
      [Infinity, 1],
      [Infinity, -Infinity],
      [1, -1],
      [3.4e38, 3.4e38],
      [2 ** -149, 2 ** -149],
      [2 ** -126, -(2 ** -149)],
      [1, 2 ** -24],
      [f32(1 + 2 ** -23), 2 ** -24],
      [f32(1 + 2 ** -23), -(2 ** -24)],
      [2 ** 24, 1],
      [2 ** 24 + 2, 1],
    ]) {
      cases.push({ op: 2, a, b, expect: toBits(f32(a + b)) })
    }
    // ties: halving into the subnormal range, and products landing on a subnormal midpoint
    for (let i = 0; i < 200; i++) {
      const a = f32((1 + rng.below(2 ** 23) * 2 ** -23) * 2 ** -(100 + rng.below(26)))
      const p = 2 ** (1 + rng.below(40))
      cases.push({ op: 1, a, b: p, expect: toBits(f32(a / p)) }, { op: 3, a, b: 1 / p, expect: toBits(f32(a / p)) })
    }
    cases.push(
      { op: 1, a: Infinity, b: 3, expect: toBits(Infinity) },
      { op: 1, a: 0, b: 3, expect: 0 },
      { op: 1, a: 3.4e38, b: 2 ** -20, expect: toBits(Infinity) },
    )
    expect(await mismatches(cases)).toEqual([])
  })

  it("a side's gain and a leaf value (rules.ts sideGain, leafValue) with λ, α, min_child_weight and η", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const rng = new Rng(13)
    const cases: Case[] = []
    while (cases.length < 4000) {
      const sum = randomSum(rng)
      const k = rng.below(3) === 0 ? -60 + rng.below(240) : 20 + rng.below(20)
      const h = rng.below(5) === 0 ? rng.below(4) : 1 + rng.below(2 ** (1 + rng.below(23)))
      const lambda = LAMBDAS[rng.below(LAMBDAS.length)]
      const alpha = ALPHAS[rng.below(ALPHAS.length)]
      const aq = alphaQ(alpha, k)
      if (aq === null) continue
      const mcw = [0, 1, 3.5, 1e6][rng.below(4)]
      const eta = [0.1, 0.3, 1, 1e-3][rng.below(4)]
      const c = coefs(lambda, alpha, mcw, eta)
      const g = Number(sum) * 2 ** -k
      const common = { big: sum, h, k, alphaQ: aq, lambda: c.lambda, mcw: c.mcw, eta: c.eta }
      cases.push({ op: 4, ...common, expect: toBits(sideGain(g, h, c.lambda, c.alpha)) })
      cases.push({ op: 5, ...common, expect: toBits(leafValue(g, h, c)) })
    }
    expect(await mismatches(cases)).toEqual([])
  })

  it("a classifier side's gain and leaf value: hessian sums hq · 2^-kh (hq < 2^53, kh 0 … 100) with λ from 3e-41 to 1e6, α, min_child_weight, η", async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const rng = new Rng(17)
    const cases: Case[] = []
    while (cases.length < 4000) {
      const sum = randomSum(rng)
      const k = 20 + rng.below(20)
      // hq: any bit length up to 53, sometimes 0 or 1
      const t = randomSum(rng)
      const hq = rng.below(8) === 0 ? BigInt(rng.below(2)) : t < 0n ? -t : t
      const kh = rng.below(101)
      const lambda = LAMBDAS[rng.below(LAMBDAS.length)]
      const alpha = ALPHAS[rng.below(ALPHAS.length)]
      const aq = alphaQ(alpha, k)
      if (aq === null) continue
      const mcw = [0, 1, 1e-3, 3.5, 1e6][rng.below(5)]
      const eta = [0.1, 0.3, 1, 1e-3][rng.below(4)]
      const c = coefs(lambda, alpha, mcw, eta)
      const g = Number(sum) * 2 ** -k
      const H = Number(hq) * 2 ** -kh
      const common = { big: sum, k, alphaQ: aq, lambda: c.lambda, mcw: c.mcw, eta: c.eta, hq, kh, mcwQ: BigInt(Math.min(Math.ceil(c.mcw * 2 ** kh), 2 ** 63)) }
      cases.push({ op: 6, ...common, expect: toBits(sideGain(g, H, c.lambda, c.alpha)) })
      cases.push({ op: 7, ...common, expect: toBits(leafValue(g, H, c)) })
    }
    expect(await mismatches(cases)).toEqual([])
  })
})
