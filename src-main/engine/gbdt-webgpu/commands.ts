// The trainer's device side: a chunk's buffers, the level tables' layout, uniform records, bind
// groups, submits and read-backs, and a round's commands — a device-planned round encoded whole
// (one submit, one read-back), or a host-planned one pass by pass. It decides nothing about trees:
// it encodes what the trainer asks and returns the words it reads back (layouts: README.md).
import type { GpuGbdtData } from './device-data'
import { USAGE, type WgslDevice } from '../webgpu/device'
import {
  CNT_WORDS,
  DEC_WORDS,
  DERIVE_SLOTS,
  gradientDispatchModels,
  hessianWords,
  kernelKey,
  kernelSource,
  NONE,
  ROW_DRAW_WORDS,
  SHARED32_ROWS,
  UNIFORM_FIELDS,
  UNIFORM_STRIDE,
  WG,
  type KernelName,
  type KernelOptions,
  type UniformField,
} from './tree-kernels'
import type { HostModel, RoundSample, Slice, TrainShape } from './level'
import type { HistogramMode, WebgpuTrainStats } from './options'
import { slotBytes, type TableSizes } from './plan'

/** rows per workgroup of the shared-memory histogram kernels */
const SHARED_ROWS = 1024
/** features per thread of the global-atomics histogram kernel */
const GLOBAL_FEATURES = 8
/** kernels timed per submit when profiling */
const TIMED_PER_SUBMIT = 128
/** bytes of histograms read back per submit in the fallback */
const FALLBACK_BATCH_BYTES = 64 * 2 ** 20

/** Word offsets of the level tables in `tabs` (tree-kernels.ts). */
interface TableLayout extends TableSizes {
  lvl: [number, number]
  cnt: number
  bslot: number
  der: number
  eval: number
  dec: number
  choice: number
  free: number
  temp: number
  tree: number
  words: number
}

function layoutTables(C: number, P: number, s: TableSizes, hess: boolean): TableLayout {
  const w = hessianWords(hess)
  let at = 0
  const take = (words: number) => {
    const o = at
    at += words
    return o
  }
  const { nl, ne, nb, T } = s
  return {
    ...s,
    cnt: take(C * CNT_WORDS),
    lvl: [take(C * nl * w.lvl), take(C * nl * w.lvl)],
    bslot: take(C * nb),
    der: take(C * nb * 2),
    eval: take(C * ne),
    dec: take(C * nl * DEC_WORDS),
    choice: take(C * nl * w.choice),
    free: take(C * P),
    temp: take(C * nb),
    tree: take(C * T * w.tree),
    words: at,
  }
}

/** How a level's histograms are built: workgroup memory (32- or 64-bit slots) or global atomics, and their tiling. */
interface HistogramKernel {
  name: 'histShared32' | 'histShared64' | 'histGlobal'
  /** shared: features per workgroup, rows per workgroup */
  FG: number
  RB: number
  /** global: features per thread, and the threads' feature groups */
  FC: number
  nFC: number
}

/** One level of a round as encoded: its depth and worst-case counts (dispatch sizes). */
export interface LevelShape {
  depth: number
  /** nodes, evaluated nodes and builds a model may have at this level */
  NL: number
  NE: number
  NB: number
}

/** A device-planned round as read back: every model's tree records, the next round's max |g| (and max h), the error bits. */
export interface RoundResult {
  trees: Uint32Array
  /** per model of the next round: max |g| (f32 bits); with hessians then per model max h */
  maxBits: Uint32Array
  errors: Uint32Array
  /** per device model (position): its held-out rows' margins after this round's tree, where it watches them (early stopping) */
  heldOutMargins: (Float32Array | null)[]
}

/** Per device model (position): the training rows [begin, end) whose margins are read back after each round (an early-stopping watch), or null. */
export type HeldOutReads = readonly ({ begin: number; end: number } | null)[]

/** One host-planned pass as read back: the level's choices (tree-kernels.ts `choice`) and the error bits. */
export interface PassResult {
  choices: Uint32Array
  errors: Uint32Array
  /** words of one model's choices (nl × the choice's words) */
  stride: number
}

interface Encoded {
  enc: GPUCommandEncoder
  timed: string[]
}

/** A finished command buffer and where its read-back lands. */
interface Prepared {
  cb: GPUCommandBuffer
  staging: GPUBuffer | null
  total: number
  timed: string[]
}

/** A device-planned round encoded ahead (commands.encodeRound), submitted by submitRound. */
export interface EncodedRound {
  prepared: Prepared
  parity: number
  Cn: number
  CnNext: number
  heldOut: HeldOutReads
}

export class GbdtCommands {
  private readonly sharedWords: number
  private readonly kopts: KernelOptions
  private readonly maxWg: number
  private readonly uniform: GPUBuffer
  private readonly pred: GPUBuffer
  private readonly q: GPUBuffer
  /** per-row quantised hessians (a classifier's; a 16-byte placeholder without) */
  private readonly qh: GPUBuffer
  /** words of a level node, choice, tree record, histogram slot and ModelInfo (hessianWords) */
  private readonly words: ReturnType<typeof hessianWords>
  private readonly pos: GPUBuffer
  /** per model and round parity, the rule the gradient kernel draws its rows by (ROW_DRAW_WORDS) */
  private readonly draws: GPUBuffer
  private readonly models: GPUBuffer
  private readonly feats: GPUBuffer
  private readonly scal: GPUBuffer
  private readonly hist: GPUBuffer
  private readonly atom: GPUBuffer
  private tabs: GPUBuffer
  private layout: TableLayout
  private readonly staging: [GPUBuffer | null, GPUBuffer | null] = [null, null]
  private readonly owned: GPUBuffer[] = []
  private readonly timing: { set: GPUQuerySet; resolve: GPUBuffer; read: GPUBuffer } | null = null
  /** bind groups by kernel and uniform record (the buffers are the chunk's own: made once) */
  private readonly groups = new Map<string, GPUBindGroup>()
  /** uniform records: one per level of a device round, then the next round's gradient, then the host's pass */
  private readonly records: number
  private readonly drawWordsPerParity: number
  private readonly featWordsPerParity: number

  constructor(
    private gpu: WgslDevice,
    private d: GpuGbdtData,
    private shape: TrainShape,
    histogramBytes: number,
    private mode: HistogramMode,
    private stats: WebgpuTrainStats,
    profile: boolean,
    /** the deepest model's depth: levels 0..maxDepth are encoded */
    private maxDepth: number,
    device: TableSizes,
  ) {
    // up to 48 KiB: room for a depth-6 tree's last level (16 built nodes × 256 bins × 3 words) in workgroup memory
    this.sharedWords = Math.floor(Math.min(gpu.limits.maxComputeWorkgroupStorageSize, 49152) / 4)
    this.kopts = { bin16: d.bin16, sharedWords: this.sharedWords, hess: shape.hess, gradient: shape.gradient }
    this.words = hessianWords(shape.hess)
    this.maxWg = gpu.limits.maxComputeWorkgroupsPerDimension

    const { C, n, perTree, rowsAll, P } = shape
    const S = USAGE.STORAGE
    const own = (bytes: number, usage: number, label: string) => {
      const b = gpu.createBuffer(bytes, usage, label)
      this.owned.push(b)
      return b
    }
    const rowsBytes = C * n * 4
    this.records = maxDepth + 4
    this.drawWordsPerParity = rowsAll ? 0 : C * ROW_DRAW_WORDS
    this.featWordsPerParity = C * perTree * 2
    this.uniform = own(this.records * UNIFORM_STRIDE, USAGE.UNIFORM | USAGE.COPY_DST, 'gbdt-uniform')
    // COPY_SRC: the test rows' margins are read back at the end of a chunk
    this.pred = own(rowsBytes, S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-pred')
    this.q = own(rowsBytes, S, 'gbdt-q')
    this.qh = own(shape.hess ? rowsBytes : 16, S, 'gbdt-qh')
    this.pos = own(rowsBytes, S, 'gbdt-pos')
    this.draws = own(Math.max(16, 2 * this.drawWordsPerParity * 4), S | USAGE.COPY_DST, 'gbdt-row-draws')
    this.models = own(C * this.words.modelInfo * 4, S | USAGE.COPY_DST, 'gbdt-models')
    this.feats = own(2 * this.featWordsPerParity * 4, S | USAGE.COPY_DST, 'gbdt-feats')
    // [C: max |g|][3C: root Σq lo, hi, count], with hessians [C: max h][2C: root Σqh lo, hi], then [C: rows drawn]
    this.scal = own(C * (shape.hess ? 32 : 20), S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-scal')
    this.hist = own(histogramBytes, S | USAGE.COPY_SRC | USAGE.COPY_DST, 'gbdt-hist')
    this.layout = layoutTables(C, P, device, shape.hess)
    this.atom = own(C * 4, S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-atom')
    this.tabs = gpu.createBuffer(this.layout.words * 4, S | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-tabs')
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
    this.gpu.destroyBuffer(this.tabs)
    for (const s of this.staging) this.gpu.destroyBuffer(s)
    this.groups.clear()
  }

  /** The level tables' sizes now (a host-planned level may need more nodes than the device's plan). */
  get tables(): TableSizes {
    const { nl, ne, nb, T } = this.layout
    return { nl, ne, nb, T }
  }

  /** Makes room for a host-planned level of `nodes` nodes per model (the tables and every bind group on them are remade). */
  ensureLevelNodes(nodes: number): void {
    if (nodes <= this.layout.nl) return
    const { C, P } = this.shape
    this.gpu.destroyBuffer(this.tabs)
    this.layout = layoutTables(C, P, { ...this.tables, nl: Math.max(nodes, Math.ceil(this.layout.nl * 1.5)) }, this.shape.hess)
    this.tabs = this.gpu.createBuffer(this.layout.words * 4, USAGE.STORAGE | USAGE.COPY_DST | USAGE.COPY_SRC, 'gbdt-tabs')
    this.groups.clear()
  }

  // ---- per chunk and per round -----------------------------------------------------------------

  /** Every model's predictions start at the base score. */
  writeBaseScore(models: number, baseScore: number): void {
    this.upload(this.pred, 0, new Float32Array(models * this.shape.n).fill(baseScore))
  }

  /** A resumed model's training rows' margins (after its earlier trees, computed on the host) at device position `position`. */
  writeTrainingMargins(position: number, margins: Float32Array): void {
    this.upload(this.pred, position * this.shape.n * 4, margins.subarray(0, this.shape.nTrain))
  }

  /**
   * A round's samples, into its parity's half: each model's row draw (when rows are sampled: its
   * key, threshold, whether it takes every row, its held-out range; the device draws every row by
   * it) and its (feature, slot offset) pairs, NONE after its own when it samples fewer than the widest.
   * Queue-ordered: written after every command submitted before, so a round's samples can be
   * written while the round two before it still runs.
   */
  writeSamples(samples: readonly RoundSample[], parity: number): void {
    const { perTree, rowsAll } = this.shape
    const fw = new Uint32Array(samples.length * perTree * 2).fill(NONE)
    const dw = new Uint32Array(samples.length * ROW_DRAW_WORDS)
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i]
      for (let j = 0; j < s.slotOff.length; j++) {
        fw[2 * (i * perTree + j)] = s.feats[j]
        fw[2 * (i * perTree + j) + 1] = s.slotOff[j]
      }
      const d = s.rows
      dw.set([d.key, d.threshold, d.everyRow ? 1 : 0, d.heldBegin, d.heldEnd], i * ROW_DRAW_WORDS)
    }
    if (!rowsAll) this.upload(this.draws, parity * this.drawWordsPerParity * 4, dw)
    this.upload(this.feats, parity * this.featWordsPerParity * 4, fw)
  }

  /** Per model: ModelInfo (tree-kernels.ts), from the host's quantisation of this round. */
  writeModelInfo(info: ArrayBuffer): void {
    this.upload(this.models, 0, info)
  }

  /** The first round's gradient: max |pred − y| per model (f32 bits), every row to the root. */
  async firstGradient(Cn: number, parity: number): Promise<Uint32Array> {
    const g = this.recordGradient()
    this.writeRecord(g, { C: Cn, ...this.parityFields(parity) })
    const e = this.encoder()
    this.encodeGradient(e, g, Cn)
    return this.readBack(e, 0, this.maxCopies(Cn))
  }

  /**
   * A chunk compacted after models stopped early: each survivor's predictions (all its rows, test
   * rows included) moved from position `from` to `to`, then the round's gradient again for the
   * `Cn` models now at the front (its samples already rewritten at their new positions); max |g|
   * read back. The moves go through a scratch buffer (WebGPU copies not within one buffer).
   */
  async compact(moves: readonly { from: number; to: number }[], Cn: number, parity: number): Promise<Uint32Array> {
    const bytes = this.shape.n * 4
    const scratch = moves.length > 0 ? this.gpu.createBuffer(moves.length * bytes, USAGE.COPY_SRC | USAGE.COPY_DST, 'gbdt-compaction') : null
    try {
      const e = this.encoder()
      moves.forEach((m, i) => e.enc.copyBufferToBuffer(this.pred, m.from * bytes, scratch!, i * bytes, bytes))
      moves.forEach((m, i) => e.enc.copyBufferToBuffer(scratch!, i * bytes, this.pred, m.to * bytes, bytes))
      const g = this.recordGradient()
      this.writeRecord(g, { C: Cn, ...this.parityFields(parity) })
      this.encodeGradient(e, g, Cn)
      return await this.readBack(e, 0, this.maxCopies(Cn))
    } finally {
      this.gpu.destroyBuffer(scratch)
    }
  }

  /** Where each watched device model's held-out margins lie in `pred` (copied after the round's last row update). */
  private heldOutCopies(heldOut: HeldOutReads): { src: GPUBuffer; offset: number; bytes: number }[] {
    const n = this.shape.n
    return heldOut.flatMap((h, i) => (h ? [{ src: this.pred, offset: (i * n + h.begin) * 4, bytes: (h.end - h.begin) * 4 }] : []))
  }

  /** The held-out margins in a read-back from word `at` on, per device model (null: not watched). */
  private heldOutViews(words: Uint32Array, at: number, heldOut: HeldOutReads): (Float32Array | null)[] {
    let word = words.byteOffset / 4 + at
    return heldOut.map((h) => {
      if (!h) return null
      const view = new Float32Array(words.buffer, word * 4, h.end - h.begin)
      word += h.end - h.begin
      return view
    })
  }

  /** words of maxCopies(Cn) */
  private maxWords(Cn: number): number {
    return Cn * ((this.shape.hess ? 2 : 1) + (this.shape.rowsAll ? 0 : 1))
  }

  /**
   * where a gradient's per-model words lie: max |g|, with hessians max h, with rows drawn the rows
   * each model drew (tree-kernels.ts, scal; HostDecider.quantise reads them in this order)
   */
  private maxCopies(Cn: number): { src: GPUBuffer; offset: number; bytes: number }[] {
    const out = [{ src: this.scal, offset: 0, bytes: Cn * 4 }]
    if (this.shape.hess) out.push({ src: this.scal, offset: Cn * 16, bytes: Cn * 4 })
    if (!this.shape.rowsAll) out.push({ src: this.scal, offset: this.drawnCountWord(Cn) * 4, bytes: Cn * 4 })
    return out
  }

  /** scal's word where the gradient kernel counts model 0's drawn rows (tree-kernels.ts drawnCountOff) */
  private drawnCountWord(Cn: number): number {
    return (this.shape.hess ? 7 : 4) * Cn
  }

  /** Every upload of the chunk's tables and samples goes through here: counted (stats.bytesUploaded). */
  private upload(buffer: GPUBuffer, offset: number, data: ArrayBufferView | ArrayBuffer): void {
    this.stats.bytesUploaded += data.byteLength
    if (ArrayBuffer.isView(data)) this.gpu.device.queue.writeBuffer(buffer, offset, data.buffer, data.byteOffset, data.byteLength)
    else this.gpu.device.queue.writeBuffer(buffer, offset, data)
  }

  /** the roots' sums cleared before quantise adds into them (and, with hessians, their Σqh) */
  private clearRootSums(e: Encoded, Cn: number): void {
    e.enc.clearBuffer(this.scal, Cn * 4, Cn * 12)
    if (this.shape.hess) e.enc.clearBuffer(this.scal, Cn * 20, Cn * 8)
  }

  // ---- a device-planned round ------------------------------------------------------------------

  /** The levels a device-planned round encodes, with their worst-case counts. */
  deviceLevels(): LevelShape[] {
    const { P } = this.shape
    const { nl } = this.layout
    const out: LevelShape[] = []
    for (let depth = 0; depth <= this.maxDepth; depth++) {
      const wide = 2 ** Math.min(depth, 30)
      out.push({
        depth,
        NL: Math.min(wide, nl),
        NE: depth === this.maxDepth ? 0 : Math.min(wide, P),
        NB: depth === this.maxDepth ? 0 : Math.min(2 ** Math.max(0, depth - 1), P),
      })
    }
    return out
  }

  /**
   * Encodes a whole round planned on the device: quantise and the roots, then per level the row
   * update of the one before, the built slots zeroed, histograms, derive, the split search, each
   * node's decision and the plan of the next level; the last row update; the next round's gradient
   * (when `CnNext` > 0); the trees, max |g| and the watched models' held-out margins (`heldOut`,
   * per position) copied to a staging buffer. Submitted by submitRound.
   */
  encodeRound(Cn: number, CnNext: number, parity: number, heldOut: HeldOutReads = []): EncodedRound {
    const e = this.encoder()
    const L = this.layout
    this.clearRootSums(e, Cn)
    e.enc.clearBuffer(this.atom)
    const levels = this.deviceLevels()
    this.encodeQuantise(e, 0, Cn)
    this.run(e, 'startTree', 0, [this.scal, this.models, this.tabs, this.atom], ...this.grid(Cn), 1)
    for (const lv of levels) {
      const rec = lv.depth
      if (lv.depth > 0) this.encodeRowUpdate(e, rec, Cn)
      if (lv.NE > 0) {
        this.encodeSearch(e, rec, lv, Cn, lv.depth > 0)
        this.stats.histogramKernelByLevel[lv.depth] = this.histogramKernel(Cn, lv.NB).name
      }
      this.encodeDecide(e, rec, lv.NL, Cn)
      this.run(e, 'plan', rec, [this.models, this.tabs, this.atom], ...this.grid(Cn), 1)
    }
    this.encodeRowUpdate(e, this.maxDepth + 1, Cn)
    if (CnNext > 0) this.encodeGradient(e, this.recordGradient(), CnNext)
    const prepared = this.prepare(e, parity, [
      { src: this.tabs, offset: L.tree * 4, bytes: Cn * L.T * this.words.tree * 4 },
      ...this.maxCopies(CnNext),
      { src: this.atom, offset: 0, bytes: Cn * 4 },
      ...this.heldOutCopies(heldOut),
    ])
    return { prepared, parity, Cn, CnNext, heldOut }
  }

  /** Writes the round's uniform records, submits it and reads back its trees, next max |g| and error bits. */
  async submitRound(r: EncodedRound): Promise<RoundResult> {
    const L = this.layout
    const levels = this.deviceLevels()
    for (const lv of levels) this.writeRecord(lv.depth, this.levelFields(r.Cn, r.parity, lv))
    // the last row update reads the deepest level's table
    this.writeRecord(this.maxDepth + 1, this.levelFields(r.Cn, r.parity, { depth: this.maxDepth + 1, NL: 0, NE: 0, NB: 0 }))
    if (r.CnNext > 0) this.writeRecord(this.recordGradient(), { C: r.CnNext, ...this.parityFields(r.parity ^ 1) })
    this.stats.deviceRounds++
    this.stats.passes += levels.length
    const words = await this.complete(r.prepared)
    const t = r.Cn * L.T * this.words.tree
    const maxWords = this.maxWords(r.CnNext)
    return {
      trees: words.subarray(0, t),
      maxBits: words.subarray(t, t + maxWords),
      errors: words.subarray(t + maxWords, t + maxWords + r.Cn),
      heldOutMargins: this.heldOutViews(words, t + maxWords + r.Cn, r.heldOut),
    }
  }

  // ---- a host-planned round --------------------------------------------------------------------

  /** Quantise alone: the roots' sums [Σq lo, hi, count per model] (with hessians then [Σqh lo, hi per model]), for a host-planned round. */
  async rootSums(Cn: number): Promise<Uint32Array> {
    const e = this.encoder()
    this.clearRootSums(e, Cn)
    e.enc.clearBuffer(this.atom)
    const rec = this.recordHost()
    this.writeRecord(rec, this.levelFields(Cn, 0, { depth: 0, NL: 0, NE: 0, NB: 0 }))
    this.encodeQuantise(e, rec, Cn)
    const sums = { src: this.scal, offset: Cn * 4, bytes: Cn * 12 }
    return this.readBack(e, 0, this.shape.hess ? [sums, { src: this.scal, offset: Cn * 20, bytes: Cn * 8 }] : [sums])
  }

  /**
   * One pass of a host-planned level: the tables the host planned (every node of the level, the
   * builds, derives and evaluated nodes of this pass) written, the previous level's row update
   * (when pending), the search and each node's decision; the choices read back.
   */
  async hostPass(ms: readonly HostModel[], slices: readonly (Slice | null)[], pendingDec: Uint32Array[] | null, parity: number): Promise<PassResult> {
    const Cn = ms.length
    const nodes = Math.max(1, ...ms.map((m) => m.level.length))
    this.ensureLevelNodes(nodes)
    if (pendingDec) this.writeDec(pendingDec)
    const L = this.layout
    this.writeHostTables(ms, slices)
    const NB = Math.max(1, ...slices.map((s) => s?.builds.length ?? 0))
    const NE = Math.max(0, ...slices.map((s) => s?.evals.length ?? 0))
    const lv: LevelShape = { depth: 0, NL: nodes, NE, NB }
    const rec = this.recordHost()
    this.writeRecord(rec, this.levelFields(Cn, parity, lv))
    const e = this.encoder()
    if (pendingDec) this.encodeRowUpdate(e, rec, Cn)
    if (NE > 0) this.encodeSearch(e, rec, lv, Cn, true)
    this.encodeDecide(e, rec, nodes, Cn)
    this.stats.evaluatedNodes += slices.reduce((s, x) => s + (x?.evals.length ?? 0), 0)
    slices.forEach((s, i) => s?.builds.forEach((b) => (this.stats.histogramUpdates += ms[i].level[b.li].h * ms[i].sampler.perTree)))
    this.stats.passes++
    const stride = L.nl * this.words.choice
    const words = await this.readBack(e, 0, [
      { src: this.tabs, offset: L.choice * 4, bytes: Cn * stride * 4 },
      { src: this.atom, offset: 0, bytes: Cn * 4 },
    ])
    return { choices: words.subarray(0, Cn * stride), errors: words.subarray(Cn * stride), stride }
  }

  /**
   * Ends a host-planned round: the last row update (its table from the host) and the next round's
   * gradient; max |g| and the watched models' held-out margins (`heldOut`, per position) read back.
   */
  async finishHostRound(
    dec: Uint32Array[] | null,
    Cn: number,
    CnNext: number,
    parity: number,
    heldOut: HeldOutReads = [],
  ): Promise<{ maxBits: Uint32Array; heldOutMargins: (Float32Array | null)[] }> {
    // the table first: it may grow the tables, which moves the offsets the record carries
    if (dec) this.writeDec(dec)
    const rec = this.recordHost()
    this.writeRecord(rec, this.levelFields(Cn, parity, { depth: 0, NL: 0, NE: 0, NB: 0 }))
    const e = this.encoder()
    if (dec) this.encodeRowUpdate(e, rec, Cn)
    if (CnNext > 0) {
      const g = this.recordGradient()
      this.writeRecord(g, { C: CnNext, ...this.parityFields(parity ^ 1) })
      this.encodeGradient(e, g, CnNext)
    }
    const copies = [...(CnNext > 0 ? this.maxCopies(CnNext) : []), ...this.heldOutCopies(heldOut)]
    if (copies.length === 0) {
      await this.submit(e)
      return { maxBits: new Uint32Array(0), heldOutMargins: [] }
    }
    const words = await this.readBack(e, 0, copies)
    const maxWords = CnNext > 0 ? this.maxWords(CnNext) : 0
    return { maxBits: words.subarray(0, maxWords), heldOutMargins: this.heldOutViews(words, maxWords, heldOut) }
  }

  /** A host-planned level's row update on its own (the next level has nothing to evaluate). */
  hostRowUpdate(dec: Uint32Array[], Cn: number, parity: number): void {
    this.writeDec(dec)
    const rec = this.recordHost()
    this.writeRecord(rec, this.levelFields(Cn, parity, { depth: 0, NL: 0, NE: 0, NB: 0 }))
    const e = this.encoder()
    this.encodeRowUpdate(e, rec, Cn)
    void this.submit(e)
  }

  /** The host's row-update entries (per model, DEC_WORDS per node of its level) at the tables' stride. */
  private writeDec(parts: readonly Uint32Array[]): void {
    this.ensureLevelNodes(Math.max(1, ...parts.map((p) => p.length / DEC_WORDS)))
    const L = this.layout
    const words = new Uint32Array(parts.length * L.nl * DEC_WORDS)
    parts.forEach((p, i) => words.set(p, i * L.nl * DEC_WORDS))
    this.upload(this.tabs, L.dec * 4, words)
  }

  /**
   * The test rows' margins of the chunk's first `models` device models after their last tree (the
   * rows after nTrain of each model's pred), in one read-back: model after model, rows in order.
   */
  async readTestMargins(models: number): Promise<Float32Array> {
    const { n, nTrain } = this.shape
    const bytes = (n - nTrain) * 4
    const copies = Array.from({ length: models }, (_, m) => ({ src: this.pred, offset: (m * n + nTrain) * 4, bytes }))
    const words = await this.readBack(this.encoder(), 0, copies)
    return new Float32Array(words.buffer, words.byteOffset, models * (n - nTrain))
  }

  /** Node histograms a fallback read-back carries (a cap on the staging buffer). */
  get histogramsPerReadBack(): number {
    return Math.max(1, Math.floor(FALLBACK_BATCH_BYTES / (this.shape.S * slotBytes(this.shape.hess))))
  }

  /** Whole node histograms (model index in the chunk, node slot), one after the other. */
  async readHistograms(nodes: readonly { m: number; slot: number }[]): Promise<Uint32Array> {
    const nodeBytes = this.shape.S * slotBytes(this.shape.hess)
    const P = this.shape.P
    return this.readBack(
      this.encoder(),
      0,
      nodes.map(({ m, slot }) => ({ src: this.hist, offset: (m * P + slot) * nodeBytes, bytes: nodeBytes })),
    )
  }

  // ---- encoding ----------------------------------------------------------------------------------

  private encodeGradient(e: Encoded, rec: number, Cn: number): void {
    e.enc.clearBuffer(this.scal, 0, Cn * 4)
    if (!this.shape.rowsAll) e.enc.clearBuffer(this.scal, this.drawnCountWord(Cn) * 4, Cn * 4)
    const bufs = [this.d.y, this.pred, this.draws, this.pos, this.scal]
    if (this.shape.hess) {
      e.enc.clearBuffer(this.scal, Cn * 16, Cn * 4)
      bufs.push(this.q, this.qh)
    }
    this.run(e, 'gradient', rec, bufs, ...this.grid(this.shape.n), gradientDispatchModels(this.kopts, Cn, this.shape.K))
  }

  private encodeQuantise(e: Encoded, rec: number, Cn: number): void {
    const bufs = this.shape.hess ? [this.pos, this.models, this.q, this.qh, this.scal] : [this.d.y, this.pred, this.pos, this.models, this.q, this.scal]
    this.run(e, 'quantise', rec, bufs, ...this.grid(this.shape.n), Cn)
  }

  private encodeRowUpdate(e: Encoded, rec: number, Cn: number): void {
    this.run(e, 'rowUpdate', rec, [this.d.bins, this.d.finfo, this.tabs, this.pos, this.pred], ...this.grid(this.shape.n), Cn)
  }

  /** Every node of a level searched and decided (evaluated ones) or given its leaf value: one workgroup a node. */
  private encodeDecide(e: Encoded, rec: number, nodes: number, Cn: number): void {
    const x = Math.min(nodes, this.maxWg)
    this.run(e, 'search', rec, [this.hist, this.tabs, this.feats, this.d.finfo, this.models, this.atom], x, Math.ceil(nodes / x), Cn)
  }

  /** A level's histograms: the built slots zeroed, built from rows, siblings derived. */
  private encodeSearch(e: Encoded, rec: number, lv: LevelShape, Cn: number, derive: boolean): void {
    const { n, S, perTree } = this.shape
    const k = this.histogramKernel(Cn, lv.NB)
    this.stats.histogramKernels[k.name] = (this.stats.histogramKernels[k.name] ?? 0) + 1
    if (k.name === 'histGlobal') this.stats.globalPasses++
    else this.stats.sharedPasses++
    this.run(e, 'zeroSlots', rec, [this.tabs, this.hist], ...this.grid(lv.NB * S), Cn)
    const histBufs = [this.d.bins, this.q, this.pos, this.tabs, this.feats, this.hist]
    if (this.shape.hess) histBufs.push(this.qh)
    // timed per tree level (device rounds): updates per second per kernel and level
    const label = `${k.name}@${lv.depth}`
    if (k.name === 'histGlobal') this.run(e, 'histGlobal', rec, histBufs, ...this.grid(n), Cn * k.nFC, label)
    else this.run(e, k.name, rec, histBufs, Math.ceil(n / k.RB), Math.ceil(perTree / k.FG), Cn, label)
    if (derive) this.run(e, 'derive', rec, [this.tabs, this.hist], ...this.grid(lv.NB * Math.ceil(S / DERIVE_SLOTS)), Cn)
  }

  /**
   * The histogram kernel: workgroup memory when the level's built nodes × a feature fit, and (auto)
   * a workgroup's rows outnumber the slots it zeroes and adds into the global histogram; 32-bit
   * slots when a workgroup's rows (≤ 1024) keep them exact, else 64-bit.
   */
  histogramKernel(Cn: number, NB: number): HistogramKernel & { FG: number } {
    const { n, perTree } = this.shape
    const wmax = this.d.maxWidth
    // rows a workgroup: enough to outnumber the slots it adds into the global histogram (×4), or
    // at most 1024 when 32-bit slots are asked for
    let RB = this.mode === 'shared32' ? SHARED32_ROWS : Math.max(SHARED_ROWS, 4 * NB * wmax)
    while (Math.ceil(n / RB) > this.maxWg) RB *= 2
    // 32-bit slots have no room for a classifier's hessians
    const bits32 = this.mode !== 'shared64' && RB <= SHARED32_ROWS && !this.shape.hess
    const FG = Math.min(perTree, Math.floor(this.sharedWords / (NB * wmax * (bits32 ? 2 : this.words.slot))))
    const fits = FG >= 1
    const shared = this.mode === 'global' ? false : this.mode === 'auto' ? fits && n >= 2 * NB * wmax : fits
    let FC = GLOBAL_FEATURES
    while (Cn * Math.ceil(perTree / FC) > this.maxWg) FC *= 2
    const nFC = Math.ceil(perTree / FC)
    if (!shared) return { name: 'histGlobal', FG: 1, RB, FC, nFC }
    return { name: bits32 ? 'histShared32' : 'histShared64', FG, RB, FC, nFC }
  }

  /** The host's plan of a pass into the tables (every model's level nodes; its builds, derives and evaluated nodes). */
  private writeHostTables(ms: readonly HostModel[], slices: readonly (Slice | null)[]): void {
    const L = this.layout
    const Cn = ms.length
    const cnt = new Uint32Array(Cn * CNT_WORDS)
    const LW = this.words.lvl
    const lvl = new Uint32Array(Cn * L.nl * LW).fill(NONE)
    const bslot = new Uint32Array(Cn * L.nb)
    const der = new Uint32Array(Cn * L.nb * 2)
    const ev = new Uint32Array(Cn * L.ne)
    for (let i = 0; i < Cn; i++) {
      const m = ms[i]
      const s = slices[i]
      cnt[i * CNT_WORDS] = m.level.length
      m.level.forEach((node, li) => {
        const w = (i * L.nl + li) * LW
        lvl[w] = node.gq >>> 0
        lvl[w + 1] = Math.floor(node.gq / 4294967296) >>> 0
        lvl[w + 2] = node.h
        lvl[w + 3] = node.id
        if (this.shape.hess) {
          lvl[w + 8] = node.hq >>> 0
          lvl[w + 9] = Math.floor(node.hq / 4294967296) >>> 0
        }
      })
      if (!s) continue
      s.builds.forEach((b, l) => {
        bslot[i * L.nb + l] = b.slot
        lvl[(i * L.nl + b.li) * LW + 6] = l
      })
      s.derives.forEach((x, k) => {
        der[(i * L.nb + k) * 2] = x.dst
        der[(i * L.nb + k) * 2 + 1] = x.src
      })
      s.evals.forEach((x, e) => {
        ev[i * L.ne + e] = x.li
        const w = (i * L.nl + x.li) * LW
        lvl[w + 4] = x.slot
        lvl[w + 5] = e
      })
      cnt[i * CNT_WORDS + 1] = s.builds.length
      cnt[i * CNT_WORDS + 2] = s.derives.length
      cnt[i * CNT_WORDS + 3] = s.evals.length
    }
    this.upload(this.tabs, L.cnt * 4, cnt)
    this.upload(this.tabs, L.lvl[0] * 4, lvl)
    this.upload(this.tabs, L.bslot * 4, bslot)
    this.upload(this.tabs, L.der * 4, der)
    this.upload(this.tabs, L.eval * 4, ev)
  }

  // ---- uniform records ---------------------------------------------------------------------------

  /** records 0..maxDepth: a device round's levels; maxDepth + 1: its last row update; then the gradient's and the host's */
  private recordGradient(): number {
    return this.maxDepth + 2
  }

  private recordHost(): number {
    return this.maxDepth + 3
  }

  private parityFields(parity: number): Partial<Record<UniformField, number>> {
    return { drawOff: parity * this.drawWordsPerParity, featOff: parity * this.featWordsPerParity }
  }

  private levelFields(Cn: number, parity: number, lv: LevelShape): Partial<Record<UniformField, number>> {
    const L = this.layout
    const k = this.histogramKernel(Cn, Math.max(1, lv.NB))
    const cur = L.lvl[lv.depth % 2]
    return {
      C: Cn,
      depth: lv.depth,
      NL: lv.NL,
      NE: lv.NE,
      NB: lv.NB,
      FG: k.FG,
      RB: k.RB,
      FC: k.FC,
      nFC: k.nFC,
      lvlCur: cur,
      lvlNext: L.lvl[(lv.depth + 1) % 2],
      ...this.parityFields(parity),
    }
  }

  private writeRecord(index: number, fields: Partial<Record<UniformField, number>>): void {
    const { n, nTrain, C, S, P, perTree, rowsAll } = this.shape
    const L = this.layout
    const all: Record<UniformField, number> = {
      n,
      nTrain,
      rowsPad: this.d.rowsPad,
      C,
      S,
      P,
      nFeat: perTree,
      drawRows: rowsAll ? 0 : 1,
      Wmax: this.d.maxWidth,
      depth: 0,
      nl: L.nl,
      ne: L.ne,
      nb: L.nb,
      T: L.T,
      NL: 0,
      NE: 0,
      NB: 0,
      FG: 1,
      RB: SHARED_ROWS,
      FC: GLOBAL_FEATURES,
      nFC: 1,
      lvlCur: L.lvl[0],
      lvlNext: L.lvl[1],
      cntOff: L.cnt,
      bslotOff: L.bslot,
      derOff: L.der,
      evalOff: L.eval,
      decOff: L.dec,
      choiceOff: L.choice,
      freeOff: L.free,
      treeOff: L.tree,
      tempOff: L.temp,
      featOff: 0,
      drawOff: 0,
      errOff: 0,
      K: this.shape.K,
      ...fields,
    }
    const u = new Uint32Array(UNIFORM_FIELDS.length)
    UNIFORM_FIELDS.forEach((k, i) => (u[i] = all[k] >>> 0))
    this.upload(this.uniform, index * UNIFORM_STRIDE, u)
  }

  // ---- dispatch, submit, read back -----------------------------------------------------------------

  private encoder(): Encoded {
    return { enc: this.gpu.device.createCommandEncoder(), timed: [] }
  }

  /** One kernel in its own compute pass (timed when profiling). */
  /** One kernel in its own compute pass, timed under `label` (default: its name) when profiling. */
  private run(e: Encoded, name: KernelName, record: number, buffers: GPUBuffer[], x: number, y: number, z: number, label: string = name): void {
    if (x === 0 || y === 0 || z === 0) return
    const pipeline = this.gpu.pipeline(kernelKey(name, this.kopts), () => kernelSource(name, this.kopts))
    const key = `${name}:${record}`
    let group = this.groups.get(key)
    if (!group) {
      const limit = this.gpu.limits.maxStorageBufferBindingSize
      const uniformBytes = Math.ceil((UNIFORM_FIELDS.length * 4) / 16) * 16
      const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: this.uniform, offset: record * UNIFORM_STRIDE, size: uniformBytes } }]
      buffers.forEach((b, i) => entries.push({ binding: i + 1, resource: { buffer: b, size: Math.min(b.size, limit) } }))
      group = this.gpu.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries })
      this.groups.set(key, group)
    }
    let timestampWrites: GPUComputePassTimestampWrites | undefined
    if (this.timing && e.timed.length < TIMED_PER_SUBMIT) {
      const i = e.timed.length
      e.timed.push(label)
      timestampWrites = { querySet: this.timing.set, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 }
    }
    const pass = e.enc.beginComputePass(timestampWrites ? { timestampWrites } : {})
    pass.setPipeline(pipeline)
    pass.setBindGroup(0, group)
    pass.dispatchWorkgroups(x, y, z)
    pass.end()
    this.gpu.work.dispatched()
  }

  /** Submits the encoder (no read-back); when profiling, its kernels' timestamps are read back and added up. */
  private async submit(e: Encoded): Promise<void> {
    await this.complete(this.prepare(e, 0, []), false)
  }

  /**
   * Finishes an encoder into a command buffer: copies into a staging buffer (one per round parity,
   * so a round's can be read while the next is written) and, when profiling, the timestamps. Done
   * ahead of the submit where it can be (Dawn validates a command buffer when it is finished).
   */
  private prepare(e: Encoded, which: number, copies: { src: GPUBuffer; offset: number; bytes: number }[]): Prepared {
    const total = copies.reduce((s, c) => s + c.bytes, 0)
    let staging = this.staging[which]
    if (total > 0 && (!staging || staging.size < total)) {
      this.gpu.destroyBuffer(staging)
      staging = this.gpu.createBuffer(Math.max(total, 256), USAGE.MAP_READ | USAGE.COPY_DST, 'gbdt-staging')
      this.staging[which] = staging
    }
    let at = 0
    for (const c of copies) {
      if (c.bytes > 0) e.enc.copyBufferToBuffer(c.src, c.offset, staging!, at, c.bytes)
      at += c.bytes
    }
    const t = this.timing
    if (t && e.timed.length > 0) {
      e.enc.resolveQuerySet(t.set, 0, 2 * e.timed.length, t.resolve, 0)
      e.enc.copyBufferToBuffer(t.resolve, 0, t.read, 0, 16 * e.timed.length)
    }
    return { cb: e.enc.finish(), staging, total, timed: e.timed }
  }

  /** Submits a prepared command buffer; with `read`, waits for its staging words. */
  private async complete(p: Prepared, read = true): Promise<Uint32Array> {
    this.gpu.submit([p.cb])
    const t0 = performance.now()
    let out = new Uint32Array(0)
    if (read && p.staging) {
      this.stats.readbacks++
      out = new Uint32Array(await this.gpu.read(p.staging, Math.max(4, p.total)))
    }
    const t = this.timing
    if (t && p.timed.length > 0) {
      const ns = new BigUint64Array(await this.gpu.read(t.read, 16 * p.timed.length))
      p.timed.forEach((name, i) => {
        const ms = Number(ns[2 * i + 1] - ns[2 * i]) / 1e6
        this.stats.kernelMs[name] = (this.stats.kernelMs[name] ?? 0) + ms
      })
    }
    this.stats.waitMs += performance.now() - t0
    return out
  }

  /** a 2D grid of 64-thread workgroups with at least `threads` threads (kernels flatten it) */
  private grid(threads: number): [number, number] {
    if (threads <= 0) return [0, 0]
    const w = Math.max(1, Math.ceil(threads / WG))
    const x = Math.min(w, this.maxWg)
    return [x, Math.ceil(w / x)]
  }

  /** Copies into a staging buffer, submits, and waits for the words. */
  private readBack(e: Encoded, which: number, copies: { src: GPUBuffer; offset: number; bytes: number }[]): Promise<Uint32Array> {
    return this.complete(this.prepare(e, which, copies))
  }
}
