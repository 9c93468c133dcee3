// Quantile cuts, as XGBoost 1.7.4 computes them for a dense in-memory DMatrix with tree_method=hist
// and one thread (src/common/quantile.{h,cc}: HostSketchContainer over WQuantileSketch<float,float>,
// then SketchContainerImpl::MakeCuts and AddCutPoint). The port keeps XGBoost's float32 rank
// arithmetic (RType = float: every rank sum and the prune's dx2 are rounded with Math.fround), its
// queue size, levels, prune and combine steps, so the cuts are XGBoost's own, not just close:
//
//   per feature, over its non-missing values in row order (weight 1 each):
//     n_bins = max(1, min(maxBin, n)); eps = 1 / fround(n_bins·8); limit_size, levels from (n, eps)
//     summary = sketch.GetSummary()                         (exact when n fits the input queue)
//     reduced = SetPrune(summary, min(n, maxBin·8))
//     final   = SetPrune(reduced, min(n, maxBin·8, maxBin) + 1)
//     cuts    = final.value(1 .. min(final.size, maxBin)−1) (strictly increasing),
//               then the sentinel last + (|last| + 1e-5f) where last = final.value(final.size−1)
//     minValue = v0 − |v0| − 1e-5f   (the threshold of a "everything non-missing goes right" split)
//
// A feature with k ≤ maxBin distinct values gets cuts = its distinct values except the smallest,
// plus the sentinel: k bins, one per value. A value's bin is the first cut greater than it
// (upper_bound), so "bin ≤ b" ⇔ "value < cut[b]", XGBoost's prediction rule.

const f32 = Math.fround
const EPS5 = f32(1e-5)
const K_FACTOR = 8

/**
 * A weighted quantile summary: entries sorted by value, ranks in float32 (doubles holding float32
 * values), stored interleaved [rmin, rmax, wmin, value] per entry in one array.
 */
class Summary {
  size = 0
  constructor(readonly d: Float64Array) {}

  static alloc(capacity: number): Summary {
    return new Summary(new Float64Array(4 * Math.max(1, capacity)))
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

/** WQSummary::SetPrune */
function setPrune(src: Summary, maxsize: number): Summary {
  if (src.size <= maxsize) return src // summaries are never modified once built
  const out = Summary.alloc(maxsize)
  const begin = src.rmax(0)
  const range = f32(src.rmin(src.size - 1) - src.rmax(0))
  const n = maxsize - 1
  out.pushFrom(src, 0)
  let i = 1
  let lastidx = 0
  for (let k = 1; k < n; ++k) {
    const dx2 = f32(2 * f32(f32(f32(k * range) / n) + begin))
    while (i < src.size - 1 && dx2 >= f32(src.rmax(i + 1) + src.rmin(i + 1))) ++i
    if (i === src.size - 1) break
    if (dx2 < f32(src.rminNext(i) + src.rmaxPrev(i + 1))) {
      if (i !== lastidx) {
        out.pushFrom(src, i)
        lastidx = i
      }
    } else if (i + 1 !== lastidx) {
      out.pushFrom(src, i + 1)
      lastidx = i + 1
    }
  }
  if (lastidx !== src.size - 1) out.pushFrom(src, src.size - 1)
  return out
}

/** WQSummary::SetCombine (with FixError) */
function setCombine(sa: Summary, sb: Summary): Summary {
  if (sa.size === 0) return sb
  if (sb.size === 0) return sa
  const out = Summary.alloc(sa.size + sb.size)
  let a = 0
  let b = 0
  let aprevRmin = 0
  let bprevRmin = 0
  while (a < sa.size && b < sb.size) {
    if (sa.value(a) === sb.value(b)) {
      out.push(f32(sa.rmin(a) + sb.rmin(b)), f32(sa.rmax(a) + sb.rmax(b)), f32(sa.wmin(a) + sb.wmin(b)), sa.value(a))
      aprevRmin = sa.rminNext(a)
      bprevRmin = sb.rminNext(b)
      a++
      b++
    } else if (sa.value(a) < sb.value(b)) {
      out.push(f32(sa.rmin(a) + bprevRmin), f32(sa.rmax(a) + sb.rmaxPrev(b)), sa.wmin(a), sa.value(a))
      aprevRmin = sa.rminNext(a)
      a++
    } else {
      out.push(f32(sb.rmin(b) + aprevRmin), f32(sb.rmax(b) + sa.rmaxPrev(a)), sb.wmin(b), sb.value(b))
      bprevRmin = sb.rminNext(b)
      b++
    }
  }
  if (a < sa.size) {
    const brmax = sb.rmax(sb.size - 1)
    for (; a < sa.size; a++) out.push(f32(sa.rmin(a) + bprevRmin), f32(sa.rmax(a) + brmax), sa.wmin(a), sa.value(a))
  }
  if (b < sb.size) {
    const armax = sa.rmax(sa.size - 1)
    for (; b < sb.size; b++) out.push(f32(sb.rmin(b) + aprevRmin), f32(sb.rmax(b) + armax), sb.wmin(b), sb.value(b))
  }
  // FixError
  const d = out.d
  let prevRmin = 0
  let prevRmax = 0
  for (let i = 0; i < out.size; i++) {
    if (d[4 * i] < prevRmin) d[4 * i] = prevRmin
    else prevRmin = d[4 * i]
    if (d[4 * i + 1] < prevRmax) d[4 * i + 1] = prevRmax
    const rminNext = out.rminNext(i)
    if (d[4 * i + 1] < rminNext) d[4 * i + 1] = rminNext
    prevRmax = d[4 * i + 1]
  }
  return out
}

let radixTmp = new Uint32Array(0)
const radixCount = new Int32Array(2048)

/**
 * Sorts non-NaN float32 values ascending, in place (LSD radix sort, 3 passes of 11 bits over the
 * bit patterns mapped to unsigned order). −0 must already be +0. Returns `a`.
 */
function sortFloat32(a: Float32Array): Float32Array {
  const n = a.length
  if (n < 64) return a.sort()
  const keys = new Uint32Array(a.buffer, a.byteOffset, n)
  for (let i = 0; i < n; i++) {
    const k = keys[i]
    keys[i] = k & 0x80000000 ? ~k >>> 0 : (k | 0x80000000) >>> 0
  }
  if (radixTmp.length < n) radixTmp = new Uint32Array(n)
  let src: Uint32Array = keys
  let dst: Uint32Array = radixTmp.subarray(0, n)
  for (let shift = 0; shift < 33; shift += 11) {
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
    const t = src
    src = dst
    dst = t
  }
  // three passes: the result is in radixTmp (src); copy back, undoing the key mapping
  for (let i = 0; i < n; i++) {
    const k = src[i]
    keys[i] = k & 0x80000000 ? (k & 0x7fffffff) >>> 0 : ~k >>> 0
  }
  return a
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

  constructor(maxn: number, maxBin: number) {
    const nBins = Math.max(1, Math.min(maxBin, maxn))
    const eps = 1.0 / f32(nBins * K_FACTOR)
    let nlevel = 1
    let limit = 0
    for (;;) {
      limit = Math.min(maxn, Math.ceil(nlevel / eps) + 1)
      if (2 ** nlevel * limit >= maxn) break
      ++nlevel
    }
    this.limitSize = limit
    this.capacity = limit * 2
    this.raw = new Float32Array(Math.max(1, maxn))
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
    for (let i = 0; i < v.length; ) {
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
 * Deterministic: a function of the values and their row order only.
 */
export function computeCuts(x: Float32Array, rows: number, features: number, maxBin: number): GbdtCuts {
  if (x.length !== rows * features) throw new RangeError(`x has ${x.length} values, expected ${rows}×${features}`)
  const ptrs = new Int32Array(features + 1)
  const values: number[] = []
  const minValues = new Float32Array(features)
  for (let f = 0; f < features; f++) {
    let n = 0
    for (let r = 0; r < rows; r++) if (!Number.isNaN(x[r * features + f])) n++
    let final: Summary | null = null
    let minVal: number
    if (n === 0) {
      minVal = EPS5
    } else {
      const sketch = new WQSketch(n, maxBin)
      for (let r = 0; r < rows; r++) {
        const v = x[r * features + f]
        if (!Number.isNaN(v)) sketch.push(v + 0) // -0 → +0: equal under every comparison, one canonical bit pattern
      }
      const intermediate = Math.min(n, maxBin * K_FACTOR)
      const reduced = setPrune(sketch.getSummary(), intermediate)
      final = setPrune(reduced, Math.min(intermediate, maxBin) + 1)
      const mval = final.value(0)
      minVal = f32(f32(mval - Math.abs(mval)) - EPS5)
    }
    minValues[f] = minVal
    const maxNumBins = Math.min(Math.min(n, maxBin * K_FACTOR), maxBin)
    const start = values.length
    if (final) {
      const required = Math.min(final.size, maxNumBins)
      for (let i = 1; i < required; i++) {
        const cpt = final.value(i)
        if (i === 1 || cpt > values[values.length - 1]) values.push(cpt)
      }
    }
    const cpt = final && final.size > 0 ? final.value(final.size - 1) : minVal
    values.push(f32(cpt + f32(Math.abs(cpt) + EPS5)))
    if (values.length - start < 1) throw new Error('quantile: a feature without cuts')
    ptrs[f + 1] = values.length
  }
  return { features, maxBin, ptrs, values: Float32Array.from(values), minValues }
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
