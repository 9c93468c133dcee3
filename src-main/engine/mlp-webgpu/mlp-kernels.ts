// The WGSL of the fused MLP step (wgsl-mlp.ts runs them): one tiled GEMM template behind every
// product, an output-layer kernel per model (the objective's loss: squared error, binary or softmax
// cross-entropy from the logits), and Adam over the flat parameter buffer. Shapes are runtime
// values, never constants, so N = 1 and N = 50 run the same compiled code and a model's sums come
// out in the same order whatever it is fused with; a step's record comes by a dynamic offset.
import { CLASS_LIMITS } from '@shared/contract'

/** How a kernel sees one buffer: binding i of group 0, in list order. */
export interface Binding {
  name: string
  kind: 'step' | 'uniform' | 'read' | 'rw'
  type: string
}

export interface KernelSource {
  key: string
  bindings: readonly Binding[]
  code: string
  /** threads per workgroup (for the dispatch's arithmetic) */
  threads: number
}

/** Step record: the dynamic-offset uniform every kernel reads (wgsl-mlp.ts writes one per step). */
export const STEP_RECORD_BYTES = 16

/** Call uniform: u32 fields, then the segments table, then the f32 Adam constants (byte offsets in wgsl-mlp.ts). */
export const MAX_SEGMENTS = 12

/** The most output units the output kernel holds a row's logits for: multiclass's most classes. */
export const MAX_OUTPUTS = CLASS_LIMITS.max

/** What the output kernel does (the call's `mode`): a training step, a regressor's Σ err², a classifier's logits (the host scores them). */
export const OUTPUT_MODE = { train: 0, sse: 1, logits: 2 } as const

const STRUCTS = /* wgsl */ `
struct Step { start: u32, rows: u32, step: u32, twoOverRows: f32 }
struct Call {
  n: u32, f1: u32, hin: u32, hout: u32,
  offW: u32, offB: u32, offWo: u32, offBo: u32,
  hl: u32, mode: u32, segments: u32, total: u32,
  seg: array<vec4<u32>, ${MAX_SEGMENTS}>,
  beta1: f32, oneMinusBeta1: f32, beta2: f32, oneMinusBeta2: f32,
  eps: f32, objective: u32, outputs: u32, _p2: f32,
}
`

/** Call uniform size in bytes (12 u32 + the segments table + 8 words: 5 f32, objective, outputs, padding). */
export const CALL_BYTES = 48 + 16 * MAX_SEGMENTS + 32

function declarations(bindings: readonly Binding[]): string {
  return bindings
    .map((b, i) => {
      const space = b.kind === 'step' || b.kind === 'uniform' ? 'uniform' : b.kind === 'read' ? 'storage, read' : 'storage, read_write'
      return `@group(0) @binding(${i}) var<${space}> ${b.name}: ${b.type};`
    })
    .join('\n')
}

function kernel(key: string, bindings: readonly Binding[], body: string, threads: number): KernelSource {
  return { key, bindings, threads, code: `${STRUCTS}\n${declarations(bindings)}\n${body}` }
}

const STEP: Binding = { name: 'step', kind: 'step', type: 'Step' }
const CALL: Binding = { name: 'call', kind: 'uniform', type: 'Call' }
const f32s = (name: string, kind: 'read' | 'rw'): Binding => ({ name, kind, type: 'array<f32>' })
const u32s = (name: string, kind: 'read' | 'rw'): Binding => ({ name, kind, type: 'array<u32>' })

/**
 * C[M×N] (per workgroup z: a model of a batched product) = A[M×K]·B[K×N], 64×64 tiles over 16-deep
 * slices of K in workgroup memory, 16×16 threads with 4×4 outputs each (rows ty+16i, columns
 * tx+16j, so stores and shared reads are contiguous). Every output sums k = 0, 1, … in order.
 * `aAlongK`: A's memory runs along k (threads load a row's consecutive k); else along m. Same for B
 * along n / along k. loadA/loadB/store are WGSL using m, n, k and z.
 */
interface Gemm {
  key: string
  bindings: readonly Binding[]
  M: string
  N: string
  K: string
  loadA: string
  loadB: string
  aAlongK: boolean
  bAlongN: boolean
  /** statements storing `v` at (m, n) */
  store: string
  /** WGSL functions the loads and store call */
  helpers?: string
}

function gemm(g: Gemm): KernelSource {
  const aIndex = g.aAlongK ? 'let mm = idx / 16u; let kk = idx % 16u;' : 'let kk = idx / 64u; let mm = idx % 64u;'
  const bIndex = g.bAlongN ? 'let kk = idx / 64u; let nn = idx % 64u;' : 'let nn = idx / 16u; let kk = idx % 16u;'
  return kernel(
    g.key,
    g.bindings,
    /* wgsl */ `
var<workgroup> As: array<f32, 1024>;
var<workgroup> Bs: array<f32, 1024>;
${g.helpers ?? ''}
fn loadA(m: u32, k: u32, z: u32) -> f32 { return ${g.loadA}; }
fn loadB(k: u32, n: u32, z: u32) -> f32 { return ${g.loadB}; }
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let M = ${g.M}; let N = ${g.N}; let K = ${g.K};
  let z = wg.z;
  let m0 = wg.y * 64u; let n0 = wg.x * 64u;
  var acc: array<f32, 16>;
  for (var k0 = 0u; k0 < K; k0 = k0 + 16u) {
    for (var t = 0u; t < 4u; t = t + 1u) {
      let idx = li + t * 256u;
      { ${aIndex} var a = 0.0; if (m0 + mm < M && k0 + kk < K) { a = loadA(m0 + mm, k0 + kk, z); } As[kk * 64u + mm] = a; }
      { ${bIndex} var b = 0.0; if (n0 + nn < N && k0 + kk < K) { b = loadB(k0 + kk, n0 + nn, z); } Bs[kk * 64u + nn] = b; }
    }
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk = kk + 1u) {
      var a: array<f32, 4>; var b: array<f32, 4>;
      for (var i = 0u; i < 4u; i = i + 1u) { a[i] = As[kk * 64u + lid.y + 16u * i]; b[i] = Bs[kk * 64u + lid.x + 16u * i]; }
      for (var i = 0u; i < 4u; i = i + 1u) { for (var j = 0u; j < 4u; j = j + 1u) { acc[i * 4u + j] = acc[i * 4u + j] + a[i] * b[j]; } }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i = i + 1u) {
    for (var j = 0u; j < 4u; j = j + 1u) {
      let m = m0 + lid.y + 16u * i; let n = n0 + lid.x + 16u * j;
      if (m < M && n < N) { let v = acc[i * 4u + j]; ${g.store} }
    }
  }
}
`,
    256,
  )
}

// ---- the kernels of one step. Layouts (row r of the batch, model i, unit h):
// x [rows of the set, F+1] (ones last), order: the epoch's row indices, z_k [r, n·H_k] (pre-activations),
// dz_k [r, n·H_k], dpred [r, n, K] (K output units), params/grads/adamM/adamV: the flat fused layout
// (mlp/fused-layout.ts: Wo [n, HL, K], bo [n, K]). call.objective: 0 regression, 1 binary, 2 multiclass.

/** Z1 = X[order[start + r]]·W1 (bias row included) for all models side by side: [rows, n·H1]. */
export const firstLayer = gemm({
  key: 'mlp.firstLayer',
  bindings: [STEP, CALL, f32s('x', 'read'), u32s('order', 'read'), f32s('params', 'read'), f32s('zOut', 'rw')],
  M: 'step.rows',
  N: 'call.n * call.hout',
  K: 'call.f1',
  loadA: 'x[order[step.start + m] * call.f1 + k]',
  loadB: 'params[k * call.n * call.hout + n]',
  aAlongK: true,
  bAlongN: true,
  store: 'zOut[m * N + n] = v;',
})

/** Layer k ≥ 2 of model z: Z = relu(Zprev)·Wk + bk, [rows, Hout] within [rows, n·Hout]. */
export const hiddenLayer = gemm({
  key: 'mlp.hiddenLayer',
  bindings: [STEP, CALL, f32s('params', 'read'), f32s('zPrev', 'read'), f32s('zOut', 'rw')],
  M: 'step.rows',
  N: 'call.hout',
  K: 'call.hin',
  loadA: 'max(zPrev[m * call.n * call.hin + z * call.hin + k], 0.0)',
  loadB: 'params[call.offW + z * call.hin * call.hout + k * call.hout + n]',
  aAlongK: true,
  bAlongN: true,
  store: 'zOut[m * call.n * call.hout + z * call.hout + n] = v + params[call.offB + z * call.hout + n];',
})

/** dL/dZ of the last hidden layer, from dpred (no buffer of its own): (Σ_k dpred_k·wo[h, k])·step(Z_L). */
const LAST_DZ = /* wgsl */ `
fn lastDz(r: u32, i: u32, h: u32) -> f32 {
  let zv = zLast[r * call.n * call.hl + i * call.hl + h];
  let K = call.outputs;
  if (K == 1u) { return select(0.0, dpred[r * call.n + i] * params[call.offWo + i * call.hl + h], zv > 0.0); }
  var s = 0.0;
  for (var k = 0u; k < K; k = k + 1u) { s = s + dpred[(r * call.n + i) * K + k] * params[call.offWo + (i * call.hl + h) * K + k]; }
  return select(0.0, s, zv > 0.0);
}`

/**
 * The output layer, one workgroup per model: outputs, this batch's loss added to acc[i], dpred
 * (dL/d outputs), and the gradients of wo and bo. The loss: squared error (dpred 2·err/rows), binary
 * cross-entropy from the logit z, max(z, 0) − z·y + log(1 + e^−|z|) (dpred (sigmoid(z) − y)/rows),
 * or softmax cross-entropy, log-sum-exp − the true logit (dpred (softmax − onehot)/rows). A model
 * with held-out rows (folds[i] = [begin, end), a set's fold) weighs its other rows 1/(their count in
 * the batch) and those 0 (dataset.ts heldOutRowWeights). mode 1 evaluates a regressor: acc[i] += Σ
 * err² only; mode 2 writes a classifier's logits to acc, [rows of the chunk, n, K].
 */
export const outputLayer = kernel(
  'mlp.outputLayer',
  [
    STEP,
    CALL,
    f32s('zLast', 'read'),
    f32s('params', 'read'),
    f32s('y', 'read'),
    u32s('order', 'read'),
    f32s('dpred', 'rw'),
    f32s('grads', 'rw'),
    f32s('acc', 'rw'),
    u32s('folds', 'read'),
  ],
  /* wgsl */ `
var<workgroup> partA: array<f32, 256>;
var<workgroup> partB: array<f32, 256>;
fn trains(src: u32, i: u32) -> bool { return src < folds[2u * i] || src >= folds[2u * i + 1u]; }
fn reduce(t: u32) {
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (t < s) { partA[t] = partA[t] + partA[t + s]; partB[t] = partB[t] + partB[t + s]; }
    workgroupBarrier();
  }
}
fn sigmoid(z: f32) -> f32 {
  if (z >= 0.0) { return 1.0 / (1.0 + exp(-z)); }
  let e = exp(z);
  return e / (1.0 + e);
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let i = wg.x;
  let rows = step.rows;
  let H = call.hl;
  let nH = call.n * H;
  let K = call.outputs;
  let folded = folds[2u * i] < folds[2u * i + 1u];
  var weight = 0.0;
  if (call.mode == 0u && folded) {
    var count = 0.0;
    for (var r = t; r < rows; r = r + 256u) { if (trains(order[step.start + r], i)) { count = count + 1.0; } }
    partA[t] = count; partB[t] = 0.0;
    workgroupBarrier();
    reduce(t);
    if (partA[0] > 0.0) { weight = 1.0 / partA[0]; }
    workgroupBarrier();
  }
  var loss = 0.0;
  var dbo = 0.0;
  for (var r = t; r < rows; r = r + 256u) {
    let src = order[step.start + r];
    if (K == 1u) {
      var pred = 0.0;
      for (var h = 0u; h < H; h = h + 1u) { pred = pred + max(zLast[r * nH + i * H + h], 0.0) * params[call.offWo + i * H + h]; }
      pred = pred + params[call.offBo + i];
      if (call.objective == 0u) {
        let err = pred - y[src];
        if (call.mode == 1u) { loss = loss + err * err; continue; }
        var dp = err * step.twoOverRows;
        if (folded) {
          var w = 0.0;
          if (trains(src, i)) { w = weight; loss = loss + err * err; }
          dp = (err * w) * 2.0;
        } else {
          loss = loss + err * err;
        }
        dpred[r * call.n + i] = dp;
        dbo = dbo + dp;
        continue;
      }
      // binary: pred is the logit
      if (call.mode == 2u) { acc[r * call.n + i] = pred; continue; }
      let p = sigmoid(pred);
      let label = y[src];
      let l = max(pred, 0.0) - pred * label + log(1.0 + exp(-abs(pred)));
      var dp = (p - label) * (step.twoOverRows * 0.5);
      if (folded) {
        var w = 0.0;
        if (trains(src, i)) { w = weight; loss = loss + l; }
        dp = (p - label) * w;
      } else {
        loss = loss + l;
      }
      dpred[r * call.n + i] = dp;
      dbo = dbo + dp;
      continue;
    }
    // multiclass: K logits, their log-sum-exp from the largest
    var logits: array<f32, ${MAX_OUTPUTS}>;
    var top = -3.0e38;
    for (var k = 0u; k < K; k = k + 1u) {
      var s = 0.0;
      for (var h = 0u; h < H; h = h + 1u) { s = s + max(zLast[r * nH + i * H + h], 0.0) * params[call.offWo + (i * H + h) * K + k]; }
      s = s + params[call.offBo + i * K + k];
      logits[k] = s;
      top = max(top, s);
    }
    if (call.mode == 2u) {
      for (var k = 0u; k < K; k = k + 1u) { acc[(r * call.n + i) * K + k] = logits[k]; }
      continue;
    }
    var sum = 0.0;
    for (var k = 0u; k < K; k = k + 1u) { sum = sum + exp(logits[k] - top); }
    let label = u32(y[src]);
    let l = top + log(sum) - logits[label];
    var scale = step.twoOverRows * 0.5;
    if (folded) {
      scale = 0.0;
      if (trains(src, i)) { scale = weight; loss = loss + l; }
    } else {
      loss = loss + l;
    }
    for (var k = 0u; k < K; k = k + 1u) {
      dpred[(r * call.n + i) * K + k] = (exp(logits[k] - top) / sum - select(0.0, 1.0, k == label)) * scale;
    }
  }
  if (call.mode == 2u) { return; }
  partA[t] = loss; partB[t] = dbo;
  workgroupBarrier();
  reduce(t);
  if (t == 0u) {
    acc[i] = acc[i] + partA[0];
    if (call.mode == 0u && K == 1u) { grads[call.offBo + i] = partB[0]; }
  }
  if (call.mode == 1u) { return; }
  storageBarrier();
  workgroupBarrier();
  if (K > 1u) {
    // dwo[h, k] = Σ_r dpred_k·relu(z_h), dbo[k] = Σ_r dpred_k (h = H: a row of ones), rows in order
    for (var hk = t; hk < (H + 1u) * K; hk = hk + 256u) {
      let h = hk / K;
      let k = hk % K;
      var s = 0.0;
      for (var r = 0u; r < rows; r = r + 1u) {
        var a = 1.0;
        if (h < H) { a = max(zLast[r * nH + i * H + h], 0.0); }
        s = s + dpred[(r * call.n + i) * K + k] * a;
      }
      if (h < H) { grads[call.offWo + (i * H + h) * K + k] = s; } else { grads[call.offBo + i * K + k] = s; }
    }
  } else if (H <= 256u) {
    // dwo[h] = Σ_r dpred·relu(z): each h summed by ⌊256/H⌋ threads over interleaved rows, then their partial sums in order
    let slices = 256u / H;
    let h = t % H;
    let slice = t / H;
    var s = 0.0;
    if (slice < slices) {
      for (var r = slice; r < rows; r = r + slices) { s = s + dpred[r * call.n + i] * max(zLast[r * nH + i * H + h], 0.0); }
    }
    partA[t] = s;
    workgroupBarrier();
    if (t < H) {
      var total = 0.0;
      for (var k = 0u; k < slices; k = k + 1u) { total = total + partA[k * H + t]; }
      grads[call.offWo + i * H + t] = total;
    }
  } else {
    for (var h = t; h < H; h = h + 256u) {
      var s = 0.0;
      for (var r = 0u; r < rows; r = r + 1u) { s = s + dpred[r * call.n + i] * max(zLast[r * nH + i * H + h], 0.0); }
      grads[call.offWo + i * H + h] = s;
    }
  }
}
`,
  256,
)

/** Layer k ≥ 2's gradients for model z, bias as a last row of ones: [Hin+1, Hout] = [relu(Zprev) | 1]ᵀ·dZ. */
function hiddenGradientKernel(last: boolean): KernelSource {
  const dz = last ? 'lastDz(k, z, n)' : 'dz[k * call.n * call.hout + z * call.hout + n]'
  return gemm({
    key: `mlp.hiddenGradient${last ? '.last' : ''}`,
    bindings: last
      ? [STEP, CALL, f32s('params', 'read'), f32s('zPrev', 'read'), f32s('zLast', 'read'), f32s('dpred', 'read'), f32s('grads', 'rw')]
      : [STEP, CALL, f32s('params', 'read'), f32s('zPrev', 'read'), f32s('dz', 'read'), f32s('grads', 'rw')],
    M: 'call.hin + 1u',
    N: 'call.hout',
    K: 'step.rows',
    loadA: 'select(1.0, max(zPrev[k * call.n * call.hin + z * call.hin + min(m, call.hin - 1u)], 0.0), m < call.hin)',
    loadB: dz,
    aAlongK: false,
    bAlongN: true,
    store: 'if (m < call.hin) { grads[call.offW + z * call.hin * call.hout + m * call.hout + n] = v; } else { grads[call.offB + z * call.hout + n] = v; }',
    helpers: last ? LAST_DZ : '',
  })
}
export const hiddenGradient = hiddenGradientKernel(false)
export const lastHiddenGradient = hiddenGradientKernel(true)

/** dZ of layer k−1 for model z: (dZk·Wkᵀ) ⊙ step(Zprev). */
function backpropKernel(last: boolean): KernelSource {
  const dz = last ? 'lastDz(m, z, k)' : 'dz[m * call.n * call.hout + z * call.hout + k]'
  return gemm({
    key: `mlp.backprop${last ? '.last' : ''}`,
    bindings: last
      ? [STEP, CALL, f32s('params', 'read'), f32s('zPrev', 'read'), f32s('zLast', 'read'), f32s('dpred', 'read'), f32s('dzOut', 'rw')]
      : [STEP, CALL, f32s('params', 'read'), f32s('zPrev', 'read'), f32s('dz', 'read'), f32s('dzOut', 'rw')],
    M: 'step.rows',
    N: 'call.hin',
    K: 'call.hout',
    loadA: dz,
    loadB: 'params[call.offW + z * call.hin * call.hout + n * call.hout + k]',
    aAlongK: true,
    bAlongN: false,
    store: 'let at = m * call.n * call.hin + z * call.hin + n; dzOut[at] = select(0.0, v, zPrev[at] > 0.0);',
    helpers: last ? LAST_DZ : '',
  })
}
export const backpropHidden = backpropKernel(false)
export const backpropLast = backpropKernel(true)

/** dW1 = X[order]ᵀ·dZ1 for all models side by side ([F+1, n·H1]; the ones column gives the bias row). */
function firstLayerGradientKernel(single: boolean): KernelSource {
  // one hidden layer: dZ1 comes straight from dpred (no buffer), as lastDz with zLast = Z1
  const dz = single ? 'lastDz(k, n / call.hl, n % call.hl)' : 'dz[k * call.n * call.hout + n]'
  return gemm({
    key: `mlp.firstLayerGradient${single ? '.single' : ''}`,
    bindings: single
      ? [STEP, CALL, f32s('x', 'read'), u32s('order', 'read'), f32s('params', 'read'), f32s('zLast', 'read'), f32s('dpred', 'read'), f32s('grads', 'rw')]
      : [STEP, CALL, f32s('x', 'read'), u32s('order', 'read'), f32s('dz', 'read'), f32s('grads', 'rw')],
    M: 'call.f1',
    N: 'call.n * call.hout',
    K: 'step.rows',
    loadA: 'x[order[step.start + k] * call.f1 + m]',
    loadB: dz,
    aAlongK: false,
    bAlongN: true,
    store: 'grads[m * N + n] = v;',
    helpers: single ? LAST_DZ : '',
  })
}
export const firstLayerGradient = firstLayerGradientKernel(false)
export const singleLayerGradient = firstLayerGradientKernel(true)

/**
 * Adam over the flat buffers, FusedMlp's arithmetic in its order: m = β1·m + (1−β1)·g,
 * v = β2·v + (1−β2)·g², p −= m·(lr/c1) / (√(v/c2) + ε), lr/c1 per model and c2 from this step's row
 * of the scalar table. An element's model: ((e − segment start) / segment divisor) mod n.
 */
export const adam = kernel(
  'mlp.adam',
  [STEP, CALL, f32s('params', 'rw'), f32s('grads', 'read'), f32s('adamM', 'rw'), f32s('adamV', 'rw'), f32s('scalars', 'read')],
  /* wgsl */ `
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = gid.x + gid.y * nwg.x * 256u;
  if (e >= call.total) { return; }
  var s = 0u;
  for (var j = 1u; j < call.segments; j = j + 1u) { if (e >= call.seg[j].x) { s = j; } }
  let model = ((e - call.seg[s].x) / call.seg[s].y) % call.n;
  let row = step.step * (call.n + 1u);
  let lrC1 = scalars[row + model];
  let c2 = scalars[row + call.n];
  let g = grads[e];
  let m = adamM[e] * call.beta1 + g * call.oneMinusBeta1;
  let v = adamV[e] * call.beta2 + (g * g) * call.oneMinusBeta2;
  adamM[e] = m;
  adamV[e] = v;
  params[e] = params[e] - (m * lrC1) / (sqrt(v / c2) + call.eps);
}
`,
  256,
)
