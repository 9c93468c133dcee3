// The trainer's device side: the buffers one chunk trains in, the uniform block, a kernel's bind
// group and compute pass, submits (timed when profiling) and read-backs, and the commands of each
// step of a round — the gradient's maximum, the root's sums, a level's pass (plan table, cleared
// slots, histogram, derive, split filter), the row update, the fallback's histogram read-back. It
// decides nothing about trees: it encodes what the host planned (level.ts) and returns the words
// the host decides from (decide.ts). Layouts of every buffer: kernels.ts.
import type { GpuGbdtData } from './data'
import { type GbdtGpu, USAGE } from './gpu'
import { DERIVE_SLOTS, kernelKey, kernelSource, MODEL_INFO_WORDS, NONE, UNIFORM_WORDS, WG, type KernelName, type KernelOptions } from './kernels'
import type { HostModel, Slice, TrainShape } from './level'
import type { HistogramMode, WebgpuTrainStats } from './options'
import { SLOT_BYTES } from './plan'

/** rows per workgroup of the shared-memory histogram kernel */
const SHARED_ROWS = 1024
/** features per thread of the global-atomics histogram kernel */
const GLOBAL_FEATURES = 8
/** kernels timed per submit when profiling */
const TIMED_PER_SUBMIT = 16
/** bytes of histograms read back per submit in the fallback */
const FALLBACK_BATCH_BYTES = 64 * 2 ** 20

const UNIFORM_FIELDS = [
  'n',
  'rowsPad',
  'C',
  'S',
  'P',
  'nFeat',
  'K',
  'E',
  'nDerive',
  'Bmax',
  'bsOff',
  'derOff',
  'entOff',
  'maskWords',
  'useMask',
  'FC',
  'nFC',
  'FG',
  'Wmax',
  'RB',
] as const
type UniformField = (typeof UNIFORM_FIELDS)[number]

/** An evaluated node of a pass: its model (index in the chunk) and level index. */
export interface PassEntry {
  m: number
  li: number
}

/** A level's pass as read back: the filter's output (kernels.ts, `out`), and the root's sums at the root. */
export interface PassResult {
  words: Uint32Array
  /** the evaluated nodes, in the order of their records in `words` */
  entries: PassEntry[]
  /** [Σq lo, hi, count] per model: the root pass only */
  rootSums: Uint32Array | null
}

/** The plan table of one pass (kernels.ts, `plan`) and the sizes the uniform block carries. */
interface PassTable {
  plan: Uint32Array
  entries: PassEntry[]
  /** most nodes one model builds, evaluated nodes, derive entries */
  Bmax: number
  E: number
  nDer: number
  bsOff: number
  derOff: number
  entOff: number
}

/** How a pass's histograms are built: workgroup memory (shared) or global atomics, and their tiling. */
interface HistogramKernel {
  shared: boolean
  /** shared: features per workgroup, rows per workgroup */
  FG: number
  RB: number
  /** global: features per thread, and the threads' feature groups */
  FC: number
  nFC: number
}

/** A device buffer that grows (never past the binding limit it is bound with). */
class Growable {
  buffer: GPUBuffer | null = null
  constructor(
    private gpu: GbdtGpu,
    private usage: number,
    private label: string,
  ) {}
  ensure(bytes: number): GPUBuffer {
    if (!this.buffer || this.buffer.size < bytes) {
      this.gpu.destroyBuffer(this.buffer)
      const cap = this.gpu.limits.maxStorageBufferBindingSize
      const want = Math.max(bytes, Math.min(cap, Math.ceil((this.buffer?.size ?? 0) * 1.5)), 256)
      this.buffer = this.gpu.createBuffer(want, this.usage, this.label)
    }
    return this.buffer
  }
  destroy(): void {
    this.gpu.destroyBuffer(this.buffer)
    this.buffer = null
  }
}

/**
 * The plan table of a pass: per model its level index → local build index, local build index →
 * slot, then the derive entries and the evaluated nodes' entries (with their sums, except at the
 * root, whose sums the quantise kernel of the same pass computes).
 */
function packPassTable(ms: readonly HostModel[], slices: readonly (Slice | null)[], root: boolean): PassTable {
  const Cn = ms.length
  let Bmax = 1
  let E = 0
  let nDer = 0
  let tabWords = 0
  for (let i = 0; i < Cn; i++) {
    // every model's level has its entries (NONE where nothing is built): the histogram kernels look
    // up every row of every model, also of one that builds nothing in this pass (its depth reached)
    tabWords += ms[i].level.length
    const s = slices[i]
    if (!s) continue
    Bmax = Math.max(Bmax, s.builds.length)
    E += s.evals.length
    nDer += s.derives.length
  }
  const bsOff = Cn + tabWords
  const derOff = bsOff + Cn * Bmax
  const entOff = derOff + 4 * nDer
  const plan = new Uint32Array(entOff + 5 * E).fill(NONE)
  const entries: PassEntry[] = []
  let at = Cn
  let der = derOff
  let ent = entOff
  for (let i = 0; i < Cn; i++) {
    plan[i] = at
    const s = slices[i]
    if (s) {
      s.builds.forEach((b, l) => {
        plan[at + b.li] = l
        plan[bsOff + i * Bmax + l] = b.slot
      })
      for (const x of s.derives) {
        plan[der++] = i
        plan[der++] = x.dst
        plan[der++] = x.src
        plan[der++] = ms[i].histSlots
      }
      for (const x of s.evals) {
        const node = ms[i].level[x.li]
        plan[ent++] = i
        plan[ent++] = x.slot
        if (root) {
          ent += 3 // NONE: the root's sums are on the device
        } else {
          plan[ent++] = node.gq >>> 0
          plan[ent++] = Math.floor(node.gq / 4294967296) >>> 0
          plan[ent++] = node.h
        }
        entries.push({ m: i, li: x.li })
      }
    }
    at += ms[i].level.length
  }
  return { plan, entries, Bmax, E, nDer, bsOff, derOff, entOff }
}

export class GbdtCommands {
  private readonly sharedWords: number
  private readonly kopts: KernelOptions
  private readonly maxWg: number
  private readonly uniform: GPUBuffer
  private readonly pred: GPUBuffer
  private readonly q: GPUBuffer
  private readonly pos: GPUBuffer
  private readonly mask: GPUBuffer
  private readonly models: GPUBuffer
  private readonly feats: GPUBuffer
  private readonly scal: GPUBuffer
  private readonly hist: GPUBuffer
  private readonly plan: Growable
  private readonly dec: Growable
  private readonly out: Growable
  private readonly staging: Growable
  private readonly owned: GPUBuffer[] = []
  private readonly timing: { set: GPUQuerySet; resolve: GPUBuffer; read: GPUBuffer } | null = null
  private timed: string[] = []

  constructor(
    private gpu: GbdtGpu,
    private d: GpuGbdtData,
    private shape: TrainShape,
    histogramBytes: number,
    private mode: HistogramMode,
    private stats: WebgpuTrainStats,
    profile: boolean,
  ) {
    this.sharedWords = Math.floor(Math.min(gpu.limits.maxComputeWorkgroupStorageSize, 32768) / 4)
    this.kopts = { bin16: d.bin16, sharedWords: this.sharedWords }
    this.maxWg = gpu.limits.maxComputeWorkgroupsPerDimension

    const { C, n, perTree, maskWords, rowsAll } = shape
    const S = USAGE.STORAGE
    const own = (bytes: number, usage: number, label: string) => {
      const b = gpu.createBuffer(bytes, usage, label)
      this.owned.push(b)
      return b
    }
    const rowsBytes = C * n * 4
    this.uniform = own(UNIFORM_WORDS * 4, USAGE.UNIFORM | USAGE.COPY_DST, 'gbdt-uniform')
    this.pred = own(rowsBytes, S | USAGE.COPY_DST, 'gbdt-pred')
    this.q = own(rowsBytes, S, 'gbdt-q')
    this.pos = own(rowsBytes, S, 'gbdt-pos')
    this.mask = own(rowsAll ? 16 : C * maskWords * 4, S | USAGE.COPY_DST, 'gbdt-mask')
    this.models = own(C * MODEL_INFO_WORDS * 4, S | USAGE.COPY_DST, 'gbdt-models')
    this.feats = own(C * perTree * 8, S | USAGE.COPY_DST, 'gbdt-feats')
    this.scal = own(C * 16, S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-scal')
    this.hist = own(histogramBytes, S | USAGE.COPY_SRC | USAGE.COPY_DST, 'gbdt-hist')
    this.plan = new Growable(gpu, S | USAGE.COPY_DST, 'gbdt-plan')
    this.dec = new Growable(gpu, S | USAGE.COPY_DST, 'gbdt-dec')
    this.out = new Growable(gpu, S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-out')
    this.staging = new Growable(gpu, USAGE.MAP_READ | USAGE.COPY_DST, 'gbdt-staging')
    if (profile && gpu.timestamps) {
      this.timing = {
        set: gpu.device.createQuerySet({ type: 'timestamp', count: 2 * TIMED_PER_SUBMIT }),
        resolve: own(16 * TIMED_PER_SUBMIT, USAGE.QUERY_RESOLVE | USAGE.COPY_SRC, 'gbdt-timestamps'),
        read: own(16 * TIMED_PER_SUBMIT, USAGE.MAP_READ | USAGE.COPY_DST, 'gbdt-timestamps-read'),
      }
    }
  }

  dispose(): void {
    this.timing?.set.destroy()
    for (const b of this.owned) this.gpu.destroyBuffer(b)
    this.owned.length = 0
    this.plan.destroy()
    this.dec.destroy()
    this.out.destroy()
    this.staging.destroy()
  }

  // ---- the steps of a round -----------------------------------------------------------------------

  /** Every model's predictions start at the base score. */
  writeBaseScore(models: number, baseScore: number): void {
    this.gpu.device.queue.writeBuffer(this.pred, 0, new Float32Array(models * this.shape.n).fill(baseScore))
  }

  /**
   * This round's samples: each model's row mask (when rows are sampled), and its (feature, slot
   * offset) pairs, NONE after its own when it samples fewer than the chunk's widest model.
   */
  writeSamples(ms: readonly HostModel[]): void {
    const { perTree, maskWords, rowsAll } = this.shape
    const fw = new Uint32Array(ms.length * perTree * 2).fill(NONE)
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i]
      for (let j = 0; j < m.sampler.perTree; j++) {
        fw[2 * (i * perTree + j)] = m.feats[j]
        fw[2 * (i * perTree + j) + 1] = m.slotOff[j]
      }
      if (!rowsAll) this.gpu.device.queue.writeBuffer(this.mask, i * maskWords * 4, m.mask)
    }
    this.gpu.device.queue.writeBuffer(this.feats, 0, fw)
  }

  /** Round start on the device: max |pred − y| per model (f32 bits), every row to the root. */
  async maxGradients(Cn: number): Promise<Uint32Array> {
    this.writeUniform({ C: Cn })
    const enc = this.gpu.device.createCommandEncoder()
    enc.clearBuffer(this.scal)
    const [gx, gy] = this.grid(this.shape.n)
    this.run(enc, 'gradient', [this.d.y, this.pred, this.mask, this.pos, this.scal], gx, gy, Cn)
    return this.readBack(enc, [{ src: this.scal, offset: 0, bytes: Cn * 4 }])
  }

  /** Per model: quantisation exponent, exact-host flag, α·2^k, the gain floor, min_child_weight, λ (kernels.ts, ModelInfo). */
  writeModelInfo(info: ArrayBuffer): void {
    this.gpu.device.queue.writeBuffer(this.models, 0, info)
  }

  /** When no root is split: the quantise kernel alone, for the root's sums (the root leaves). */
  async rootSums(Cn: number): Promise<Uint32Array> {
    const enc = this.gpu.device.createCommandEncoder()
    this.encodeQuantise(enc, Cn)
    return this.readBack(enc, [{ src: this.scal, offset: Cn * 4, bytes: Cn * 12 }])
  }

  /** The previous level's decisions applied on their own (no pass follows to carry them). */
  async rowUpdate(dec: Uint32Array, Cn: number): Promise<void> {
    const enc = this.gpu.device.createCommandEncoder()
    this.encodeRowUpdate(enc, dec, Cn)
    await this.submit(enc)
  }

  /**
   * One pass of a level: the previous level's row update (when pending), the quantised gradients (at
   * the root), the planned histograms built and derived, the split filter; one read-back.
   */
  async levelPass(ms: readonly HostModel[], slices: readonly (Slice | null)[], pendingDec: Uint32Array | null, root: boolean): Promise<PassResult> {
    const Cn = ms.length
    const t = packPassTable(ms, slices, root)
    const { E, nDer, Bmax } = t
    const planBuf = this.plan.ensure(t.plan.byteLength)
    this.gpu.device.queue.writeBuffer(planBuf, 0, t.plan)
    const k = this.histogramKernel(Cn, Bmax)
    this.writeUniform({ C: Cn, E, nDerive: nDer, Bmax, bsOff: t.bsOff, derOff: t.derOff, entOff: t.entOff, FC: k.FC, nFC: k.nFC, FG: k.FG, RB: k.RB })
    this.stats.passes++
    if (k.shared) this.stats.sharedPasses++
    else this.stats.globalPasses++
    this.stats.evaluatedNodes += E

    const outWords = 5 * E + 5 * E * this.shape.K
    const outBuf = this.out.ensure(Math.max(16, outWords * 4))
    const enc = this.gpu.device.createCommandEncoder()
    if (pendingDec) this.encodeRowUpdate(enc, pendingDec, Cn)
    if (E > 0) enc.clearBuffer(outBuf, 0, 2 * E * 4)
    this.clearBuiltSlots(enc, ms, slices)
    if (root) this.encodeQuantise(enc, Cn)
    this.encodeHistograms(enc, planBuf, k, Cn)
    if (nDer > 0) {
      const [dx, dy] = this.grid(nDer * Math.ceil(this.shape.S / DERIVE_SLOTS))
      this.run(enc, 'derive', [planBuf, this.hist], dx, dy, 1)
    }
    if (E > 0) {
      const [sx, sy] = this.grid(E * this.shape.perTree)
      const bufs = [this.hist, planBuf, this.feats, this.d.finfo, this.models, outBuf, this.scal]
      this.run(enc, 'splitMax', bufs, sx, sy, 1)
      this.run(enc, 'splitEmit', bufs, sx, sy, 1)
    }
    const copies = [{ src: outBuf, offset: 0, bytes: outWords * 4 }]
    if (root) copies.push({ src: this.scal, offset: Cn * 4, bytes: Cn * 12 })
    const words = await this.readBack(enc, copies)
    return { words, entries: t.entries, rootSums: root ? words.subarray(outWords) : null }
  }

  /** Node histograms a fallback read-back carries (a cap on the staging buffer). */
  get histogramsPerReadBack(): number {
    return Math.max(1, Math.floor(FALLBACK_BATCH_BYTES / (this.shape.S * SLOT_BYTES)))
  }

  /** Whole node histograms (model index in the chunk, node slot), one after the other. */
  async readHistograms(nodes: readonly { m: number; slot: number }[]): Promise<Uint32Array> {
    const nodeBytes = this.shape.S * SLOT_BYTES
    const P = this.shape.P
    const enc = this.gpu.device.createCommandEncoder()
    return this.readBack(
      enc,
      nodes.map(({ m, slot }) => ({ src: this.hist, offset: (m * P + slot) * nodeBytes, bytes: nodeBytes })),
    )
  }

  // ---- encoding ----------------------------------------------------------------------------------

  private encodeQuantise(enc: GPUCommandEncoder, Cn: number): void {
    const [gx, gy] = this.grid(this.shape.n)
    this.run(enc, 'quantise', [this.d.y, this.pred, this.pos, this.models, this.q, this.scal], gx, gy, Cn)
  }

  private encodeRowUpdate(enc: GPUCommandEncoder, dec: Uint32Array, Cn: number): void {
    const buf = this.dec.ensure(dec.byteLength)
    this.gpu.device.queue.writeBuffer(buf, 0, dec)
    const [gx, gy] = this.grid(this.shape.n)
    this.run(enc, 'rowUpdate', [this.d.bins, this.d.finfo, buf, this.pos, this.pred], gx, gy, Cn)
  }

  /**
   * The histogram kernel: workgroup memory when the pass's built nodes × a feature fit, and (auto)
   * a workgroup's rows outnumber the slots it zeroes and adds into the global histogram.
   */
  private histogramKernel(Cn: number, Bmax: number): HistogramKernel {
    const { n, perTree } = this.shape
    const wmax = this.d.maxWidth
    let FG = Math.min(perTree, Math.floor(this.sharedWords / (Bmax * wmax * 3)))
    const fits = FG >= 1
    const shared = this.mode === 'shared' ? fits : this.mode === 'auto' && fits && n >= 2 * Bmax * wmax
    if (!shared) FG = 1
    let RB = Math.max(SHARED_ROWS, 4 * Bmax * wmax)
    while (Math.ceil(n / RB) > this.maxWg) RB *= 2
    let FC = GLOBAL_FEATURES
    while (Cn * Math.ceil(perTree / FC) > this.maxWg) FC *= 2
    const nFC = Math.ceil(perTree / FC)
    return { shared, FG, RB, FC, nFC }
  }

  private encodeHistograms(enc: GPUCommandEncoder, planBuf: GPUBuffer, k: HistogramKernel, Cn: number): void {
    const { n, perTree } = this.shape
    const histBufs = [this.d.bins, this.q, this.pos, planBuf, this.feats, this.hist]
    if (k.shared) this.run(enc, 'histShared', histBufs, Math.ceil(n / k.RB), Math.ceil(perTree / k.FG), Cn)
    else {
      const [gx, gy] = this.grid(n)
      this.run(enc, 'histGlobal', histBufs, gx, gy, Cn * k.nFC)
    }
  }

  /** Zeroes the slots built into (each model's histogram slots only; adjacent slots in one clear). */
  private clearBuiltSlots(enc: GPUCommandEncoder, ms: readonly HostModel[], slices: readonly (Slice | null)[]): void {
    const nodeBytes = this.shape.S * SLOT_BYTES
    const P = this.shape.P
    for (let i = 0; i < ms.length; i++) {
      const s = slices[i]
      if (!s) continue
      const slots = s.builds.map((b) => b.slot).sort((a, b) => a - b)
      for (let k = 0; k < slots.length; ) {
        let k1 = k + 1
        while (k1 < slots.length && slots[k1] === slots[k1 - 1] + 1) k1++
        const bytes = (k1 - k - 1) * nodeBytes + ms[i].histSlots * SLOT_BYTES
        enc.clearBuffer(this.hist, (i * P + slots[k]) * nodeBytes, bytes)
        k = k1
      }
    }
  }

  // ---- dispatch, submit, read back -----------------------------------------------------------------

  private writeUniform(fields: Partial<Record<UniformField, number>>): void {
    const { n, C, S, P, perTree, K, maskWords, rowsAll } = this.shape
    const u = new Uint32Array(UNIFORM_WORDS)
    const all: Record<UniformField, number> = {
      n,
      rowsPad: this.d.rowsPad,
      C,
      S,
      P,
      nFeat: perTree,
      K,
      E: 0,
      nDerive: 0,
      Bmax: 1,
      bsOff: 0,
      derOff: 0,
      entOff: 0,
      maskWords,
      useMask: rowsAll ? 0 : 1,
      FC: GLOBAL_FEATURES,
      nFC: 1,
      FG: 1,
      Wmax: this.d.maxWidth,
      RB: SHARED_ROWS,
      ...fields,
    }
    UNIFORM_FIELDS.forEach((k, i) => (u[i] = all[k] >>> 0))
    this.gpu.device.queue.writeBuffer(this.uniform, 0, u)
  }

  /** One kernel in its own compute pass (timed when profiling). */
  private run(enc: GPUCommandEncoder, name: KernelName, buffers: GPUBuffer[], x: number, y: number, z: number): void {
    const pipeline = this.gpu.pipeline(kernelKey(name, this.kopts), () => kernelSource(name, this.kopts))
    const limit = this.gpu.limits.maxStorageBufferBindingSize
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: this.uniform } }]
    buffers.forEach((b, i) => entries.push({ binding: i + 1, resource: { buffer: b, size: Math.min(b.size, limit) } }))
    let timestampWrites: GPUComputePassTimestampWrites | undefined
    if (this.timing && this.timed.length < TIMED_PER_SUBMIT) {
      const i = this.timed.length
      this.timed.push(name)
      timestampWrites = { querySet: this.timing.set, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 }
    }
    const pass = enc.beginComputePass(timestampWrites ? { timestampWrites } : {})
    pass.setPipeline(pipeline)
    pass.setBindGroup(0, this.gpu.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }))
    pass.dispatchWorkgroups(x, y, z)
    pass.end()
    this.gpu.work.dispatched()
  }

  /** Submits the encoder; when profiling, reads the kernels' timestamps back and adds them up. */
  private async submit(enc: GPUCommandEncoder): Promise<void> {
    const t = this.timing
    const names = this.timed
    this.timed = []
    if (!t || names.length === 0) {
      this.gpu.submit([enc.finish()])
      return
    }
    enc.resolveQuerySet(t.set, 0, 2 * names.length, t.resolve, 0)
    enc.copyBufferToBuffer(t.resolve, 0, t.read, 0, 16 * names.length)
    this.gpu.submit([enc.finish()])
    const ns = new BigUint64Array(await this.gpu.read(t.read, 16 * names.length))
    names.forEach((name, i) => {
      const ms = Number(ns[2 * i + 1] - ns[2 * i]) / 1e6
      this.stats.kernelMs[name] = (this.stats.kernelMs[name] ?? 0) + ms
    })
  }

  /** a 2D grid of 64-thread workgroups with at least `threads` threads (kernels flatten it) */
  private grid(threads: number): [number, number] {
    const w = Math.max(1, Math.ceil(threads / WG))
    const x = Math.min(w, this.maxWg)
    return [x, Math.ceil(w / x)]
  }

  /** Copies into the staging buffer, submits, and waits for the words. */
  private async readBack(enc: GPUCommandEncoder, copies: { src: GPUBuffer; offset: number; bytes: number }[]): Promise<Uint32Array> {
    const total = copies.reduce((s, c) => s + c.bytes, 0)
    const staging = this.staging.ensure(total)
    let at = 0
    for (const c of copies) {
      if (c.bytes > 0) enc.copyBufferToBuffer(c.src, c.offset, staging, at, c.bytes)
      at += c.bytes
    }
    await this.submit(enc)
    this.stats.readbacks++
    const t0 = performance.now()
    const out = new Uint32Array(await this.gpu.read(staging, Math.max(4, total)))
    this.stats.waitMs += performance.now() - t0
    return out
  }
}
