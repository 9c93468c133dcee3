// The WGSL kernels of the trees engine. What shapes a tree is integer arithmetic: quantised
// gradients (i32), 64-bit histogram sums (order-free, so exact whatever the order of the atomics),
// row counts, bins, node indices, and the CPU engine's split and leaf arithmetic on integer
// mantissas (exact.ts). A level is planned on the device or by the host, in the same tables.
// Every buffer's layout: README.md, "Buffers"; a round: README.md, "A round".
import { KRT_EPS } from '../gbdt/rules'
import { EXACT_WGSL } from './exact'

export const WG = 64
/** threads of a shared-memory histogram workgroup */
export const HIST_WG = 256
/** threads of a node's search workgroup: one sampled feature each up to 128 (a node's critical path is its thread's features) */
export const SEARCH_WG = 128
export const NONE = 0xffffffff
export const UNSAMPLED = 0x80000000
/** histogram slots per thread of the derive kernel */
export const DERIVE_SLOTS = 8
/** words of one model's ModelInfo */
export const MODEL_INFO_WORDS = 16
/** words per model in cnt, per node in lvl, choice and tree, per row-update entry */
export const CNT_WORDS = 8
export const LVL_WORDS = 8
export const CHOICE_WORDS = 8
export const TREE_WORDS = 6
export const DEC_WORDS = 6
/** rows a workgroup adds into its 32-bit workgroup histogram at most (so its packed sums stay exact) */
export const SHARED32_ROWS = 1024
/** error bits (atom): a root's count is not its sampled rows; a histogram's total is not its node's sums; a slot stack ran dry */
export const ERR_ROOT = 1
export const ERR_SUMS = 2
export const ERR_SLOTS = 4

/** The uniform block's fields, in order (one record per level and round parity). */
export const UNIFORM_FIELDS = [
  'n',
  'rowsPad',
  'C',
  'S',
  'P',
  'nFeat',
  'maskWords',
  'useMask',
  'Wmax',
  'depth',
  'nl',
  'ne',
  'nb',
  'T',
  'NL',
  'NE',
  'NB',
  'FG',
  'RB',
  'FC',
  'nFC',
  'lvlCur',
  'lvlNext',
  'cntOff',
  'bslotOff',
  'derOff',
  'evalOff',
  'decOff',
  'choiceOff',
  'freeOff',
  'treeOff',
  'tempOff',
  'featOff',
  'maskOff',
  'errOff',
] as const
export type UniformField = (typeof UNIFORM_FIELDS)[number]
/** bytes between uniform records (WebGPU's largest minUniformBufferOffsetAlignment) */
export const UNIFORM_STRIDE = 256

export interface KernelOptions {
  /** bins are u16 (a feature has 257 slots: 256 bins + missing) */
  bin16: boolean
  /** u32 words of workgroup memory for the shared-memory histogram kernels */
  sharedWords: number
}

const f32Bits = (v: number) => new Uint32Array(new Float32Array([v]).buffer)[0]

const COMMON = /* wgsl */ `
const WG: u32 = ${WG}u;
const NONE: u32 = 0xFFFFFFFFu;
const UNSAMPLED: u32 = 0x80000000u;
const CNT_W: u32 = ${CNT_WORDS}u;
const LVL_W: u32 = ${LVL_WORDS}u;
const CHOICE_W: u32 = ${CHOICE_WORDS}u;
const TREE_W: u32 = ${TREE_WORDS}u;
const DEC_W: u32 = ${DEC_WORDS}u;
struct U { ${UNIFORM_FIELDS.map((f) => `${f}: u32`).join(', ')} }
// per model: models of one chunk may each have their own coefficients (a fused model set).
// flags bit 0: the host decides this model-round's splits (gains could overflow float32, or α·2^k
// is not an integer). alpha: α·2^k as a 64-bit integer (capped at 2^53) and as f32.
struct ModelInfo {
  k: i32, flags: u32, alphaLo: u32, alphaHi: u32,
  alphaQ: f32, minGainQ: f32, mcw: f32, lambda: f32,
  gamma: f32, eta: f32, minSplitH: f32, maxDepth: u32,
  ns: u32, pad0: u32, pad1: u32, pad2: u32,
}
@group(0) @binding(0) var<uniform> u: U;
fn flat(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid; }
fn evaluable(h: u32, depth: u32, mi: ModelInfo) -> bool { return depth < mi.maxDepth && f32(h) >= mi.minSplitH; }
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
    if (u.useMask != 0u) { sampled = ((mask[u.maskOff + m * u.maskWords + (r >> 5u)] >> (r & 31u)) & 1u) != 0u; }
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

/** The slot stack and the level tables (tabs), as the planning kernels use them. */
const TABLES = /* wgsl */ `
fn cntAt(m: u32, f: u32) -> u32 { return u.cntOff + m * CNT_W + f; }
fn lvlAt(base: u32, m: u32, li: u32) -> u32 { return base + (m * u.nl + li) * LVL_W; }
fn pushFree(m: u32, s: u32) {
  let top = tabs[cntAt(m, 5u)];
  if (top >= u.P) { atomicOr(&atom[u.errOff + m], ${ERR_SLOTS}u); return; }
  tabs[u.freeOff + m * u.P + top] = s;
  tabs[cntAt(m, 5u)] = top + 1u;
}
fn popFree(m: u32) -> u32 {
  let top = tabs[cntAt(m, 5u)];
  if (top == 0u) { atomicOr(&atom[u.errOff + m], ${ERR_SLOTS}u); return 0u; }
  tabs[cntAt(m, 5u)] = top - 1u;
  return tabs[u.freeOff + m * u.P + top - 1u];
}
fn addBuild(m: u32, node: u32, slot: u32) {
  let l = tabs[cntAt(m, 1u)];
  tabs[u.bslotOff + m * u.nb + l] = slot;
  tabs[node + 6u] = l;
  tabs[cntAt(m, 1u)] = l + 1u;
}
fn addDerive(m: u32, dst: u32, src: u32) {
  let x = tabs[cntAt(m, 2u)];
  tabs[u.derOff + (m * u.nb + x) * 2u] = dst;
  tabs[u.derOff + (m * u.nb + x) * 2u + 1u] = src;
  tabs[cntAt(m, 2u)] = x + 1u;
}
/** the next level's evaluated nodes, in level order */
fn listEvaluated(m: u32, base: u32, nodes: u32, depth: u32, mi: ModelInfo) {
  var e = 0u;
  for (var li = 0u; li < nodes; li++) {
    let node = lvlAt(base, m, li);
    if (evaluable(tabs[node + 2u], depth, mi)) {
      tabs[u.evalOff + m * u.ne + e] = li;
      tabs[node + 5u] = e;
      e++;
    }
  }
  tabs[cntAt(m, 3u)] = e;
}
`

/** Device-planned rounds: each model's tree starts as its root (sums from quantise), every slot free, the root built if it is evaluated. */
const startTree = () => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> scal: array<u32>;
@group(0) @binding(2) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(3) var<storage, read_write> tabs: array<u32>;
@group(0) @binding(4) var<storage, read_write> atom: array<atomic<u32>>;
${TABLES}
${ENTRY} {
  let m = flat(wid, nwg, lid);
  if (m >= u.C) { return; }
  let mi = models[m];
  let h = scal[u.C + 3u * m + 2u];
  if (h != mi.ns) { atomicOr(&atom[u.errOff + m], ${ERR_ROOT}u); }
  for (var f = 0u; f < CNT_W; f++) { tabs[cntAt(m, f)] = 0u; }
  tabs[cntAt(m, 0u)] = 1u;
  tabs[cntAt(m, 4u)] = 1u;
  for (var s = 0u; s < u.P; s++) { tabs[u.freeOff + m * u.P + s] = u.P - 1u - s; }
  tabs[cntAt(m, 5u)] = u.P;
  let node = lvlAt(u.lvlCur, m, 0u);
  tabs[node] = scal[u.C + 3u * m];
  tabs[node + 1u] = scal[u.C + 3u * m + 1u];
  tabs[node + 2u] = h;
  tabs[node + 3u] = 0u;
  tabs[node + 4u] = NONE;
  tabs[node + 5u] = NONE;
  tabs[node + 6u] = NONE;
  tabs[node + 7u] = NONE;
  if (evaluable(h, 0u, mi)) {
    let s = popFree(m);
    tabs[node + 4u] = s;
    addBuild(m, node, s);
  }
  listEvaluated(m, u.lvlCur, 1u, 0u, mi);
}`

/** Zeroes the slots a level builds into: one thread per (model, build, histogram slot). */
const zeroSlots = () => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> tabs: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;
${ENTRY} {
  let m = wid.z;
  let t = flat(wid, nwg, lid);
  let l = t / u.S;
  if (l >= u.NB || l >= tabs[u.cntOff + m * CNT_W + 1u]) { return; }
  let slot = tabs[u.bslotOff + m * u.nb + l];
  let w = ((m * u.P + slot) * u.S + (t - l * u.S)) * 3u;
  hist[w] = 0u;
  hist[w + 1u] = 0u;
  hist[w + 2u] = 0u;
}`

/** a row's build index in this level (NONE: its node is not built, or the row adds to nothing) */
const BUILD_OF = /* wgsl */ `
fn buildOf(m: u32, i: u32) -> u32 {
  let p = pos[i];
  if (p >= UNSAMPLED) { return NONE; }
  return tabs[u.lvlCur + (m * u.nl + p) * LVL_W + 6u];
}
`

/** Histogram build with global atomics: one thread per (model, row, chunk of FC features). */
const histGlobal = (o: KernelOptions) => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<i32>;
@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> tabs: array<u32>;
@group(0) @binding(5) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> hist: array<atomic<u32>>;
${binRead(o)}
${BUILD_OF}
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
  let l = buildOf(m, i);
  if (l == NONE) { return; }
  let slot = tabs[u.bslotOff + m * u.nb + l];
  let g = q[i];
  let base = (m * u.P + slot) * u.S;
  let j0 = fc * u.FC;
  let j1 = min(u.nFeat, j0 + u.FC);
  for (var j = j0; j < j1; j++) {
    let fo = feats[u.featOff / 2u + m * u.nFeat + j];
    if (fo.x == NONE) { break; }
    add((base + fo.y + binOf(fo.x, r)) * 3u, g);
  }
}`

/**
 * Histogram build in workgroup memory: a workgroup = (block of RB rows, group of FG features,
 * model); its private histogram covers the level's built nodes × FG features × Wmax bins, then is
 * added into the global one (64-bit adds with carry, only non-empty slots). Two slot formats:
 * 64-bit (Σq lo and hi with a carry, and the count: three atomics, one of them waiting for the
 * other's old value) and 32-bit (two independent u32 atomics: Σq mod 2^32, and Σ(q >> 20) + 1024
 * with the count above bit 21 — exact for ≤ 1024 rows a workgroup, as |q| < 2^30; see README).
 */
const histShared = (o: KernelOptions, bits32: boolean) => /* wgsl */ `${COMMON}
const SHW: u32 = ${o.sharedWords}u;
const HWG: u32 = ${HIST_WG}u;
const SW: u32 = ${bits32 ? 2 : 3}u;
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<i32>;
@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> tabs: array<u32>;
@group(0) @binding(5) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> hist: array<atomic<u32>>;
var<workgroup> sh: array<atomic<u32>, SHW>;
${binRead(o)}
${BUILD_OF}
@compute @workgroup_size(${HIST_WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = wid.z;
  let j0 = wid.y * u.FG;
  let j1 = min(u.nFeat, j0 + u.FG);
  let per = u.FG * u.Wmax;
  let used = u.NB * per * SW;
  let fbase = u.featOff / 2u + m * u.nFeat;
  for (var w = lid; w < used; w += HWG) { atomicStore(&sh[w], 0u); }
  workgroupBarrier();
  let r1 = min(u.n, (wid.x + 1u) * u.RB);
  for (var r = wid.x * u.RB + lid; r < r1; r += HWG) {
    let i = m * u.n + r;
    let l = buildOf(m, i);
    if (l != NONE) {
      let g = q[i];
      let v = bitcast<u32>(g);
      ${bits32 ? `let packed = (1u << 21u) + bitcast<u32>((g >> 20u) + 1024i);` : `let hiAdd = select(0u, 0xFFFFFFFFu, g < 0i);`}
      for (var j = j0; j < j1; j++) {
        let f = feats[fbase + j].x;
        if (f == NONE) { break; }
        let w = ((l * u.FG + (j - j0)) * u.Wmax + binOf(f, r)) * SW;
        ${
          bits32
            ? `atomicAdd(&sh[w], v);
        atomicAdd(&sh[w + 1u], packed);`
            : `let old = atomicAdd(&sh[w], v);
        atomicAdd(&sh[w + 1u], hiAdd + select(0u, 1u, old + v < old));
        atomicAdd(&sh[w + 2u], 1u);`
        }
      }
    }
  }
  workgroupBarrier();
  let builds = tabs[u.cntOff + m * CNT_W + 1u];
  for (var s = lid; s < u.NB * per; s += HWG) {
    let l = s / per;
    ${
      bits32
        ? `let b2 = atomicLoad(&sh[s * 2u + 1u]);
    let c = b2 >> 21u;
    // Σq = Σ(q >> 20)·2^20 + an offset in [0, c·2^20) ⊂ [0, 2^30]: the offset is (Σq − that) mod 2^32
    let coarse = bitcast<i32>(b2 & 0x1FFFFFu) - 1024i * bitcast<i32>(c);
    let clo = bitcast<u32>(coarse) << 20u;
    let chi = bitcast<u32>(coarse >> 12u);
    let off = atomicLoad(&sh[s * 2u]) - clo;
    let lo = clo + off;
    let hi = chi + select(0u, 1u, lo < clo);`
        : `let c = atomicLoad(&sh[s * 3u + 2u]);
    let lo = atomicLoad(&sh[s * 3u]);
    let hi = atomicLoad(&sh[s * 3u + 1u]);`
    }
    if (c != 0u && l < builds) {
      let rem = s - l * per;
      let jj = rem / u.Wmax;
      let b = rem - jj * u.Wmax;
      let slot = tabs[u.bslotOff + m * u.nb + l];
      let w = ((m * u.P + slot) * u.S + feats[fbase + j0 + jj].y + b) * 3u;
      let old = atomicAdd(&hist[w], lo);
      atomicAdd(&hist[w + 1u], hi + select(0u, 1u, old + lo < old));
      atomicAdd(&hist[w + 2u], c);
    }
  }
}`

/** The subtraction trick, in place: hist[parent] −= hist[built child] (64-bit with borrow, and the counts), DERIVE_SLOTS per thread. */
const derive = () => /* wgsl */ `${COMMON}
const DS: u32 = ${DERIVE_SLOTS}u;
@group(0) @binding(1) var<storage, read> tabs: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;
${ENTRY} {
  let m = wid.z;
  let gid = flat(wid, nwg, lid);
  let per = (u.S + DS - 1u) / DS;
  let x = gid / per;
  if (x >= u.NB || x >= tabs[u.cntOff + m * CNT_W + 2u]) { return; }
  let t = u.derOff + (m * u.nb + x) * 2u;
  let s0 = (gid - x * per) * DS;
  let s1 = min(s0 + DS, u.S);
  let bd = (m * u.P + tabs[t]) * u.S;
  let bs = (m * u.P + tabs[t + 1u]) * u.S;
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
 * Each node of a level, one workgroup per (model, node). An evaluated node's split search, its
 * threads taking the sampled features in turn: valid candidates and their order are the CPU
 * engine's (forward over non-empty bins with missing values right, then a backward scan when the
 * node has missing values for the feature). Pass 0 brackets every valid candidate's
 * f32(gain_L + gain_R) in [lo, hi] (quantised units, float32 with margins 2^-18 and 2^-20 for
 * WGSL's 2.5-ulp division and the CPU engine's roundings) and keeps the node's largest lo. Pass 1
 * computes, exactly (exact.ts), the loss of every candidate whose hi reaches that maximum (less the
 * loss's rounding collapse, 2^-22) and could beat the node's gain by max(kRtEps, γ); the winner is
 * the largest loss, the first in scan order among equal ones (features ascending, forward bins up,
 * backward bins down). It applies iff > kRtEps and ≥ γ, its left child's exact sums re-read from the
 * histogram. Any other node gets its leaf value (exact.ts). Writes the node's choice and its record
 * in the tree; checks that the histogram's total over the first sampled feature is the node's sums.
 */
const search = () => /* wgsl */ `${COMMON}
${EXACT_WGSL}
const KRT_EPS_BITS: u32 = ${f32Bits(KRT_EPS)}u;
const R20: f32 = 9.5367431640625e-7;
const R18: f32 = 3.814697265625e-6;
@group(0) @binding(1) var<storage, read> hist: array<u32>;
@group(0) @binding(2) var<storage, read_write> tabs: array<u32>;
@group(0) @binding(3) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> finfo: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(6) var<storage, read_write> atom: array<atomic<u32>>;
var<workgroup> wKind: u32;
var<workgroup> wMax: atomic<u32>;
const SWG: u32 = ${SEARCH_WG}u;
var<workgroup> wLoss: array<u32, SWG>;
var<workgroup> wPos: array<u32, SWG>;
/** |a signed 64-bit integer| as f32 (relative error < 2^-22) */
fn absF(lo: u32, hi: u32) -> f32 {
  let a = abs64(vec2<u32>(lo, hi));
  return f32(a.y) * 4294967296.0 + f32(a.x);
}
fn sideLo(g: f32, h: u32, aq: f32, lambda: f32) -> f32 {
  let t = max(g * (1.0 - R20) - aq * (1.0 + R20), 0.0) * (1.0 - R20);
  return (t * t / (f32(h) + lambda)) * (1.0 - R18);
}
fn sideHi(g: f32, h: u32, aq: f32, lambda: f32) -> f32 {
  let t = max(g * (1.0 + R20) - aq * (1.0 - R20), 0.0) * (1.0 + R20);
  return (t * t / (f32(h) + lambda)) * (1.0 + R18);
}
struct Node { glo: u32, ghi: u32, h: u32, base: u32 }
struct Best { lo: f32, loss: u32, pos: u32 }
/** one feature's candidates: pass 0 its largest lower bound; pass 1 its first strictly greater exact loss above thr */
fn scan(phase: u32, m: u32, nd: Node, j: u32, mi: ModelInfo, thr: f32, rootNeg: u32, best: Best) -> Best {
  var out = best;
  let fo = feats[u.featOff / 2u + m * u.nFeat + j];
  let fi = finfo[fo.x];
  let nb = fi.x;
  let base = (nd.base + fo.y) * 3u;
  let glo = nd.glo;
  let ghi = nd.ghi;
  let H = nd.h;
  let missH = select(0u, hist[base + 3u * nb + 2u], fi.y != 0u);
  let aq = mi.alphaQ;
  let lam = mi.lambda;
  let mcw = mi.mcw;
  let alphaI = vec2<u32>(mi.alphaLo, mi.alphaHi);
  let lamBits = bitcast<u32>(lam);
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
    let rlo = glo - llo;
    let rhi = ghi - lhi - select(0u, 1u, glo < llo);
    let gl = absF(llo, lhi);
    let gr = absF(rlo, rhi);
    if (phase == 0u) {
      out.lo = max(out.lo, (sideLo(gl, hl, aq, lam) + sideLo(gr, hr, aq, lam)) * (1.0 - R20));
    } else {
      let hi = (sideHi(gl, hl, aq, lam) + sideHi(gr, hr, aq, lam)) * (1.0 + R20);
      if (hi >= thr && hi > 0.0) {
        let sum = addF32(sideGainF32(vec2<u32>(llo, lhi), hl, mi.k, alphaI, lamBits), sideGainF32(vec2<u32>(rlo, rhi), hr, mi.k, alphaI, lamBits));
        let loss = addF32(sum, rootNeg);
        if (loss < 0x7F800000u && loss > out.loss) { out.loss = loss; out.pos = (j << 10u) | b; }
      }
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
      if (phase == 0u) {
        out.lo = max(out.lo, (sideLo(gl, hl2, aq, lam) + sideLo(gr, hr, aq, lam)) * (1.0 - R20));
      } else {
        let hi = (sideHi(gl, hl2, aq, lam) + sideHi(gr, hr, aq, lam)) * (1.0 + R20);
        if (hi >= thr && hi > 0.0) {
          let sum = addF32(sideGainF32(vec2<u32>(l2lo, l2hi), hl2, mi.k, alphaI, lamBits), sideGainF32(vec2<u32>(rlo, rhi), hr, mi.k, alphaI, lamBits));
          let loss = addF32(sum, rootNeg);
          if (loss < 0x7F800000u && loss > out.loss) { out.loss = loss; out.pos = (j << 10u) | 0x200u | (0x1FFu - b); }
        }
      }
    }
  }
  return out;
}
@compute @workgroup_size(${SEARCH_WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = wid.z;
  let li = wid.y * nwg.x + wid.x;
  let node = u.lvlCur + (m * u.nl + li) * LVL_W;
  let mi = models[m];
  if (lid == 0u) {
    atomicStore(&wMax, 0u);
    var kind = 0u;
    if (li < u.NL && li < tabs[u.cntOff + m * CNT_W]) {
      kind = 1u;
      if (tabs[node + 5u] != NONE && (mi.flags & 1u) == 0u) { kind = 2u; }
    }
    wKind = kind;
  }
  // 0: no such node; 1: a leaf (or the host decides); 2: searched
  let kind = workgroupUniformLoad(&wKind);
  if (kind == 0u) { return; }
  let fbase = u.featOff / 2u + m * u.nFeat;
  let glo = tabs[node];
  let ghi = tabs[node + 1u];
  let H = tabs[node + 2u];
  var lossBits = 0u;
  var posKey = NONE;
  if (kind == 2u) {
    let nd = Node(glo, ghi, H, (m * u.P + tabs[node + 4u]) * u.S);
    var own = Best(0.0, 0u, NONE);
    for (var j = lid; j < u.nFeat; j += SWG) {
      if (feats[fbase + j].x == NONE) { break; }
      own = scan(0u, m, nd, j, mi, 0.0, 0u, own);
    }
    if (own.lo > 0.0) { atomicMax(&wMax, bitcast<u32>(own.lo)); }
    workgroupBarrier();
    let mx = bitcast<f32>(atomicLoad(&wMax));
    let thr = max(mx * (1.0 - R20), (sideLo(absF(glo, ghi), H, mi.alphaQ, mi.lambda) + mi.minGainQ) * (1.0 - R20));
    let rootNeg = sideGainF32(vec2<u32>(glo, ghi), H, mi.k, vec2<u32>(mi.alphaLo, mi.alphaHi), bitcast<u32>(mi.lambda)) ^ 0x80000000u;
    own = Best(0.0, 0u, NONE);
    for (var j = lid; j < u.nFeat; j += SWG) {
      if (feats[fbase + j].x == NONE) { break; }
      own = scan(1u, m, nd, j, mi, thr, rootNeg, own);
    }
    wLoss[lid] = own.loss;
    wPos[lid] = own.pos;
    workgroupBarrier();
    if (lid != 0u) { return; }
    // the largest loss; among equal ones the first in scan order (the smallest position)
    for (var t = 0u; t < SWG; t++) {
      if (wLoss[t] > lossBits || (wLoss[t] == lossBits && wLoss[t] != 0u && wPos[t] < posKey)) { lossBits = wLoss[t]; posKey = wPos[t]; }
    }
  }
  if (lid != 0u) { return; }
  var split = false;
  var j = 0u;
  var splitBin = 0u;
  var backward = false;
  var llo = 0u;
  var lhi = 0u;
  var hl = 0u;
  if (tabs[node + 5u] != NONE) {
    let base0 = (m * u.P + tabs[node + 4u]) * u.S;
    // the histogram's total over the first sampled feature (all its bins and missing slot)
    let f0 = feats[fbase];
    let fi0 = finfo[f0.x];
    var clo = 0u;
    var chi = 0u;
    var ch = 0u;
    for (var b = 0u; b < fi0.x + fi0.y; b++) {
      let w = (base0 + f0.y + b) * 3u;
      let nl = clo + hist[w];
      chi = chi + hist[w + 1u] + select(0u, 1u, nl < clo);
      clo = nl;
      ch += hist[w + 2u];
    }
    if (clo != glo || chi != ghi || ch != H) { atomicOr(&atom[u.errOff + m], ${ERR_SUMS}u); }
    if (lossBits > KRT_EPS_BITS && lossBits >= bitcast<u32>(mi.gamma)) {
      j = posKey >> 10u;
      backward = (posKey & 0x200u) != 0u;
      let b = select(posKey & 0x1FFu, 0x1FFu - (posKey & 0x1FFu), backward);
      let fo = feats[fbase + j];
      let nb = finfo[fo.x].x;
      let base = (base0 + fo.y) * 3u;
      // forward: the left child is bins ≤ b; backward: the right one is bins ≥ b, missing values go left
      var slo = 0u;
      var shi = 0u;
      var sh = 0u;
      let b0 = select(0u, b, backward);
      let b1 = select(b + 1u, nb, backward);
      for (var bb = b0; bb < b1; bb++) {
        let w = base + 3u * bb;
        let nl = slo + hist[w];
        shi = shi + hist[w + 1u] + select(0u, 1u, nl < slo);
        slo = nl;
        sh += hist[w + 2u];
      }
      if (backward) {
        llo = glo - slo;
        lhi = ghi - shi - select(0u, 1u, glo < slo);
        hl = H - sh;
        splitBin = b;
      } else {
        llo = slo;
        lhi = shi;
        hl = sh;
        splitBin = b + 1u;
      }
      split = hl != 0u && hl != H;
    }
  }
  let c = u.choiceOff + (m * u.nl + li) * CHOICE_W;
  let binField = splitBin | select(0u, 0x80000000u, backward);
  var leaf = 0u;
  var feature = NONE;
  if (split) {
    feature = feats[fbase + j].x;
    tabs[c] = j;
    tabs[c + 7u] = feature;
  } else {
    let tq = thresholdQ(vec2<u32>(glo, ghi), vec2<u32>(mi.alphaLo, mi.alphaHi));
    leaf = leafF32(tq, (ghi & 0x80000000u) != 0u, mi.k, H, bitcast<u32>(mi.lambda), mi.mcw, bitcast<u32>(mi.eta));
    tabs[c] = NONE;
    // flags: the host decides this evaluated node
    tabs[c + 7u] = select(0u, 1u, tabs[node + 5u] != NONE && (mi.flags & 1u) != 0u);
  }
  tabs[c + 1u] = binField;
  tabs[c + 2u] = llo;
  tabs[c + 3u] = lhi;
  tabs[c + 4u] = hl;
  tabs[c + 5u] = lossBits;
  tabs[c + 6u] = leaf;
  let id = tabs[node + 3u];
  if (id < u.T) {
    let t = u.treeOff + (m * u.T + id) * TREE_W;
    tabs[t] = feature;
    tabs[t + 1u] = select(0u, binField, split);
    tabs[t + 2u] = glo;
    tabs[t + 3u] = ghi;
    tabs[t + 4u] = H;
    tabs[t + 5u] = leaf;
  }
}`

/**
 * Device-planned levels, one thread per model: the level applied (the row update's table; the
 * next level's nodes, children of the splits in level order, with the CPU engine's tree ids) and
 * the next level planned as the host plans it (level.ts): of two evaluated siblings the one with
 * fewer rows is built (the right one iff strictly fewer) and the other derived in the parent's
 * slot; of one, it takes the parent's slot, built directly or as parent − its smaller sibling
 * (built in a temporary slot). Slots come from the model's stack; P suffices (plan.ts).
 */
const plan = () => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(2) var<storage, read_write> tabs: array<u32>;
@group(0) @binding(3) var<storage, read_write> atom: array<atomic<u32>>;
${TABLES}
${ENTRY} {
  let m = flat(wid, nwg, lid);
  if (m >= u.C) { return; }
  let mi = models[m];
  let nodes = tabs[cntAt(m, 0u)];
  for (var t = 0u; t < tabs[cntAt(m, 6u)]; t++) { pushFree(m, tabs[u.tempOff + m * u.nb + t]); }
  var next = 0u;
  var tn = tabs[cntAt(m, 4u)];
  for (var li = 0u; li < nodes; li++) {
    let node = lvlAt(u.lvlCur, m, li);
    let c = u.choiceOff + (m * u.nl + li) * CHOICE_W;
    let d = u.decOff + (m * u.nl + li) * DEC_W;
    let jj = tabs[c];
    if (jj == NONE) {
      tabs[d] = NONE;
      tabs[d + 5u] = tabs[c + 6u];
      if (tabs[node + 4u] != NONE) { pushFree(m, tabs[node + 4u]); }
      continue;
    }
    let binField = tabs[c + 1u];
    tabs[d] = tabs[c + 7u];
    tabs[d + 1u] = (binField & 0x7FFFFFFFu) - 1u;
    tabs[d + 2u] = binField >> 31u;
    tabs[d + 3u] = next;
    tabs[d + 4u] = next + 1u;
    tabs[d + 5u] = 0u;
    let glo = tabs[node];
    let ghi = tabs[node + 1u];
    let llo = tabs[c + 2u];
    let lhi = tabs[c + 3u];
    let L = lvlAt(u.lvlNext, m, next);
    let R = lvlAt(u.lvlNext, m, next + 1u);
    tabs[L] = llo;
    tabs[L + 1u] = lhi;
    tabs[L + 2u] = tabs[c + 4u];
    tabs[L + 3u] = tn;
    tabs[R] = glo - llo;
    tabs[R + 1u] = ghi - lhi - select(0u, 1u, glo < llo);
    tabs[R + 2u] = tabs[node + 2u] - tabs[c + 4u];
    tabs[R + 3u] = tn + 1u;
    for (var w = 4u; w < 7u; w++) { tabs[L + w] = NONE; tabs[R + w] = NONE; }
    tabs[L + 7u] = tabs[node + 4u];
    tabs[R + 7u] = NONE;
    tn += 2u;
    next += 2u;
  }
  for (var f = 1u; f < CNT_W; f++) { if (f != 4u && f != 5u) { tabs[cntAt(m, f)] = 0u; } }
  tabs[cntAt(m, 0u)] = next;
  tabs[cntAt(m, 4u)] = tn;
  let depth = u.depth + 1u;
  for (var p = 0u; p < next; p += 2u) {
    let L = lvlAt(u.lvlNext, m, p);
    let R = lvlAt(u.lvlNext, m, p + 1u);
    let ps = tabs[L + 7u];
    let hL = tabs[L + 2u];
    let hR = tabs[R + 2u];
    let eL = evaluable(hL, depth, mi);
    let eR = evaluable(hR, depth, mi);
    if (!eL && !eR) {
      pushFree(m, ps);
    } else if (eL && eR) {
      // the CPU engine's buildsSecond: the right child is built iff it has strictly fewer rows
      let small = select(L, R, hR < hL);
      let big = select(R, L, hR < hL);
      let s = popFree(m);
      tabs[small + 4u] = s;
      tabs[big + 4u] = ps;
      addBuild(m, small, s);
      addDerive(m, ps, s);
    } else {
      let x = select(R, L, eL);
      let o = select(L, R, eL);
      tabs[x + 4u] = ps;
      if (tabs[o + 2u] < tabs[x + 2u]) {
        let t = popFree(m);
        addBuild(m, o, t);
        addDerive(m, ps, t);
        let nt = tabs[cntAt(m, 6u)];
        tabs[u.tempOff + m * u.nb + nt] = t;
        tabs[cntAt(m, 6u)] = nt + 1u;
      } else {
        addBuild(m, x, ps);
      }
    }
  }
  listEvaluated(m, u.lvlNext, next, depth, mi);
}`

/**
 * Row-to-node update and prediction update: each row of a level-d node moves to its child's
 * level-(d+1) index, or, in a leaf, adds the leaf value to its prediction (f32) and is done.
 * Rows not sampled this round follow the same tree (they get its leaf too).
 */
const rowUpdate = (o: KernelOptions) => /* wgsl */ `${COMMON}
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> finfo: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> tabs: array<u32>;
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
  let d = u.decOff + (m * u.nl + (p & 0x7FFFFFFFu)) * DEC_W;
  let f = tabs[d];
  if (f == NONE) {
    pred[i] = pred[i] + bitcast<f32>(tabs[d + 5u]);
    pos[i] = NONE;
    return;
  }
  let b = binOf(f, r);
  let fi = finfo[f];
  var left: bool;
  if (fi.y != 0u && b == fi.x) {
    left = tabs[d + 2u] != 0u;
  } else {
    left = bitcast<i32>(b) <= bitcast<i32>(tabs[d + 1u]);
  }
  pos[i] = select(tabs[d + 4u], tabs[d + 3u], left) | (p & UNSAMPLED);
}`

export type KernelName =
  'gradient' | 'quantise' | 'startTree' | 'zeroSlots' | 'histGlobal' | 'histShared32' | 'histShared64' | 'derive' | 'search' | 'plan' | 'rowUpdate'

export function kernelSource(name: KernelName, o: KernelOptions): string {
  switch (name) {
    case 'gradient':
      return gradient()
    case 'quantise':
      return quantise()
    case 'startTree':
      return startTree()
    case 'zeroSlots':
      return zeroSlots()
    case 'histGlobal':
      return histGlobal(o)
    case 'histShared32':
      return histShared(o, true)
    case 'histShared64':
      return histShared(o, false)
    case 'derive':
      return derive()
    case 'search':
      return search()
    case 'plan':
      return plan()
    case 'rowUpdate':
      return rowUpdate(o)
  }
}

/** Pipeline cache key: kernels that read bins or size workgroup memory differ by those options. */
export function kernelKey(name: KernelName, o: KernelOptions): string {
  if (name === 'histShared32' || name === 'histShared64') return `gbdt:${name}:${o.bin16 ? 16 : 8}:${o.sharedWords}`
  if (name === 'histGlobal' || name === 'rowUpdate') return `gbdt:${name}:${o.bin16 ? 16 : 8}`
  return `gbdt:${name}`
}
