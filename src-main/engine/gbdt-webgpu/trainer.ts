// The host loop of the WebGPU trees engine. Rounds stay on the host; per round and chunk of models:
//
//   sample columns and rows (../gbdt/rules.ts: the CPU engine's sampler, on the host)
//   [gradient]  max |pred − y| per model                                  → read back: C floats
//   host:       k = quantExponent(max) per model (the CPU engine's function)
//   per level:  [rowUpdate of the previous level] [quantise, at the root]
//               [zero] [histogram: shared or global atomics] [derive: parent − smaller child]
//               [split filter: max, emit]                                  → read back: candidates
//   host:       the split of each node with the CPU engine's float32 formulas and tie rules, leaf
//               values, the tree's nodes; the decision table for the next rowUpdate
//
// sequential/pool train a group of one (one model per dispatch); batched a group of all of a
// worker's models, in chunks that fit the device (plan.ts). Every sum is an exact integer, so
// model i's trees equal the CPU engine's, bit for bit, whatever the chunking or the order of atomics.
import { featuresPerTree, type GbdtParams, resolveGbdtParams } from '@shared/families/gbdt'
import { quantExponent } from '../gbdt/quantise'
import {
  applySplit,
  buildsSecond,
  histogramSlots,
  isEvaluated,
  KRT_EPS,
  leafValue,
  ModelSampler,
  samplesEveryRow,
  splitCoefs,
  type SplitCoefs,
  throwIfStopped,
  trainingParams,
} from '../gbdt/rules'
import { type GbdtModel, type GbdtTree, TreeBuilder } from '../gbdt/tree'
import type { GpuGbdtData } from './data'
import { type GbdtGpu, USAGE } from './gpu'
import { DERIVE_SLOTS, kernelKey, kernelSource, NONE, UNIFORM_WORDS, WG, type KernelName, type KernelOptions } from './kernels'
import { type ChunkPlan, planChunks, SLOT_BYTES } from './plan'
import { type Candidate, choiceApplies, chooseFromCandidates, chooseFromHistogram, type NodeHistogram, type SplitChoice } from './split'

const f32 = Math.fround
/** candidate records per node in the filter's output (more: that node's histogram is read back) */
export const DEFAULT_CANDIDATES_PER_NODE = 16
/** rows per workgroup of the shared-memory histogram kernel */
const SHARED_ROWS = 1024
/** features per thread of the global-atomics histogram kernel */
const GLOBAL_FEATURES = 8
/** above this, a model-round's float32 gains could overflow: its splits are chosen from whole histograms */
const EXACT_HOST_SUM = 2 ** 60
/** kernels timed per submit when profiling */
const TIMED_PER_SUBMIT = 16
/** bytes of histograms read back per submit in the fallback */
const FALLBACK_BATCH_BYTES = 64 * 2 ** 20

export type HistogramMode = 'auto' | 'global' | 'shared'

export interface WebgpuTrainOptions {
  /** after every round of a chunk: the chunk's model indices (within the group), 1-based round */
  onRound?: (indices: readonly number[], round: number, rounds: number) => void
  shouldStop?: () => boolean
  cancelError?: () => Error
  /** when model `index` (of the group) has all its trees */
  onModelDone?: (index: number, model: GbdtModel) => void
  /** cap on one chunk's histogram buffer (default 512 MiB; the device's binding size caps it too) */
  histogramBudgetBytes?: number
  /** workgroup-memory histograms where they fit (auto), or always global atomics, or shared where possible */
  histogramMode?: HistogramMode
  candidatesPerNode?: number
  /** tests: read every evaluated node's histogram back and check the filter kept the CPU engine's choice */
  checkFilter?: boolean
  /** filled in while training */
  stats?: WebgpuTrainStats
  /** per-kernel device time in stats.kernelMs (timestamp queries; one extra read-back per submit) */
  profile?: boolean
}

export interface WebgpuTrainStats {
  chunks: number
  modelsPerChunk: number
  nodeSlots: number
  histogramBytes: number
  passes: number
  sharedPasses: number
  globalPasses: number
  evaluatedNodes: number
  candidates: number
  maxCandidatesPerNode: number
  /** nodes whose candidates overflowed K: decided from their histogram, read back */
  overflowNodes: number
  /** model-rounds decided from whole histograms (gradients too large for float32 gains) */
  exactHostRounds: number
  /** checkFilter: nodes whose filtered choice was compared with the whole-histogram choice */
  filterChecks: number
  readbacks: number
  /** ms spent waiting for read-backs (the device's work before each, plus the transfer) */
  waitMs: number
  /** profile: device ms per kernel (timestamp queries) */
  kernelMs: Record<string, number>
}

export function emptyStats(): WebgpuTrainStats {
  return {
    chunks: 0,
    modelsPerChunk: 0,
    nodeSlots: 0,
    histogramBytes: 0,
    passes: 0,
    sharedPasses: 0,
    globalPasses: 0,
    evaluatedNodes: 0,
    candidates: 0,
    maxCandidatesPerNode: 0,
    overflowNodes: 0,
    exactHostRounds: 0,
    filterChecks: 0,
    readbacks: 0,
    waitMs: 0,
    kernelMs: {},
  }
}


/** A node of the current level (index = its level index on the device). */
interface LevelNode {
  /** id in the tree */
  id: number
  /** Σq (exact integer) and sampled rows */
  gq: number
  h: number
  evaluable: boolean
  /** node histogram slot while it has one, −1 otherwise */
  slot: number
  choice: SplitChoice | null
}

/** One model's part of a pass. */
interface Slice {
  builds: { li: number; slot: number }[]
  derives: { dst: number; src: number }[]
  evals: { li: number; slot: number }[]
  temps: number[]
}

class HostModel {
  readonly sampler: ModelSampler
  readonly trees: GbdtTree[] = []
  tb = new TreeBuilder()
  readonly feats: Int32Array
  readonly slotOff: Int32Array
  readonly mask: Uint32Array
  /** histogram slots of this round's sampled features */
  histSlots = 0
  ns = 0
  k = 0
  inv = 1
  exactHost = false
  level: LevelNode[] = []
  /** per pair of the current level (nodes 2i, 2i+1): the parent's histogram slot, or null if not kept */
  parentSlots: number[] | null = null
  /** the last planned level kept its histograms (one slice) */
  single = true
  free: number[] = []

  constructor(
    readonly seed: number,
    features: number,
    params: GbdtParams,
    maskWords: number,
  ) {
    this.sampler = new ModelSampler(seed, features, params)
    const perTree = this.sampler.perTree
    this.feats = new Int32Array(features)
    this.slotOff = new Int32Array(perTree)
    this.mask = new Uint32Array(maskWords)
  }

  alloc(): number {
    const s = this.free.pop()
    if (s === undefined) throw new Error('webgpu: node histogram slots exhausted (planning error)')
    return s
  }
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

function int64(lo: number, hi: number): number {
  return (hi | 0) * 4294967296 + lo
}

const bits = new Float32Array(1)
const bitsU = new Uint32Array(bits.buffer)
function f32Bits(v: number): number {
  bits[0] = v
  return bitsU[0]
}
function bitsF32(u: number): number {
  bitsU[0] = u
  return bits[0]
}

/** f32(x), clamped to the finite float32 range */
function finiteF32(x: number): number {
  return Math.min(f32(x), 3.4e38)
}

class WebgpuTrainer {
  readonly n: number
  readonly F: number
  readonly perTree: number
  readonly S: number
  readonly coefs: SplitCoefs
  readonly baseScore: number
  readonly rowsAll: boolean
  readonly maskWords: number
  readonly chunk: ChunkPlan
  readonly C: number
  readonly P: number
  readonly K: number
  readonly kopts: KernelOptions
  readonly stats: WebgpuTrainStats
  private readonly mode: HistogramMode
  private readonly sharedWords: number
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
  /** one round's sampled rows of the model being sampled (packed into its mask) */
  private sampledScratch: Uint8Array | null = null
  private readonly maxWg: number
  private readonly timing: { set: GPUQuerySet; resolve: GPUBuffer; read: GPUBuffer } | null = null
  private timed: string[] = []

  constructor(
    private gpu: GbdtGpu,
    private d: GpuGbdtData,
    readonly params: GbdtParams,
    groupSize: number,
    private options: WebgpuTrainOptions,
  ) {
    const host = d.host
    this.n = host.rows
    this.F = host.features
    this.perTree = featuresPerTree(params.colsampleBytree, this.F)
    this.S = histogramSlots(host.width, this.perTree)
    this.coefs = splitCoefs(params)
    this.baseScore = f32(params.baseScore)
    this.rowsAll = samplesEveryRow(params)
    this.maskWords = Math.ceil(this.n / 32)
    this.K = options.candidatesPerNode ?? DEFAULT_CANDIDATES_PER_NODE
    this.chunk = planChunks({
      models: groupSize,
      rows: this.n,
      slotsPerNode: this.S,
      maxDepth: params.maxDepth,
      minChildWeight: params.minChildWeight,
      limits: gpu.limits,
      histogramBudgetBytes: options.histogramBudgetBytes,
      candidatesPerNode: this.K,
    })
    this.C = this.chunk.modelsPerChunk
    this.P = this.chunk.nodeSlots
    this.mode = options.histogramMode ?? 'auto'
    this.sharedWords = Math.floor(Math.min(gpu.limits.maxComputeWorkgroupStorageSize, 32768) / 4)
    this.kopts = { bin16: d.bin16, sharedWords: this.sharedWords }
    this.maxWg = gpu.limits.maxComputeWorkgroupsPerDimension
    this.stats = options.stats ?? emptyStats()
    Object.assign(this.stats, {
      chunks: this.stats.chunks + this.chunk.chunks,
      modelsPerChunk: this.C,
      nodeSlots: this.P,
      histogramBytes: this.chunk.histogramBytes,
    })

    const S = USAGE.STORAGE
    const own = (bytes: number, usage: number, label: string) => {
      const b = gpu.createBuffer(bytes, usage, label)
      this.owned.push(b)
      return b
    }
    const rowsBytes = this.C * this.n * 4
    this.uniform = own(UNIFORM_WORDS * 4, USAGE.UNIFORM | USAGE.COPY_DST, 'gbdt-uniform')
    this.pred = own(rowsBytes, S | USAGE.COPY_DST, 'gbdt-pred')
    this.q = own(rowsBytes, S, 'gbdt-q')
    this.pos = own(rowsBytes, S, 'gbdt-pos')
    this.mask = own(this.rowsAll ? 16 : this.C * this.maskWords * 4, S | USAGE.COPY_DST, 'gbdt-mask')
    this.models = own(this.C * 16, S | USAGE.COPY_DST, 'gbdt-models')
    this.feats = own(this.C * this.perTree * 8, S | USAGE.COPY_DST, 'gbdt-feats')
    this.scal = own(this.C * 16, S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-scal')
    this.hist = own(this.chunk.histogramBytes, S | USAGE.COPY_SRC | USAGE.COPY_DST, 'gbdt-hist')
    this.plan = new Growable(gpu, S | USAGE.COPY_DST, 'gbdt-plan')
    this.dec = new Growable(gpu, S | USAGE.COPY_DST, 'gbdt-dec')
    this.out = new Growable(gpu, S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-out')
    this.staging = new Growable(gpu, USAGE.MAP_READ | USAGE.COPY_DST, 'gbdt-staging')
    if (options.profile && gpu.timestamps) {
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

  private stopCheck(): void {
    throwIfStopped(this.options)
  }

  // ---- dispatch helpers -------------------------------------------------------------------------

  private writeUniform(fields: Partial<Record<UniformField, number>>): void {
    const u = new Uint32Array(UNIFORM_WORDS)
    const all: Record<UniformField, number> = {
      n: this.n,
      rowsPad: this.d.rowsPad,
      C: this.C,
      S: this.S,
      P: this.P,
      nFeat: this.perTree,
      K: this.K,
      E: 0,
      nDerive: 0,
      Bmax: 1,
      bsOff: 0,
      derOff: 0,
      entOff: 0,
      maskWords: this.maskWords,
      useMask: this.rowsAll ? 0 : 1,
      FC: GLOBAL_FEATURES,
      nFC: 1,
      FG: 1,
      Wmax: this.d.maxWidth,
      RB: SHARED_ROWS,
      ...fields,
    }
    UNIFORM_FIELDS.forEach((k, i) => (u[i] = all[k] >>> 0))
    const fv = new Float32Array(u.buffer)
    fv[20] = this.coefs.mcw
    fv[21] = this.coefs.lambda
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
  }

  /** Submits the encoder; when profiling, reads the kernels' timestamps back and adds them up. */
  private async submit(enc: GPUCommandEncoder): Promise<void> {
    const t = this.timing
    const names = this.timed
    this.timed = []
    if (!t || names.length === 0) {
      this.gpu.device.queue.submit([enc.finish()])
      return
    }
    enc.resolveQuerySet(t.set, 0, 2 * names.length, t.resolve, 0)
    enc.copyBufferToBuffer(t.resolve, 0, t.read, 0, 16 * names.length)
    this.gpu.device.queue.submit([enc.finish()])
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

  // ---- a chunk ----------------------------------------------------------------------------------

  async trainChunk(seeds: readonly number[], indices: readonly number[]): Promise<GbdtModel[]> {
    const ms = seeds.map((s) => new HostModel(s, this.F, this.params, this.maskWords))
    this.gpu.device.queue.writeBuffer(this.pred, 0, new Float32Array(ms.length * this.n).fill(this.baseScore))
    for (let round = 0; round < this.params.rounds; round++) {
      this.stopCheck()
      await this.round(ms)
      this.options.onRound?.(indices, round + 1, this.params.rounds)
    }
    return ms.map((m) => ({ params: this.params, seed: m.seed, features: this.F, baseScore: this.baseScore, trees: m.trees }))
  }

  private sample(m: HostModel): void {
    const feats = m.feats
    m.sampler.columns(feats)
    let slot = 0
    for (let j = 0; j < this.perTree; j++) {
      m.slotOff[j] = slot
      slot += this.d.host.width[feats[j]]
    }
    m.histSlots = slot
    if (this.rowsAll) {
      m.ns = this.n
      return
    }
    const sampled = (this.sampledScratch ??= new Uint8Array(this.n))
    m.ns = m.sampler.rows(sampled)
    m.mask.fill(0)
    for (let r = 0; r < this.n; r++) if (sampled[r] === 1) m.mask[r >>> 5] |= 1 << (r & 31)
  }

  private async round(ms: HostModel[]): Promise<void> {
    const Cn = ms.length
    const dev = this.gpu.device
    // ---- sampling, the gradient's largest magnitude ----
    const fw = new Uint32Array(Cn * this.perTree * 2)
    for (let i = 0; i < Cn; i++) {
      const m = ms[i]
      this.sample(m)
      for (let j = 0; j < this.perTree; j++) {
        fw[2 * (i * this.perTree + j)] = m.feats[j]
        fw[2 * (i * this.perTree + j) + 1] = m.slotOff[j]
      }
      if (!this.rowsAll) dev.queue.writeBuffer(this.mask, i * this.maskWords * 4, m.mask)
    }
    dev.queue.writeBuffer(this.feats, 0, fw)
    this.writeUniform({ C: Cn })
    let enc = dev.createCommandEncoder()
    enc.clearBuffer(this.scal)
    const [gx, gy] = this.grid(this.n)
    this.run(enc, 'gradient', [this.d.y, this.pred, this.mask, this.pos, this.scal], gx, gy, Cn)
    const maxBits = await this.readBack(enc, [{ src: this.scal, offset: 0, bytes: Cn * 4 }])

    // ---- quantisation: the CPU engine's rule, per model ----
    const info = new ArrayBuffer(Cn * 16)
    const iv = new Int32Array(info)
    const uv = new Uint32Array(info)
    const fv = new Float32Array(info)
    const minGain = Math.max(KRT_EPS, this.coefs.gamma) * 0.98
    for (let i = 0; i < Cn; i++) {
      const m = ms[i]
      const maxAbs = bitsF32(maxBits[i])
      m.k = quantExponent(maxAbs)
      m.inv = 2 ** -m.k
      m.exactHost = m.ns * maxAbs >= EXACT_HOST_SUM
      if (m.exactHost) this.stats.exactHostRounds++
      iv[4 * i] = m.k
      uv[4 * i + 1] = m.exactHost ? 1 : 0
      fv[4 * i + 2] = finiteF32(this.coefs.alpha * 2 ** m.k)
      fv[4 * i + 3] = finiteF32(minGain * 2 ** (2 * m.k))
      m.tb = new TreeBuilder()
      m.level = [{ id: 0, gq: 0, h: m.ns, evaluable: isEvaluated(m.ns, 0, this.params.maxDepth, this.coefs), slot: -1, choice: null }]
      m.parentSlots = null
      m.single = true
      m.free = []
      for (let s = this.P - 1; s >= 0; s--) m.free.push(s)
    }
    dev.queue.writeBuffer(this.models, 0, info)

    // ---- the levels ----
    let pendingDec: Uint32Array | null = null
    for (let depth = 0; ; depth++) {
      if (!ms.some((m) => m.level.length > 0)) break
      if (depth > 0) this.stopCheck()
      const slices = ms.map((m) => this.planModel(m, depth))
      const passes = Math.max(0, ...slices.map((s) => s.length))
      if (passes === 0 && pendingDec) {
        // nothing to evaluate at this level: the previous level's rows still move to their nodes
        enc = dev.createCommandEncoder()
        this.encodeRowUpdate(enc, pendingDec, Cn)
        await this.submit(enc)
        pendingDec = null
      }
      if (depth === 0 && passes === 0) {
        // no root is split: the root sums alone (for the root leaves)
        enc = dev.createCommandEncoder()
        this.run(enc, 'quantise', [this.d.y, this.pred, this.pos, this.models, this.q, this.scal], gx, gy, Cn)
        this.takeRootSums(ms, await this.readBack(enc, [{ src: this.scal, offset: Cn * 4, bytes: Cn * 12 }]))
      }
      for (let p = 0; p < passes; p++) {
        await this.runPass(
          ms,
          slices.map((s) => s[p] ?? null),
          pendingDec,
          depth === 0 && p === 0,
        )
        pendingDec = null
      }
      pendingDec = this.decide(ms, depth)
    }
    if (pendingDec) {
      enc = dev.createCommandEncoder()
      this.encodeRowUpdate(enc, pendingDec, Cn)
      await this.submit(enc)
    }
    for (const m of ms) m.trees.push(m.tb.finish())
  }

  private takeRootSums(ms: HostModel[], words: Uint32Array): void {
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i]
      const gq = int64(words[3 * i], words[3 * i + 1])
      if (words[3 * i + 2] !== m.ns) throw new Error(`webgpu: root of model ${m.seed} has ${words[3 * i + 2]} rows, ${m.ns} sampled`)
      m.level[0].gq = gq
      m.tb.add(leafValue(gq * m.inv, m.ns, this.coefs))
    }
  }

  private encodeRowUpdate(enc: GPUCommandEncoder, dec: Uint32Array, Cn: number): void {
    const buf = this.dec.ensure(dec.byteLength)
    this.gpu.device.queue.writeBuffer(buf, 0, dec)
    const [gx, gy] = this.grid(this.n)
    this.run(enc, 'rowUpdate', [this.d.bins, this.d.finfo, buf, this.pos, this.pred], gx, gy, Cn)
  }

  // ---- planning a level ---------------------------------------------------------------------------

  /**
   * Model m's slices of this level (usually one): which node histograms are built from rows, which
   * are derived as parent − sibling in the parent's slot, and which nodes are evaluated. The CPU
   * engine's choice: of two evaluable siblings, build the one with fewer rows (the right one iff
   * strictly fewer); of one evaluable child, build its sibling if that has fewer rows and derive.
   */
  private planModel(m: HostModel, depth: number): Slice[] {
    const lv = m.level
    const ev: number[] = []
    for (let i = 0; i < lv.length; i++) if (lv[i].evaluable) ev.push(i)
    const ps = m.parentSlots
    m.parentSlots = null
    m.single = true
    if (ev.length === 0) {
      if (ps) for (const s of ps) if (s >= 0) m.free.push(s)
      return []
    }
    if (depth === 0) {
      const s = m.alloc()
      lv[0].slot = s
      return [{ builds: [{ li: 0, slot: s }], derives: [], evals: [{ li: 0, slot: s }], temps: [] }]
    }
    if (ps) {
      let fresh = 0
      for (let i = 0; i < ps.length; i++) {
        const L = lv[2 * i]
        const R = lv[2 * i + 1]
        if (!L.evaluable && !R.evaluable) {
          if (ps[i] >= 0) m.free.push(ps[i])
          ps[i] = -1
        } else if (L.evaluable && R.evaluable) fresh++
        else {
          const [x, o] = L.evaluable ? [L, R] : [R, L]
          if (buildsSecond(x.h, o.h)) fresh++
        }
      }
      if (fresh <= m.free.length && ps.every((s, i) => s >= 0 || (!lv[2 * i].evaluable && !lv[2 * i + 1].evaluable))) {
        const sl: Slice = { builds: [], derives: [], evals: [], temps: [] }
        for (let i = 0; i < ps.length; i++) {
          if (ps[i] < 0) continue
          const li = 2 * i
          const ri = 2 * i + 1
          const L = lv[li]
          const R = lv[ri]
          if (L.evaluable && R.evaluable) {
            const [small, big] = buildsSecond(L.h, R.h) ? [ri, li] : [li, ri]
            const s = m.alloc()
            lv[small].slot = s
            lv[big].slot = ps[i]
            sl.builds.push({ li: small, slot: s })
            sl.derives.push({ dst: ps[i], src: s })
          } else {
            const [x, o] = L.evaluable ? [li, ri] : [ri, li]
            lv[x].slot = ps[i]
            if (buildsSecond(lv[x].h, lv[o].h)) {
              const t = m.alloc()
              sl.builds.push({ li: o, slot: t })
              sl.derives.push({ dst: ps[i], src: t })
              sl.temps.push(t)
            } else {
              sl.builds.push({ li: x, slot: ps[i] })
            }
          }
        }
        for (const i of ev) sl.evals.push({ li: i, slot: lv[i].slot })
        return [sl]
      }
      for (const s of ps) if (s >= 0) m.free.push(s)
    }
    // rebuild every evaluable node from its rows
    if (ev.length <= m.free.length) {
      const sl: Slice = { builds: [], derives: [], evals: [], temps: [] }
      for (const i of ev) {
        const s = m.alloc()
        lv[i].slot = s
        sl.builds.push({ li: i, slot: s })
        sl.evals.push({ li: i, slot: s })
      }
      return [sl]
    }
    // too many for the slots: slices of P nodes, no histogram kept for the next level
    m.single = false
    const out: Slice[] = []
    for (let a = 0; a < ev.length; a += this.P) {
      const sl: Slice = { builds: [], derives: [], evals: [], temps: [] }
      ev.slice(a, a + this.P).forEach((i, k) => {
        lv[i].slot = k
        sl.builds.push({ li: i, slot: k })
        sl.evals.push({ li: i, slot: k })
      })
      out.push(sl)
    }
    return out
  }

  // ---- one pass: build, derive, filter, read back, decide ----------------------------------------

  private async runPass(ms: HostModel[], slices: (Slice | null)[], pendingDec: Uint32Array | null, root: boolean): Promise<void> {
    const Cn = ms.length
    const dev = this.gpu.device
    let Bmax = 1
    let E = 0
    let nDer = 0
    let tabWords = 0
    for (let i = 0; i < Cn; i++) {
      const s = slices[i]
      if (!s) continue
      Bmax = Math.max(Bmax, s.builds.length)
      E += s.evals.length
      nDer += s.derives.length
      tabWords += ms[i].level.length
    }
    const bsOff = Cn + tabWords
    const derOff = bsOff + Cn * Bmax
    const entOff = derOff + 4 * nDer
    const plan = new Uint32Array(entOff + 5 * E).fill(NONE)
    const entries: { m: number; li: number }[] = []
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
    const planBuf = this.plan.ensure(plan.byteLength)
    dev.queue.writeBuffer(planBuf, 0, plan)

    // the histogram kernel: workgroup memory when the pass's built nodes × a feature fit, and (auto)
    // a workgroup's rows outnumber the slots it zeroes and adds into the global histogram
    const wmax = this.d.maxWidth
    let FG = Math.min(this.perTree, Math.floor(this.sharedWords / (Bmax * wmax * 3)))
    const fits = FG >= 1
    const shared = this.mode === 'shared' ? fits : this.mode === 'auto' && fits && this.n >= 2 * Bmax * wmax
    if (!shared) FG = 1
    let RB = Math.max(SHARED_ROWS, 4 * Bmax * wmax)
    while (Math.ceil(this.n / RB) > this.maxWg) RB *= 2
    let FC = GLOBAL_FEATURES
    while (Cn * Math.ceil(this.perTree / FC) > this.maxWg) FC *= 2
    const nFC = Math.ceil(this.perTree / FC)
    this.writeUniform({ C: Cn, E, nDerive: nDer, Bmax, bsOff, derOff, entOff, FC, nFC, FG, RB })
    this.stats.passes++
    if (shared) this.stats.sharedPasses++
    else this.stats.globalPasses++
    this.stats.evaluatedNodes += E

    const outWords = 5 * E + 5 * E * this.K
    const outBuf = this.out.ensure(Math.max(16, outWords * 4))
    const enc = dev.createCommandEncoder()
    if (pendingDec) this.encodeRowUpdate(enc, pendingDec, Cn)
    if (E > 0) enc.clearBuffer(outBuf, 0, 2 * E * 4)
    // zero the slots built into (each model's histogram slots only; adjacent slots in one clear)
    const nodeBytes = this.S * SLOT_BYTES
    for (let i = 0; i < Cn; i++) {
      const s = slices[i]
      if (!s) continue
      const slots = s.builds.map((b) => b.slot).sort((a, b) => a - b)
      for (let k = 0; k < slots.length; ) {
        let k1 = k + 1
        while (k1 < slots.length && slots[k1] === slots[k1 - 1] + 1) k1++
        const bytes = (k1 - k - 1) * nodeBytes + ms[i].histSlots * SLOT_BYTES
        enc.clearBuffer(this.hist, (i * this.P + slots[k]) * nodeBytes, bytes)
        k = k1
      }
    }
    const [gx, gy] = this.grid(this.n)
    if (root) this.run(enc, 'quantise', [this.d.y, this.pred, this.pos, this.models, this.q, this.scal], gx, gy, Cn)
    const histBufs = [this.d.bins, this.q, this.pos, planBuf, this.feats, this.hist]
    if (shared) this.run(enc, 'histShared', histBufs, Math.ceil(this.n / RB), Math.ceil(this.perTree / FG), Cn)
    else this.run(enc, 'histGlobal', histBufs, gx, gy, Cn * nFC)
    if (nDer > 0) {
      const [dx, dy] = this.grid(nDer * Math.ceil(this.S / DERIVE_SLOTS))
      this.run(enc, 'derive', [planBuf, this.hist], dx, dy, 1)
    }
    if (E > 0) {
      const [sx, sy] = this.grid(E * this.perTree)
      const bufs = [this.hist, planBuf, this.feats, this.d.finfo, this.models, outBuf, this.scal]
      this.run(enc, 'splitMax', bufs, sx, sy, 1)
      this.run(enc, 'splitEmit', bufs, sx, sy, 1)
    }
    const copies = [{ src: outBuf, offset: 0, bytes: outWords * 4 }]
    if (root) copies.push({ src: this.scal, offset: Cn * 4, bytes: Cn * 12 })
    const words = await this.readBack(enc, copies)
    if (root) this.takeRootSums(ms, words.subarray(outWords))

    // ---- decide each evaluated node ----
    const full: number[] = []
    for (let e = 0; e < E; e++) {
      const { m: i, li } = entries[e]
      const m = ms[i]
      const node = m.level[li]
      const G = int64(words[2 * E + 3 * e], words[2 * E + 3 * e + 1])
      const H = words[2 * E + 3 * e + 2]
      if (G !== node.gq || H !== node.h) {
        throw new Error(`webgpu: node ${node.id} of model ${m.seed} sums to (${G}, ${H}) on the device, (${node.gq}, ${node.h}) on the host`)
      }
      const count = words[E + e]
      this.stats.candidates += Math.min(count, this.K)
      this.stats.maxCandidatesPerNode = Math.max(this.stats.maxCandidatesPerNode, count)
      if (!m.exactHost && count <= this.K) {
        const cands: Candidate[] = []
        for (let c = 0; c < count; c++) {
          const w = 5 * E + (e * this.K + c) * 5
          const b = words[w + 1]
          cands.push({ j: words[w], bin: b & 0x7fffffff, backward: b >>> 31 === 1, glq: int64(words[w + 2], words[w + 3]), hl: words[w + 4] })
        }
        node.choice = chooseFromCandidates(cands, node.gq, node.h, m.inv, this.coefs)
      } else {
        node.choice = null
        if (!m.exactHost) this.stats.overflowNodes++
      }
      if (node.choice === null || this.options.checkFilter) full.push(e)
    }
    if (full.length > 0) await this.decideFromHistograms(ms, entries, full)
    for (let i = 0; i < Cn; i++) {
      const s = slices[i]
      if (!s) continue
      for (const t of s.temps) ms[i].free.push(t)
    }
  }

  /** The fallback (and checkFilter): whole node histograms read back, the CPU engine's scan on them. */
  private async decideFromHistograms(ms: HostModel[], entries: { m: number; li: number }[], which: number[]): Promise<void> {
    const nodeBytes = this.S * SLOT_BYTES
    const per = Math.max(1, Math.floor(FALLBACK_BATCH_BYTES / nodeBytes))
    for (let a = 0; a < which.length; a += per) {
      const batch = which.slice(a, a + per)
      const enc = this.gpu.device.createCommandEncoder()
      const words = await this.readBack(
        enc,
        batch.map((e) => {
          const { m: i, li } = entries[e]
          return { src: this.hist, offset: (i * this.P + ms[i].level[li].slot) * nodeBytes, bytes: nodeBytes }
        }),
      )
      batch.forEach((e, k) => {
        const { m: i, li } = entries[e]
        const m = ms[i]
        const node = m.level[li]
        const hist = this.nodeHistogram(m, words.subarray((k * nodeBytes) / 4, ((k + 1) * nodeBytes) / 4))
        const exact = chooseFromHistogram(hist, node.gq, node.h, m.inv, this.coefs)
        if (node.choice && this.options.checkFilter) {
          this.stats.filterChecks++
          const a1 = choiceApplies(node.choice, node.h, this.coefs)
          const a2 = choiceApplies(exact, node.h, this.coefs)
          const same =
            a1 === a2 &&
            (!a1 ||
              (node.choice.j === exact.j &&
                node.choice.bin === exact.bin &&
                node.choice.defaultLeft === exact.defaultLeft &&
                node.choice.glq === exact.glq &&
                node.choice.hl === exact.hl &&
                node.choice.best === exact.best))
          if (!same) {
            throw new Error(`webgpu: the split filter missed node ${node.id} of model ${m.seed}: ${JSON.stringify(node.choice)} vs ${JSON.stringify(exact)}`)
          }
        }
        node.choice = exact
      })
    }
  }

  private nodeHistogram(m: HostModel, w: Uint32Array): NodeHistogram {
    const host = this.d.host
    const slots = new Float64Array(2 * this.S)
    for (let s = 0; s < this.S; s++) {
      slots[2 * s] = int64(w[3 * s], w[3 * s + 1])
      slots[2 * s + 1] = w[3 * s + 2]
    }
    const nBins = new Int32Array(this.perTree)
    const hasMissing = new Uint8Array(this.perTree)
    for (let j = 0; j < this.perTree; j++) {
      nBins[j] = host.nBins[m.feats[j]]
      hasMissing[j] = host.hasMissing[m.feats[j]]
    }
    return { slots, offset: m.slotOff, nBins, hasMissing }
  }

  // ---- apply a level's decisions ------------------------------------------------------------------

  /** Splits or leaves for every node of the level (in level order = the tree's BFS order), the next level, and the device's decision table. */
  private decide(ms: HostModel[], depth: number): Uint32Array {
    const Cn = ms.length
    const c = this.coefs
    const host = this.d.host
    const parts: Uint32Array[] = []
    let total = Cn
    for (const m of ms) {
      const lv = m.level
      const entries = new Uint32Array(lv.length * 6)
      const next: LevelNode[] = []
      const nextParents: number[] = []
      const t = m.tb
      for (let li = 0; li < lv.length; li++) {
        const node = lv[li]
        const ch = node.evaluable ? node.choice : null
        if (!ch || !choiceApplies(ch, node.h, c)) {
          entries[6 * li] = NONE
          entries[6 * li + 5] = f32Bits(t.leafValue[node.id])
          if (node.slot >= 0 && m.single) m.free.push(node.slot)
          continue
        }
        const f = m.feats[ch.j]
        const b = ch.bin
        const gl = ch.glq
        const hl = ch.hl
        const gr = node.gq - gl
        const hr = node.h - hl
        const lid = applySplit(t, node.id, { feature: f, bin: b, defaultLeft: ch.defaultLeft, glq: gl, hl }, node.gq, node.h, m.inv, c, host.cuts)
        const maxDepth = this.params.maxDepth
        entries.set([f, b >>> 0, ch.defaultLeft ? 1 : 0, next.length, next.length + 1, 0], 6 * li)
        next.push(
          { id: lid, gq: gl, h: hl, evaluable: isEvaluated(hl, depth + 1, maxDepth, c), slot: -1, choice: null },
          { id: lid + 1, gq: gr, h: hr, evaluable: isEvaluated(hr, depth + 1, maxDepth, c), slot: -1, choice: null },
        )
        nextParents.push(m.single ? node.slot : -1)
      }
      m.level = next
      m.parentSlots = m.single && next.length > 0 ? nextParents : null
      parts.push(entries)
      total += entries.length
    }
    const dec = new Uint32Array(total)
    let at = Cn
    parts.forEach((p, i) => {
      dec[i] = at
      dec.set(p, at)
      at += p.length
    })
    return dec
  }
}

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

/**
 * Trains one model per seed on the device (a group of one: sequential/pool; many: batched, chunked
 * to fit). Model i's trees equal the CPU engine's trainGbdtGroup(data, params, [seeds[i]]).
 */
export async function trainGbdtGroupWebgpu(
  gpu: GbdtGpu,
  d: GpuGbdtData,
  paramsIn: Partial<GbdtParams>,
  seeds: readonly number[],
  options: WebgpuTrainOptions = {},
): Promise<GbdtModel[]> {
  const params = trainingParams(paramsIn, d.host.rows, d.host.cuts.maxBin, seeds)
  if (d.disposed) throw new Error('webgpu: the data set was disposed')
  if (seeds.length === 0) return []
  const t = new WebgpuTrainer(gpu, d, params, seeds.length, options)
  try {
    const out: GbdtModel[] = []
    for (let a = 0; a < seeds.length; a += t.C) {
      const indices = seeds.slice(a, a + t.C).map((_, k) => a + k)
      const models = await t.trainChunk(seeds.slice(a, a + t.C), indices)
      models.forEach((model, k) => {
        out.push(model)
        options.onModelDone?.(indices[k], model)
      })
    }
    return out
  } finally {
    t.dispose()
  }
}

/** The chunking a group would get on this device (for flags and reports). */
export function chunkPlanFor(gpu: GbdtGpu, d: GpuGbdtData, paramsIn: Partial<GbdtParams>, models: number, histogramBudgetBytes?: number): ChunkPlan {
  const params = resolveGbdtParams(paramsIn)
  const perTree = featuresPerTree(params.colsampleBytree, d.host.features)
  return planChunks({
    models,
    rows: d.host.rows,
    slotsPerNode: histogramSlots(d.host.width, perTree),
    maxDepth: params.maxDepth,
    minChildWeight: params.minChildWeight,
    limits: gpu.limits,
    histogramBudgetBytes,
    candidatesPerNode: DEFAULT_CANDIDATES_PER_NODE,
  })
}
