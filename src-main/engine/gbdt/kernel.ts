// The histogram kernel of the CPU trainer: the loops that add a node's rows into its histogram, the
// per-bin loops after them, the partition of a split node's rows, and the memory they read. Two of
// them, the same trees bit for bit: `ts` (histograms.ts's loops, the reference) and `wasm` (SIMD,
// from src-wasm/gbdt-hist.ts), whose inputs live in one WebAssembly.Memory arena.
// TRAINPOOL_GBDT_KERNEL=ts|wasm chooses (default wasm where SIMD exists and the arena fits). Why and
// how: README.md, "The histogram kernel".
import { HIST_WASM_BASE64 } from './hist-wasm.generated'
import {
  addToRows,
  type Bins,
  build1,
  build1H,
  build2,
  build2H,
  build4,
  build4H,
  difference,
  partition,
  quantiseRows,
  squaredErrorRows,
  subtractRange,
  zero,
} from './histograms'
import { type CandidateFilter, forwardCandidates } from './rules'

export type KernelName = 'ts' | 'wasm'

/**
 * A tree's per-row loops and the arrays they read (model-state.ts): its rows' gradients, their
 * quantisation, a leaf's value added to its rows' margins. A kernel's arrays live where its loops read
 * them (the wasm kernel: in its memory).
 */
export interface RowLoops {
  int32(length: number): Int32Array
  float32(length: number): Float32Array
  uint8(length: number): Uint8Array
  squaredErrorRows: typeof squaredErrorRows
  quantiseRows: typeof quantiseRows
  addToRows: typeof addToRows
}

export interface HistKernel extends RowLoops {
  readonly name: KernelName
  /** the binned matrix as the kernel reads it (the wasm kernel: a copy in its memory) */
  /** `data`: binning.ts GbdtData (by shape: binning imports this kernel) */
  bins(data: { bins: Bins }): Bins
  /** arrays the kernel reads (rows and q; histogram buffers) */
  int32(length: number): Int32Array
  float64(length: number): Float64Array
  build1: typeof build1
  build2: typeof build2
  build4: typeof build4
  /** the same with each row's quantised hessian (a classifier's) in place of 1 */
  build1H: typeof build1H
  build2H: typeof build2H
  build4H: typeof build4H
  /**
   * The histograms of k ≤ 4 features of one node's rows [begin, end), each into its region of
   * `hist` (feature t: the column at cols[t] of the binned matrix, the doubles offs[t] … offs[t] +
   * lens[t]); qh a classifier's hessians (else each row counts 1); `every`: the rows are every
   * training row in order (rows[i] = i). The same sums as build1/2/4 (H) into zeroed regions, however
   * they are summed; what the regions held before is overwritten.
   */
  buildRegions(
    k: number,
    bins: Bins,
    cols: ArrayLike<number>,
    rows: Int32Array,
    q: Int32Array,
    qh: Int32Array | null,
    begin: number,
    end: number,
    hist: Float64Array,
    offs: ArrayLike<number>,
    lens: ArrayLike<number>,
    every: boolean,
  ): void
  zero: typeof zero
  difference: typeof difference
  subtractRange: typeof subtractRange
  /** a split node's rows partitioned (the scratch arrays the kernel's too) */
  partition: typeof partition
  /** the split scan's pre-filter (its hist array the kernel's) */
  readonly filter: CandidateFilter
}

/** the build loops buildRegions dispatches to */
type BuildLoops = Pick<HistKernel, 'build1' | 'build2' | 'build4' | 'build1H' | 'build2H' | 'build4H'>
const tsLoops: BuildLoops = { build1, build2, build4, build1H, build2H, build4H }

/** buildRegions by the build loops of `loops` (4 features a pass; 3 as 2 + 1), each region zeroed first by `zeroRegion` */
function buildRegionsBy(loops: BuildLoops, zeroRegion: typeof zero): HistKernel['buildRegions'] {
  return (k, bins, cols, rows, q, qh, begin, end, hist, offs, lens) => {
    for (let t = 0; t < k; t++) zeroRegion(hist, offs[t], lens[t])
    if (qh) {
      if (k === 4) loops.build4H(bins, cols[0], cols[1], cols[2], cols[3], rows, q, qh, begin, end, hist, offs[0], offs[1], offs[2], offs[3])
      else if (k >= 2) {
        loops.build2H(bins, cols[0], cols[1], rows, q, qh, begin, end, hist, offs[0], offs[1])
        if (k === 3) loops.build1H(bins, cols[2], rows, q, qh, begin, end, hist, offs[2])
      } else loops.build1H(bins, cols[0], rows, q, qh, begin, end, hist, offs[0])
    } else if (k === 4) loops.build4(bins, cols[0], cols[1], cols[2], cols[3], rows, q, begin, end, hist, offs[0], offs[1], offs[2], offs[3])
    else if (k >= 2) {
      loops.build2(bins, cols[0], cols[1], rows, q, begin, end, hist, offs[0], offs[1])
      if (k === 3) loops.build1(bins, cols[2], rows, q, begin, end, hist, offs[2])
    } else loops.build1(bins, cols[0], rows, q, begin, end, hist, offs[0])
  }
}

const tsKernel: HistKernel = {
  name: 'ts',
  bins: (data) => data.bins,
  int32: (length) => new Int32Array(length),
  float32: (length) => new Float32Array(length),
  uint8: (length) => new Uint8Array(length),
  float64: (length) => new Float64Array(length),
  squaredErrorRows,
  quantiseRows,
  addToRows,
  build1,
  build2,
  build4,
  build1H,
  build2H,
  build4H,
  buildRegions: buildRegionsBy(tsLoops, zero),
  zero,
  difference,
  subtractRange,
  partition,
  filter: forwardCandidates,
}

/**
 * buildRegions' 8-byte slots (src-wasm/gbdt-hist.ts): a node of fewer rows than PACKED_MIN_ROWS keeps
 * the f64x2 loops (unpacking costs a pass over its bins); one of PACKED_MAX_ROWS or more, whose packed
 * sums could overflow, is every training row (then Σq alone, with counted bins) or is built in chunks
 * of fewer rows (0.9 ns an update in the f64x2 loops, ~0.5 in the packed ones).
 */
const PACKED_MIN_ROWS = 256
const PACKED_MAX_ROWS = 2 ** 16
/** bytes between the 8-byte slots' scratch regions: a u8 feature's ≤ 256 slots and a cache line (regions a power of two apart share L1 sets) */
const SLOTS_STRIDE = 8 * 256 + 64
/** a column's bin counts (countsOf): one float64 for each of a u8 column's bins */
const COUNTS_BYTES = 8 * 256
/** the arena bytes countsOf may take for a binned matrix of `features` columns */
export function countsArenaBytes(features: number): number {
  return arenaBytes(COUNTS_BYTES, features)
}

const ALIGN = 16
const PAGE = 65536
/** a 32-bit memory's most pages, less one */
const MAX_PAGES = 65535

/** bytes rounded up to the arena's alignment */
export function aligned(bytes: number): number {
  return Math.ceil(bytes / ALIGN) * ALIGN
}

/** the arena bytes for `count` arrays of `bytes` bytes each (each aligned) */
export function arenaBytes(bytes: number, count = 1): number {
  return count * aligned(bytes)
}

interface HistExports {
  build1u8(b0: number, rows: number, q: number, begin: number, end: number, h0: number): void
  build2u8(b0: number, b1: number, rows: number, q: number, begin: number, end: number, h0: number, h1: number): void
  build4u8(
    b0: number,
    b1: number,
    b2: number,
    b3: number,
    rows: number,
    q: number,
    begin: number,
    end: number,
    h0: number,
    h1: number,
    h2: number,
    h3: number,
  ): void
  build1u16: HistExports['build1u8']
  build2u16: HistExports['build2u8']
  build4u16: HistExports['build4u8']
  build1Hu8(b0: number, rows: number, q: number, qh: number, begin: number, end: number, h0: number): void
  build2Hu8(b0: number, b1: number, rows: number, q: number, qh: number, begin: number, end: number, h0: number, h1: number): void
  build4Hu8(
    b0: number,
    b1: number,
    b2: number,
    b3: number,
    rows: number,
    q: number,
    qh: number,
    begin: number,
    end: number,
    h0: number,
    h1: number,
    h2: number,
    h3: number,
  ): void
  build1Hu16: HistExports['build1Hu8']
  build2Hu16: HistExports['build2Hu8']
  build4Hu16: HistExports['build4Hu8']
  // the packed loops take the f64x2 loops' arguments, their regions' upper halves for h
  packed1u8: HistExports['build1u8']
  packed2u8: HistExports['build2u8']
  packed4u8: HistExports['build4u8']
  packedDense1u8(b0: number, q: number, n: number, s0: number): void
  packedDense4u8(b0: number, b1: number, b2: number, b3: number, q: number, n: number, s0: number, s1: number, s2: number, s3: number): void
  sumDense1u8: HistExports['packedDense1u8']
  sumDense4u8: HistExports['packedDense4u8']
  countBins(b0: number, n: number, out: number): void
  buildDense1Hu8(b0: number, q: number, qh: number, n: number, h0: number): void
  buildDense4Hu8(b0: number, b1: number, b2: number, b3: number, q: number, qh: number, n: number, h0: number, h1: number, h2: number, h3: number): void
  unpackPairs(h: number, s: number, nb: number): void
  unpackAddPairs(h: number, s: number, nb: number): void
  withCounts(h: number, s: number, nb: number, counts: number): void
  zero(h: number, len: number): void
  subtract(t: number, s: number, len: number): void
  difference(out: number, p: number, s: number, len: number): void
  forwardCandidate(h: number, b: number, nb: number, gq: number, n: number, mcw: number, thrQ: number, lambda: number, state: number): number
  partitionU8(
    b: number,
    rows: number,
    q: number,
    qh: number,
    begin: number,
    end: number,
    splitBin: number,
    missing: number,
    defaultLeft: number,
    scratchRows: number,
    scratchQ: number,
    scratchQH: number,
  ): number
  partitionU16: HistExports['partitionU8']
  squaredErrorRows(pred: number, y: number, sampled: number, n: number, every: number, g: number, rows: number): number
  quantiseRows(g: number, q: number, count: number, scale: number): number
  addToRows(pred: number, rows: number, begin: number, end: number, v: number): void
}

// the few WebAssembly APIs used here (this project's Node typings declare WebAssembly's types, not its value)
interface WasmModule {
  readonly __module: unique symbol
}
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean
  Module: new (bytes: Uint8Array) => WasmModule
  Memory: new (d: { initial: number; maximum?: number }) => WasmMemory
  Instance: new (m: WasmModule, imports: object) => { exports: object }
}
/** the row loops in TypeScript, their arrays plain (a ModelState outside a CPU training: the WebGPU trainer's) */
export const tsRowLoops: RowLoops = tsKernel

const wasmApi = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly

let wasmModule: WasmModule | null | undefined

/** the compiled kernel, or null where this runtime has no WebAssembly SIMD */
function histModule(): WasmModule | null {
  if (wasmModule === undefined) {
    const bytes = Buffer.from(HIST_WASM_BASE64, 'base64')
    wasmModule = wasmApi && wasmApi.validate(bytes) ? new wasmApi.Module(bytes) : null
  }
  return wasmModule
}

export function wasmKernelAvailable(): boolean {
  return histModule() !== null
}

/** WebAssembly instances made so far (a test's evidence of which code ran, and of what was reused) */
export const kernelInstances = { hist: 0, scratch: 0 }

/** the kernel module's binning steps (src-wasm/gbdt-hist.ts): the quantile sketch (quantile.ts's WQSketch, bit for bit) and binValues (binning.ts's binFeature) */
export interface ScratchExports {
  sketchBytes(n: number, limit: number, maxBin: number): number
  sketchFeature(values: number, n: number, limit: number, maxBin: number, work: number): number
  sketchResult(): number
  binValues(values: number, n: number, cuts: number, nb: number, grid: number, cells: number, c0: number, perCell: number, out: number, wide: number): number
}

/** An instance of the kernel module with a memory of its own, for work outside a training (binning). */
export interface ScratchKernel {
  readonly exports: ScratchExports
  /** the memory's buffer: a new one after reserve() grew it */
  readonly buffer: ArrayBuffer
  /** grows the memory to at least `bytes` (views on the old buffer detach); false past a 32-bit memory */
  reserve(bytes: number): boolean
}

/** a ScratchKernel, or null where this runtime has no WebAssembly SIMD */
export function createScratchKernel(): ScratchKernel | null {
  const mod = histModule()
  if (!mod || !wasmApi) return null
  const memory = new wasmApi.Memory({ initial: 1, maximum: MAX_PAGES })
  const exports = new wasmApi.Instance(mod, { env: { memory } }).exports as unknown as ScratchExports
  kernelInstances.scratch++
  let pages = 1
  return {
    exports,
    get buffer() {
      return memory.buffer
    },
    reserve(bytes: number): boolean {
      const need = Math.ceil(bytes / PAGE)
      if (need > MAX_PAGES) return false
      if (need > pages) memory.grow(need - pages)
      pages = Math.max(pages, need)
      return true
    },
  }
}

/**
 * One argument position of the wasm calls: its last array, checked to be in the kernel memory, and
 * that array's byte offset. Reading a view's `buffer` and `byteOffset` costs ~50 ns a call here, more
 * than a small node's build or a split scan's filter call, and a position sees the same few arrays
 * call after call (the binned matrix, a tree's rows and q, a histogram buffer), so both are read
 * again only for another array.
 */
class Checked {
  private last: ArrayBufferView | null = null
  private at = 0
  constructor(private readonly buffer: ArrayBuffer) {}

  /** a's byte offset in the kernel memory; throws if a is elsewhere */
  addr(a: ArrayBufferView): number {
    if (a === this.last) return this.at
    if (a.buffer !== this.buffer) throw new Error('gbdt wasm kernel: an array is not in the kernel memory')
    this.last = a
    this.at = a.byteOffset
    return this.at
  }
}

class WasmKernel implements HistKernel {
  readonly name = 'wasm'
  private readonly buffer: ArrayBuffer
  private readonly k: HistExports
  private top = 0
  /** where the arrays of a training start (after the filter's state) */
  private readonly ownEnd: number
  readonly filter: CandidateFilter
  private readonly binsAt: Checked
  private readonly rowsAt: Checked
  private readonly qAt: Checked
  private readonly qhAt: Checked
  private readonly histAt: Checked
  /** a subtraction's parent histogram, and a derived one's scratch */
  private readonly otherAt: Checked
  private readonly outAt: Checked
  /** the partition's scratches */
  private readonly scratchRowsAt: Checked
  private readonly scratchQAt: Checked
  private readonly scratchQHAt: Checked
  /** the row loops' margins, labels, sampled flags and gradients */
  private readonly predAt: Checked
  private readonly yAt: Checked
  private readonly sampledAt: Checked
  private readonly gAt: Checked
  /** buildRegions where the 8-byte slots do not apply: the f64x2 build loops */
  private readonly buildByLoops = buildRegionsBy(this, (hist, o, len) => this.zero(hist, o, len))
  /** the 8-byte slots' scratch: 4 regions of ≤ 256 slots, SLOTS_STRIDE bytes apart (byte address) */
  private readonly slotsAt: number
  /** countsOf's tables by column address */
  private readonly counts = new Map<number, number>()

  constructor(
    api: WasmApi,
    mod: WasmModule,
    readonly pages: number,
  ) {
    const memory = new api.Memory({ initial: pages, maximum: pages })
    const k = new api.Instance(mod, { env: { memory } }).exports as unknown as HistExports
    this.k = k
    this.buffer = memory.buffer
    this.binsAt = new Checked(this.buffer)
    this.rowsAt = new Checked(this.buffer)
    this.qAt = new Checked(this.buffer)
    this.qhAt = new Checked(this.buffer)
    this.histAt = new Checked(this.buffer)
    this.otherAt = new Checked(this.buffer)
    this.outAt = new Checked(this.buffer)
    this.scratchRowsAt = new Checked(this.buffer)
    this.scratchQAt = new Checked(this.buffer)
    this.scratchQHAt = new Checked(this.buffer)
    this.predAt = new Checked(this.buffer)
    this.yAt = new Checked(this.buffer)
    this.sampledAt = new Checked(this.buffer)
    this.gAt = new Checked(this.buffer)
    // the first allocation, at address 0: no array handed out starts there, so 0 can mean "none" (the partition's qh)
    const state = this.float64(2)
    this.slotsAt = this.alloc(4 * SLOTS_STRIDE)
    this.ownEnd = this.top
    const stateAt = state.byteOffset
    const scanned = new Checked(this.buffer)
    this.filter = {
      state,
      next: (hist, o, b, nb, gq, h, mcw, thrQ, lambda) => k.forwardCandidate(scanned.addr(hist) + 8 * o, b, nb, gq, h, mcw, thrQ, lambda, stateAt),
    }
  }

  /** the fixed arena bytes a WasmKernel takes for itself (the filter's state, the 8-byte slots' scratch) */
  static readonly OWN_BYTES = 16 + 4 * SLOTS_STRIDE

  /** the arena bytes handed out so far (the filter's state included) */
  get touchedBytes(): number {
    return this.top
  }

  /** for another training: every array handed out is dead; the arena is zeroed as far as it was used, as a new memory is */
  reset(): void {
    new Uint8Array(this.buffer, 0, this.top).fill(0)
    this.top = this.ownEnd
    this.counts.clear()
  }

  private alloc(bytes: number): number {
    const at = this.top
    const next = at + aligned(bytes)
    if (next > this.buffer.byteLength) throw new Error(`gbdt wasm kernel: arena exhausted (${next} > ${this.buffer.byteLength} bytes)`)
    this.top = next
    return at
  }

  bins(data: { bins: Bins }): Bins {
    const src = data.bins
    const out =
      src instanceof Uint8Array
        ? new Uint8Array(this.buffer, this.alloc(src.byteLength), src.length)
        : new Uint16Array(this.buffer, this.alloc(src.byteLength), src.length)
    out.set(src)
    return out
  }

  int32(length: number): Int32Array {
    return new Int32Array(this.buffer, this.alloc(4 * length), length)
  }

  float64(length: number): Float64Array {
    return new Float64Array(this.buffer, this.alloc(8 * length), length)
  }

  float32(length: number): Float32Array {
    return new Float32Array(this.buffer, this.alloc(4 * length), length)
  }

  uint8(length: number): Uint8Array {
    return new Uint8Array(this.buffer, this.alloc(length), length)
  }

  squaredErrorRows = (pred: Float32Array, y: Float32Array, sampled: Uint8Array, every: boolean, g: Float32Array, rows: Int32Array): number =>
    this.k.squaredErrorRows(
      this.predAt.addr(pred),
      this.yAt.addr(y),
      this.sampledAt.addr(sampled),
      pred.length,
      every ? 1 : 0,
      this.gAt.addr(g),
      this.rowsAt.addr(rows),
    )

  quantiseRows = (g: Float32Array, q: Int32Array, count: number, scale: number): number => this.k.quantiseRows(this.gAt.addr(g), this.qAt.addr(q), count, scale)

  addToRows = (pred: Float32Array, rows: Int32Array, begin: number, end: number, v: number): void => {
    this.k.addToRows(this.predAt.addr(pred), this.rowsAt.addr(rows), begin, end, v)
  }

  zero = (hist: Float64Array, o: number, len: number): void => {
    this.k.zero(this.histAt.addr(hist) + 8 * o, len)
  }

  difference = (out: Float64Array, parent: Float64Array, po: number, sub: Float64Array, so: number, len: number): void => {
    this.k.difference(this.outAt.addr(out), this.otherAt.addr(parent) + 8 * po, this.histAt.addr(sub) + 8 * so, len)
  }

  subtractRange = (target: Float64Array, sub: Float64Array, o: number, len: number): void => {
    this.k.subtract(this.otherAt.addr(target) + 8 * o, this.histAt.addr(sub) + 8 * o, len)
  }

  /** the 8-byte-slot loops where they apply (src-wasm/gbdt-hist.ts: a regressor's node of u8 bins), else the f64x2 build loops */
  buildRegions: HistKernel['buildRegions'] = (k, bins, cols, rows, q, qh, begin, end, hist, offs, lens, every) => {
    const m = end - begin
    const dense = every && m >= PACKED_MAX_ROWS
    if (qh && every && bins.BYTES_PER_ELEMENT === 1) {
      // a classifier's root of every row: its (Σq, Σqh) pairs stay f64x2, without reading a row index
      const b = this.binsAt.addr(bins)
      const h = this.histAt.addr(hist)
      const qa = this.qAt.addr(q) + 4 * begin
      const qha = this.qhAt.addr(qh) + 4 * begin
      for (let t = 0; t < k; t++) this.k.zero(h + 8 * offs[t], lens[t])
      if (k === 4)
        this.k.buildDense4Hu8(
          b + cols[0],
          b + cols[1],
          b + cols[2],
          b + cols[3],
          qa,
          qha,
          m,
          h + 8 * offs[0],
          h + 8 * offs[1],
          h + 8 * offs[2],
          h + 8 * offs[3],
        )
      else for (let t = 0; t < k; t++) this.k.buildDense1Hu8(b + cols[t], qa, qha, m, h + 8 * offs[t])
      return
    }
    if (qh || bins.BYTES_PER_ELEMENT !== 1 || m < PACKED_MIN_ROWS) {
      this.buildByLoops(k, bins, cols, rows, q, qh, begin, end, hist, offs, lens, every)
      return
    }
    const kk = this.k
    const b = this.binsAt.addr(bins)
    const h = this.histAt.addr(hist)
    const qa = this.qAt.addr(q)
    // feature t's slots at s + t·SLOTS_STRIDE
    const s = this.slotsAt
    const s1 = s + SLOTS_STRIDE
    const s2 = s1 + SLOTS_STRIDE
    const s3 = s2 + SLOTS_STRIDE
    // every row in order in one pass; other rows by index, a node of 2^16 rows or more in chunks of
    // fewer (its packed counts would overflow), each chunk's sums added to the pairs
    const ra = every ? 0 : this.rowsAt.addr(rows)
    const chunk = every ? m : PACKED_MAX_ROWS - 1
    for (let c0 = begin; c0 < end; c0 += chunk) {
      const c1 = Math.min(end, c0 + chunk)
      kk.zero(s, (k * SLOTS_STRIDE) / 8)
      if (every) {
        const f = dense ? kk.sumDense4u8 : kk.packedDense4u8
        const f1 = dense ? kk.sumDense1u8 : kk.packedDense1u8
        if (k === 4) f(b + cols[0], b + cols[1], b + cols[2], b + cols[3], qa + 4 * begin, m, s, s1, s2, s3)
        else for (let t = 0; t < k; t++) f1(b + cols[t], qa + 4 * begin, m, s + t * SLOTS_STRIDE)
      } else if (k === 4) kk.packed4u8(b + cols[0], b + cols[1], b + cols[2], b + cols[3], ra, qa, c0, c1, s, s1, s2, s3)
      else if (k >= 2) {
        kk.packed2u8(b + cols[0], b + cols[1], ra, qa, c0, c1, s, s1)
        if (k === 3) kk.packed1u8(b + cols[2], ra, qa, c0, c1, s2)
      } else kk.packed1u8(b + cols[0], ra, qa, c0, c1, s)
      for (let t = 0; t < k; t++) {
        const at = h + 8 * offs[t]
        const from = s + t * SLOTS_STRIDE
        if (dense) kk.withCounts(at, from, lens[t] / 2, this.countsOf(b + cols[t], m))
        else if (c0 === begin) kk.unpackPairs(at, from, lens[t] / 2)
        else kk.unpackAddPairs(at, from, lens[t] / 2)
      }
    }
  }

  /** the row count of each u8 bin of the column at byte address `column` over its first n rows (every training row), counted once a training */
  private countsOf(column: number, n: number): number {
    let at = this.counts.get(column)
    if (at === undefined) {
      at = this.alloc(COUNTS_BYTES)
      this.k.countBins(column, n, at)
      this.counts.set(column, at)
    }
    return at
  }

  build1 = (bins: Bins, c: number, rows: Int32Array, q: Int32Array, begin: number, end: number, hist: Float64Array, o: number): void => {
    const s = bins.BYTES_PER_ELEMENT
    const f = s === 1 ? this.k.build1u8 : this.k.build1u16
    f(this.binsAt.addr(bins) + s * c, this.rowsAt.addr(rows), this.qAt.addr(q), begin, end, this.histAt.addr(hist) + 8 * o)
  }

  build2 = (
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
  ): void => {
    const s = bins.BYTES_PER_ELEMENT
    const b = this.binsAt.addr(bins)
    const h = this.histAt.addr(hist)
    const f = s === 1 ? this.k.build2u8 : this.k.build2u16
    f(b + s * c0, b + s * c1, this.rowsAt.addr(rows), this.qAt.addr(q), begin, end, h + 8 * o0, h + 8 * o1)
  }

  build4 = (
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
  ): void => {
    const s = bins.BYTES_PER_ELEMENT
    const b = this.binsAt.addr(bins)
    const h = this.histAt.addr(hist)
    const f = s === 1 ? this.k.build4u8 : this.k.build4u16
    f(b + s * c0, b + s * c1, b + s * c2, b + s * c3, this.rowsAt.addr(rows), this.qAt.addr(q), begin, end, h + 8 * o0, h + 8 * o1, h + 8 * o2, h + 8 * o3)
  }

  build1H = (bins: Bins, c: number, rows: Int32Array, q: Int32Array, qh: Int32Array, begin: number, end: number, hist: Float64Array, o: number): void => {
    const s = bins.BYTES_PER_ELEMENT
    const f = s === 1 ? this.k.build1Hu8 : this.k.build1Hu16
    f(this.binsAt.addr(bins) + s * c, this.rowsAt.addr(rows), this.qAt.addr(q), this.qhAt.addr(qh), begin, end, this.histAt.addr(hist) + 8 * o)
  }

  build2H = (
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
  ): void => {
    const s = bins.BYTES_PER_ELEMENT
    const b = this.binsAt.addr(bins)
    const h = this.histAt.addr(hist)
    const f = s === 1 ? this.k.build2Hu8 : this.k.build2Hu16
    f(b + s * c0, b + s * c1, this.rowsAt.addr(rows), this.qAt.addr(q), this.qhAt.addr(qh), begin, end, h + 8 * o0, h + 8 * o1)
  }

  build4H = (
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
  ): void => {
    const s = bins.BYTES_PER_ELEMENT
    const b = this.binsAt.addr(bins)
    const h = this.histAt.addr(hist)
    const f = s === 1 ? this.k.build4Hu8 : this.k.build4Hu16
    f(
      b + s * c0,
      b + s * c1,
      b + s * c2,
      b + s * c3,
      this.rowsAt.addr(rows),
      this.qAt.addr(q),
      this.qhAt.addr(qh),
      begin,
      end,
      h + 8 * o0,
      h + 8 * o1,
      h + 8 * o2,
      h + 8 * o3,
    )
  }

  partition = (
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
  ): number => {
    const s = bins.BYTES_PER_ELEMENT
    const f = s === 1 ? this.k.partitionU8 : this.k.partitionU16
    return f(
      this.binsAt.addr(bins) + s * c,
      this.rowsAt.addr(rows),
      this.qAt.addr(q),
      qh ? this.qhAt.addr(qh) : 0,
      begin,
      end,
      splitBin,
      missing,
      defaultLeft ? 1 : 0,
      this.scratchRowsAt.addr(scratchRows),
      this.scratchQAt.addr(scratchQ),
      qh ? this.scratchQHAt.addr(scratchQH) : 0,
    )
  }
}

/** the kernel chosen by `requested`, else TRAINPOOL_GBDT_KERNEL, else the default */
export function kernelName(requested?: KernelName): KernelName {
  const name = requested ?? process.env.TRAINPOOL_GBDT_KERNEL
  if (name === undefined || name === '') return wasmKernelAvailable() ? 'wasm' : 'ts'
  if (name !== 'ts' && name !== 'wasm') throw new RangeError(`TRAINPOOL_GBDT_KERNEL must be ts or wasm, not ${name}`)
  if (name === 'wasm' && !wasmKernelAvailable()) throw new Error('the wasm histogram kernel needs WebAssembly SIMD, which this runtime lacks')
  return name
}

/**
 * A finished training's wasm kernel, kept for the next training in this process (a successive-halving run
 * calls the trainer once per rung per job: a fresh memory each time cost ~10 ms a call here, half of it
 * the garbage collector's, at 4 000 rows). Only a small one: the pages it touched stay resident.
 */
let spareKernel: WasmKernel | null = null
/** the most arena bytes a kept kernel may have touched */
const SPARE_MAX_TOUCHED_BYTES = 64 * 1024 * 1024

/**
 * A kernel for one training whose kernel-read arrays take `bytes` of arena (arenaBytes of their
 * byte lengths): the wasm one unless `name` is ts or the arena does not fit a 32-bit memory (then ts);
 * the spare one (releaseHistKernel), zeroed as a new memory is, when it is large enough.
 */
export function createHistKernel(name: KernelName, bytes: number): HistKernel {
  const mod = name === 'wasm' ? histModule() : null
  const pages = Math.max(1, Math.ceil((bytes + WasmKernel.OWN_BYTES) / PAGE))
  if (!mod || !wasmApi || pages > MAX_PAGES) return tsKernel
  const spare = spareKernel
  if (spare && spare.pages >= pages) {
    spareKernel = null
    spare.reset()
    return spare
  }
  kernelInstances.hist++
  return new WasmKernel(wasmApi, mod, pages)
}

/** The training that got `kernel` is done with every array in it: a later createHistKernel may hand it out again. */
export function releaseHistKernel(kernel: HistKernel): void {
  if (!(kernel instanceof WasmKernel) || kernel.touchedBytes > SPARE_MAX_TOUCHED_BYTES) return
  if (!spareKernel || kernel.pages >= spareKernel.pages) spareKernel = kernel
}
