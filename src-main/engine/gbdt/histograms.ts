// Node histograms of the CPU trainer: the hot loops that add a node's rows into them, the
// sibling-by-subtraction helpers, a split node's partition, and the pool that bounds live buffers. Per bin of each sampled
// feature the pair (Σ quantised gradient, Σ quantised hessian): squared error's hessian is 1 a row
// (build*: the row count), a classifier's is its own quantised hessian (build*H). Every sum is an
// integer, so row order never changes a bit. Apart from grow.ts because these loops are the
// measured ones: no allocation.

// hist[o + 2·bin] += q and hist[o + 2·bin + 1] += 1 for the rows of one node. A plain one-feature
// loop runs at ~4 ns per row here (each iteration waits on the previous one's read-modify-write);
// two rows per iteration, or several features per row, overlap them: ~2.4 and ~1.5 ns.
export type Bins = Uint8Array | Uint16Array

export function build1(bins: Bins, c: number, rows: Int32Array, q: Int32Array, begin: number, end: number, hist: Float64Array, o: number): void {
  let k = begin
  for (; k + 1 < end; k += 2) {
    const i0 = o + 2 * bins[c + rows[k]]
    const i1 = o + 2 * bins[c + rows[k + 1]]
    const g0 = q[k]
    const g1 = q[k + 1]
    hist[i0] += g0
    hist[i0 + 1] += 1
    hist[i1] += g1
    hist[i1 + 1] += 1
  }
  if (k < end) {
    const i = o + 2 * bins[c + rows[k]]
    hist[i] += q[k]
    hist[i + 1] += 1
  }
}

export function build2(
  bins: Bins,
  c0: number,
  c1: number,
  rows: Int32Array,
  q: Int32Array,
  begin: number,
  end: number,
  hist: Float64Array,
  o0: number,
  o1: number,
): void {
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const g = q[k]
    const i0 = o0 + 2 * bins[c0 + r]
    const i1 = o1 + 2 * bins[c1 + r]
    hist[i0] += g
    hist[i0 + 1] += 1
    hist[i1] += g
    hist[i1 + 1] += 1
  }
}

export function build4(
  bins: Bins,
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  rows: Int32Array,
  q: Int32Array,
  begin: number,
  end: number,
  hist: Float64Array,
  o0: number,
  o1: number,
  o2: number,
  o3: number,
): void {
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const g = q[k]
    const i0 = o0 + 2 * bins[c0 + r]
    const i1 = o1 + 2 * bins[c1 + r]
    const i2 = o2 + 2 * bins[c2 + r]
    const i3 = o3 + 2 * bins[c3 + r]
    hist[i0] += g
    hist[i0 + 1] += 1
    hist[i1] += g
    hist[i1 + 1] += 1
    hist[i2] += g
    hist[i2 + 1] += 1
    hist[i3] += g
    hist[i3 + 1] += 1
  }
}

// The same loops with each row's own quantised hessian qh (a classifier's) in place of 1.
export function build1H(
  bins: Bins,
  c: number,
  rows: Int32Array,
  q: Int32Array,
  qh: Int32Array,
  begin: number,
  end: number,
  hist: Float64Array,
  o: number,
): void {
  let k = begin
  for (; k + 1 < end; k += 2) {
    const i0 = o + 2 * bins[c + rows[k]]
    const i1 = o + 2 * bins[c + rows[k + 1]]
    hist[i0] += q[k]
    hist[i0 + 1] += qh[k]
    hist[i1] += q[k + 1]
    hist[i1 + 1] += qh[k + 1]
  }
  if (k < end) {
    const i = o + 2 * bins[c + rows[k]]
    hist[i] += q[k]
    hist[i + 1] += qh[k]
  }
}

export function build2H(
  bins: Bins,
  c0: number,
  c1: number,
  rows: Int32Array,
  q: Int32Array,
  qh: Int32Array,
  begin: number,
  end: number,
  hist: Float64Array,
  o0: number,
  o1: number,
): void {
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const g = q[k]
    const h = qh[k]
    const i0 = o0 + 2 * bins[c0 + r]
    const i1 = o1 + 2 * bins[c1 + r]
    hist[i0] += g
    hist[i0 + 1] += h
    hist[i1] += g
    hist[i1 + 1] += h
  }
}

export function build4H(
  bins: Bins,
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  rows: Int32Array,
  q: Int32Array,
  qh: Int32Array,
  begin: number,
  end: number,
  hist: Float64Array,
  o0: number,
  o1: number,
  o2: number,
  o3: number,
): void {
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const g = q[k]
    const h = qh[k]
    const i0 = o0 + 2 * bins[c0 + r]
    const i1 = o1 + 2 * bins[c1 + r]
    const i2 = o2 + 2 * bins[c2 + r]
    const i3 = o3 + 2 * bins[c3 + r]
    hist[i0] += g
    hist[i0 + 1] += h
    hist[i1] += g
    hist[i1 + 1] += h
    hist[i2] += g
    hist[i2 + 1] += h
    hist[i3] += g
    hist[i3 + 1] += h
  }
}

export function zero(hist: Float64Array, o: number, len: number): void {
  for (let i = o; i < o + len; i++) hist[i] = 0
}

/** out[i] = parent[po + i] − sub[so + i] for i in [0, len) */
export function difference(out: Float64Array, parent: Float64Array, po: number, sub: Float64Array, so: number, len: number): void {
  for (let i = 0; i < len; i++) out[i] = parent[po + i] - sub[so + i]
}

/** target[i] −= sub[i] for i in [o, o+len) */
export function subtractRange(target: Float64Array, sub: Float64Array, o: number, len: number): void {
  for (let i = o; i < o + len; i++) target[i] -= sub[i]
}

/**
 * Stable partition of a node's rows [begin, end) (and their q, and a classifier's qh) by a split:
 * a row goes left iff its bin in the column at `c` is ≤ splitBin, or, when it is `missing` (−1: the
 * feature has no missing bin), iff defaultLeft. Left ones stay in place, in order, right ones go
 * through the scratch arrays and are copied after them; returns the first right position.
 * Branch-free (the side of a row is unpredictable): every row is written to both places and only
 * the index of its side advances.
 */
export function partition(
  bins: Bins,
  c: number,
  rows: Int32Array,
  q: Int32Array,
  qh: Int32Array | null,
  begin: number,
  end: number,
  splitBin: number,
  missing: number,
  defaultLeft: boolean,
  scratchRows: Int32Array,
  scratchQ: Int32Array,
  scratchQH: Int32Array,
): number {
  if (qh) return partitionWithHessians(bins, c, rows, q, qh, begin, end, splitBin, missing, defaultLeft, scratchRows, scratchQ, scratchQH)
  // missing = −1 (no missing bin) never equals a bin, so one loop serves both
  const dl = defaultLeft ? 1 : 0
  let wl = begin
  let nr = 0
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const qk = q[k]
    const bin = bins[c + r]
    const left = bin === missing ? dl : ((splitBin - bin) >> 31) + 1 // 1 iff bin ≤ splitBin
    rows[wl] = r
    q[wl] = qk
    scratchRows[nr] = r
    scratchQ[nr] = qk
    wl += left
    nr += 1 - left
  }
  rows.set(scratchRows.subarray(0, nr), wl)
  q.set(scratchQ.subarray(0, nr), wl)
  return wl
}

/** partition for a classifier's tree: the same, its rows' quantised hessians moving with them */
function partitionWithHessians(
  bins: Bins,
  c: number,
  rows: Int32Array,
  q: Int32Array,
  qh: Int32Array,
  begin: number,
  end: number,
  splitBin: number,
  missing: number,
  defaultLeft: boolean,
  scratchRows: Int32Array,
  scratchQ: Int32Array,
  scratchQH: Int32Array,
): number {
  const dl = defaultLeft ? 1 : 0
  let wl = begin
  let nr = 0
  for (let k = begin; k < end; k++) {
    const r = rows[k]
    const qk = q[k]
    const hk = qh[k]
    const bin = bins[c + r]
    const left = bin === missing ? dl : ((splitBin - bin) >> 31) + 1
    rows[wl] = r
    q[wl] = qk
    qh[wl] = hk
    scratchRows[nr] = r
    scratchQ[nr] = qk
    scratchQH[nr] = hk
    wl += left
    nr += 1 - left
  }
  rows.set(scratchRows.subarray(0, nr), wl)
  q.set(scratchQ.subarray(0, nr), wl)
  qh.set(scratchQH.subarray(0, nr), wl)
  return wl
}

/**
 * A fixed-size set of histogram buffers, at most `capacity` alive at once: the histogram budget
 * is enforced here, and `peak` is what GbdtTrainStats reports (what gbdtMemory has to bound).
 */
export class HistPool {
  private free: Float64Array[] = []
  alive = 0
  peak = 0
  constructor(
    readonly length: number,
    readonly capacity: number,
    /** where a new buffer comes from (the histogram kernel's memory) */
    private readonly alloc: (length: number) => Float64Array = (length) => new Float64Array(length),
  ) {}

  get available(): number {
    return this.capacity - this.alive
  }

  acquire(): Float64Array {
    if (this.alive >= this.capacity) throw new Error('histogram pool exhausted')
    this.alive++
    if (this.alive > this.peak) this.peak = this.alive
    return this.free.pop() ?? this.alloc(this.length)
  }

  release(b: Float64Array | null): void {
    if (!b) return
    this.alive--
    this.free.push(b)
  }
}

// ---- a tree's rows (kernel.ts RowLoops): its gradients, their quantisation, and a leaf's value
// added to its rows' margins; the wasm kernel's loops give the same values bit for bit.

/**
 * Squared error's gradients of the sampled rows: for each row r in order with sampled[r] = 1, g[ns] =
 * f32(pred[r] − y[r]) and rows[ns] = r (ns counting them); returns the largest |g|. `every` (every
 * row sampled) only lets a kernel skip reading `sampled`.
 */
export function squaredErrorRows(pred: Float32Array, y: Float32Array, sampled: Uint8Array, every: boolean, g: Float32Array, rows: Int32Array): number {
  const n = pred.length
  let ns = 0
  let maxAbs = 0
  // branch-free (7.5 → 1.6 ns a row): a gradient's sign and a row's draw are coin flips, so every
  // row is written at ns and only a drawn one advances it; an undrawn row's |g| counts as 0
  for (let r = 0; r < n; r++) {
    const s = sampled[r]
    const d = Math.fround(pred[r] - y[r])
    g[ns] = d
    rows[ns] = r
    ns += s
    const a = s * Math.abs(d)
    maxAbs = a > maxAbs ? a : maxAbs
  }
  return maxAbs
}

/** q[i] = trunc(g[i] · scale) for i < count (scale a power of two: the product is exact); returns Σq */
export function quantiseRows(g: Float32Array, q: Int32Array, count: number, scale: number): number {
  let sum = 0
  for (let i = 0; i < count; i++) {
    const v = (g[i] * scale) | 0
    q[i] = v
    sum += v
  }
  return sum
}

/** pred[rows[k]] += v (float32) for k in [begin, end): a leaf's value added to its rows' margins */
export function addToRows(pred: Float32Array, rows: Int32Array, begin: number, end: number, v: number): void {
  for (let k = begin; k < end; k++) pred[rows[k]] += v
}
