// The WGSL kernels of the trees engine. What shapes a tree is integer arithmetic: quantised
// gradients (i32), 64-bit histogram sums (order-free, so exact whatever the order of the atomics),
// row counts, bins, node indices, and the CPU engine's split and leaf arithmetic on integer
// mantissas (exact.ts). A level is planned on the device or by the host, in the same tables.
// Every buffer's layout: README.md, "Buffers"; a round: README.md, "A round".
import { COUNTER_RANDOM_WGSL } from '../gbdt/counter-random'
import { KRT_EPS } from '../gbdt/rules'
import { EXACT_WGSL } from './exact'
import { BINARY_OBJECTIVE_WGSL, OBJECTIVE_WGSL } from './objective-wgsl'

export const WG = 64
/** threads of a shared-memory histogram workgroup */
export const HIST_WG = 256
/** threads of a node's search workgroup: one sampled feature each up to 128 (a node's critical path is its thread's features) */
export const SEARCH_WG = 128
export const NONE = 0xffffffff
export const UNSAMPLED = 0x80000000
/** histogram slots per thread of the derive kernel (strided: a warp's threads take neighbouring slots) */
export const DERIVE_SLOTS = 8
/** words of one model's row draw (rules.ts RowDraw): key, threshold, every row (0/1), held-out begin, end */
export const ROW_DRAW_WORDS = 5
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
  /** the device's rows: the training rows, then the test rows (never drawn: they follow the trees for their margins) */
  'n',
  /** training rows (rows ≥ nTrain are test rows) */
  'nTrain',
  'rowsPad',
  'C',
  'S',
  'P',
  'nFeat',
  /** models draw their rows (row draws at drawOff); else every row is in every tree */
  'drawRows',
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
  'drawOff',
  'errOff',
  /** trees a model grows a round (multiclass: K, one per class; its device models m … m + K − 1) */
  'K',
] as const
export type UniformField = (typeof UNIFORM_FIELDS)[number]
/** bytes between uniform records (WebGPU's largest minUniformBufferOffsetAlignment) */
export const UNIFORM_STRIDE = 256

export interface KernelOptions {
  /** bins are u16 (a feature has 257 slots: 256 bins + missing) */
  bin16: boolean
  /** u32 words of workgroup memory for the shared-memory histogram kernels */
  sharedWords: number
  /**
   * Per-row hessians (a classifier's): every histogram slot, node, choice and tree record carries a
   * 64-bit quantised hessian sum beside Σq and the row count (hessianWords). Off: squared error's
   * hessian is the row count, the layouts above.
   */
  hess: boolean
  /** what the gradient kernel computes each row's pair from (only it reads this) */
  gradient: GradientKind
}

/**
 * The gradient kernel's objective: squared error with the count as its hessian (regression), squared
 * error with each row's hessian 1 through the classifiers' hessian kernels (tests: the hessian path
 * must grow regression's trees), binary:logistic, multi:softprob (objective-wgsl.ts).
 */
export type GradientKind = 'squaredError' | 'squaredErrorHessians' | 'binary' | 'multiclass'

/** Words per level node, choice, tree record, histogram slot and ModelInfo, without or with per-row hessians (Σqh lo, hi appended to each). */
export function hessianWords(hess: boolean): { lvl: number; choice: number; tree: number; slot: number; modelInfo: number } {
  return hess
    ? { lvl: LVL_WORDS + 2, choice: CHOICE_WORDS + 2, tree: TREE_WORDS + 2, slot: 5, modelInfo: MODEL_INFO_WORDS + 4 }
    : { lvl: LVL_WORDS, choice: CHOICE_WORDS, tree: TREE_WORDS, slot: 3, modelInfo: MODEL_INFO_WORDS }
}

const f32Bits = (v: number) => new Uint32Array(new Float32Array([v]).buffer)[0]

const common = (o: KernelOptions) => {
  const w = hessianWords(o.hess)
  return /* wgsl */ `
const WG: u32 = ${WG}u;
const NONE: u32 = 0xFFFFFFFFu;
const UNSAMPLED: u32 = 0x80000000u;
const CNT_W: u32 = ${CNT_WORDS}u;
const LVL_W: u32 = ${w.lvl}u;
const CHOICE_W: u32 = ${w.choice}u;
const TREE_W: u32 = ${w.tree}u;
const DEC_W: u32 = ${DEC_WORDS}u;
const SLOT_W: u32 = ${w.slot}u;
struct U { ${UNIFORM_FIELDS.map((f) => `${f}: u32`).join(', ')} }
// per model: models of one chunk may each have their own coefficients (a fused model set).
// flags bit 0: the host decides this model-round's splits (gains could overflow float32, or α·2^k
// is not an integer). alpha: α·2^k as a 64-bit integer (capped at 2^53) and as f32.
struct ModelInfo {
  k: i32, flags: u32, alphaLo: u32, alphaHi: u32,
  alphaQ: f32, minGainQ: f32, mcw: f32, lambda: f32,
  gamma: f32, eta: f32, minSplitH: f32, maxDepth: u32,
  ${
    o.hess
      ? `ns: u32, kh: i32, pad1: u32, pad2: u32,
  mcwLo: u32, mcwHi: u32, splitLo: u32, splitHi: u32,`
      : `ns: u32, pad0: u32, pad1: u32, pad2: u32,`
  }
}
@group(0) @binding(0) var<uniform> u: U;
fn flat(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid; }
${
  o.hess
    ? `fn geU64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y > b.y || (a.y == b.y && a.x >= b.x); }
// a classifier's node (rules.ts isEvaluated): two rows or more and Σqh ≥ max(2, ⌈2·min_child_weight · 2^kh⌉) (ModelInfo.split)
fn evaluable(rows: u32, hq: vec2<u32>, depth: u32, mi: ModelInfo) -> bool {
  return depth < mi.maxDepth && rows >= 2u && geU64(hq, vec2<u32>(mi.splitLo, mi.splitHi));
}`
    : `fn evaluable(h: u32, depth: u32, mi: ModelInfo) -> bool { return depth < mi.maxDepth && f32(h) >= mi.minSplitH; }`
}
`
}

function binRead(o: KernelOptions): string {
  return o.bin16
    ? `fn binOf(f: u32, r: u32) -> u32 { let i = f * u.rowsPad + r; return (bins[i >> 1u] >> ((i & 1u) << 4u)) & 0xFFFFu; }`
    : `fn binOf(f: u32, r: u32) -> u32 { let i = f * u.rowsPad + r; return (bins[i >> 2u] >> ((i & 3u) << 3u)) & 0xFFu; }`
}

/**
 * Whether device model m draws row r this round: rules.ts RowDraw (ModelSampler.rows, bit for bit),
 * from its row draw at drawOff; every training row when no model draws; never a test row.
 */
const ROW_DRAW_WGSL = /* wgsl */ `${COUNTER_RANDOM_WGSL}
fn rowDrawn(m: u32, r: u32) -> bool {
  if (r >= u.nTrain) { return false; }
  if (u.drawRows == 0u) { return true; }
  let d = u.drawOff + m * ${ROW_DRAW_WORDS}u;
  let take = draws[d + 2u] != 0u || keyedBits(draws[d], r) < draws[d + 1u];
  return take && !(r >= draws[d + 3u] && r < draws[d + 4u]);
}`

const ENTRY = `@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32)`

/** Round start: max |pred − y| per model over its sampled rows (f32 bits, atomicMax), every row to the root. */
const gradient = (o: KernelOptions) => /* wgsl */ `${common(o)}
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> pred: array<f32>;
@group(0) @binding(3) var<storage, read> draws: array<u32>;
${ROW_DRAW_WGSL}
@group(0) @binding(4) var<storage, read_write> pos: array<u32>;
@group(0) @binding(5) var<storage, read_write> scal: array<atomic<u32>>;
var<workgroup> wmax: atomic<u32>;
var<workgroup> wdrawn: atomic<u32>;
${ENTRY} {
  if (lid == 0u) { atomicStore(&wmax, 0u); atomicStore(&wdrawn, 0u); }
  workgroupBarrier();
  let m = wid.z;
  let r = flat(wid, nwg, lid);
  if (r < u.n) {
    let i = m * u.n + r;
    if (rowDrawn(m, r)) {
      atomicAdd(&wdrawn, 1u);
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
    let drawn = atomicLoad(&wdrawn);
    if (drawn != 0u && u.drawRows != 0u) { atomicAdd(&scal[${o.hess ? 7 : 4}u * u.C + m], drawn); }
  }
}`

/** q = trunc((pred − y) · 2^k) for sampled rows (0 otherwise), and the root's Σq and count. */
const quantise = (o: KernelOptions) => /* wgsl */ `${common(o)}
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

/** the classifiers' gradient pairs on the device (objective-wgsl.ts, after the exact arithmetic it builds on); binary's needs no marginBits */
function objectiveSource(kind: GradientKind): string {
  if (kind === 'binary') return EXACT_WGSL + BINARY_OBJECTIVE_WGSL
  return kind === 'multiclass' ? EXACT_WGSL + OBJECTIVE_WGSL : ''
}

/** each row's (g, h) bits of the objective (GradientKind), for device model m and row r, i = m·n + r (multi:softprob: gradientOfClasses) */
function gradientPair(kind: GradientKind): string {
  switch (kind) {
    case 'squaredErrorHessians':
      return 'vec2<u32>(bitcast<u32>(pred[i] - y[r]), 0x3F800000u)'
    case 'binary':
      return 'logisticGradPair(bitcast<u32>(pred[i]), u32(y[r]))'
    case 'squaredError':
    case 'multiclass':
      throw new Error(`webgpu: ${kind} has its own gradient kernel`)
  }
}

/** WGSL: the workgroup's max |g| (f32 bits), max h and drawn rows of device model m added to the chunk's (scal[m], scal[4C + m], scal[7C + m]) */
function flushHessianMaxima(m: string, gmax: string, hmax: string, drawn: string): string {
  return /* wgsl */ `let v = atomicLoad(&${gmax});
    if (v != 0u) { atomicMax(&scal[${m}], v); }
    let drawn = atomicLoad(&${drawn});
    if (drawn != 0u && u.drawRows != 0u) { atomicAdd(&scal[7u * u.C + ${m}], drawn); }
    let vh = atomicLoad(&${hmax});
    if (vh != 0u) { atomicMax(&scal[4u * u.C + ${m}], vh); }`
}

/** The bindings (and the objective's functions) both per-row-hessian gradient kernels read and write. */
const hessianGradientBindings = (o: KernelOptions) => /* wgsl */ `${objectiveSource(o.gradient)}
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> pred: array<f32>;
@group(0) @binding(3) var<storage, read> draws: array<u32>;
${ROW_DRAW_WGSL}
@group(0) @binding(4) var<storage, read_write> pos: array<u32>;
@group(0) @binding(5) var<storage, read_write> scal: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> q: array<u32>;
@group(0) @binding(7) var<storage, read_write> qh: array<u32>;`

/**
 * Round start with per-row hessians: each sampled row's (g, h) from its margin (f32 bits, kept in q
 * and qh until quantise), max |g| and max h per model (atomicMax of the bits; scal[m] and
 * scal[4C + m]), every row to the root. One thread per (row, device model); multi:softprob has its own
 * kernel (gradientOfClasses).
 */
const gradientWithHessians = (o: KernelOptions) => /* wgsl */ `${common(o)}
${hessianGradientBindings(o)}
var<workgroup> wmax: atomic<u32>;
var<workgroup> wdrawn: atomic<u32>;
var<workgroup> whmax: atomic<u32>;
${ENTRY} {
  if (lid == 0u) { atomicStore(&wmax, 0u); atomicStore(&whmax, 0u); atomicStore(&wdrawn, 0u); }
  workgroupBarrier();
  let m = wid.z;
  let r = flat(wid, nwg, lid);
  if (r < u.n) {
    let i = m * u.n + r;
    if (rowDrawn(m, r)) {
      atomicAdd(&wdrawn, 1u);
      let gh = ${gradientPair(o.gradient)};
      atomicMax(&wmax, gh.x & 0x7FFFFFFFu);
      atomicMax(&whmax, gh.y);
      q[i] = gh.x;
      qh[i] = gh.y;
      pos[i] = 0u;
    } else {
      pos[i] = UNSAMPLED;
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    ${flushHessianMaxima('m', 'wmax', 'whmax', 'wdrawn')}
  }
}`

/**
 * Round start for multi:softprob: gradientWithHessians's outputs, but one thread per (row, K-class
 * model) — the row's K softmax terms and their sum once (softprobRowTerms: K exps a row, where one
 * thread per class would compute K a class, K² a row), then the pair of each class that draws the row
 * (its device model base + c). Dispatched over the chunk's models, C / K (gradientDispatchModels).
 */
const gradientOfClasses = (o: KernelOptions) => /* wgsl */ `${common(o)}
${hessianGradientBindings(o)}
// per class of the workgroup's model (K ≤ MAX_CLASSES)
var<workgroup> wmax: array<atomic<u32>, MAX_CLASSES>;
var<workgroup> wdrawn: array<atomic<u32>, MAX_CLASSES>;
var<workgroup> whmax: array<atomic<u32>, MAX_CLASSES>;
/** the model's first device model (class 0) */
var<private> base: u32;
fn marginBits(row: u32, c: u32) -> u32 { return bitcast<u32>(pred[(base + c) * u.n + row]); }
${ENTRY} {
  let K = u.K;
  for (var c = lid; c < K; c += WG) { atomicStore(&wmax[c], 0u); atomicStore(&whmax[c], 0u); atomicStore(&wdrawn[c], 0u); }
  workgroupBarrier();
  base = wid.z * K;
  let r = flat(wid, nwg, lid);
  if (r < u.n) {
    // bit c: class c draws the row (each class's tree has its own row draw)
    var drawnBy = 0u;
    for (var c = 0u; c < K; c++) {
      if (rowDrawn(base + c, r)) { drawnBy |= 1u << c; }
    }
    var exps: array<u32, MAX_CLASSES>;
    var sum = 0u;
    var label = 0u;
    if (drawnBy != 0u) {
      sum = softprobRowTerms(r, K, &exps);
      label = u32(y[r]);
    }
    for (var c = 0u; c < K; c++) {
      let i = (base + c) * u.n + r;
      if ((drawnBy & (1u << c)) != 0u) {
        atomicAdd(&wdrawn[c], 1u);
        let gh = softprobClassPair(exps[c], sum, c, label);
        atomicMax(&wmax[c], gh.x & 0x7FFFFFFFu);
        atomicMax(&whmax[c], gh.y);
        q[i] = gh.x;
        qh[i] = gh.y;
        pos[i] = 0u;
      } else {
        pos[i] = UNSAMPLED;
      }
    }
  }
  workgroupBarrier();
  for (var c = lid; c < K; c += WG) {
    ${flushHessianMaxima('base + c', 'wmax[c]', 'whmax[c]', 'wdrawn[c]')}
  }
}`

/** The gradient kernel's third dispatch dimension for C device models: a thread per row of each device model, or of each K-class model (multi:softprob). */
export function gradientDispatchModels(o: KernelOptions, C: number, K: number): number {
  if (!(o.hess && o.gradient === 'multiclass')) return C
  // chunks and compactions hold whole K-class models (plan.ts)
  if (C % K !== 0) throw new Error(`webgpu: ${C} device models are not whole ${K}-class models (planning error)`)
  return C / K
}

/**
 * Per-row hessians: q = trunc(g · 2^k) and qh = trunc(h · 2^kh) of the gradient kernel's pair for
 * sampled rows (0 otherwise), in place; the root's Σq, count (scal[C + 3m …]) and Σqh (scal[5C + 2m …]).
 */
const quantiseWithHessians = (o: KernelOptions) => /* wgsl */ `${common(o)}
@group(0) @binding(1) var<storage, read> pos: array<u32>;
@group(0) @binding(2) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(3) var<storage, read_write> q: array<u32>;
@group(0) @binding(4) var<storage, read_write> qh: array<u32>;
@group(0) @binding(5) var<storage, read_write> scal: array<atomic<u32>>;
var<workgroup> wlo: atomic<u32>;
var<workgroup> whi: atomic<u32>;
var<workgroup> wcnt: atomic<u32>;
var<workgroup> whlo: atomic<u32>;
var<workgroup> whhi: atomic<u32>;
/** trunc(x · 2^k), ldexp in two steps to keep each exponent within WGSL's range (exact for a normal result) */
fn scaled(x: f32, k: i32) -> i32 { let k1 = min(k, 64i); return i32(ldexp(ldexp(x, k1), k - k1)); }
${ENTRY} {
  if (lid == 0u) { atomicStore(&wlo, 0u); atomicStore(&whi, 0u); atomicStore(&wcnt, 0u); atomicStore(&whlo, 0u); atomicStore(&whhi, 0u); }
  workgroupBarrier();
  let m = wid.z;
  let r = flat(wid, nwg, lid);
  if (r < u.n) {
    let i = m * u.n + r;
    var qi = 0i;
    var hi = 0u;
    if (pos[i] == 0u) {
      qi = scaled(bitcast<f32>(q[i]), models[m].k);
      hi = u32(scaled(bitcast<f32>(qh[i]), models[m].kh));
      let v = bitcast<u32>(qi);
      let old = atomicAdd(&wlo, v);
      atomicAdd(&whi, select(0u, 0xFFFFFFFFu, qi < 0i) + select(0u, 1u, old + v < old));
      atomicAdd(&wcnt, 1u);
      let oldh = atomicAdd(&whlo, hi);
      atomicAdd(&whhi, select(0u, 1u, oldh + hi < oldh));
    }
    q[i] = bitcast<u32>(qi);
    qh[i] = hi;
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
      let hlo = atomicLoad(&whlo);
      let bh = 5u * u.C + 2u * m;
      let oldh = atomicAdd(&scal[bh], hlo);
      atomicAdd(&scal[bh + 1u], atomicLoad(&whhi) + select(0u, 1u, oldh + hlo < oldh));
    }
  }
}`

/** The slot stack and the level tables (tabs), as the planning kernels use them. */
const tables = (o: KernelOptions) => /* wgsl */ `
${
  o.hess
    ? `fn nodeEvaluable(node: u32, depth: u32, mi: ModelInfo) -> bool { return evaluable(tabs[node + 2u], vec2<u32>(tabs[node + 8u], tabs[node + 9u]), depth, mi); }`
    : `fn nodeEvaluable(node: u32, depth: u32, mi: ModelInfo) -> bool { return evaluable(tabs[node + 2u], depth, mi); }`
}
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
    if (nodeEvaluable(node, depth, mi)) {
      tabs[u.evalOff + m * u.ne + e] = li;
      tabs[node + 5u] = e;
      e++;
    }
  }
  tabs[cntAt(m, 3u)] = e;
}
`

/** Device-planned rounds: each model's tree starts as its root (sums from quantise), every slot free, the root built if it is evaluated. */
const startTree = (o: KernelOptions) => /* wgsl */ `${common(o)}
@group(0) @binding(1) var<storage, read> scal: array<u32>;
@group(0) @binding(2) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(3) var<storage, read_write> tabs: array<u32>;
@group(0) @binding(4) var<storage, read_write> atom: array<atomic<u32>>;
${tables(o)}
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
  ${
    o.hess
      ? `tabs[node + 8u] = scal[5u * u.C + 2u * m];
  tabs[node + 9u] = scal[5u * u.C + 2u * m + 1u];`
      : ''
  }
  if (nodeEvaluable(node, 0u, mi)) {
    let s = popFree(m);
    tabs[node + 4u] = s;
    addBuild(m, node, s);
  }
  listEvaluated(m, u.lvlCur, 1u, 0u, mi);
}`

/** Zeroes the slots a level builds into: one thread per (model, build, histogram slot). */
const zeroSlots = (o: KernelOptions) => /* wgsl */ `${common(o)}
@group(0) @binding(1) var<storage, read> tabs: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;
${ENTRY} {
  let m = wid.z;
  let t = flat(wid, nwg, lid);
  let l = t / u.S;
  if (l >= u.NB || l >= tabs[u.cntOff + m * CNT_W + 1u]) { return; }
  let slot = tabs[u.bslotOff + m * u.nb + l];
  let w = ((m * u.P + slot) * u.S + (t - l * u.S)) * SLOT_W;
  for (var k = 0u; k < SLOT_W; k++) { hist[w + k] = 0u; }
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
const histGlobal = (o: KernelOptions) => /* wgsl */ `${common(o)}
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<i32>;
@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> tabs: array<u32>;
@group(0) @binding(5) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> hist: array<atomic<u32>>;
${o.hess ? '@group(0) @binding(7) var<storage, read> qh: array<u32>;' : ''}
${binRead(o)}
${BUILD_OF}
fn add(w: u32, v: i32${o.hess ? ', hv: u32' : ''}) {
  let vv = bitcast<u32>(v);
  let old = atomicAdd(&hist[w], vv);
  atomicAdd(&hist[w + 1u], select(0u, 0xFFFFFFFFu, v < 0i) + select(0u, 1u, old + vv < old));
  atomicAdd(&hist[w + 2u], 1u);${
    o.hess
      ? `
  let oldh = atomicAdd(&hist[w + 3u], hv);
  if (oldh + hv < oldh) { atomicAdd(&hist[w + 4u], 1u); }`
      : ''
  }
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
  let g = q[i];${
    o.hess
      ? `
  let hv = qh[i];`
      : ''
  }
  let base = (m * u.P + slot) * u.S;
  let j0 = fc * u.FC;
  let j1 = min(u.nFeat, j0 + u.FC);
  for (var j = j0; j < j1; j++) {
    let fo = feats[u.featOff / 2u + m * u.nFeat + j];
    if (fo.x == NONE) { break; }
    add((base + fo.y + binOf(fo.x, r)) * SLOT_W, g${o.hess ? ', hv' : ''});
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
const histShared = (o: KernelOptions, bits32: boolean) => /* wgsl */ `${common(o)}
const SHW: u32 = ${o.sharedWords}u;
const HWG: u32 = ${HIST_WG}u;
const SW: u32 = ${bits32 ? 2 : hessianWords(o.hess).slot}u;
@group(0) @binding(1) var<storage, read> bins: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<i32>;
@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> tabs: array<u32>;
@group(0) @binding(5) var<storage, read> feats: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> hist: array<atomic<u32>>;
${o.hess ? '@group(0) @binding(7) var<storage, read> qh: array<u32>;' : ''}
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
      let v = bitcast<u32>(g);${
        o.hess
          ? `
      let hv = qh[i];`
          : ''
      }
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
        atomicAdd(&sh[w + 2u], 1u);${
          o.hess
            ? `
        let oldh = atomicAdd(&sh[w + 3u], hv);
        if (oldh + hv < oldh) { atomicAdd(&sh[w + 4u], 1u); }`
            : ''
        }`
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
        : `let c = atomicLoad(&sh[s * SW + 2u]);
    let lo = atomicLoad(&sh[s * SW]);
    let hi = atomicLoad(&sh[s * SW + 1u]);`
    }
    if (c != 0u && l < builds) {
      let rem = s - l * per;
      let jj = rem / u.Wmax;
      let b = rem - jj * u.Wmax;
      let slot = tabs[u.bslotOff + m * u.nb + l];
      let w = ((m * u.P + slot) * u.S + feats[fbase + j0 + jj].y + b) * SLOT_W;
      let old = atomicAdd(&hist[w], lo);
      atomicAdd(&hist[w + 1u], hi + select(0u, 1u, old + lo < old));
      atomicAdd(&hist[w + 2u], c);${
        o.hess
          ? `
      let hlo = atomicLoad(&sh[s * SW + 3u]);
      let oldh = atomicAdd(&hist[w + 3u], hlo);
      atomicAdd(&hist[w + 4u], atomicLoad(&sh[s * SW + 4u]) + select(0u, 1u, oldh + hlo < oldh));`
          : ''
      }
    }
  }
}`

/**
 * The subtraction trick, in place: hist[parent] −= hist[built child] (64-bit with borrow, and the
 * counts), DERIVE_SLOTS per thread a node's thread count apart, so neighbouring threads take
 * neighbouring slots (8 consecutive slots a thread ran at ~300 GB/s on an H100, where zeroing the
 * slots, one a thread, wrote at 1.3 TB/s); several a thread, since on lavapipe a thread costs.
 */
const derive = (o: KernelOptions) => /* wgsl */ `${common(o)}
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
  let i = gid - x * per;
  let bd = (m * u.P + tabs[t]) * u.S;
  let bs = (m * u.P + tabs[t + 1u]) * u.S;
  for (var s = i; s < u.S; s += per) {
    let wd = (bd + s) * SLOT_W;
    let ws = (bs + s) * SLOT_W;
    let a = hist[wd];
    let b = hist[ws];
    hist[wd] = a - b;
    hist[wd + 1u] = hist[wd + 1u] - hist[ws + 1u] - select(0u, 1u, a < b);
    hist[wd + 2u] = hist[wd + 2u] - hist[ws + 2u];${
      o.hess
        ? `
    let ah = hist[wd + 3u];
    let bh = hist[ws + 3u];
    hist[wd + 3u] = ah - bh;
    hist[wd + 4u] = hist[wd + 4u] - hist[ws + 4u] - select(0u, 1u, ah < bh);`
        : ''
    }
  }
}`

/**
 * The search kernel's hessian sums, one home for both layouts: HS is a node's or a side's hessian sum
 * (squared error: its rows, u32; a classifier: Σqh, 64-bit), read from a histogram slot or a node,
 * compared with min_child_weight exactly, as the bracket's f32, and in the exact gain. Gains in the
 * bracket are in quantised units (Σq², G·2^k) — a classifier's also scaled by 2^-64 (gF: Σq·2^-32), as
 * its H can be far below 1 (ModelInfo's alphaQ and minGainQ are in the same units).
 */
function searchSums(o: KernelOptions): string {
  if (!o.hess)
    return /* wgsl */ `
alias HS = u32;
fn hZero() -> HS { return 0u; }
fn hSlot(w: u32) -> HS { return hist[w + 2u]; }
fn hNode(node: u32) -> HS { return tabs[node + 2u]; }
fn hAdd(a: HS, b: HS) -> HS { return a + b; }
fn hSub(a: HS, b: HS) -> HS { return a - b; }
fn hIsZero(a: HS) -> bool { return a == 0u; }
fn hEq(a: HS, b: HS) -> bool { return a == b; }
fn hPack(a: HS) -> vec2<u32> { return vec2<u32>(a, 0u); }
fn hUnpack(v: vec2<u32>) -> HS { return v.x; }
fn hBelowMcw(a: HS, mi: ModelInfo) -> bool { return f32(a) < mi.mcw; }
fn hF(a: HS, mi: ModelInfo) -> f32 { return f32(a); }
fn gF(lo: u32, hi: u32) -> f32 { return absF(lo, hi); }
fn gainExact(sq: vec2<u32>, a: HS, mi: ModelInfo) -> u32 { return sideGainF32(sq, a, mi.k, vec2<u32>(mi.alphaLo, mi.alphaHi), bitcast<u32>(mi.lambda)); }
fn leafExact(tq: vec2<u32>, negative: bool, a: HS, mi: ModelInfo) -> u32 { return leafF32(tq, negative, mi.k, a, bitcast<u32>(mi.lambda), mi.mcw, bitcast<u32>(mi.eta)); }
`
  return /* wgsl */ `
alias HS = vec2<u32>;
fn hZero() -> HS { return vec2<u32>(0u, 0u); }
fn hSlot(w: u32) -> HS { return vec2<u32>(hist[w + 3u], hist[w + 4u]); }
fn hNode(node: u32) -> HS { return vec2<u32>(tabs[node + 8u], tabs[node + 9u]); }
fn hAdd(a: HS, b: HS) -> HS { return add64(a, b); }
fn hSub(a: HS, b: HS) -> HS { return sub64(a, b); }
fn hIsZero(a: HS) -> bool { return a.x == 0u && a.y == 0u; }
fn hEq(a: HS, b: HS) -> bool { return a.x == b.x && a.y == b.y; }
fn hPack(a: HS) -> vec2<u32> { return a; }
fn hUnpack(v: vec2<u32>) -> HS { return v; }
// Σqh · 2^-kh < mcw ⇔ Σqh < ⌈mcw · 2^kh⌉ (ModelInfo.mcw{Lo,Hi})
fn hBelowMcw(a: HS, mi: ModelInfo) -> bool { return !ge64(a, vec2<u32>(mi.mcwLo, mi.mcwHi)); }
fn hF(a: HS, mi: ModelInfo) -> f32 {
  let k1 = min(mi.kh, 64i);
  return ldexp(ldexp(f32(a.y) * 4294967296.0 + f32(a.x), -k1), k1 - mi.kh);
}
fn gF(lo: u32, hi: u32) -> f32 { return absF(lo, hi) * 2.3283064365386963e-10; }
fn gainExact(sq: vec2<u32>, a: HS, mi: ModelInfo) -> u32 { return sideGainHF32(sq, a, mi.k, mi.kh, vec2<u32>(mi.alphaLo, mi.alphaHi), bitcast<u32>(mi.lambda)); }
fn leafExact(tq: vec2<u32>, negative: bool, a: HS, mi: ModelInfo) -> u32 {
  return leafHF32(tq, negative, mi.k, a, mi.kh, bitcast<u32>(mi.lambda), vec2<u32>(mi.mcwLo, mi.mcwHi), bitcast<u32>(mi.eta));
}
`
}

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
 * backward bins down). It applies iff > kRtEps and ≥ γ, its left child's exact sums those its scan
 * carried to that candidate. Any other node gets its leaf value (exact.ts). Writes the node's choice
 * and its record in the tree; checks that the histogram's total over the first sampled feature (every
 * thread a share of its bins) is the node's sums. Hessian sums through searchSums (the row count, or
 * a classifier's Σqh).
 *
 * Its speed: on an H100 (8 000 rows, 100 rounds) it was 29 % of the kernels' time batched (50 models)
 * and 79 % sequential (one model: few workgroups, each waiting on its loads). So a thread's scan loads
 * four bins before stepping through them; a thread whose pass-0 upper bounds all fall short of the
 * threshold skips pass 1 (it would find nothing); and no thread scans a bin after pass 1 (lavapipe:
 * the kernel's time −45 %).
 */
const search = (o: KernelOptions) => /* wgsl */ `${common(o)}
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
/** the scanned side's sums at each thread's best candidate: Σq lo, hi, rows, hessian lo; its hessian hi */
var<workgroup> wSide: array<vec4<u32>, SWG>;
var<workgroup> wSideH: array<u32, SWG>;
/** the histogram's total over the first sampled feature: Σq lo, hi, rows, hessian lo, hi */
var<workgroup> wTot: array<atomic<u32>, 5>;
/** |a signed 64-bit integer| as f32 (relative error < 2^-22) */
fn absF(lo: u32, hi: u32) -> f32 {
  let a = abs64(vec2<u32>(lo, hi));
  return f32(a.y) * 4294967296.0 + f32(a.x);
}
${searchSums(o)}
// a side without hessian (a classifier's rows whose hessians quantise to 0) gains 0, as rules.ts sideGain
fn sideLo(g: f32, h: f32, aq: f32, lambda: f32) -> f32 {
  if (h <= 0.0) { return 0.0; }
  let t = max(g * (1.0 - R20) - aq * (1.0 + R20), 0.0) * (1.0 - R20);
  return (t * t / (h + lambda)) * (1.0 - R18);
}
fn sideHi(g: f32, h: f32, aq: f32, lambda: f32) -> f32 {
  if (h <= 0.0) { return 0.0; }
  let t = max(g * (1.0 + R20) - aq * (1.0 - R20), 0.0) * (1.0 + R20);
  return (t * t / (h + lambda)) * (1.0 + R18);
}
struct Node { glo: u32, ghi: u32, h: HS, base: u32 }
/** one histogram slot: Σq (64-bit), rows, hessian */
struct Slot { lo: u32, hi: u32, c: u32, h: HS }
fn slotAt(w: u32) -> Slot { return Slot(hist[w], hist[w + 1u], hist[w + 2u], hSlot(w)); }
/** one side's running sums over the bins a scan has passed */
struct Side { lo: u32, hi: u32, rows: u32, h: HS }
fn sideAdd(a: Side, s: Slot) -> Side {
  let nl = a.lo + s.lo;
  return Side(nl, a.hi + s.hi + select(0u, 1u, nl < a.lo), a.rows + s.c, hAdd(a.h, s.h));
}
fn noSide() -> Side { return Side(0u, 0u, 0u, hZero()); }
/**
 * A thread's best so far. Pass 0: the largest lower and upper bounds of its candidates. Pass 1: the
 * largest exact loss, its position, and the scanned side's sums there (the left child's, or the right
 * one's of a backward scan), so the winner's sums need no second scan.
 */
struct Best { lo: f32, hi: f32, loss: u32, pos: u32, side: Side }
fn noBest() -> Best { return Best(0.0, 0.0, 0u, NONE, noSide()); }
struct Scan { side: Side, best: Best, stop: bool }
/**
 * The candidate after one more bin of a scan (forward: the scanned side is the left child; backward:
 * the right). The scan stops where the other side's hessian is below min_child_weight or zero (it only
 * shrinks); empty bins are no candidates.
 */
fn step(phase: u32, nd: Node, mi: ModelInfo, thr: f32, rootNeg: u32, forward: bool, pos: u32, s: Slot, st: ptr<function, Scan>) {
  if ((*st).stop || s.c == 0u) { return; }
  let own = sideAdd((*st).side, s);
  (*st).side = own;
  let other = hSub(nd.h, own.h);
  if (hBelowMcw(other, mi) || hIsZero(other)) { (*st).stop = true; return; }
  if (hBelowMcw(own.h, mi)) { return; }
  let olo = nd.glo - own.lo;
  let ohi = nd.ghi - own.hi - select(0u, 1u, nd.glo < own.lo);
  let gOwn = gF(own.lo, own.hi);
  let gOther = gF(olo, ohi);
  let hOwn = hF(own.h, mi);
  let hOther = hF(other, mi);
  let gl = select(gOther, gOwn, forward);
  let gr = select(gOwn, gOther, forward);
  let hlf = select(hOther, hOwn, forward);
  let hrf = select(hOwn, hOther, forward);
  let aq = mi.alphaQ;
  let lam = mi.lambda;
  let hi = (sideHi(gl, hlf, aq, lam) + sideHi(gr, hrf, aq, lam)) * (1.0 + R20);
  if (phase == 0u) {
    (*st).best.lo = max((*st).best.lo, (sideLo(gl, hlf, aq, lam) + sideLo(gr, hrf, aq, lam)) * (1.0 - R20));
    (*st).best.hi = max((*st).best.hi, hi);
  } else if (hi >= thr && hi > 0.0) {
    var sum: u32;
    if (forward) {
      sum = addF32(gainExact(vec2<u32>(own.lo, own.hi), own.h, mi), gainExact(vec2<u32>(olo, ohi), other, mi));
    } else {
      sum = addF32(gainExact(vec2<u32>(olo, ohi), other, mi), gainExact(vec2<u32>(own.lo, own.hi), own.h, mi));
    }
    let loss = addF32(sum, rootNeg);
    if (loss < 0x7F800000u && loss > (*st).best.loss) {
      (*st).best.loss = loss;
      (*st).best.pos = pos;
      (*st).best.side = own;
    }
  }
}
/**
 * One feature's candidates: forward over its bins, then backward when the node has missing values
 * for it. Four bins' slots are loaded before they are stepped through: on a few nodes (one model) the
 * scan waits on its loads, and four in flight wait once.
 */
fn scan(phase: u32, m: u32, nd: Node, j: u32, mi: ModelInfo, thr: f32, rootNeg: u32, best: Best) -> Best {
  let fo = feats[u.featOff / 2u + m * u.nFeat + j];
  let fi = finfo[fo.x];
  let nb = fi.x;
  let base = (nd.base + fo.y) * SLOT_W;
  let missH = select(0u, hist[base + SLOT_W * nb + 2u], fi.y != 0u);
  var st = Scan(noSide(), best, false);
  for (var b = 0u; b < nb && !st.stop; b += 4u) {
    let s0 = slotAt(base + SLOT_W * b);
    let s1 = slotAt(base + SLOT_W * (b + 1u));
    let s2 = slotAt(base + SLOT_W * (b + 2u));
    let s3 = slotAt(base + SLOT_W * (b + 3u));
    let p = j << 10u;
    step(phase, nd, mi, thr, rootNeg, true, p | b, s0, &st);
    if (b + 1u < nb) { step(phase, nd, mi, thr, rootNeg, true, p | (b + 1u), s1, &st); }
    if (b + 2u < nb) { step(phase, nd, mi, thr, rootNeg, true, p | (b + 2u), s2, &st); }
    if (b + 3u < nb) { step(phase, nd, mi, thr, rootNeg, true, p | (b + 3u), s3, &st); }
  }
  if (missH != 0u) {
    st.side = noSide();
    st.stop = false;
    // bins bb − 1 down to bb − 4 (those below 0 are loaded from wherever and never stepped)
    for (var bb = nb; bb > 0u && !st.stop; bb = select(0u, bb - 4u, bb > 4u)) {
      let s0 = slotAt(base + SLOT_W * (bb - 1u));
      let s1 = slotAt(base + SLOT_W * (bb - 2u));
      let s2 = slotAt(base + SLOT_W * (bb - 3u));
      let s3 = slotAt(base + SLOT_W * (bb - 4u));
      let p = (j << 10u) | 0x200u;
      step(phase, nd, mi, thr, rootNeg, false, p | (0x1FFu - (bb - 1u)), s0, &st);
      if (bb > 1u) { step(phase, nd, mi, thr, rootNeg, false, p | (0x1FFu - (bb - 2u)), s1, &st); }
      if (bb > 2u) { step(phase, nd, mi, thr, rootNeg, false, p | (0x1FFu - (bb - 3u)), s2, &st); }
      if (bb > 3u) { step(phase, nd, mi, thr, rootNeg, false, p | (0x1FFu - (bb - 4u)), s3, &st); }
    }
  }
  return st.best;
}
@compute @workgroup_size(${SEARCH_WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = wid.z;
  let li = wid.y * nwg.x + wid.x;
  let node = u.lvlCur + (m * u.nl + li) * LVL_W;
  let mi = models[m];
  if (lid == 0u) {
    atomicStore(&wMax, 0u);
    for (var k = 0u; k < 5u; k++) { atomicStore(&wTot[k], 0u); }
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
  let H = hNode(node);
  let evaluated = tabs[node + 5u] != NONE;
  if (evaluated) {
    // the histogram's total over the first sampled feature (all its bins and missing slot), every thread a share
    let f0 = feats[fbase];
    let fi0 = finfo[f0.x];
    let base0 = (m * u.P + tabs[node + 4u]) * u.S + f0.y;
    var t = noSide();
    for (var b = lid; b < fi0.x + fi0.y; b += SWG) { t = sideAdd(t, slotAt((base0 + b) * SLOT_W)); }
    let old = atomicAdd(&wTot[0], t.lo);
    atomicAdd(&wTot[1], t.hi + select(0u, 1u, old + t.lo < old));
    atomicAdd(&wTot[2], t.rows);
    let th = hPack(t.h);
    let oldh = atomicAdd(&wTot[3], th.x);
    atomicAdd(&wTot[4], th.y + select(0u, 1u, oldh + th.x < oldh));
  }
  var lossBits = 0u;
  var posKey = NONE;
  var winner = 0u;
  if (kind == 2u) {
    let nd = Node(glo, ghi, H, (m * u.P + tabs[node + 4u]) * u.S);
    var own = noBest();
    for (var j = lid; j < u.nFeat; j += SWG) {
      if (feats[fbase + j].x == NONE) { break; }
      own = scan(0u, m, nd, j, mi, 0.0, 0u, own);
    }
    if (own.lo > 0.0) { atomicMax(&wMax, bitcast<u32>(own.lo)); }
    workgroupBarrier();
    let mx = bitcast<f32>(atomicLoad(&wMax));
    let thr = max(mx * (1.0 - R20), (sideLo(gF(glo, ghi), hF(H, mi), mi.alphaQ, mi.lambda) + mi.minGainQ) * (1.0 - R20));
    let rootNeg = gainExact(vec2<u32>(glo, ghi), H, mi) ^ 0x80000000u;
    // pass 1 finds no candidate where pass 0's upper bounds (the same arithmetic; a margin for any
    // contraction the compiler chose differently) all fall short of the threshold
    let contends = own.hi * (1.0 + R18) >= thr;
    own = noBest();
    if (contends) {
      for (var j = lid; j < u.nFeat; j += SWG) {
        if (feats[fbase + j].x == NONE) { break; }
        own = scan(1u, m, nd, j, mi, thr, rootNeg, own);
      }
    }
    wLoss[lid] = own.loss;
    wPos[lid] = own.pos;
    wSide[lid] = vec4<u32>(own.side.lo, own.side.hi, own.side.rows, hPack(own.side.h).x);
    wSideH[lid] = hPack(own.side.h).y;
    workgroupBarrier();
    if (lid == 0u) {
      // the largest loss; among equal ones the first in scan order (the smallest position)
      for (var t = 0u; t < SWG; t++) {
        if (wLoss[t] > lossBits || (wLoss[t] == lossBits && wLoss[t] != 0u && wPos[t] < posKey)) {
          lossBits = wLoss[t];
          posKey = wPos[t];
          winner = t;
        }
      }
    }
  }
  workgroupBarrier();
  if (lid != 0u) { return; }
  var split = false;
  var j = 0u;
  var splitBin = 0u;
  var backward = false;
  var llo = 0u;
  var lhi = 0u;
  var lrows = 0u;
  var hl = hZero();
  if (evaluated) {
    let tot = Side(atomicLoad(&wTot[0]), atomicLoad(&wTot[1]), atomicLoad(&wTot[2]), hUnpack(vec2<u32>(atomicLoad(&wTot[3]), atomicLoad(&wTot[4]))));
    if (tot.lo != glo || tot.hi != ghi || tot.rows != tabs[node + 2u] || !hEq(tot.h, H)) { atomicOr(&atom[u.errOff + m], ${ERR_SUMS}u); }
    if (lossBits > KRT_EPS_BITS && lossBits >= bitcast<u32>(mi.gamma)) {
      j = posKey >> 10u;
      backward = (posKey & 0x200u) != 0u;
      let b = select(posKey & 0x1FFu, 0x1FFu - (posKey & 0x1FFu), backward);
      // the winner's scanned side (forward: the left child, bins ≤ b; backward: the right one, bins ≥ b, missing values go left)
      let ws = wSide[winner];
      let s = Side(ws.x, ws.y, ws.z, hUnpack(vec2<u32>(ws.w, wSideH[winner])));
      if (backward) {
        llo = glo - s.lo;
        lhi = ghi - s.hi - select(0u, 1u, glo < s.lo);
        lrows = tabs[node + 2u] - s.rows;
        hl = hSub(H, s.h);
        splitBin = b;
      } else {
        llo = s.lo;
        lhi = s.hi;
        lrows = s.rows;
        hl = s.h;
        splitBin = b + 1u;
      }
      split = !hIsZero(hl) && !hEq(hl, H);
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
    leaf = leafExact(tq, (ghi & 0x80000000u) != 0u, H, mi);
    tabs[c] = NONE;
    // flags: the host decides this evaluated node
    tabs[c + 7u] = select(0u, 1u, tabs[node + 5u] != NONE && (mi.flags & 1u) != 0u);
  }
  tabs[c + 1u] = binField;
  tabs[c + 2u] = llo;
  tabs[c + 3u] = lhi;
  tabs[c + 4u] = lrows;
  tabs[c + 5u] = lossBits;
  tabs[c + 6u] = leaf;${
    o.hess
      ? `
  tabs[c + 8u] = hl.x;
  tabs[c + 9u] = hl.y;`
      : ''
  }
  let id = tabs[node + 3u];
  if (id < u.T) {
    let t = u.treeOff + (m * u.T + id) * TREE_W;
    tabs[t] = feature;
    tabs[t + 1u] = select(0u, binField, split);
    tabs[t + 2u] = glo;
    tabs[t + 3u] = ghi;
    tabs[t + 4u] = tabs[node + 2u];
    tabs[t + 5u] = leaf;${
      o.hess
        ? `
    tabs[t + 6u] = H.x;
    tabs[t + 7u] = H.y;`
        : ''
    }
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
const plan = (o: KernelOptions) => /* wgsl */ `${common(o)}
@group(0) @binding(1) var<storage, read> models: array<ModelInfo>;
@group(0) @binding(2) var<storage, read_write> tabs: array<u32>;
@group(0) @binding(3) var<storage, read_write> atom: array<atomic<u32>>;
${tables(o)}
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
    tabs[R + 3u] = tn + 1u;${
      o.hess
        ? `
    let hlo = tabs[c + 8u];
    let hhi = tabs[c + 9u];
    tabs[L + 8u] = hlo;
    tabs[L + 9u] = hhi;
    tabs[R + 8u] = tabs[node + 8u] - hlo;
    tabs[R + 9u] = tabs[node + 9u] - hhi - select(0u, 1u, tabs[node + 8u] < hlo);`
        : ''
    }
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
    let eL = nodeEvaluable(L, depth, mi);
    let eR = nodeEvaluable(R, depth, mi);
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
const rowUpdate = (o: KernelOptions) => /* wgsl */ `${common(o)}
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
  // a test row's missing value where no training row has one (its bin nBins) goes right: the default
  // direction of every such split (the CPU engine scans missing-left splits only where a node has missing values)
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
      if (!o.hess) return gradient(o)
      return o.gradient === 'multiclass' ? gradientOfClasses(o) : gradientWithHessians(o)
    case 'quantise':
      return o.hess ? quantiseWithHessians(o) : quantise(o)
    case 'startTree':
      return startTree(o)
    case 'zeroSlots':
      return zeroSlots(o)
    case 'histGlobal':
      return histGlobal(o)
    case 'histShared32':
      if (o.hess) throw new Error('webgpu: 32-bit workgroup histograms have no room for hessians (planning error)')
      return histShared(o, true)
    case 'histShared64':
      return histShared(o, false)
    case 'derive':
      return derive(o)
    case 'search':
      return search(o)
    case 'plan':
      return plan(o)
    case 'rowUpdate':
      return rowUpdate(o)
  }
}

/** Pipeline cache key: kernels that read bins or size workgroup memory differ by those options. */
export function kernelKey(name: KernelName, o: KernelOptions): string {
  // every kernel's layouts differ with hessians; the gradient kernel's source with its objective
  const h = o.hess ? (name === 'gradient' ? `:${o.gradient}` : ':h') : ''
  if (name === 'histShared32' || name === 'histShared64') return `gbdt:${name}:${o.bin16 ? 16 : 8}:${o.sharedWords}${h}`
  if (name === 'histGlobal' || name === 'rowUpdate') return `gbdt:${name}:${o.bin16 ? 16 : 8}${h}`
  return `gbdt:${name}${h}`
}
