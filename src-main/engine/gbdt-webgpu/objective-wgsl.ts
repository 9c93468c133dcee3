// The classifiers' gradient pairs (../gbdt/objective.ts: binary:logistic, multi:softprob) and output
// transforms, bit for bit on the device, in integer WGSL after EXACT_WGSL (exact.ts). The CPU engine's
// expf is f32(Math.exp(x)); here it is a correctly rounded float32 exp (range reduction and a
// polynomial in 64-bit fixed point, one rounding at the end), which equals f32(Math.exp(x)) for every
// float32: V8's double exp (< 1 ulp) settles f32(Math.exp(x)) everywhere but at 8 inputs, where it
// is the correctly rounded value too, and this exp errs by < 2^-61 (objective-wgsl.test.ts; its opt-in
// tests check all 2^32 inputs). multi:softprob's float64 sum is emulated exactly (each addition
// rounded to 53 bits) and divisions are exactly rounded, so no WGSL float arithmetic decides a bit: a
// device's exp, division, flushing of subnormals or fused multiply-adds cannot change one.
//
// The contract (OBJECTIVE_WGSL_CONTRACT): OBJECTIVE_WGSL comes after EXACT_WGSL, and the kernel defines
// `fn marginBits(row: u32, c: u32) -> u32`, class c's current margin of a row as float32 bits, which
// softprobGradPair, softprobRowTerms and softmaxOutputF32 read (a binary-only kernel may take BINARY_OBJECTIVE_WGSL
// alone, without marginBits). Values are float32 bits (u32); labels u32, 0u/1u for binary, the class
// index for multiclass. A NaN margin gives NaN bits, as the CPU gives NaN.

import { CLASS_LIMITS } from '@shared/vocabulary/task'

/** What OBJECTIVE_WGSL defines and what a kernel including it must define (WGSL signatures). */
export const OBJECTIVE_WGSL_CONTRACT = {
  /** the kernel's side: class c's margin of a row, float32 bits; read 2K times per softprobGradPair or softprobRowTerms call */
  requires: { marginBits: 'fn marginBits(row: u32, c: u32) -> u32' },
  provides: {
    /** (g, h) bits = logisticGradients for one row (label 0u/1u) */
    logisticGradPair: 'fn logisticGradPair(margin: u32, label: u32) -> vec2<u32>',
    /** class k's (g, h) bits = softprobOfRows + softprobGradients (label: the row's class); K exps a call */
    softprobGradPair: 'fn softprobGradPair(row: u32, k: u32, K: u32, label: u32) -> vec2<u32>',
    /** a row's K softmax terms (into exps) and their sum: K exps a row, for all its classes' pairs */
    softprobRowTerms: 'fn softprobRowTerms(row: u32, K: u32, exps: ptr<function, array<u32, MAX_CLASSES>>) -> u32',
    /** class k's (g, h) bits from its term and the row's sum: softprobGradPair without its exps */
    softprobClassPair: 'fn softprobClassPair(e: u32, sum: u32, k: u32, label: u32) -> vec2<u32>',
    /** a binary model's output: sigmoidF32 */
    sigmoidF32: 'fn sigmoidF32(margin: u32) -> u32',
    /** a multiclass model's output of class k: softmaxF32 (the prediction's Softmax, maximum from class 0) */
    softmaxOutputF32: 'fn softmaxOutputF32(row: u32, k: u32, K: u32) -> u32',
    /** f32(Math.exp(x)), correctly rounded */
    expF32: 'fn expF32(x: u32) -> u32',
  },
  /** what it needs before it */
  after: 'EXACT_WGSL',
  /** OBJECTIVE_WGSL = BINARY_OBJECTIVE_WGSL (expF32, sigmoidF32, logisticGradPair) + MULTICLASS_OBJECTIVE_WGSL (the rest, calling marginBits) */
  parts: ['BINARY_OBJECTIVE_WGSL', 'MULTICLASS_OBJECTIVE_WGSL'],
} as const

/** ln2/64 · 2^104, rounded (98 bits): the range reduction's step */
export const EXP_STEP_Q104 = 0x2c5c85fdf473de6af278ece60n
/** 2^(j/64) · 2^63 for j = 0 … 63, rounded: the reduced exponent's table */
export const EXP2_SIXTYFOURTHS_Q63: readonly bigint[] = [
  0x8000000000000000n,
  0x8164d1f3bc030773n,
  0x82cd8698ac2ba1d7n,
  0x843a28c3acde4046n,
  0x85aac367cc487b15n,
  0x871f61969e8d1010n,
  0x88980e8092da8527n,
  0x8a14d575496efd9an,
  0x8b95c1e3ea8bd6e7n,
  0x8d1adf5b7e5ba9e6n,
  0x8ea4398b45cd53c0n,
  0x9031dc431466b1dcn,
  0x91c3d373ab11c336n,
  0x935a2b2f13e6e92cn,
  0x94f4efa8fef70961n,
  0x96942d3720185a00n,
  0x9837f0518db8a96fn,
  0x99e0459320b7fa65n,
  0x9b8d39b9d54e5539n,
  0x9d3ed9a72cffb751n,
  0x9ef5326091a111aen,
  0xa0b0510fb9714fc2n,
  0xa27043030c496819n,
  0xa43515ae09e6809en,
  0xa5fed6a9b15138ean,
  0xa7cd93b4e965356an,
  0xa9a15ab4ea7c0ef8n,
  0xab7a39b5a93ed337n,
  0xad583eea42a14ac6n,
  0xaf3b78ad690a4375n,
  0xb123f581d2ac2590n,
  0xb311c412a9112489n,
  0xb504f333f9de6484n,
  0xb6fd91e328d17791n,
  0xb8fbaf4762fb9ee9n,
  0xbaff5ab2133e45fbn,
  0xbd08a39f580c36bfn,
  0xbf1799b67a731083n,
  0xc12c4cca66709456n,
  0xc346ccda24976407n,
  0xc5672a115506daddn,
  0xc78d74c8abb9b15dn,
  0xc9b9bd866e2f27a3n,
  0xcbec14fef2727c5dn,
  0xce248c151f8480e4n,
  0xd06333daef2b2595n,
  0xd2a81d91f12ae45an,
  0xd4f35aabcfedfa1fn,
  0xd744fccad69d6af4n,
  0xd99d15c278afd7b6n,
  0xdbfbb797daf23755n,
  0xde60f4825e0e9124n,
  0xe0ccdeec2a94e111n,
  0xe33f8972be8a5a51n,
  0xe5b906e77c8348a8n,
  0xe8396a503c4bdc68n,
  0xeac0c6e7dd24392fn,
  0xed4f301ed9942b84n,
  0xefe4b99bdcdaf5cbn,
  0xf281773c59ffb13an,
  0xf5257d152486cc2cn,
  0xf7d0df730ad13bb9n,
  0xfa83b2db722a033an,
  0xfd3e0c0cf486c175n,
]
/** 1/k! · 2^63 for k = 1 … 7, rounded: expm1's Taylor coefficients (degree 7: its tail < 2^-67 for r < ln2/64) */
export const EXPM1_COEFFICIENTS_Q63: readonly bigint[] = [
  0x8000000000000000n,
  0x4000000000000000n,
  0x1555555555555555n,
  0x555555555555555n,
  0x111111111111111n,
  0x2d82d82d82d82en,
  0x6806806806807n,
]

function wgslWords(v: bigint, words: number): string {
  const out: string[] = []
  for (let i = 0; i < words; i++) out.push(`0x${((v >> BigInt(32 * i)) & 0xffffffffn).toString(16).toUpperCase().padStart(8, '0')}u`)
  return `vec${words}<u32>(${out.join(', ')})`
}

/** WGSL, after EXACT_WGSL: expF32, sigmoidF32, logisticGradPair and their helpers (no marginBits needed). */
export const BINARY_OBJECTIVE_WGSL = /* wgsl */ `
const F32_ONE: u32 = 0x3F800000u;
const F32_NAN: u32 = 0x7FC00000u;
const F32_SIGN: u32 = 0x80000000u;
/** XGBoost's hessian floor, f32(1e-16) */
const HESSIAN_FLOOR_BITS: u32 = 0x${new Uint32Array(new Float32Array([1e-16]).buffer)[0].toString(16).toUpperCase()}u;
const EXP_STEP_Q104: vec4<u32> = ${wgslWords(EXP_STEP_Q104, 4)};
const EXP2_SIXTYFOURTHS_Q63 = array<vec2<u32>, 64>(${EXP2_SIXTYFOURTHS_Q63.map((v) => wgslWords(v, 2)).join(', ')});
const EXPM1_COEFFICIENTS_Q63 = array<vec2<u32>, 7>(${EXPM1_COEFFICIENTS_Q63.map((v) => wgslWords(v, 2)).join(', ')});

fn ge128(a: vec4<u32>, b: vec4<u32>) -> bool {
  if (a.w != b.w) { return a.w > b.w; }
  if (a.z != b.z) { return a.z > b.z; }
  return ge64(a.xy, b.xy);
}
fn sub128(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let x = a.x - b.x; var c = select(0u, 1u, a.x < b.x);
  let y0 = a.y - b.y; let y = y0 - c; c = select(0u, 1u, a.y < b.y) + select(0u, 1u, y0 < c);
  let z0 = a.z - b.z; let z = z0 - c; c = select(0u, 1u, a.z < b.z) + select(0u, 1u, z0 < c);
  return vec4<u32>(x, y, z, a.w - b.w - c);
}
/** a · s mod 2^128 */
fn mul128By32(a: vec4<u32>, s: u32) -> vec4<u32> {
  let x = mul32(a.x, s); let y = mul32(a.y, s); let z = mul32(a.z, s);
  var r = vec4<u32>(x.x, x.y, 0u, a.w * s);
  r = add128(r, vec4<u32>(0u, y.x, y.y, 0u));
  return add128(r, vec4<u32>(0u, 0u, z.x, z.y));
}
/** a >> s for s < 64, and whether bits were lost */
fn shr64Sticky(a: vec2<u32>, s: u32, sticky: ptr<function, bool>) -> vec2<u32> {
  if (s == 0u) { return a; }
  let lost = select(vec2<u32>(a.x & ((1u << s) - 1u), 0u), vec2<u32>(a.x, a.y & ((1u << (s - 32u)) - 1u)), s >= 32u);
  *sticky = *sticky || lost.x != 0u || lost.y != 0u;
  if (s >= 32u) { return vec2<u32>(a.y >> (s - 32u), 0u); }
  return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}

/**
 * f32(e^x), correctly rounded (ties cannot occur), for any float32 bits: NaN → NaN, ±0 → 1, overflow →
 * ∞, underflow → subnormals and +0. |x| = q·c + ρ with c = ln2/64 (104 fractional bits, exact ρ ≥ 0),
 * e^x = 2^(n >> 6) · 2^((n & 63)/64) · e^r (n = ±q, r ∈ [0, c)), e^r − 1 by Horner in 2^-63 units,
 * the product of two 64-bit mantissas rounded once to float32 (subnormals and ∞ by toF32). Relative
 * error < 2^-61: r truncated (2^-64), the table (2^-64), the Taylor tail (2^-67), Horner's truncations (2^-62.9).
 */
fn expF32(x: u32) -> u32 {
  let ax = x & 0x7FFFFFFFu;
  if (ax > F32_INF) { return F32_NAN; }
  let negative = x != ax;
  // |x| < 2^-25: e^x lies strictly between 1's rounding boundaries 1 − 2^-25 and 1 + 2^-24
  if (ax < 0x33000000u) { return F32_ONE; }
  // x > 100 overflows, x < −110 underflows (e^-110 < 2^-158)
  if (!negative && ax > 0x42C80000u) { return F32_INF; }
  if (negative && ax > 0x42DC0000u) { return 0u; }
  var ex = 0;
  let mx = unpackF32(ax, &ex);
  // |x| · 2^104 exactly (ex ∈ [−48, −17])
  let scaled = shl128(vec4<u32>(mx, 0u, 0u, 0u), u32(ex + 104));
  // q = ⌊|x| / c⌋: a float estimate (off by one at most), corrected on the exact values
  var q = u32(bitcast<f32>(ax) * 92.332482616893656);
  var qc = mul128By32(EXP_STEP_Q104, q);
  for (var i = 0; i < 4 && !ge128(scaled, qc); i++) {
    q -= 1u;
    qc = sub128(qc, EXP_STEP_Q104);
  }
  var rho = sub128(scaled, qc);
  for (var i = 0; i < 4 && ge128(rho, EXP_STEP_Q104); i++) {
    q += 1u;
    rho = sub128(rho, EXP_STEP_Q104);
  }
  var n = i32(q);
  if (negative) {
    // −|x| = −(q + 1)·c + (c − ρ)
    n = -n;
    if (rho.x != 0u || rho.y != 0u || rho.z != 0u || rho.w != 0u) {
      n -= 1;
      rho = sub128(EXP_STEP_Q104, rho);
    }
  }
  // r · 2^64 (< 2^58), truncated
  let r = bits64At(rho, 40u);
  var acc = EXPM1_COEFFICIENTS_Q63[6];
  for (var k = 5; k >= 0; k--) {
    acc = add64(EXPM1_COEFFICIENTS_Q63[k], mul64(acc, r).zw);
  }
  let expm1 = mul64(acc, r).zw;
  // e^r · 2^63 ∈ [2^63, 2^64)
  let er = vec2<u32>(expm1.x, expm1.y + 0x80000000u);
  return toF32(mul64(EXP2_SIXTYFOURTHS_Q63[u32(n & 63)], er), (n >> 6u) - 126, false);
}

/** f32(a / b), correctly rounded, for a, b ≥ 0 or NaN: 0/0 and NaN → NaN, a/0 → ∞, a/∞ → 0, subnormal b too */
fn quotientF32(a: u32, b: u32) -> u32 {
  if (isNanF32(a) || isNanF32(b)) { return F32_NAN; }
  if (b == 0u) { return select(F32_INF, F32_NAN, a == 0u); }
  if (b == F32_INF) { return select(0u, F32_NAN, a == F32_INF); }
  // divF32's long division holds for a subnormal divisor too: unpackF32 normalises it to 24 bits
  return divF32(a, b);
}

fn isNanF32(a: u32) -> bool { return (a & 0x7FFFFFFFu) > F32_INF; }

/** Math.max of two float32 values: NaN if either is, +0 over −0 (the CPU's comparison, on ordered bits) */
fn maxF32(a: u32, b: u32) -> u32 {
  if (isNanF32(a) || isNanF32(b)) { return F32_NAN; }
  let ka = a ^ select(F32_SIGN, 0xFFFFFFFFu, a >= F32_SIGN);
  let kb = b ^ select(F32_SIGN, 0xFFFFFFFFu, b >= F32_SIGN);
  return select(b, a, ka > kb);
}

/** XGBoost's common::Sigmoid in float32, sigmoidF32: f32(1 / f32(1 + expf(−m))) */
fn sigmoidF32(margin: u32) -> u32 {
  return quotientF32(F32_ONE, addF32(F32_ONE, expF32(margin ^ F32_SIGN)));
}

/** f32(p · f32(1 − p)) for p ∈ [0, 1] (the product's second factor is 0 or ≥ 2^-24, normal) */
fn timesOneMinusF32(a: u32, p: u32) -> u32 {
  let q = addF32(F32_ONE, p ^ F32_SIGN);
  if (q == 0u) { return 0u; }
  return mulF32(a, q);
}

/** binary:logistic's (g, h) bits for one row (logisticGradients): p = sigmoid(m), g = p − y, h = max(p·(1 − p), 1e-16) */
fn logisticGradPair(margin: u32, label: u32) -> vec2<u32> {
  let p = sigmoidF32(margin);
  if (isNanF32(p)) { return vec2<u32>(F32_NAN, F32_NAN); }
  let g = addF32(p, select(0u, 0xBF800000u, label == 1u));
  return vec2<u32>(g, maxF32(timesOneMinusF32(p, p), HESSIAN_FLOOR_BITS));
}

`

/** WGSL, after BINARY_OBJECTIVE_WGSL: softprobGradPair, softprobRowTerms + softprobClassPair, softmaxOutputF32 (they call the kernel's marginBits). */
export const MULTICLASS_OBJECTIVE_WGSL = /* wgsl */ `
/** numeric_limits<float>::min(): multi:softprob's running maximum starts there */
const F32_MIN_NORMAL: u32 = 0x00800000u;
/** the most classes a multiclass task has (CLASS_LIMITS.max): a row's softmax terms fit one array */
const MAX_CLASSES: u32 = ${CLASS_LIMITS.max}u;

/**
 * fl64(s + a): the float64 s = (*sm)·2^(*se) (*sm = 0 or exactly 53 bits) plus a ≥ 0 finite float32,
 * one IEEE double addition. Both operands are placed in 128 bits at the larger one's top bit − 116
 * (the smaller one's bits below that become a sticky bit), summed exactly and rounded to 53 bits.
 */
fn addF32ToF64(sm: ptr<function, vec2<u32>>, se: ptr<function, i32>, a: u32) {
  var ea = 0;
  let ma = unpackF32(a, &ea);
  if (ma == 0u) { return; }
  if ((*sm).x == 0u && (*sm).y == 0u) {
    *sm = shl64(vec2<u32>(ma, 0u), 29u);
    *se = ea - 29;
    return;
  }
  let base = max(*se + 52, ea + 23) - 116;
  var sticky = false;
  var sPart = vec4<u32>(0u, 0u, 0u, 0u);
  if (*se >= base) {
    sPart = shl128(vec4<u32>(*sm, 0u, 0u), u32(*se - base));
  } else if (base - *se < 64) {
    sPart = vec4<u32>(shr64Sticky(*sm, u32(base - *se), &sticky), 0u, 0u);
  } else {
    sticky = true;
  }
  var aPart = vec4<u32>(0u, 0u, 0u, 0u);
  if (ea >= base) {
    aPart = shl128(vec4<u32>(ma, 0u, 0u, 0u), u32(ea - base));
  } else if (base - ea < 64) {
    aPart = vec4<u32>(shr64Sticky(vec2<u32>(ma, 0u), u32(base - ea), &sticky), 0u, 0u);
  } else {
    sticky = true;
  }
  var shift = 0;
  var m = toF64(add128(sPart, aPart), sticky, &shift);
  // rounding up to 2^53 carries into the exponent
  if (m.y >= 0x200000u) {
    m = vec2<u32>((m.x >> 1u) | (m.y << 31u), m.y >> 1u);
    shift += 1;
  }
  *sm = m;
  *se = base + shift;
}

/**
 * A row's softmax terms: e_c = expf(f32(m_c − wmax)) into (*exps)[c] in class order, wmax = max(start,
 * m_0 … m_{K−1}) (start: F32_MIN_NORMAL for multi:softprob's gradients, softprobOfRows; m_0 for the
 * prediction's Softmax, softmaxF32); returns their float64 sum in class order rounded to float32, or
 * F32_NAN when a margin or a term is NaN (every p is NaN then, as on the CPU). K exps.
 */
fn softmaxTermsF32(row: u32, K: u32, start: u32, exps: ptr<function, array<u32, MAX_CLASSES>>) -> u32 {
  var wmax = start;
  for (var c = 0u; c < K; c++) {
    wmax = maxF32(marginBits(row, c), wmax);
  }
  if (isNanF32(wmax)) { return F32_NAN; }
  var sm = vec2<u32>(0u, 0u);
  var se = 0;
  for (var c = 0u; c < K; c++) {
    let e = expF32(addF32(marginBits(row, c), wmax ^ F32_SIGN));
    // e ∈ [0, 1], or NaN from ∞ − ∞ (the CPU's sum and every p are NaN then)
    if (isNanF32(e)) { return F32_NAN; }
    addF32ToF64(&sm, &se, e);
    (*exps)[c] = e;
  }
  if (sm.x == 0u && sm.y == 0u) { return 0u; }
  return toF32(vec4<u32>(sm, 0u, 0u), se, false);
}

/** Class k's probability of a row, f32(e_k / f32(wsum)) (softmaxTermsF32's terms): K exps a call */
fn softmaxProbabilityF32(row: u32, k: u32, K: u32, start: u32) -> u32 {
  var exps: array<u32, MAX_CLASSES>;
  let s = softmaxTermsF32(row, K, start, &exps);
  return quotientF32(exps[k], s);
}

/** multi:softprob's (g, h) bits of class k from its probability p (softprobGradients): g = p − [label = k], h = max(2p·(1 − p), 1e-16) */
fn softprobPairOfProbability(p: u32, k: u32, label: u32) -> vec2<u32> {
  if (isNanF32(p)) { return vec2<u32>(F32_NAN, F32_NAN); }
  let g = select(p, addF32(p, 0xBF800000u), label == k);
  // 2p is exact (p ≤ 1)
  let h = maxF32(timesOneMinusF32(mulF32(p, 0x40000000u), p), HESSIAN_FLOOR_BITS);
  return vec2<u32>(g, h);
}

/** multi:softprob's (g, h) bits of class k for a row (softprobOfRows, softprobGradients); K exps a call (one class alone) */
fn softprobGradPair(row: u32, k: u32, K: u32, label: u32) -> vec2<u32> {
  return softprobPairOfProbability(softmaxProbabilityF32(row, k, K, F32_MIN_NORMAL), k, label);
}

/**
 * multi:softprob's row, once for all its classes (K exps a row, not softprobGradPair's K a class): the
 * terms into *exps and their sum, returned; class k's pair is then softprobClassPair((*exps)[k], sum, k, label).
 */
fn softprobRowTerms(row: u32, K: u32, exps: ptr<function, array<u32, MAX_CLASSES>>) -> u32 {
  return softmaxTermsF32(row, K, F32_MIN_NORMAL, exps);
}

/** class k's (g, h) bits from its term and the row's sum (softprobRowTerms): = softprobGradPair(row, k, K, label) */
fn softprobClassPair(e: u32, sum: u32, k: u32, label: u32) -> vec2<u32> {
  return softprobPairOfProbability(quotientF32(e, sum), k, label);
}

/** A multiclass model's output of class k (softmaxF32: XGBoost's prediction Softmax, its maximum from class 0) */
fn softmaxOutputF32(row: u32, k: u32, K: u32) -> u32 {
  return softmaxProbabilityF32(row, k, K, marginBits(row, 0u));
}
`

/** WGSL, after EXACT_WGSL: all of the above; the including kernel defines marginBits (the contract). */
export const OBJECTIVE_WGSL = BINARY_OBJECTIVE_WGSL + MULTICLASS_OBJECTIVE_WGSL
