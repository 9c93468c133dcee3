// The histogram kernel of the CPU trainer: the loops that add a node's rows into its histogram, the
// per-bin loops after them, and the memory they read. Two of them, the same trees bit for bit:
// `ts` (histograms.ts's loops, the reference) and `wasm` (SIMD, from src-wasm/gbdt-hist.ts), whose
// inputs live in one WebAssembly.Memory arena. TRAINPOOL_GBDT_KERNEL=ts|wasm chooses (default wasm
// where SIMD exists and the arena fits). Why and how: README.md, "The histogram kernel".
import type { GbdtData } from './binning'
import { HIST_WASM_BASE64 } from './hist-wasm.generated'
import { type Bins, build1, build1H, build2, build2H, build4, build4H, difference, subtractRange, zero } from './histograms'
import { type CandidateFilter, forwardCandidates } from './rules'

export type KernelName = 'ts' | 'wasm'

export interface HistKernel {
  readonly name: KernelName
  /** the binned matrix as the kernel reads it (the wasm kernel: a copy in its memory) */
  bins(data: GbdtData): Bins
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
  zero: typeof zero
  difference: typeof difference
  subtractRange: typeof subtractRange
  /** the split scan's pre-filter (its hist array the kernel's) */
  readonly filter: CandidateFilter
}

const tsKernel: HistKernel = {
  name: 'ts',
  bins: (data) => data.bins,
  int32: (length) => new Int32Array(length),
  float64: (length) => new Float64Array(length),
  build1,
  build2,
  build4,
  build1H,
  build2H,
  build4H,
  zero,
  difference,
  subtractRange,
  filter: forwardCandidates,
}

const ALIGN = 16
const PAGE = 65536
/** a 32-bit memory's most pages, less one */
const MAX_PAGES = 65535

/** the arena bytes for `count` arrays of `bytes` bytes each (each aligned) */
export function arenaBytes(bytes: number, count = 1): number {
  return count * Math.ceil(bytes / ALIGN) * ALIGN
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
  zero(h: number, len: number): void
  subtract(t: number, s: number, len: number): void
  difference(out: number, p: number, s: number, len: number): void
  forwardCandidate(h: number, b: number, nb: number, gq: number, n: number, mcw: number, thrQ: number, lambda: number, state: number): number
}

// the few WebAssembly APIs used here (this project's Node typings declare WebAssembly's types, not its value)
interface WasmModule {
  readonly __module: unique symbol
}
interface WasmMemory {
  readonly buffer: ArrayBuffer
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean
  Module: new (bytes: Uint8Array) => WasmModule
  Memory: new (d: { initial: number; maximum?: number }) => WasmMemory
  Instance: new (m: WasmModule, imports: object) => { exports: object }
}
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

class WasmKernel implements HistKernel {
  readonly name = 'wasm'
  private readonly buffer: ArrayBuffer
  private readonly k: HistExports
  private top = 0
  readonly filter: CandidateFilter

  constructor(api: WasmApi, mod: WasmModule, pages: number) {
    const memory = new api.Memory({ initial: pages, maximum: pages })
    const k = new api.Instance(mod, { env: { memory } }).exports as unknown as HistExports
    this.k = k
    this.buffer = memory.buffer
    const state = this.float64(2)
    const stateAt = state.byteOffset
    this.filter = {
      state,
      next: (hist, o, b, nb, gq, h, mcw, thrQ, lambda) => {
        this.checkIn(hist, hist)
        return k.forwardCandidate(hist.byteOffset + 8 * o, b, nb, gq, h, mcw, thrQ, lambda, stateAt)
      },
    }
  }

  /** the fixed arena bytes a WasmKernel takes for itself (the filter's state) */
  static readonly OWN_BYTES = 16

  private alloc(bytes: number): number {
    const at = this.top
    const next = at + Math.ceil(bytes / ALIGN) * ALIGN
    if (next > this.buffer.byteLength) throw new Error(`gbdt wasm kernel: arena exhausted (${next} > ${this.buffer.byteLength} bytes)`)
    this.top = next
    return at
  }

  bins(data: GbdtData): Bins {
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

  private check(bins: Bins, rows: Int32Array, q: Int32Array, hist: Float64Array): void {
    const b = this.buffer
    if (bins.buffer !== b || rows.buffer !== b || q.buffer !== b || hist.buffer !== b) throw new Error('gbdt wasm kernel: an array is not in the kernel memory')
  }

  private checkIn(a: Float64Array, c: Float64Array): void {
    if (a.buffer !== this.buffer || c.buffer !== this.buffer) throw new Error('gbdt wasm kernel: an array is not in the kernel memory')
  }

  zero = (hist: Float64Array, o: number, len: number): void => {
    this.checkIn(hist, hist)
    this.k.zero(hist.byteOffset + 8 * o, len)
  }

  difference = (out: Float64Array, parent: Float64Array, po: number, sub: Float64Array, so: number, len: number): void => {
    this.checkIn(out, parent)
    this.checkIn(sub, sub)
    this.k.difference(out.byteOffset, parent.byteOffset + 8 * po, sub.byteOffset + 8 * so, len)
  }

  subtractRange = (target: Float64Array, sub: Float64Array, o: number, len: number): void => {
    this.checkIn(target, sub)
    this.k.subtract(target.byteOffset + 8 * o, sub.byteOffset + 8 * o, len)
  }

  build1 = (bins: Bins, c: number, rows: Int32Array, q: Int32Array, begin: number, end: number, hist: Float64Array, o: number): void => {
    this.check(bins, rows, q, hist)
    const s = bins.BYTES_PER_ELEMENT
    const h = hist.byteOffset
    const f = s === 1 ? this.k.build1u8 : this.k.build1u16
    f(bins.byteOffset + s * c, rows.byteOffset, q.byteOffset, begin, end, h + 8 * o)
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
    this.check(bins, rows, q, hist)
    const s = bins.BYTES_PER_ELEMENT
    const b = bins.byteOffset
    const h = hist.byteOffset
    const f = s === 1 ? this.k.build2u8 : this.k.build2u16
    f(b + s * c0, b + s * c1, rows.byteOffset, q.byteOffset, begin, end, h + 8 * o0, h + 8 * o1)
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
    this.check(bins, rows, q, hist)
    const s = bins.BYTES_PER_ELEMENT
    const b = bins.byteOffset
    const h = hist.byteOffset
    const f = s === 1 ? this.k.build4u8 : this.k.build4u16
    f(b + s * c0, b + s * c1, b + s * c2, b + s * c3, rows.byteOffset, q.byteOffset, begin, end, h + 8 * o0, h + 8 * o1, h + 8 * o2, h + 8 * o3)
  }

  build1H = (bins: Bins, c: number, rows: Int32Array, q: Int32Array, qh: Int32Array, begin: number, end: number, hist: Float64Array, o: number): void => {
    this.check(bins, rows, q, hist)
    this.check(bins, qh, qh, hist)
    const s = bins.BYTES_PER_ELEMENT
    const f = s === 1 ? this.k.build1Hu8 : this.k.build1Hu16
    f(bins.byteOffset + s * c, rows.byteOffset, q.byteOffset, qh.byteOffset, begin, end, hist.byteOffset + 8 * o)
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
    this.check(bins, rows, q, hist)
    this.check(bins, qh, qh, hist)
    const s = bins.BYTES_PER_ELEMENT
    const b = bins.byteOffset
    const h = hist.byteOffset
    const f = s === 1 ? this.k.build2Hu8 : this.k.build2Hu16
    f(b + s * c0, b + s * c1, rows.byteOffset, q.byteOffset, qh.byteOffset, begin, end, h + 8 * o0, h + 8 * o1)
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
    this.check(bins, rows, q, hist)
    this.check(bins, qh, qh, hist)
    const s = bins.BYTES_PER_ELEMENT
    const b = bins.byteOffset
    const h = hist.byteOffset
    const f = s === 1 ? this.k.build4Hu8 : this.k.build4Hu16
    f(b + s * c0, b + s * c1, b + s * c2, b + s * c3, rows.byteOffset, q.byteOffset, qh.byteOffset, begin, end, h + 8 * o0, h + 8 * o1, h + 8 * o2, h + 8 * o3)
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
 * A kernel for one training whose kernel-read arrays take `bytes` of arena (arenaBytes of their
 * byte lengths): the wasm one unless `name` is ts or the arena does not fit a 32-bit memory (then ts).
 */
export function createHistKernel(name: KernelName, bytes: number): HistKernel {
  const mod = name === 'wasm' ? histModule() : null
  const pages = Math.max(1, Math.ceil((bytes + WasmKernel.OWN_BYTES) / PAGE))
  if (!mod || !wasmApi || pages > MAX_PAGES) return tsKernel
  return new WasmKernel(wasmApi, mod, pages)
}
