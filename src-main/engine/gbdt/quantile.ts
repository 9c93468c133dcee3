// Quantile cuts, as XGBoost 1.7.4 computes them for a dense in-memory DMatrix with tree_method=hist
// and one thread (src/common/quantile.{h,cc}). The port keeps XGBoost's float32 rank arithmetic, its
// queue size, levels, prune and combine steps, so the cuts are XGBoost's own, not just close.
// A value's bin is the first cut greater than it, XGBoost's prediction rule. The algorithm step by
// step: README.md, "What is XGBoost's, exactly".

import { aligned, createScratchKernel, kernelName, type KernelName, type ScratchKernel } from './kernel'

const f32 = Math.fround
const EPS5 = f32(1e-5)
const K_FACTOR = 8

/**
 * Where one feature's summaries live: they are many (every flush of the sketch's queue makes a few,
 * of up to 2·limitSize entries) and short-lived, and a fresh Float64Array each (zeroed, a backing
 * store the GC tracks) cost about a tenth of the binning. Views of one buffer, reset per feature;
 * once a feature needed more, the next reset makes the buffer that large.
 */
class Arena {
  private buf = new Float64Array(0)
  private top = 0
  private need = 0

  take(len: number): Float64Array {
    const end = this.top + len
    if (end > this.need) this.need = end
    if (end > this.buf.length) {
      this.top = end
      return new Float64Array(len)
    }
    const view = this.buf.subarray(this.top, end)
    this.top = end
    return view
  }

  /** every summary taken so far is dead */
  reset(): void {
    if (this.need > this.buf.length) this.buf = new Float64Array(this.need)
    this.top = 0
    this.need = 0
  }

  /** drop the buffer (the end of a computeCuts call) */
  release(): void {
    this.buf = new Float64Array(0)
    this.top = 0
    this.need = 0
  }
}

const arena = new Arena()

/**
 * A weighted quantile summary: entries sorted by value, ranks in float32 (doubles holding float32
 * values), stored interleaved [rmin, rmax, wmin, value] per entry in one array.
 */
class Summary {
  size = 0
  constructor(readonly d: Float64Array) {}

  static alloc(capacity: number): Summary {
    return new Summary(arena.take(4 * Math.max(1, capacity)))
  }

  rmin(i: number): number {
    return this.d[4 * i]
  }

  rmax(i: number): number {
    return this.d[4 * i + 1]
  }

  wmin(i: number): number {
    return this.d[4 * i + 2]
  }

  value(i: number): number {
    return this.d[4 * i + 3]
  }

  push(rmin: number, rmax: number, wmin: number, value: number): void {
    const o = 4 * this.size++
    this.d[o] = rmin
    this.d[o + 1] = rmax
    this.d[o + 2] = wmin
    this.d[o + 3] = value
  }

  pushFrom(src: Summary, i: number): void {
    const o = 4 * this.size++
    this.d[o] = src.d[4 * i]
    this.d[o + 1] = src.d[4 * i + 1]
    this.d[o + 2] = src.d[4 * i + 2]
    this.d[o + 3] = src.d[4 * i + 3]
  }

  rminNext(i: number): number {
    return f32(this.d[4 * i] + this.d[4 * i + 2])
  }

  rmaxPrev(i: number): number {
    return f32(this.d[4 * i + 1] - this.d[4 * i + 2])
  }
}

/** WQSummary::SetPrune (over the raw arrays, like setCombine) */
function setPrune(src: Summary, maxsize: number): Summary {
  if (src.size <= maxsize) return src // summaries are never modified once built
  const out = Summary.alloc(maxsize)
  const S = src.d
  const size = src.size
  const begin = S[1]
  const range = f32(S[4 * (size - 1)] - S[1])
  const n = maxsize - 1
  out.pushFrom(src, 0)
  let i = 1
  let lastidx = 0
  for (let k = 1; k < n; ++k) {
    const dx2 = f32(2 * f32(f32(f32(k * range) / n) + begin))
    while (i < size - 1 && dx2 >= f32(S[4 * (i + 1) + 1] + S[4 * (i + 1)])) ++i
    if (i === size - 1) break
    // rminNext(i) + rmaxPrev(i + 1)
    if (dx2 < f32(f32(S[4 * i] + S[4 * i + 2]) + f32(S[4 * (i + 1) + 1] - S[4 * (i + 1) + 2]))) {
      if (i !== lastidx) {
        out.pushFrom(src, i)
        lastidx = i
      }
    } else if (i + 1 !== lastidx) {
      out.pushFrom(src, i + 1)
      lastidx = i + 1
    }
  }
  if (lastidx !== size - 1) out.pushFrom(src, size - 1)
  return out
}

/**
 * WQSummary::SetCombine (with FixError). Written over the raw [rmin, rmax, wmin, value] arrays
 * (no accessor per field: this merge is most of the sketch's time).
 */
function setCombine(sa: Summary, sb: Summary): Summary {
  if (sa.size === 0) return sb
  if (sb.size === 0) return sa
  const na = sa.size
  const nb = sb.size
  const out = Summary.alloc(na + nb)
  const A = sa.d
  const B = sb.d
  const d = out.d
  let o = merge(A, na, B, nb, d)
  const a = mergeState[0]
  const b = mergeState[1]
  if (a < na) o = copyTail(A, a, na, d, o, mergeState[3], B[4 * (nb - 1) + 1])
  if (b < nb) o = copyTail(B, b, nb, d, o, mergeState[2], A[4 * (na - 1) + 1])
  out.size = o >> 2
  fixError(d, o)
  return out
}

/** merge's state where it stopped: a, b, aprevRmin, bprevRmin */
const mergeState = new Float64Array(4)

/** setCombine's merge, until one side ends: writes entries from d[0], returns the end offset */
function merge(A: Float64Array, na: number, B: Float64Array, nb: number, d: Float64Array): number {
  let o = 0
  let a = 0
  let b = 0
  let aprevRmin = 0
  let bprevRmin = 0
  while (a < na && b < nb) {
    const ia = 4 * a
    const ib = 4 * b
    const va = A[ia + 3]
    const vb = B[ib + 3]
    if (va < vb) {
      d[o] = f32(A[ia] + bprevRmin)
      d[o + 1] = f32(A[ia + 1] + f32(B[ib + 1] - B[ib + 2]))
      d[o + 2] = A[ia + 2]
      d[o + 3] = va
      aprevRmin = f32(A[ia] + A[ia + 2])
      a++
    } else if (vb < va) {
      d[o] = f32(B[ib] + aprevRmin)
      d[o + 1] = f32(B[ib + 1] + f32(A[ia + 1] - A[ia + 2]))
      d[o + 2] = B[ib + 2]
      d[o + 3] = vb
      bprevRmin = f32(B[ib] + B[ib + 2])
      b++
    } else {
      // equal values (never NaN)
      d[o] = f32(A[ia] + B[ib])
      d[o + 1] = f32(A[ia + 1] + B[ib + 1])
      d[o + 2] = f32(A[ia + 2] + B[ib + 2])
      d[o + 3] = va
      aprevRmin = f32(A[ia] + A[ia + 2])
      bprevRmin = f32(B[ib] + B[ib + 2])
      a++
      b++
    }
    o += 4
  }
  mergeState[0] = a
  mergeState[1] = b
  mergeState[2] = aprevRmin
  mergeState[3] = bprevRmin
  return o
}

// setCombine's merge, tails and FixError are functions of their own: as one function, V8 threw its
// optimised code away on nearly every call (~700 deoptimisations per 100 features, for lack of type
// feedback), which cost more than the merging itself

/** setCombine's tail: the rest of one side, past the other side's last entry */
function copyTail(S: Float64Array, from: number, to: number, d: Float64Array, o: number, prevRmin: number, otherRmax: number): number {
  for (let i = 4 * from; i < 4 * to; i += 4, o += 4) {
    d[o] = f32(S[i] + prevRmin)
    d[o + 1] = f32(S[i + 1] + otherRmax)
    d[o + 2] = S[i + 2]
    d[o + 3] = S[i + 3]
  }
  return o
}

/** WQSummary::FixError over entries [0, o/4) */
function fixError(d: Float64Array, o: number): void {
  let prevRmin = 0
  let prevRmax = 0
  for (let i = 0; i < o; i += 4) {
    if (d[i] < prevRmin) d[i] = prevRmin
    else prevRmin = d[i]
    if (d[i + 1] < prevRmax) d[i + 1] = prevRmax
    const rminNext = f32(d[i] + d[i + 2])
    if (d[i + 1] < rminNext) d[i + 1] = rminNext
    prevRmax = d[i + 1]
  }
}

let radixTmp = new Uint32Array(0)
const radixCount = new Int32Array(2048)

// The sketch's loops are small functions of their own, each called often enough to be optimised
// as a whole: a loop optimised only on the fly (on-stack replacement) inside a long function left
// the code after it without type feedback, and V8 dropped out of that optimised code on every call
// (hundreds of times per data set), running the rest unoptimised.

/**
 * Sorts non-NaN float32 values ascending, in place (LSD radix sort, 3 passes of 11 bits over the
 * bit patterns mapped to unsigned order). −0 must already be +0. Returns `a`.
 */
function sortFloat32(a: Float32Array): Float32Array {
  const n = a.length
  if (n < 64) return a.sort()
  const keys = new Uint32Array(a.buffer, a.byteOffset, n)
  toSortKeys(keys)
  if (radixTmp.length < n) radixTmp = new Uint32Array(n)
  const tmp = radixTmp.subarray(0, n)
  radixPass(keys, tmp, 0)
  radixPass(tmp, keys, 11)
  radixPass(keys, tmp, 22)
  // three passes: the result is in tmp; copy back, undoing the key mapping
  fromSortKeys(tmp, keys)
  return a
}

/** float32 bit patterns → keys in unsigned order */
function toSortKeys(keys: Uint32Array): void {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    keys[i] = k & 0x80000000 ? ~k >>> 0 : (k | 0x80000000) >>> 0
  }
}

/** out[i] = the float32 bit pattern of key[i] */
function fromSortKeys(keys: Uint32Array, out: Uint32Array): void {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    out[i] = k & 0x80000000 ? (k & 0x7fffffff) >>> 0 : ~k >>> 0
  }
}

/** one stable counting pass over 11 bits of the keys from `shift` */
function radixPass(src: Uint32Array, dst: Uint32Array, shift: number): void {
  const n = src.length
  radixCount.fill(0)
  for (let i = 0; i < n; i++) radixCount[(src[i] >>> shift) & 2047]++
  let sum = 0
  for (let b = 0; b < 2048; b++) {
    const c = radixCount[b]
    radixCount[b] = sum
    sum += c
  }
  for (let i = 0; i < n; i++) {
    const k = src[i]
    dst[radixCount[(k >>> shift) & 2047]++] = k
  }
}

/** WQuantileSketch's limit_size for maxn values (its queue holds 2·limit_size; LimitSizeLevel) */
function sketchLimit(maxn: number, maxBin: number): number {
  const nBins = Math.max(1, Math.min(maxBin, maxn))
  const eps = 1.0 / f32(nBins * K_FACTOR)
  let nlevel = 1
  for (;;) {
    const limit = Math.min(maxn, Math.ceil(nlevel / eps) + 1)
    if (2 ** nlevel * limit >= maxn) return limit
    ++nlevel
  }
}

/** WQuantileSketch<float,float> as HostSketchContainer sets it up, with weight 1 per value. */
class WQSketch {
  readonly limitSize: number
  private readonly capacity: number
  /** raw values pushed since the last flush, and the number of queue entries they make */
  private readonly raw: Float32Array
  private rawLen = 0
  private qtail = 0
  private levels: Summary[] = []

  /** `raw`: scratch of ≥ maxn floats for the queue (shared by the features of a computeCuts call) */
  constructor(maxn: number, maxBin: number, raw: Float32Array) {
    const limit = sketchLimit(maxn, maxBin)
    this.limitSize = limit
    this.capacity = limit * 2
    this.raw = raw
  }

  push(x: number): void {
    if (this.qtail === this.capacity && this.raw[this.rawLen - 1] !== x) {
      const temp = this.makeSummary()
      this.rawLen = 0
      this.qtail = 0
      this.pushTemp(temp)
    }
    if (this.qtail === 0 || this.raw[this.rawLen - 1] !== x) this.qtail++
    this.raw[this.rawLen++] = x
  }

  /** Queue::MakeSummary: sort, merge equal values, ranks as float32 running sums. */
  private makeSummary(): Summary {
    const v = sortFloat32(this.raw.subarray(0, this.rawLen)) // in place: the queue is emptied next
    const out = Summary.alloc(this.qtail)
    let wsum = 0
    for (let i = 0; i < v.length;) {
      let j = i + 1
      while (j < v.length && v[j] === v[i]) ++j
      const w = j - i
      out.push(wsum, f32(wsum + w), w, v[i])
      wsum = f32(wsum + w)
      i = j
    }
    return out
  }

  private pushTemp(temp0: Summary): void {
    let temp = temp0
    for (let l = 1; ; ++l) {
      while (this.levels.length < l + 1) this.levels.push(Summary.alloc(0))
      if (this.levels[l].size === 0) {
        this.levels[l] = setPrune(temp, this.limitSize)
        break
      }
      const level0 = setPrune(temp, this.limitSize)
      temp = setCombine(level0, this.levels[l])
      if (temp.size > this.limitSize) {
        this.levels[l] = Summary.alloc(0)
      } else {
        this.levels[l] = temp
        break
      }
    }
  }

  getSummary(): Summary {
    let out = this.makeSummary()
    if (this.levels.length !== 0) {
      let level0 = setPrune(out, this.limitSize)
      for (let l = 1; l < this.levels.length; ++l) {
        if (this.levels[l].size === 0) continue
        if (level0.size === 0) {
          level0 = this.levels[l]
        } else {
          out = setCombine(level0, this.levels[l])
          level0 = setPrune(out, this.limitSize)
        }
      }
      return level0
    }
    if (out.size > this.limitSize) out = setPrune(out, this.limitSize)
    return out
  }
}

/** Cut points of every feature, XGBoost's HistogramCuts layout. */
export interface GbdtCuts {
  features: number
  maxBin: number
  /** feature f's cuts are values[ptrs[f] .. ptrs[f+1]); its number of bins is ptrs[f+1] − ptrs[f] */
  ptrs: Int32Array
  /** float32 cut values, strictly increasing per feature; the last one is the sentinel */
  values: Float32Array
  /** per feature: v0 − |v0| − 1e-5 (float32), the threshold of a split that sends every non-missing row right */
  minValues: Float32Array
}

/**
 * XGBoost 1.7.4's hist cuts for row-major float32 data x[rows × features] (NaN = missing).
 * Deterministic: a function of the values and their row order only. `sketch` chooses who runs the
 * quantile sketch, the same cuts bit for bit: the WebAssembly kernel (kernel.ts; the default where it
 * exists, as for training) or WQSketch here (the reference; TRAINPOOL_GBDT_KERNEL=ts).
 */
export function computeCuts(x: Float32Array, rows: number, features: number, maxBin: number, sketch: KernelName = kernelName()): GbdtCuts {
  return CutsBuilder.cuts(x, rows, features, maxBin, sketch)
}

/**
 * computeCuts a block of features at a time, so that prepareGbdtData can bin a block from the same copy
 * of x as soon as its cuts are known: copyBlock(f0, f1) copies features [f0, f1) out of the row-major x
 * into `cols` (one sequential read of x per block instead of a strided one per feature and pass), then
 * addFeature(f) for each of them, in order; finish() gives the cuts, release() the scratch memory.
 */
export class CutsBuilder {
  /** computeCuts */
  static cuts(x: Float32Array, rows: number, features: number, maxBin: number, sketch: KernelName): GbdtCuts {
    const builder = new CutsBuilder(x, rows, features, maxBin, sketch)
    try {
      for (let f0 = 0; f0 < features; f0 += COLUMN_BLOCK) {
        const f1 = Math.min(features, f0 + COLUMN_BLOCK)
        builder.copyBlock(f0, f1)
        for (let f = f0; f < f1; f++) builder.addFeature(f)
      }
      return builder.finish()
    } finally {
      builder.release()
    }
  }

  /** the last block's columns: cols[(f − f0)·rows + r] */
  readonly cols: Float32Array
  /** the wasm sketch's memory (also holding cols), or null for the reference sketch */
  readonly kernel: ScratchKernel | null
  /** where `extraBytes` of the caller's start in the kernel's memory */
  readonly extraAt: number
  /** whether addFeature moved a column's non-missing values to its front (the last block's cols no longer x's) */
  compacted = false
  private readonly ptrs: Int32Array
  private readonly values: number[] = []
  private readonly minValues: Float32Array
  private readonly raw: Float32Array
  private readonly work: number
  private f0 = 0
  private someMissing = true

  constructor(
    private readonly x: Float32Array,
    private readonly rows: number,
    private readonly features: number,
    private readonly maxBin: number,
    sketch: KernelName,
    extraBytes = 0,
  ) {
    if (x.length !== rows * features) throw new RangeError(`x has ${x.length} values, expected ${rows}×${features}`)
    this.ptrs = new Int32Array(features + 1)
    this.minValues = new Float32Array(features)
    const block = Math.min(COLUMN_BLOCK, features)
    // the wasm sketch reads a block's columns, their non-missing values first, from address 0 of its memory
    this.work = aligned(4 * block * rows)
    this.extraAt = 0
    let kernel = sketch === 'wasm' && rows > 0 ? createScratchKernel() : null // no rows: every feature's cuts are the sentinel's
    if (kernel) {
      this.extraAt = this.work + aligned(kernel.exports.sketchBytes(rows, sketchLimit(rows, maxBin), maxBin))
      if (!kernel.reserve(this.extraAt + extraBytes)) kernel = null
    }
    this.kernel = kernel
    this.raw = kernel ? new Float32Array(0) : new Float32Array(Math.max(1, rows))
    this.cols = kernel ? new Float32Array(kernel.buffer, 0, rows * block) : new Float32Array(rows * block)
  }

  copyBlock(f0: number, f1: number): void {
    this.f0 = f0
    this.compacted = false
    if (this.kernel) this.someMissing = copyColumnsToSketch(this.x, this.rows, this.features, f0, f1, this.cols)
    else copyColumns(this.x, this.rows, this.features, f0, f1, this.cols)
  }

  addFeature(f: number): void {
    const { rows, maxBin, cols, values, kernel } = this
    const o = (f - this.f0) * rows
    let final: ArrayLike<number> | null = null // [rmin, rmax, wmin, value] per entry
    let finalSize = 0
    let n: number
    if (kernel) {
      n = this.someMissing ? compactNonMissing(cols, o, rows) : rows
      if (n < rows) this.compacted = true
      if (n > 0) {
        finalSize = kernel.exports.sketchFeature(4 * o, n, sketchLimit(n, maxBin), maxBin, this.work)
        final = new Float32Array(kernel.buffer, kernel.exports.sketchResult(), 4 * finalSize)
      }
    } else {
      arena.reset()
      n = 0
      for (let r = 0; r < rows; r++) if (!Number.isNaN(cols[o + r])) n++
      if (n > 0) {
        const sketch = new WQSketch(n, maxBin, this.raw)
        for (let r = 0; r < rows; r++) {
          const v = cols[o + r]
          if (!Number.isNaN(v)) sketch.push(v + 0) // -0 → +0: equal under every comparison, one canonical bit pattern
        }
        const intermediate = Math.min(n, maxBin * K_FACTOR)
        const reduced = setPrune(sketch.getSummary(), intermediate)
        const summary = setPrune(reduced, Math.min(intermediate, maxBin) + 1)
        final = summary.d
        finalSize = summary.size
      }
    }
    let minVal = EPS5
    if (final) {
      const mval = final[3]
      minVal = f32(f32(mval - Math.abs(mval)) - EPS5)
    }
    this.minValues[f] = minVal
    const maxNumBins = Math.min(Math.min(n, maxBin * K_FACTOR), maxBin)
    const start = values.length
    if (final) {
      const required = Math.min(finalSize, maxNumBins)
      for (let i = 1; i < required; i++) {
        const cpt = final[4 * i + 3]
        if (i === 1 || cpt > values[values.length - 1]) values.push(cpt)
      }
    }
    const cpt = final && finalSize > 0 ? final[4 * (finalSize - 1) + 3] : minVal
    values.push(f32(cpt + f32(Math.abs(cpt) + EPS5)))
    if (values.length - start < 1) throw new Error('quantile: a feature without cuts')
    this.ptrs[f + 1] = values.length
  }

  /** feature f's cuts (after its addFeature) */
  featureCuts(f: number): Float32Array {
    return Float32Array.from(this.values.slice(this.ptrs[f], this.ptrs[f + 1]))
  }

  finish(): GbdtCuts {
    return { features: this.features, maxBin: this.maxBin, ptrs: this.ptrs, values: Float32Array.from(this.values), minValues: this.minValues }
  }

  release(): void {
    arena.release()
  }
}

/**
 * copyColumns for the wasm sketch, −0 written as +0 (what the sketch pushes: equal under every comparison,
 * one bit pattern). A tile of rows at a time, column by column. Returns whether some value is NaN.
 */
function copyColumnsToSketch(x: Float32Array, rows: number, features: number, f0: number, f1: number, cols: Float32Array): boolean {
  const w = f1 - f0
  let missing = false
  for (let r0 = 0; r0 < rows; r0 += 256) {
    const r1 = Math.min(rows, r0 + 256)
    for (let j = 0; j < w; j++) {
      const o = j * rows
      for (let r = r0, i = r0 * features + f0 + j; r < r1; r++, i += features) {
        const v = x[i]
        missing = missing || v !== v
        cols[o + r] = v + 0
      }
    }
  }
  return missing
}

/** moves the non-NaN values of cols[o, o + rows) to its front, in row order; returns how many */
function compactNonMissing(cols: Float32Array, o: number, rows: number): number {
  let n = 0
  for (let r = 0; r < rows; r++) {
    const v = cols[o + r]
    if (v === v) cols[o + n++] = v
  }
  return n
}

/** Features copied out of row-major x per block (computeCuts, prepareGbdtData). */
export const COLUMN_BLOCK = 16

/** cols[(f − f0)·rows + r] = x[r·features + f] for f in [f0, f1): a block of row-major x, column by column. */
export function copyColumns(x: Float32Array, rows: number, features: number, f0: number, f1: number, cols: Float32Array): void {
  const w = f1 - f0
  for (let r = 0; r < rows; r++) {
    const base = r * features + f0
    for (let j = 0; j < w; j++) cols[j * rows + r] = x[base + j]
  }
}

/** Bin of value v of feature f: the first cut greater than v (upper_bound), clamped to the last bin. NaN → −1. */
export function binOf(cuts: GbdtCuts, f: number, v: number): number {
  if (Number.isNaN(v)) return -1
  const lo0 = cuts.ptrs[f]
  const end = cuts.ptrs[f + 1]
  let lo = lo0
  let hi = end
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (cuts.values[mid] > v) hi = mid
    else lo = mid + 1
  }
  return (lo === end ? end - 1 : lo) - lo0
}
