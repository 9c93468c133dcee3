// The WGSL kernels of the trees engine. Everything that decides a tree is integer arithmetic here:
// quantised gradients (i32), 64-bit histogram sums as two u32 words with a carry (order-free, so
// exact whatever the order of the atomics), row counts, integer subtraction, bin comparisons. The
// only float work that reaches the trees is one float32 subtraction (pred − y), one exact scaling
// (ldexp by the power-of-two quantisation exponent) and one float32 addition (pred + leaf) per row,
// all correctly rounded in WGSL/Vulkan, as in the CPU engine. Split evaluation on the GPU is a
// FILTER: it brackets every candidate's float32 gain in a rigorous interval and sends the host the
// few candidates that can be the winner; the host decides with the CPU engine's exact float32
// formulas and tie rules (see README.md, "Where the split is decided").
//
// Layout (u32 words unless said):
//   bins      feature-major bin ids, 4 (u8) or 2 (u16) per word, rows padded to rowsPad
//   pred, q   per model of the chunk × row: f32 prediction, i32 quantised gradient
//   models    per model: ModelInfo (its quantisation exponent and its own split coefficients)
//   feats     per model × the chunk's widest perTree: (feature, histogram slot offset); a model
//             that samples fewer features has NONE after its own (kernels stop there)
//   pos       per model × row: the row's node index in the current level, | UNSAMPLED for rows not
//             sampled this round (they follow the tree but add to no histogram), NONE once in a leaf
//   hist      per model × node slot × histogram slot: [lo, hi, count] (Σq as 64-bit two's complement)
//   plan      per pass: [C offsets][per model: level index → local build index][C×Bmax: local → slot]
//             [derive entries (model, dst, src, slots)][eval entries (model, slot, Σq lo, hi, count |
//             NONE at the root: the root's sums are in scal)]
//   dec       per level: [C offsets][per model: level index → 6 words: feature|NONE, bin (i32),
//             defaultLeft, left next index, right next index, leaf value bits]
//   out       per pass: [E: max lower bound (f32 bits)][E: candidate count][3E: node totals]
//             [E×K×5: candidates (feature index, bin | backward<<31, Σq lo, Σq hi, count left)]
//   scal      per model: [C: max |g| (f32 bits)][3C: root Σq lo, hi, count]

export const WG = 64
export const NONE = 0xffffffff
export const UNSAMPLED = 0x80000000
/** histogram slots per thread of the derive kernel */
export const DERIVE_SLOTS = 8
/** words of the uniform block */
export const UNIFORM_WORDS = 20
/** words of one model's ModelInfo */
export const MODEL_INFO_WORDS = 6

export interface KernelOptions {
  /** bins are u16 (a feature has 257 slots: 256 bins + missing) */
  bin16: boolean
  /** u32 words of workgroup memory for the shared-memory histogram kernel */
  sharedWords: number
}

const COMMON = /* wgsl */ `
const WG: u32 = ${WG}u;
const NONE: u32 = 0xFFFFFFFFu;
const UNSAMPLED: u32 = 0x80000000u;
struct U {
  n: u32, rowsPad: u32, C: u32, S: u32,
  P: u32, nFeat: u32, K: u32, E: u32,
  nDerive: u32, Bmax: u32, bsOff: u32, derOff: u32,
  entOff: u32, maskWords: u32, useMask: u32, FC: u32,
  nFC: u32, FG: u32, Wmax: u32, RB: u32,
}
// per model, as models of one chunk may each have their own coefficients (a fused model set)
struct ModelInfo { k: i32, flags: u32, alphaQ: f32, minGainQ: f32, mcw: f32, lambda: f32 }
@group(0) @binding(0) var<uniform> u: U;
fn flat(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid; }
`

function binRead(o: KernelOptions): string {
  return o.bin16
    ? `fn binOf(f: u32, r: u32) -> u32 { let i = f * u.rowsPad + r; return (bins[i >> 1u] >> ((i & 1u) << 4u)) & 0xFFFFu; }`
    : `fn binOf(f: u32, r: u32) -> u32 { let i = f * u.rowsPad + r; return (bins[i >> 2u] >> ((i & 3u) << 3u)) & 0xFFu; }`
}

const ENTRY = `@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32)`

/** Round start: max |pred − y| per model over its sampled rows (f32 bits, atomicMax), every row to the root. */
const gradient = () => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> pred: array<f32>;
@group(0) @binding(3) var<storage, read> mask: array<u32>;
@group(0) @binding(4) var<storage, read_write> pos: array<u32>;
@group(0) @binding(5) var<storage, read_write> scal: array<atomic<u32>>;
var<workgroup> wmax: atomic<u32>;
${ENTRY} {
  if (lid == 0u) { atomicStore(&wmax, 0u); }
  workgroupBarrier();
  let m = wid.z;
  let r = flat(wid, nwg, lid);
  if (r < u.n) {
    let i = m * u.n + r;
    var sampled = true;
    if (u.useMask != 0u) { sampled = ((mask[m * u.maskWords + (r >> 5u)] >> (r & 31u)) & 1u) != 0u; }
    if (sampled) {
      let g = pred[i] - y[r];
      atomicMax(&wmax, bitcast<u32>(abs(g)));
      pos[i] = 0u;
    } else {
      pos[i] = UNSAMPLED;
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    let v = atomicLoad(&wmax);
    if (v != 0u) { atomicMax(&scal[m], v); }
  }
}`

/** q = trunc((pred − y) · 2^k) for sampled rows (0 otherwise), and the root's Σq and count. */
const quantise = () => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> pred: array<f32>;
@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(5) var<storage, read_write> q: array<i32>;
@group(0) @binding(6) var<storage, read_write> scal: array<atomic<u32>>;
var<workgroup> wlo: atomic<u32>;
var<workgroup> whi: atomic<u32>;
var<workgroup> wcnt: atomic<u32>;
${ENTRY} {
  if (lid == 0u) { atomicStore(&wlo, 0u); atomicStore(&whi, 0u); atomicStore(&wcnt, 0u); }
  workgroupBarrier();
  let m = wid.z;
  let r = flat(wid, nwg, lid);
  if (r < u.n) {
    let i = m * u.n + r;
    var qi = 0i;
    if (pos[i] == 0u) {
      let g = pred[i] - y[r];
      // ldexp is exact for a normal result; two steps keep each exponent within WGSL's range
      let k = models[m].k;
      let k1 = min(k, 64i);
      qi = i32(ldexp(ldexp(g, k1), k - k1));
      let v = bitcast<u32>(qi);
      let old = atomicAdd(&wlo, v);
      atomicAdd(&whi, select(0u, 0xFFFFFFFFu, qi < 0i) + select(0u, 1u, old + v < old));
      atomicAdd(&wcnt, 1u);
    }
    q[i] = qi;
  }
  workgroupBarrier();
  if (lid == 0u) {
    let c = atomicLoad(&wcnt);
    if (c != 0u) {
      let lo = atomicLoad(&wlo);
      let hi = atomicLoad(&whi);
      let b = u.C + 3u * m;
      let old = atomicAdd(&scal[b], lo);
      atomicAdd(&scal[b + 1u], hi + select(0u, 1u, old + lo < old));
      atomicAdd(&scal[b + 2u], c);
    }
  }
}`

/** Histogram build with global atomics: one thread per (model, row, chunk of FC features). */
const histGlobal = (o: KernelOptions) => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<i32>;
@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> plan: array<u32>;
@group(0) @binding(5) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> hist: array<atomic<u32>>;
${binRead(o)}
fn add(w: u32, v: i32) {
  let vv = bitcast<u32>(v);
  let old = atomicAdd(&hist[w], vv);
  atomicAdd(&hist[w + 1u], select(0u, 0xFFFFFFFFu, v < 0i) + select(0u, 1u, old + vv < old));
  atomicAdd(&hist[w + 2u], 1u);
}
${ENTRY} {
  let m = wid.z / u.nFC;
  let fc = wid.z - m * u.nFC;
  let r = flat(wid, nwg, lid);
  if (r >= u.n) { return; }
  let i = m * u.n + r;
  let p = pos[i];
  if (p >= UNSAMPLED) { return; }
  let l = plan[plan[m] + p];
  if (l == NONE) { return; }
  let slot = plan[u.bsOff + m * u.Bmax + l];
  let g = q[i];
  let base = (m * u.P + slot) * u.S;
  let j0 = fc * u.FC;
  let j1 = min(u.nFeat, j0 + u.FC);
  for (var j = j0; j < j1; j++) {
    let fo = feats[m * u.nFeat + j];
    if (fo.x == NONE) { break; }
    add((base + fo.y + binOf(fo.x, r)) * 3u, g);
  }
}`

/**
 * Histogram build in workgroup memory: a workgroup = (block of RB rows, group of FG features,
 * model); its private histogram covers the pass's built nodes × FG features × Wmax bins, then is
 * added into the global one (64-bit adds with carry, only non-empty slots).
 */
const histShared = (o: KernelOptions) => /* wgsl */ `${COMMON}
const SHW: u32 = ${o.sharedWords}u;
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<i32>;
@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> plan: array<u32>;
@group(0) @binding(5) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> hist: array<atomic<u32>>;
var<workgroup> sh: array<atomic<u32>, SHW>;
${binRead(o)}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = wid.z;
  let j0 = wid.y * u.FG;
  let j1 = min(u.nFeat, j0 + u.FG);
  let per = u.FG * u.Wmax;
  let used = u.Bmax * per * 3u;
  for (var w = lid; w < used; w += WG) { atomicStore(&sh[w], 0u); }
  workgroupBarrier();
  let r1 = min(u.n, (wid.x + 1u) * u.RB);
  for (var r = wid.x * u.RB + lid; r < r1; r += WG) {
    let i = m * u.n + r;
    let p = pos[i];
    if (p < UNSAMPLED) {
      let l = plan[plan[m] + p];
      if (l != NONE) {
        let g = q[i];
        let v = bitcast<u32>(g);
        let hiAdd = select(0u, 0xFFFFFFFFu, g < 0i);
        for (var j = j0; j < j1; j++) {
          let f = feats[m * u.nFeat + j].x;
          if (f == NONE) { break; }
          let w = ((l * u.FG + (j - j0)) * u.Wmax + binOf(f, r)) * 3u;
          let old = atomicAdd(&sh[w], v);
          atomicAdd(&sh[w + 1u], hiAdd + select(0u, 1u, old + v < old));
          atomicAdd(&sh[w + 2u], 1u);
        }
      }
    }
  }
  workgroupBarrier();
  for (var s = lid; s < u.Bmax * per; s += WG) {
    let c = atomicLoad(&sh[s * 3u + 2u]);
    if (c != 0u) {
      let l = s / per;
      let rem = s - l * per;
      let jj = rem / u.Wmax;
      let b = rem - jj * u.Wmax;
      let slot = plan[u.bsOff + m * u.Bmax + l];
      let w = ((m * u.P + slot) * u.S + feats[m * u.nFeat + j0 + jj].y + b) * 3u;
      let lo = atomicLoad(&sh[s * 3u]);
      let hi = atomicLoad(&sh[s * 3u + 1u]);
      let old = atomicAdd(&hist[w], lo);
      atomicAdd(&hist[w + 1u], hi + select(0u, 1u, old + lo < old));
      atomicAdd(&hist[w + 2u], c);
    }
  }
}`

/** The subtraction trick, in place: hist[dst] −= hist[src] (64-bit with borrow, and the counts), over the model's slots, DERIVE_SLOTS per thread. */
const derive = () => /* wgsl */ `${COMMON}
const DS: u32 = ${DERIVE_SLOTS}u;
@group(0) @binding(1) var<storage, read> plan: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;
${ENTRY} {
  let gid = flat(wid, nwg, lid);
  let per = (u.S + DS - 1u) / DS;
  let e = gid / per;
  if (e >= u.nDerive) { return; }
  let t = u.derOff + 4u * e;
  let s0 = (gid - e * per) * DS;
  let s1 = min(s0 + DS, plan[t + 3u]);
  let m = plan[t];
  let bd = (m * u.P + plan[t + 1u]) * u.S;
  let bs = (m * u.P + plan[t + 2u]) * u.S;
  for (var s = s0; s < s1; s++) {
    let wd = (bd + s) * 3u;
    let ws = (bs + s) * 3u;
    let a = hist[wd];
    let b = hist[ws];
    hist[wd] = a - b;
    hist[wd + 1u] = hist[wd + 1u] - hist[ws + 1u] - select(0u, 1u, a < b);
    hist[wd + 2u] = hist[wd + 2u] - hist[ws + 2u];
  }
}`

/**
 * Split filter, one thread per (evaluated node, sampled feature). PASS 0: the largest LOWER bound
 * of any valid candidate's float32 gain sum, per node (atomicMax on the f32 bits: all ≥ 0). PASS 1:
 * every candidate whose UPPER bound reaches that maximum (less the rounding collapse of the loss)
 * and could beat the node's gain by max(kRtEps, gamma) is written out with its exact integer sums.
 * Bounds are in quantised units (gain · 2^2k) and cover both this kernel's float32 error (WGSL's
 * division is 2.5 ulp) and the CPU engine's own float32 roundings, with margin (2^-18, 2^-20).
 * Valid candidates and scan order are the CPU engine's: forward over non-empty bins with missing
 * values right; backward only when the node has missing values for the feature.
 */
const split = (pass: 0 | 1) => /* wgsl */ `${COMMON}
const PASS: u32 = ${pass}u;
const R20: f32 = 9.5367431640625e-7;
const R18: f32 = 3.814697265625e-6;
@group(0) @binding(1) var<storage, read> hist: array<u32>;
@group(0) @binding(2) var<storage, read> plan: array<u32>;
@group(0) @binding(3) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> finfo: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(6) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> scal: array<u32>;
/** |a signed 64-bit integer| as f32 (relative error < 2^-22) */
fn absF(lo: u32, hi: u32) -> f32 {
  var l = lo;
  var h = hi;
  if ((h & 0x80000000u) != 0u) {
    l = ~lo + 1u;
    h = ~hi + select(0u, 1u, l == 0u);
  }
  return f32(h) * 4294967296.0 + f32(l);
}
fn sideLo(g: f32, h: u32, aq: f32, lambda: f32) -> f32 {
  let t = max(g * (1.0 - R20) - aq * (1.0 + R20), 0.0) * (1.0 - R20);
  return (t * t / (f32(h) + lambda)) * (1.0 - R18);
}
fn sideHi(g: f32, h: u32, aq: f32, lambda: f32) -> f32 {
  let t = max(g * (1.0 + R20) - aq * (1.0 - R20), 0.0) * (1.0 + R20);
  return (t * t / (f32(h) + lambda)) * (1.0 + R18);
}
fn emit(e: u32, j: u32, b: u32, llo: u32, lhi: u32, hl: u32) {
  let c = atomicAdd(&out[u.E + e], 1u);
  if (c < u.K) {
    let w = 5u * u.E + (e * u.K + c) * 5u;
    atomicStore(&out[w], j);
    atomicStore(&out[w + 1u], b);
    atomicStore(&out[w + 2u], llo);
    atomicStore(&out[w + 3u], lhi);
    atomicStore(&out[w + 4u], hl);
  }
}
${ENTRY} {
  let gid = flat(wid, nwg, lid);
  let e = gid / u.nFeat;
  if (e >= u.E) { return; }
  let j = gid - e * u.nFeat;
  let t = u.entOff + 5u * e;
  let m = plan[t];
  let slot = plan[t + 1u];
  let mi = models[m];
  let fo = feats[m * u.nFeat + j];
  if (fo.x == NONE) { return; }
  let fi = finfo[fo.x];
  let nb = fi.x;
  let base = ((m * u.P + slot) * u.S + fo.y) * 3u;
  // the node's sums: known to the host (from its parent's split), or, at the root, the quantise kernel's
  var glo = plan[t + 2u];
  var ghi = plan[t + 3u];
  var H = plan[t + 4u];
  if (H == NONE) {
    glo = scal[u.C + 3u * m];
    ghi = scal[u.C + 3u * m + 1u];
    H = scal[u.C + 3u * m + 2u];
  }
  if (PASS == 1u && j == 0u) {
    // the histogram's own sums over the first sampled feature: the host checks them
    var clo = 0u;
    var chi = 0u;
    var ch = 0u;
    for (var b = 0u; b < nb + fi.y; b++) {
      let w = base + 3u * b;
      let nl = clo + hist[w];
      chi = chi + hist[w + 1u] + select(0u, 1u, nl < clo);
      clo = nl;
      ch += hist[w + 2u];
    }
    atomicStore(&out[2u * u.E + 3u * e], clo);
    atomicStore(&out[2u * u.E + 3u * e + 1u], chi);
    atomicStore(&out[2u * u.E + 3u * e + 2u], ch);
  }
  if ((mi.flags & 1u) != 0u) { return; }
  let missH = select(0u, hist[base + 3u * nb + 2u], fi.y != 0u);
  let aq = mi.alphaQ;
  let lam = mi.lambda;
  let mcw = mi.mcw;
  var thr = 0.0;
  if (PASS == 1u) {
    let mx = bitcast<f32>(atomicLoad(&out[e]));
    thr = max(mx * (1.0 - R20), (sideLo(absF(glo, ghi), H, aq, lam) + mi.minGainQ) * (1.0 - R20));
  }
  var best = 0.0;
  var llo = 0u;
  var lhi = 0u;
  var hl = 0u;
  for (var b = 0u; b < nb; b++) {
    let w = base + 3u * b;
    let hb = hist[w + 2u];
    if (hb == 0u) { continue; }
    let nl = llo + hist[w];
    lhi = lhi + hist[w + 1u] + select(0u, 1u, nl < llo);
    llo = nl;
    hl += hb;
    let hr = H - hl;
    if (f32(hr) < mcw || hr == 0u) { break; }
    if (f32(hl) < mcw) { continue; }
    let gl = absF(llo, lhi);
    let gr = absF(glo - llo, ghi - lhi - select(0u, 1u, glo < llo));
    if (PASS == 0u) {
      best = max(best, (sideLo(gl, hl, aq, lam) + sideLo(gr, hr, aq, lam)) * (1.0 - R20));
    } else {
      let hi = (sideHi(gl, hl, aq, lam) + sideHi(gr, hr, aq, lam)) * (1.0 + R20);
      if (hi >= thr && hi > 0.0) { emit(e, j, b, llo, lhi, hl); }
    }
  }
  if (missH != 0u) {
    var rlo = 0u;
    var rhi = 0u;
    var hr = 0u;
    for (var bb = nb; bb > 0u; bb--) {
      let b = bb - 1u;
      let w = base + 3u * b;
      let hb = hist[w + 2u];
      if (hb == 0u) { continue; }
      let nr = rlo + hist[w];
      rhi = rhi + hist[w + 1u] + select(0u, 1u, nr < rlo);
      rlo = nr;
      hr += hb;
      let hl2 = H - hr;
      if (f32(hl2) < mcw || hl2 == 0u) { break; }
      if (f32(hr) < mcw) { continue; }
      let l2lo = glo - rlo;
      let l2hi = ghi - rhi - select(0u, 1u, glo < rlo);
      let gl = absF(l2lo, l2hi);
      let gr = absF(rlo, rhi);
      if (PASS == 0u) {
        best = max(best, (sideLo(gl, hl2, aq, lam) + sideLo(gr, hr, aq, lam)) * (1.0 - R20));
      } else {
        let hi = (sideHi(gl, hl2, aq, lam) + sideHi(gr, hr, aq, lam)) * (1.0 + R20);
        if (hi >= thr && hi > 0.0) { emit(e, j, b | 0x80000000u, l2lo, l2hi, hl2); }
      }
    }
  }
  if (PASS == 0u && best > 0.0) { atomicMax(&out[e], bitcast<u32>(best)); }
}`

/**
 * Row-to-node update and prediction update: each row of a level-d node moves to its child's
 * level-(d+1) index, or, in a leaf, adds the leaf value to its prediction (f32) and is done.
 * Rows not sampled this round follow the same tree (they get its leaf too).
 */
const rowUpdate = (o: KernelOptions) => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> finfo: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> dec: array<u32>;
@group(0) @binding(4) var<storage, read_write> pos: array<u32>;
@group(0) @binding(5) var<storage, read_write> pred: array<f32>;
${binRead(o)}
${ENTRY} {
  let m = wid.z;
  let r = flat(wid, nwg, lid);
  if (r >= u.n) { return; }
  let i = m * u.n + r;
  let p = pos[i];
  if (p == NONE) { return; }
  let d = dec[m] + (p & 0x7FFFFFFFu) * 6u;
  let f = dec[d];
  if (f == NONE) {
    pred[i] = pred[i] + bitcast<f32>(dec[d + 5u]);
    pos[i] = NONE;
    return;
  }
  let b = binOf(f, r);
  let fi = finfo[f];
  var left: bool;
  if (fi.y != 0u && b == fi.x) {
    left = dec[d + 2u] != 0u;
  } else {
    left = bitcast<i32>(b) <= bitcast<i32>(dec[d + 1u]);
  }
  pos[i] = select(dec[d + 4u], dec[d + 3u], left) | (p & UNSAMPLED);
}`

export type KernelName = 'gradient' | 'quantise' | 'histGlobal' | 'histShared' | 'derive' | 'splitMax' | 'splitEmit' | 'rowUpdate'

export function kernelSource(name: KernelName, o: KernelOptions): string {
  switch (name) {
    case 'gradient':
      return gradient()
    case 'quantise':
      return quantise()
    case 'histGlobal':
      return histGlobal(o)
    case 'histShared':
      return histShared(o)
    case 'derive':
      return derive()
    case 'splitMax':
      return split(0)
    case 'splitEmit':
      return split(1)
    case 'rowUpdate':
      return rowUpdate(o)
  }
}

/** Pipeline cache key: kernels that read bins or size workgroup memory differ by those options. */
export function kernelKey(name: KernelName, o: KernelOptions): string {
  if (name === 'histShared') return `gbdt:${name}:${o.bin16 ? 16 : 8}:${o.sharedWords}`
  if (name === 'histGlobal' || name === 'rowUpdate') return `gbdt:${name}:${o.bin16 ? 16 : 8}`
  return `gbdt:${name}`
}
