// The CPU engine's float32 tree arithmetic (../gbdt/rules.ts), bit for bit on the device, in integer
// WGSL: a side's gain f32(f32(fl64(T²)) / f32(H + λ)), f32 sums and differences, and a leaf value
// f32(f32(fl64(−T / fl64(H + λ))) · f32(η)) — each IEEE rounding (to nearest even, gradual underflow,
// overflow to ∞) done on integer mantissas, so neither WGSL's 2.5-ulp division nor a device's
// flushing of subnormals or fusing of multiply-adds can change a bit. A classifier's hessian sum H is
// Σqh·2^-kh (a 53-bit integer), so its gain and leaf value take f32(fl64(H + λ)) from 64-bit sums.

/** WGSL: f32 values travel as their u32 bits; 64-bit integers as vec2<u32> (x low), 128-bit as vec4. */
export const EXACT_WGSL = /* wgsl */ `
const F32_INF: u32 = 0x7F800000u;
fn bitLen(x: u32) -> u32 { return 32u - countLeadingZeros(x); }
fn bitLen64(a: vec2<u32>) -> u32 { return select(bitLen(a.x), 32u + bitLen(a.y), a.y != 0u); }
fn ge64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y > b.y || (a.y == b.y && a.x >= b.x); }
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { let lo = a.x + b.x; return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x)); }
fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x)); }
fn shl64(a: vec2<u32>, s: u32) -> vec2<u32> {
  if (s == 0u) { return a; }
  if (s >= 64u) { return vec2<u32>(0u, 0u); }
  if (s >= 32u) { return vec2<u32>(0u, a.x << (s - 32u)); }
  return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}
/** |a signed 64-bit integer| */
fn abs64(a: vec2<u32>) -> vec2<u32> {
  if ((a.y & 0x80000000u) == 0u) { return a; }
  return sub64(vec2<u32>(0u, 0u), a);
}
/** a · b, both < 2^32, exactly */
fn mul32(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xFFFFu; let a1 = a >> 16u; let b0 = b & 0xFFFFu; let b1 = b >> 16u;
  let m1 = a0 * b1; let m2 = a1 * b0;
  var lo = a0 * b0;
  var hi = a1 * b1 + (m1 >> 16u) + (m2 >> 16u);
  let l1 = lo + (m1 << 16u); hi += select(0u, 1u, l1 < lo); lo = l1;
  let l2 = lo + (m2 << 16u); hi += select(0u, 1u, l2 < lo); lo = l2;
  return vec2<u32>(lo, hi);
}
fn add128(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let x = a.x + b.x; var c = select(0u, 1u, x < a.x);
  let y0 = a.y + b.y; let y = y0 + c; c = select(0u, 1u, y0 < a.y) + select(0u, 1u, y < y0);
  let z0 = a.z + b.z; let z = z0 + c; c = select(0u, 1u, z0 < a.z) + select(0u, 1u, z < z0);
  return vec4<u32>(x, y, z, a.w + b.w + c);
}
/** a · b for a, b < 2^64, exactly */
fn mul64(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
  let ll = mul32(a.x, b.x); let lh = mul32(a.x, b.y); let hl = mul32(a.y, b.x); let hh = mul32(a.y, b.y);
  var r = vec4<u32>(ll.x, ll.y, hh.x, hh.y);
  r = add128(r, vec4<u32>(0u, lh.x, lh.y, 0u));
  return add128(r, vec4<u32>(0u, hl.x, hl.y, 0u));
}
fn word128(a: vec4<u32>, i: u32) -> u32 {
  switch (i) { case 0u: { return a.x; } case 1u: { return a.y; } case 2u: { return a.z; } case 3u: { return a.w; } default: { return 0u; } }
}
fn bitLen128(a: vec4<u32>) -> u32 {
  if (a.w != 0u) { return 96u + bitLen(a.w); }
  if (a.z != 0u) { return 64u + bitLen(a.z); }
  return bitLen64(a.xy);
}
/** the 64 bits of a from bit s up (s < 128) */
fn bits64At(a: vec4<u32>, s: u32) -> vec2<u32> {
  let w = s >> 5u; let b = s & 31u;
  if (b == 0u) { return vec2<u32>(word128(a, w), word128(a, w + 1u)); }
  return vec2<u32>((word128(a, w) >> b) | (word128(a, w + 1u) << (32u - b)), (word128(a, w + 1u) >> b) | (word128(a, w + 2u) << (32u - b)));
}
fn shl128(a: vec4<u32>, s: u32) -> vec4<u32> {
  let w = s >> 5u; let b = s & 31u;
  var out = array<u32, 4>(0u, 0u, 0u, 0u);
  for (var i = w; i < 4u; i++) {
    out[i] = word128(a, i - w) << b;
    if (b != 0u && i > w) { out[i] |= word128(a, i - w - 1u) >> (32u - b); }
  }
  return vec4<u32>(out[0], out[1], out[2], out[3]);
}
fn bit128(a: vec4<u32>, s: u32) -> bool { return ((word128(a, s >> 5u) >> (s & 31u)) & 1u) != 0u; }
/** any bit of a below bit s */
fn below128(a: vec4<u32>, s: u32) -> bool {
  let w = s >> 5u;
  var found = (word128(a, w) & ((1u << (s & 31u)) - 1u)) != 0u;
  for (var i = 0u; i < w && i < 4u; i++) { found = found || word128(a, i) != 0u; }
  return found;
}
/**
 * round(a / 2^s) to nearest, ties to even, where \`sticky\` says a lies just above its value (bits
 * lost before); the result must fit 64 bits. s = 0 returns a's low 64 bits.
 */
fn roundNE(a: vec4<u32>, s: u32, sticky: bool) -> vec2<u32> {
  if (s == 0u) { return a.xy; }
  if (s > 128u) { return vec2<u32>(0u, 0u); }
  var q = vec2<u32>(0u, 0u);
  if (s < 128u) { q = bits64At(a, s); }
  let halfBit = bit128(a, s - 1u);
  let rest = sticky || below128(a, s - 1u);
  if (halfBit && (rest || (q.x & 1u) == 1u)) { q = add64(q, vec2<u32>(1u, 0u)); }
  return q;
}
/**
 * The float32 nearest (ties to even, subnormals, overflow to ∞) to m · 2^e (m ≥ 0, a 128-bit
 * integer; \`sticky\`: just above it). Its bits. Callers with sticky keep ≥ 26 significant bits in m.
 */
fn toF32(m: vec4<u32>, e: i32, sticky: bool) -> u32 {
  let L = i32(bitLen128(m));
  if (L == 0) { return 0u; }
  // bits dropped: down to 24 significant ones, and never below the subnormal unit 2^-149
  let s = max(L - 24, -149 - e);
  var M: u32;
  if (s <= 0) {
    M = m.x << u32(-s);
  } else {
    M = roundNE(m, u32(s), sticky).x;
  }
  if (M == 0u) { return 0u; }
  // M·2^(e+s) with M in [2^23, 2^24] (or the subnormal exponent): biased exponent field + mantissa
  let E = e + s + 149;
  if (E >= 255) { return F32_INF; }
  let bits = (u32(E) << 23u) + M;
  return select(bits, F32_INF, bits >= F32_INF);
}
/** The float64 nearest to m (a 128-bit integer, \`sticky\`: just above it): its 53-bit mantissa (≤ 2^53) and how far it was shifted. */
fn toF64(m: vec4<u32>, sticky: bool, shift: ptr<function, i32>) -> vec2<u32> {
  let L = i32(bitLen128(m));
  let s = max(0, L - 53);
  *shift = s;
  return roundNE(m, u32(s), sticky);
}
/** unpacks positive finite f32 bits into m · 2^e with m normalised to 24 bits (m = 0 for zero) */
fn unpackF32(x: u32, e: ptr<function, i32>) -> u32 {
  let be = (x >> 23u) & 0xFFu;
  var m = x & 0x7FFFFFu;
  if (be == 0u) {
    if (m == 0u) { *e = 0; return 0u; }
    let sh = 24u - bitLen(m);
    *e = -149 - i32(sh);
    return m << sh;
  }
  *e = i32(be) - 150;
  return m | 0x800000u;
}
/** f32(fl64(t²) · 2^-2k): a side's f32(T²) for |T| = t · 2^-k, t < 2^53 */
fn sqF32(t: vec2<u32>, k: i32) -> u32 {
  if (t.x == 0u && t.y == 0u) { return 0u; }
  var d = 0;
  let r = toF64(mul64(t, t), false, &d);
  return toF32(vec4<u32>(r, 0u, 0u), d - 2 * k, false);
}
/** f32(a / b), correctly rounded, for a ≥ 0 (zero, subnormal, normal or ∞) and b positive normal */
fn divF32(a: u32, b: u32) -> u32 {
  if (a == 0u || a >= F32_INF) { return a; }
  var ea = 0;
  var eb = 0;
  let ma = unpackF32(a, &ea);
  let mb = unpackF32(b, &eb);
  // q = ⌊ma · 2^28 / mb⌋ in four 7-bit steps (every remainder < mb < 2^24, so r << 7 fits)
  var r = ma;
  var q = 0u;
  for (var i = 0; i < 4; i++) {
    r = r << 7u;
    let d = r / mb;
    r -= d * mb;
    q = (q << 7u) | d;
  }
  return toF32(vec4<u32>(q, 0u, 0u, 0u), ea - eb - 28, r != 0u);
}
/** f32(a + b), correctly rounded, for any f32 bits (signed zeros, subnormals, ∞, NaN) */
fn addF32(a0: u32, b0: u32) -> u32 {
  var a = a0;
  var b = b0;
  let aa = a & 0x7FFFFFFFu;
  let ab = b & 0x7FFFFFFFu;
  if (aa > F32_INF) { return a; }
  if (ab > F32_INF) { return b; }
  if (aa == F32_INF) { return select(a, 0x7FC00000u, ab == F32_INF && a != b); }
  if (ab == F32_INF) { return b; }
  if (aa == 0u) { return select(b, a & b, ab == 0u); }
  if (ab == 0u) { return a; }
  if (ab > aa) { let t = a; a = b; b = t; }
  var ea = 0;
  var eb = 0;
  // three guard bits (guard, round, sticky) below each mantissa
  let x = unpackF32(a & 0x7FFFFFFFu, &ea) << 3u;
  var y = unpackF32(b & 0x7FFFFFFFu, &eb) << 3u;
  let d = u32(ea - eb);
  if (d >= 27u) {
    y = select(0u, 1u, y != 0u);
  } else if (d > 0u) {
    y = (y >> d) | select(0u, 1u, (y & ((1u << d) - 1u)) != 0u);
  }
  let z = select(x - y, x + y, (a ^ b) < 0x80000000u);
  if (z == 0u) { return 0u; }
  return toF32(vec4<u32>(z, 0u, 0u, 0u), ea - 3, false) | (a & 0x80000000u);
}
/** f32(a · b), correctly rounded, for finite a and positive normal b */
fn mulF32(a: u32, b: u32) -> u32 {
  let sgn = a & 0x80000000u;
  var ea = 0;
  var eb = 0;
  let ma = unpackF32(a & 0x7FFFFFFFu, &ea);
  if (ma == 0u) { return sgn; }
  let mb = unpackF32(b, &eb);
  return toF32(vec4<u32>(mul32(ma, mb), 0u, 0u), ea + eb, false) | sgn;
}
/** T(Σq)'s magnitude in quantised units: |Σq| less α·2^k (an integer, ≤ 2^53), at least 0 */
fn thresholdQ(sq: vec2<u32>, alphaQ: vec2<u32>) -> vec2<u32> {
  let t = abs64(sq);
  if (ge64(alphaQ, t)) { return vec2<u32>(0u, 0u); }
  return sub64(t, alphaQ);
}
/** a side's gain f32(f32(T²) / f32(H + λ)) (rules.ts sideGain), Σq a signed 64-bit integer */
fn sideGainF32(sq: vec2<u32>, h: u32, k: i32, alphaQ: vec2<u32>, lambda: u32) -> u32 {
  if (h == 0u) { return 0u; }
  return divF32(sqF32(thresholdQ(sq, alphaQ), k), addF32(bitcast<u32>(f32(h)), lambda));
}
/** fl64(h + λ) as a mantissa of ≤ 53 bits (< 2^53) and its exponent */
fn hPlusLambda64(h: u32, lambda: u32, e: ptr<function, i32>) -> vec2<u32> {
  var el = 0;
  let ml = unpackF32(lambda, &el);
  var x = vec4<u32>(h, 0u, 0u, 0u);
  var ex = 0;
  if (ml != 0u && el >= 0) {
    // λ ≥ 2^23 is an integer
    x = add128(x, shl128(vec4<u32>(ml, 0u, 0u, 0u), u32(el)));
  } else if (ml != 0u && el >= -100) {
    // h · 2^-el + mλ, exactly (≤ 24 + 100 bits)
    x = add128(shl128(x, u32(-el)), vec4<u32>(ml, 0u, 0u, 0u));
    ex = el;
  }
  // else λ < 2^-76, under half a float64 unit of h ≥ 1: fl64(h + λ) = h
  var d = 0;
  var r = toF64(x, false, &d);
  if (r.y >= 0x200000u) { r = vec2<u32>((r.x >> 1u) | (r.y << 31u), r.y >> 1u); d += 1; }
  *e = ex + d;
  return r;
}
/**
 * A leaf value f32(w · f32(η)), w = f32(fl64(−T / fl64(h + λ))) (rules.ts leafValue; 0 when h is
 * below min_child_weight or 0). T = ±t · 2^-k: t = its magnitude, negative = its sign.
 */
fn leafF32(t: vec2<u32>, negative: bool, k: i32, h: u32, lambda: u32, mcw: f32, eta: u32) -> u32 {
  // comparisons are exact in IEEE arithmetic (no rounding)
  if (h == 0u || f32(h) < mcw) { return 0u; }
  var ed = 0;
  let dm = hPlusLambda64(h, lambda, &ed);
  return leafOver(t, negative, k, dm, ed, eta);
}
/** f32(f32(fl64(−T / D)) · f32(η)) for D = dm · 2^ed = fl64(H + λ) > 0 (a leaf value's arithmetic once its denominator is known) */
fn leafOver(t: vec2<u32>, negative: bool, k: i32, dm: vec2<u32>, ed: i32, eta: u32) -> u32 {
  // −T: its sign; T = 0 gives −0
  let sgn = select(0x80000000u, 0u, negative);
  if (t.x == 0u && t.y == 0u) { return 0x80000000u; }
  // both mantissas to exactly 53 bits
  let lt = bitLen64(t);
  let ld = bitLen64(dm);
  let nt = shl64(t, 53u - lt);
  let nd = shl64(dm, 53u - ld);
  let et = -k - i32(53u - lt);
  let edn = ed - i32(53u - ld);
  // q = ⌊nt · 2^55 / nd⌋, bit by bit (r < 2·nd < 2^54 throughout)
  var r = nt;
  var q = vec2<u32>(0u, 0u);
  for (var i = 0; i < 56; i++) {
    q = shl64(q, 1u);
    if (ge64(r, nd)) { r = sub64(r, nd); q.x |= 1u; }
    r = shl64(r, 1u);
  }
  var d = 0;
  let w64 = toF64(vec4<u32>(q, 0u, 0u), r.x != 0u || r.y != 0u, &d);
  let w = toF32(vec4<u32>(w64, 0u, 0u), et - edn - 55 + d, false) | sgn;
  return mulF32(w, eta);
}
// A classifier's hessian sums: H = hq · 2^-kh (hq a 64-bit integer below 2^53, its quantised sum),
// as the CPU engine dequantises them (an exact double), in f32(H + λ) and fl64(H + λ).
/** fl64(hq · 2^-kh + λ), hq ≥ 1, as a mantissa of ≤ 53 bits (< 2^53) and its exponent */
fn hqPlusLambda64(hq: vec2<u32>, kh: i32, lambda: u32, e: ptr<function, i32>) -> vec2<u32> {
  var el = 0;
  let ml = unpackF32(lambda, &el);
  var x = vec4<u32>(hq.x, hq.y, 0u, 0u);
  var ex = -kh;
  // s: λ's unit over H's, in bits
  let s = el + kh;
  if (ml != 0u && s >= 0 && s <= 100) {
    x = add128(x, shl128(vec4<u32>(ml, 0u, 0u, 0u), u32(s)));
  } else if (ml != 0u && s > 100) {
    // H < 2^-47 · λ's unit: under half a float64 unit of λ, fl64(H + λ) = λ
    x = vec4<u32>(ml, 0u, 0u, 0u);
    ex = el;
  } else if (ml != 0u && -s < 78 - i32(bitLen64(hq))) {
    // hq · 2^-s + mλ exactly (< 2^78)
    x = add128(shl128(x, u32(-s)), vec4<u32>(ml, 0u, 0u, 0u));
    ex = el;
  }
  // else λ is below half a float64 unit of H: fl64(H + λ) = H
  var d = 0;
  var r = toF64(x, false, &d);
  if (r.y >= 0x200000u) { r = vec2<u32>((r.x >> 1u) | (r.y << 31u), r.y >> 1u); d += 1; }
  *e = ex + d;
  return r;
}
/** a classifier side's gain f32(f32(T²) / f32(H + λ)) (rules.ts sideGain with H = hq · 2^-kh), 0 when hq = 0 */
fn sideGainHF32(sq: vec2<u32>, hq: vec2<u32>, k: i32, kh: i32, alphaQ: vec2<u32>, lambda: u32) -> u32 {
  if (hq.x == 0u && hq.y == 0u) { return 0u; }
  var e = 0;
  let den = toF32(vec4<u32>(hqPlusLambda64(hq, kh, lambda, &e), 0u, 0u), e, false);
  return divF32(sqF32(thresholdQ(sq, alphaQ), k), den);
}
/** a classifier's leaf value (rules.ts leafValue with H = hq · 2^-kh): 0 when hq is 0 or below mcwQ = ⌈min_child_weight · 2^kh⌉ */
fn leafHF32(t: vec2<u32>, negative: bool, k: i32, hq: vec2<u32>, kh: i32, lambda: u32, mcwQ: vec2<u32>, eta: u32) -> u32 {
  if ((hq.x == 0u && hq.y == 0u) || !ge64(hq, mcwQ)) { return 0u; }
  var ed = 0;
  let dm = hqPlusLambda64(hq, kh, lambda, &ed);
  return leafOver(t, negative, k, dm, ed, eta);
}
`
