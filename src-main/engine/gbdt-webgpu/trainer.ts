// The host loop of the WebGPU trees engine, and its public API: rounds stay on the host, each
// round's columns drawn ahead (the CPU engine's sampler; its rows the device draws by the same
// counter-based rule), and the device decides the trees — a
// device-planned round in one submit and one read-back, or host-planned level by level. It runs
// commands.ts (device), level.ts and decide.ts (host) in order, chunks from plan.ts; model i's trees
// equal the CPU engine's bit for bit. The round, the chunks, per-model parameters: README.md.
import { featuresPerTree, type GbdtParams, HISTOGRAM_BUDGET_BYTES, resolveGbdtParams } from '@shared/families/gbdt'
import type { GbdtData } from '../gbdt/binning'
import { bestRoundModel, HeldOutWatch } from '../gbdt/early-stopping'
import { type GbdtTask, initialMargin, treesPerRound } from '../gbdt/objective'
import { ModelState } from '../gbdt/model-state'
import { type HeldOutRows, histogramSlots, ModelSampler, samplesEveryRow, splitCoefs, throwIfStopped, trainingParams } from '../gbdt/rules'
import { checkTask, heldOutRows, modelTrainingParams } from '../gbdt/train'
import type { GbdtModel, GbdtTree } from '../gbdt/tree'
import type { GbdtModelWithTestMargins } from '../trees/gbdt-report'
import { type EncodedRound, GbdtCommands, type HeldOutReads, type RoundResult } from './commands'
import type { GpuGbdtData } from './device-data'
import { HostDecider } from './decide'
import type { WgslDevice, WgslLimits } from '../webgpu/device'
import { HostModel, planLevel, type Slice, type TrainShape } from './level'
import { emptyStats, type WebgpuTrainOptions } from './options'
import { type ChunkPlan, type ChunkPlanInput, holdsOneModel, planChunks } from './plan'
import { type GradientKind, hessianWords } from './tree-kernels'

export { emptyStats, type HistogramMode, type WebgpuTrainOptions, type WebgpuTrainStats } from './options'

const f32 = Math.fround

/**
 * What a group's trees learn on the device: K trees a model per round (multiclass: one per class),
 * per-row hessians or the row count, the gradient kernel's objective, every margin's start.
 */
interface DeviceObjective {
  K: number
  hess: boolean
  gradient: GradientKind
  startMargin: number
}

function deviceObjective(task: GbdtTask | undefined, squaredErrorHessians: boolean, baseScore: number): DeviceObjective {
  const objective = task?.objective ?? 'regression'
  const gradient: GradientKind = objective === 'regression' ? (squaredErrorHessians ? 'squaredErrorHessians' : 'squaredError') : objective
  return { K: treesPerRound(task), hess: gradient !== 'squaredError', gradient, startMargin: initialMargin(objective, baseScore) }
}

/** The chunk plan's input for a group of models (each with its own parameters): sized for the widest. */
function chunkInput(
  own: readonly GbdtParams[],
  host: GbdtData,
  limits: WgslLimits,
  histogramBudgetBytes: number | undefined,
  obj: Pick<DeviceObjective, 'K' | 'hess'> = { K: 1, hess: false },
  testRows = 0,
): ChunkPlanInput {
  const perTree = Math.max(...own.map((p) => featuresPerTree(p.colsampleBytree, host.features)))
  return {
    hessians: obj.hess,
    treesPerModel: obj.K,
    models: own.length,
    rows: host.rows,
    deviceRows: host.rows + testRows,
    perTree,
    slotsPerNode: histogramSlots(host.width, perTree),
    trees: own,
    limits,
    histogramBudgetBytes,
  }
}

/** A chunk's early stopping, as its round loop sees it (trainChunk; inert without watches). */
interface ChunkWatch {
  /** per position of a round's device models: the held-out rows to read back after it (null: not watched, or stopped) */
  reads(act: readonly HostModel[]): HeldOutReads
  /** a round's held-out margins (per position, as read) fed to each model's watch, once per model, until it stops */
  afterRound(act: readonly HostModel[], margins: readonly (Float32Array | null)[]): void
  /** the chunk's model indices (within the group) that grew round `round` (0-based) and keep it: progress */
  grew(round: number): readonly number[]
}

/** A device-planned round read back, its trees not yet rebuilt on the host. */
interface PendingRound {
  round: number
  ms: HostModel[]
  /** each model's 2^−k of that round, and its hessians' 2^−kh */
  invs: number[]
  invHs: number[]
  result: RoundResult
}

class WebgpuTrainer {
  readonly shape: TrainShape
  private readonly dev: GbdtCommands
  private readonly host: HostDecider
  /** rounds are planned on the device (else every level by the host) */
  private readonly devicePlanned: boolean
  private readonly stats

  constructor(
    gpu: WgslDevice,
    private d: GpuGbdtData,
    /** every model's own parameters (the group's, where perModel leaves them) */
    own: readonly GbdtParams[],
    /** every model's held-out rows (null: none) */
    heldOut: readonly (HeldOutRows | null)[],
    private readonly baseScore: number,
    private options: WebgpuTrainOptions,
    private readonly obj: DeviceObjective,
  ) {
    const host = d.host
    const n = host.rows
    const input = chunkInput(own, host, gpu.limits, options.histogramBudgetBytes, obj, d.testRows)
    const chunk: ChunkPlan = planChunks(input)
    this.shape = {
      n: n + d.testRows,
      nTrain: n,
      F: host.features,
      perTree: input.perTree,
      S: input.slotsPerNode,
      // one model that samples rows: every model has a row draw (every row, for those that take every row)
      rowsAll: own.every(samplesEveryRow) && heldOut.every((h) => h === null),
      C: chunk.modelsPerChunk,
      P: chunk.nodeSlots,
      K: obj.K,
      hess: obj.hess,
      gradient: obj.gradient,
    }
    this.devicePlanned = chunk.devicePlanned && !options.checkFilter && !options.hostPlanned
    const stats = (this.stats = options.stats ?? emptyStats())
    Object.assign(stats, {
      modelsPerChunk: this.shape.C,
      nodeSlots: this.shape.P,
      histogramBytes: chunk.histogramBytes,
    })
    const maxDepth = Math.max(...own.map((p) => p.maxDepth))
    this.dev = new GbdtCommands(
      gpu,
      d,
      this.shape,
      chunk.histogramBytes,
      options.histogramMode ?? 'auto',
      stats,
      options.profile ?? false,
      maxDepth,
      chunk.tables,
    )
    this.host = new HostDecider(host, stats, options.checkFilter ?? false, obj.hess, !this.shape.rowsAll)
  }

  dispose(): void {
    this.dev.dispose()
  }

  /**
   * One chunk, all its rounds; `params` in order of rounds, most first (see trainGbdtGroupWebgpu).
   * `watches`: each model's early-stopping watch (null: early stopping off), fed its held-out rows'
   * margins after every round; a stopped model leaves the device's program (README.md, "Early stopping").
   * `resume`: each model's trees from an earlier rung (null: none; every model of a chunk has as many
   * rounds), continued from the round after them (README.md, "Successive halving").
   */
  async trainChunk(
    seeds: readonly number[],
    params: readonly GbdtParams[],
    heldOut: readonly (HeldOutRows | null)[],
    indices: readonly number[],
    watches: readonly HeldOutWatch[] | null,
    resume: readonly (readonly GbdtTree[] | null)[] | null,
  ): Promise<GbdtModelWithTestMargins[]> {
    const { F, K } = this.shape
    if (params.some((p, k) => k > 0 && p.rounds > params[k - 1].rounds))
      throw new Error("webgpu: a chunk's models must come most rounds first (planning error)")
    const resumed = seeds.map((_, k) => (resume?.[k]?.length ?? 0) / K)
    if (resumed.some((r) => r !== resumed[0])) throw new Error("webgpu: a chunk's models must resume at the same round (planning error)")
    // the CPU engine's resume: the earlier trees added to its training rows' margins in float32, tree
    // by tree, and its column sampler past their draws (ModelState.resume); its sampler and margins taken over
    const states = seeds.map((s, k) => {
      const trees = resume?.[k]
      if (!trees || trees.length === 0) return null
      const state = new ModelState(s, this.d.host.rows, F, params[k], splitCoefs(params[k]), undefined, heldOut[k], this.options.task)
      state.resume(trees, this.d.host)
      return state
    })
    // the device's models: a K-class model's K trees side by side (class order), sharing its sampler
    const ms = seeds.flatMap((s, k) => {
      const sampler = states[k]?.sampler ?? new ModelSampler(s, F, params[k], heldOut[k])
      return Array.from({ length: K }, (_, c) => {
        const m = new HostModel(s, F, params[k], heldOut[k], sampler, K, c)
        // its class's earlier trees (round-major: tree t is class t mod K)
        for (const [t, tree] of (resume?.[k] ?? []).entries()) if (t % K === c) m.trees.push(tree)
        return m
      })
    })
    /** the chunk's model (position in `seeds`) a device model belongs to */
    const owner = new Map(ms.map((m, i) => [m, Math.floor(i / K)]))
    const stopped = (m: HostModel) => watches?.[owner.get(m)!].rule.stopped ?? false
    const watch: ChunkWatch = {
      reads: (act) => (watches ? act.map((m) => (stopped(m) ? null : heldOut[owner.get(m)!])) : []),
      afterRound: (act, margins) => {
        if (!watches) return
        for (let i = 0; i < act.length; i += K) {
          const w = watches[owner.get(act[i])!]
          if (!w.rule.stopped) w.afterRound(margins.slice(i, i + K) as Float32Array[])
        }
      },
      // the models that grew round `round` (0-based) and keep it: not those stopped before it
      grew: (round) => (watches ? indices.filter((_, k) => watches[k].rule.roundsTrained > round) : indices),
    }
    this.dev.writeBaseScore(ms.length, this.obj.startMargin)
    states.forEach((state, k) => state?.margins.forEach((margins, c) => this.dev.writeTrainingMargins(k * K + c, margins)))
    const start = resumed[0]
    const rounds = Math.max(...ms.map((m) => m.rounds))
    // the device's models by position. A model with fewer rounds has all its trees and sits the
    // rest out: the last positions, so every growing model keeps its place in the device's
    // per-model arrays. A stopped model is dropped from it (compacted) before the next round.
    let layout = ms
    const active = (round: number) => layout.filter((m) => round < m.rounds)
    const activeCount = (round: number) => (round < rounds ? active(round).length : 0)
    this.sampleRound(active(start), start)
    if (start + 1 < rounds) this.sampleRound(active(start + 1), start + 1)
    let maxBits = await this.dev.firstGradient(ms.length, start % 2)
    let pending: PendingRound | null = null
    let encoded: EncodedRound | null = null
    for (let round = start; round < rounds; round++) {
      throwIfStopped(this.options)
      if (layout.some(stopped)) {
        // models stopped since the last round leave: the survivors move to the front (their
        // margins, and this round's and the next one's samples, already drawn), this round's gradient again
        const kept = layout.filter((m) => !stopped(m))
        const growing = kept.filter((m) => round < m.rounds)
        if (growing.length === 0) break
        const moves = kept.map((m, to) => ({ from: layout.indexOf(m), to })).filter((x) => x.from !== x.to)
        layout = kept
        encoded = null
        this.dev.writeSamples(
          growing.map((m) => m.drawnSample(round)!),
          round % 2,
        )
        if (round + 1 < rounds)
          this.dev.writeSamples(
            active(round + 1).map((m) => m.drawnSample(round + 1)!),
            (round + 1) % 2,
          )
        maxBits = await this.dev.compact(moves, growing.length, round % 2)
        this.stats.compactions++
      }
      const act = active(round)
      const Cn = act.length
      const CnNext = activeCount(round + 1)
      const parity = round % 2
      for (const m of act) m.useRound(round)
      this.dev.writeModelInfo(this.host.quantise(act, maxBits))
      if (this.devicePlanned && act.every((m) => !m.hostDecides)) {
        const e =
          encoded && encoded.Cn === Cn && encoded.CnNext === CnNext && encoded.parity === parity
            ? encoded
            : this.dev.encodeRound(Cn, CnNext, parity, watch.reads(act))
        encoded = null
        const done = this.dev.submitRound(e)
        const invs = act.map((m) => m.inv)
        const invHs = act.map((m) => m.invH)
        // while the device runs this round: the last one's trees (and watches), the samples two rounds on, the next round's commands
        this.finish(pending, watch, rounds)
        pending = null
        if (round + 2 < rounds) this.sampleRound(active(round + 2), round + 2)
        // (not when a model just stopped: the next round starts with a compaction)
        if (round + 1 < rounds && this.devicePlanned && !layout.some(stopped))
          encoded = this.dev.encodeRound(CnNext, activeCount(round + 2), parity ^ 1, watch.reads(active(round + 1)))
        const result = await done
        pending = { round, ms: act, invs, invHs, result }
        maxBits = result.maxBits
      } else {
        // a round encoded ahead is dropped: host-planned passes read back through the same staging buffers
        encoded = null
        this.finish(pending, watch, rounds)
        pending = null
        const next = await this.hostRound(act, CnNext, parity, watch.reads(act))
        maxBits = next.maxBits
        watch.afterRound(act, next.heldOutMargins)
        if (round + 2 < rounds) this.sampleRound(active(round + 2), round + 2)
        this.options.onRound?.(watch.grew(round), round + 1, rounds)
      }
    }
    this.finish(pending, watch, rounds)
    // the test rows followed every tree: their margins in one read-back for the chunk
    const margins = this.d.testRows > 0 ? await this.dev.readTestMargins(layout.length) : null
    const task = this.options.task
    const classifier = task && task.objective !== 'regression' ? { objective: task.objective, classes: task.classes } : {}
    return seeds.map((seed, k) => {
      // XGBoost's order, as the CPU engine's: round-major, tree t is class t mod K
      const own = ms.slice(k * K, (k + 1) * K)
      const trees = own[0].trees.flatMap((_, r) => own.map((m) => m.trees[r]))
      const grown: GbdtModelWithTestMargins = {
        params: params[k],
        seed,
        features: F,
        baseScore: this.baseScore,
        trees,
        ...classifier,
        ...(resume ? { roundsGrown: trees.length / K - resumed[k] } : {}),
      }
      const w = watches?.[k]
      // a stopped model may have grown a round past its stop (pipelined) before it left: discarded here
      const model: GbdtModelWithTestMargins = w ? bestRoundModel(grown, w.rule.outcome) : grown
      if (w) this.stats.roundsPastStop += own[0].trees.length - w.rule.roundsTrained
      // the device's test margins followed every tree the model grew here: they are its own only if it
      // keeps them all and had none before (a resumed model's test rows started at the base score)
      const at = layout.indexOf(own[0])
      if (margins && at >= 0 && resumed[k] === 0 && model.trees.length === trees.length && testMarginsExact(model, this.d))
        model.testMargins = rowMajorMargins(margins, at / K, K, this.d.testRows)
      return model
    })
  }

  /** A round's columns drawn (rounds in order) and, with its rows' rules, written to its parity's half of the device's tables. */
  private sampleRound(ms: readonly HostModel[], round: number): void {
    const drawn = ms.map((m) => m.draw(round, this.d.host.width))
    this.dev.writeSamples(drawn, round % 2)
  }

  /** A device-planned round's trees, rebuilt on the host; its watches fed; its progress. */
  private finish(p: PendingRound | null, watch: ChunkWatch, rounds: number): void {
    if (!p) return
    this.host.roundTrees(p.ms, p.invs, p.invHs, p.result.trees, this.dev.tables.T, p.result.errors)
    watch.afterRound(p.ms, p.result.heldOutMargins)
    this.options.onRound?.(watch.grew(p.round), p.round + 1, rounds)
  }

  /**
   * A round planned by the host: level by level until no model has a node left; then the next
   * round's max |g| and the watched models' held-out margins (`heldOut`, per position).
   */
  private async hostRound(
    ms: HostModel[],
    CnNext: number,
    parity: number,
    heldOut: HeldOutReads,
  ): Promise<{ maxBits: Uint32Array; heldOutMargins: (Float32Array | null)[] }> {
    const Cn = ms.length
    const P = this.shape.P
    this.stats.hostRounds++
    for (const m of ms) m.startTree(P)
    this.host.takeRootSums(ms, await this.dev.rootSums(Cn))
    let pendingDec: Uint32Array[] | null = null
    for (let depth = 0; ; depth++) {
      if (!ms.some((m) => m.level.length > 0)) break
      if (depth > 0) throwIfStopped(this.options)
      const slices = ms.map((m) => planLevel(m, depth, P))
      const passes = Math.max(0, ...slices.map((s) => s.length))
      if (passes === 0 && pendingDec) {
        // nothing to evaluate at this level: the previous level's rows still move to their nodes
        this.dev.hostRowUpdate(pendingDec, Cn, parity)
        pendingDec = null
      }
      for (let p = 0; p < passes; p++) {
        await this.pass(
          ms,
          slices.map((s) => s[p] ?? null),
          pendingDec,
          parity,
        )
        pendingDec = null
      }
      pendingDec = this.host.decideLevel(ms, depth)
    }
    const next = await this.dev.finishHostRound(pendingDec, Cn, CnNext, parity, heldOut)
    for (const m of ms) m.trees.push(m.tb.finish())
    return next
  }

  /** One pass: build, derive, search and decide on the device, read the choices back; its temporary slots freed. */
  private async pass(ms: HostModel[], slices: (Slice | null)[], pendingDec: Uint32Array[] | null, parity: number): Promise<void> {
    const result = await this.dev.hostPass(ms, slices, pendingDec, parity)
    const evaluated: { m: number; li: number }[] = []
    slices.forEach((s, m) => s?.evals.forEach((x) => evaluated.push({ m, li: x.li })))
    const full = this.host.fromChoices(ms, evaluated, result)
    if (full.length > 0) await this.decideFromHistograms(ms, full)
    for (let i = 0; i < ms.length; i++) {
      const s = slices[i]
      if (!s) continue
      for (const t of s.temps) ms[i].free.push(t)
    }
  }

  /** The fallback (and checkFilter): whole node histograms read back in batches, each decided on the host. */
  private async decideFromHistograms(ms: HostModel[], which: { m: number; li: number }[]): Promise<void> {
    const per = this.dev.histogramsPerReadBack
    const S = this.shape.S
    const nodeWords = S * hessianWords(this.shape.hess).slot
    for (let a = 0; a < which.length; a += per) {
      const batch = which.slice(a, a + per)
      const words = await this.dev.readHistograms(batch.map(({ m, li }) => ({ m, slot: ms[m].level[li].slot })))
      batch.forEach(({ m, li }, k) => {
        this.host.fromHistogram(ms[m], ms[m].level[li], words.subarray(k * nodeWords, (k + 1) * nodeWords), S)
      })
    }
  }
}

/** Model k's test margins as predictGbdt lays them out (rows × K, row-major) from the read-back (device model after device model, class c of model k at k·K + c). */
function rowMajorMargins(margins: Float32Array, k: number, K: number, rows: number): Float32Array {
  const out = new Float32Array(rows * K)
  for (let c = 0; c < K; c++) {
    const at = (k * K + c) * rows
    for (let r = 0; r < rows; r++) out[r * K + c] = margins[at + r]
  }
  return out
}

/**
 * Whether the device's test margins are predictGbdt's for this model: a row goes left iff its bin ≤
 * the split's bin, which is value < threshold for every split but two that the bins cannot tell —
 * at bin −1 (threshold: the feature's minValue) a test value below it, and at the last bin
 * (threshold: the sentinel cut) a test value at or above it. A model with such a split and such a
 * test value gets no device margins (the report predicts on the host).
 */
export function testMarginsExact(model: GbdtModel, d: GpuGbdtData): boolean {
  const nBins = d.host.nBins
  for (const t of model.trees) {
    for (let i = 0; i < t.feature.length; i++) {
      const f = t.feature[i]
      if (f < 0) continue
      const sb = t.splitBin[i]
      if (sb === -1 && d.testMin[f] < t.threshold[i]) return false
      if (sb === nBins[f] - 1 && d.testMax[f] >= t.threshold[i]) return false
    }
  }
  return true
}

/**
 * Trains one model per seed on the device (a group of one: sequential/pool; many: batched, chunked
 * to fit). Model i's trees equal the CPU engine's trainGbdtGroup(data, { ...params,
 * ...options.perModel[i] }, [seeds[i]]).
 */
export async function trainGbdtGroupWebgpu(
  gpu: WgslDevice,
  d: GpuGbdtData,
  paramsIn: Partial<GbdtParams>,
  seeds: readonly number[],
  options: WebgpuTrainOptions = {},
): Promise<GbdtModelWithTestMargins[]> {
  const rows = d.host.rows
  const maxBin = d.host.cuts.maxBin
  const params = trainingParams(paramsIn, rows, maxBin, seeds)
  checkTask(options.task, params.baseScore, d.host.y)
  const own = modelTrainingParams(params, seeds, options.perModel, rows, maxBin)
  const heldOut = heldOutRows(options.heldOut, seeds, rows)
  const watches = earlyStoppingWatches(options, heldOut, d.host.y)
  const resume = options.resume ?? null
  if (resume && resume.length !== seeds.length) throw new RangeError(`resume has ${resume.length} entries for ${seeds.length} models`)
  // a stopped model keeps its best round, so a rung could not continue it from its last (the CPU engine's rule)
  if (resume && options.earlyStopping) throw new RangeError('resume continues each model from its last round: not with earlyStopping')
  if (d.disposed) throw new Error('webgpu: the data set was disposed')
  if (seeds.length === 0) return []
  const obj = deviceObjective(options.task, options.squaredErrorHessians ?? false, params.baseScore)
  const treesBefore = (i: number) => resume?.[i]?.length ?? 0
  // chunks take the models with the most rounds first (stable: index order otherwise); resumed
  // models (a halving rung) by the trees they have, a chunk's all from the same round
  const order = [...seeds.keys()].sort((a, b) => treesBefore(a) - treesBefore(b) || own[b].rounds - own[a].rounds)
  const lanes = chunkLanes(own, d, gpu.limits, options.histogramBudgetBytes, obj)
  let failed = false
  const laneOptions: WebgpuTrainOptions = {
    ...options,
    histogramBudgetBytes: lanes.budget,
    // a lane stops when the other failed (its error is the one thrown)
    shouldStop: () => failed || (options.shouldStop?.() ?? false),
  }
  const trainers: WebgpuTrainer[] = []
  try {
    for (let l = 0; l < lanes.count; l++) trainers.push(new WebgpuTrainer(gpu, d, own, heldOut, f32(params.baseScore), laneOptions, obj))
    // whole models a chunk: a K-class model is K of the device's
    const C = trainers[0].shape.C / obj.K
    const chunks: number[][] = []
    for (const i of order) {
      const last = chunks[chunks.length - 1]
      if (last && last.length < C && treesBefore(last[0]) === treesBefore(i)) last.push(i)
      else chunks.push([i])
    }
    if (options.stats) {
      options.stats.chunks += chunks.length
      options.stats.lanes = Math.max(options.stats.lanes, trainers.length)
    }
    const out: GbdtModelWithTestMargins[] = new Array(seeds.length)
    let next = 0
    const lane = async (t: WebgpuTrainer) => {
      try {
        while (next < chunks.length) {
          const indices = chunks[next++]
          const models = await t.trainChunk(
            indices.map((i) => seeds[i]),
            indices.map((i) => own[i]),
            indices.map((i) => heldOut[i]),
            indices,
            watches && indices.map((i) => watches[i]),
            resume && indices.map((i) => resume[i]),
          )
          models.forEach((model, k) => {
            out[indices[k]] = model
            options.onModelDone?.(indices[k], model)
          })
        }
      } catch (err) {
        failed = true
        throw err
      }
    }
    // every lane settles before its buffers go
    const settled = await Promise.allSettled(trainers.map(lane))
    const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (rejected) throw rejected.reason
    return out
  } finally {
    for (const t of trainers) t.dispose()
  }
}

/**
 * Each model's early-stopping watch (the CPU engine's HeldOutWatch and rule), or null when early
 * stopping is off; every model needs held-out rows. The device reads back only a model's held-out
 * rows' margins, so its watch sees them re-indexed from 0 (their labels likewise): the same values, scored the same way.
 */
function earlyStoppingWatches(options: WebgpuTrainOptions, heldOut: readonly (HeldOutRows | null)[], y: Float32Array): HeldOutWatch[] | null {
  const stopping = options.earlyStopping
  if (!stopping) return null
  return heldOut.map((h, i) => {
    if (!h) throw new RangeError(`earlyStopping needs every model's held-out rows (heldOut); model ${i} has none`)
    return new HeldOutWatch(stopping, { begin: 0, end: h.end - h.begin }, y.subarray(h.begin, h.end), options.task)
  })
}

/**
 * Chunks trained at once: two when a group needs several chunks and halving the histogram budget
 * between them keeps each chunk's node slots and plan (the device then runs one chunk's round
 * while the host handles the other's read-back); else one at a time with the whole budget.
 */
function chunkLanes(
  own: readonly GbdtParams[],
  d: GpuGbdtData,
  limits: WgslLimits,
  budget = HISTOGRAM_BUDGET_BYTES,
  obj: DeviceObjective,
): { count: number; budget: number } {
  const one = planChunks(chunkInput(own, d.host, limits, budget, obj, d.testRows))
  if (one.chunks < 2) return { count: 1, budget }
  const half = chunkInput(own, d.host, limits, budget / 2, obj, d.testRows)
  // half the budget may not hold one node histogram for each of a model's K trees: one lane then
  if (!holdsOneModel(half)) return { count: 1, budget }
  const two = planChunks(half)
  const same = two.nodeSlots === one.nodeSlots && two.devicePlanned === one.devicePlanned
  return same ? { count: 2, budget: budget / 2 } : { count: 1, budget }
}

/** The chunking a group of `models` with the same parameters would get on this device (for flags and reports). */
export function chunkPlanFor(gpu: WgslDevice, d: GpuGbdtData, paramsIn: Partial<GbdtParams>, models: number, histogramBudgetBytes?: number): ChunkPlan {
  const own = Array.from({ length: models }, () => resolveGbdtParams(paramsIn))
  return planChunks(chunkInput(own, d.host, gpu.limits, histogramBudgetBytes, undefined, d.testRows))
}
