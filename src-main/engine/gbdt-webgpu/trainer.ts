// The host loop of the WebGPU trees engine, and its public API. Rounds stay on the host; per round
// and chunk of models:
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
// The device's commands are in commands.ts, each model's host state and a level's plan in level.ts,
// the host's decisions in decide.ts; this file runs them in order. sequential/pool train a group of
// one (one model per dispatch); batched a group of all of a worker's models, in chunks that fit the
// device (plan.ts). Every sum is an exact integer, so model i's trees equal the CPU engine's, bit for
// bit, whatever the chunking or the order of atomics.
import { featuresPerTree, type GbdtParams, resolveGbdtParams } from '@shared/families/gbdt'
import { histogramSlots, samplesEveryRow, splitCoefs, throwIfStopped, trainingParams } from '../gbdt/rules'
import type { GbdtModel } from '../gbdt/tree'
import { GbdtCommands, type PassEntry } from './commands'
import type { GpuGbdtData } from './data'
import { HostDecider } from './decide'
import type { GbdtGpu } from './gpu'
import { HostModel, planLevel, type Slice, type TrainShape } from './level'
import { DEFAULT_CANDIDATES_PER_NODE, emptyStats, type WebgpuTrainOptions } from './options'
import { type ChunkPlan, planChunks, SLOT_BYTES } from './plan'

export { DEFAULT_CANDIDATES_PER_NODE, emptyStats, type HistogramMode, type WebgpuTrainOptions, type WebgpuTrainStats } from './options'

const f32 = Math.fround

class WebgpuTrainer {
  readonly shape: TrainShape
  private readonly baseScore: number
  private readonly dev: GbdtCommands
  private readonly host: HostDecider
  /** one round's sampled rows of the model being sampled (packed into its mask) */
  private sampledScratch: Uint8Array | null = null

  constructor(
    gpu: GbdtGpu,
    private d: GpuGbdtData,
    readonly params: GbdtParams,
    groupSize: number,
    private options: WebgpuTrainOptions,
  ) {
    const host = d.host
    const n = host.rows
    const perTree = featuresPerTree(params.colsampleBytree, host.features)
    const S = histogramSlots(host.width, perTree)
    const K = options.candidatesPerNode ?? DEFAULT_CANDIDATES_PER_NODE
    const chunk: ChunkPlan = planChunks({
      models: groupSize,
      rows: n,
      slotsPerNode: S,
      maxDepth: params.maxDepth,
      minChildWeight: params.minChildWeight,
      limits: gpu.limits,
      histogramBudgetBytes: options.histogramBudgetBytes,
      candidatesPerNode: K,
    })
    this.shape = {
      n,
      F: host.features,
      perTree,
      S,
      maskWords: Math.ceil(n / 32),
      rowsAll: samplesEveryRow(params),
      C: chunk.modelsPerChunk,
      P: chunk.nodeSlots,
      K,
      coefs: splitCoefs(params),
    }
    this.baseScore = f32(params.baseScore)
    const stats = options.stats ?? emptyStats()
    Object.assign(stats, {
      chunks: stats.chunks + chunk.chunks,
      modelsPerChunk: this.shape.C,
      nodeSlots: this.shape.P,
      histogramBytes: chunk.histogramBytes,
    })
    this.dev = new GbdtCommands(gpu, d, this.shape, chunk.histogramBytes, options.histogramMode ?? 'auto', stats, options.profile ?? false)
    this.host = new HostDecider(this.shape, host, params.maxDepth, stats, options.checkFilter ?? false)
  }

  dispose(): void {
    this.dev.dispose()
  }

  async trainChunk(seeds: readonly number[], indices: readonly number[]): Promise<GbdtModel[]> {
    const { F, maskWords } = this.shape
    const ms = seeds.map((s) => new HostModel(s, F, this.params, maskWords))
    this.dev.writeBaseScore(ms.length, this.baseScore)
    for (let round = 0; round < this.params.rounds; round++) {
      throwIfStopped(this.options)
      await this.round(ms)
      this.options.onRound?.(indices, round + 1, this.params.rounds)
    }
    return ms.map((m) => ({ params: this.params, seed: m.seed, features: F, baseScore: this.baseScore, trees: m.trees }))
  }

  private async round(ms: HostModel[]): Promise<void> {
    await this.startRound(ms)
    await this.growLevels(ms)
    for (const m of ms) m.trees.push(m.tb.finish())
  }

  /** Sampling, the gradient's largest magnitude, quantisation: each model's new tree, its root alone. */
  private async startRound(ms: HostModel[]): Promise<void> {
    const { n, rowsAll, P, coefs } = this.shape
    const sampled = rowsAll ? null : (this.sampledScratch ??= new Uint8Array(n))
    for (const m of ms) m.sample(this.d.host.width, n, sampled)
    this.dev.writeSamples(ms)
    const maxBits = await this.dev.maxGradients(ms.length)
    const info = this.host.quantise(ms, maxBits)
    for (const m of ms) m.startTree(P, this.params.maxDepth, coefs)
    this.dev.writeModelInfo(info)
  }

  /**
   * Level by level until no model has a node left: plan, pass(es), decide. A level's decisions
   * reach the device as the next pass's row update (or on their own when no pass follows).
   */
  private async growLevels(ms: HostModel[]): Promise<void> {
    const Cn = ms.length
    let pendingDec: Uint32Array | null = null
    for (let depth = 0; ; depth++) {
      if (!ms.some((m) => m.level.length > 0)) break
      if (depth > 0) throwIfStopped(this.options)
      const slices = ms.map((m) => planLevel(m, depth, this.shape.P))
      const passes = Math.max(0, ...slices.map((s) => s.length))
      if (passes === 0 && pendingDec) {
        // nothing to evaluate at this level: the previous level's rows still move to their nodes
        await this.dev.rowUpdate(pendingDec, Cn)
        pendingDec = null
      }
      // no root is split: the root sums alone (for the root leaves)
      if (depth === 0 && passes === 0) this.host.takeRootSums(ms, await this.dev.rootSums(Cn))
      for (let p = 0; p < passes; p++) {
        await this.pass(
          ms,
          slices.map((s) => s[p] ?? null),
          pendingDec,
          depth === 0 && p === 0,
        )
        pendingDec = null
      }
      pendingDec = this.host.decideLevel(ms, depth)
    }
    if (pendingDec) await this.dev.rowUpdate(pendingDec, Cn)
  }

  /** One pass: build, derive, filter, read back, decide; its temporary slots freed. */
  private async pass(ms: HostModel[], slices: (Slice | null)[], pendingDec: Uint32Array | null, root: boolean): Promise<void> {
    const pass = await this.dev.levelPass(ms, slices, pendingDec, root)
    if (pass.rootSums) this.host.takeRootSums(ms, pass.rootSums)
    const full = this.host.fromCandidates(ms, pass)
    if (full.length > 0) await this.decideFromHistograms(ms, pass.entries, full)
    for (let i = 0; i < ms.length; i++) {
      const s = slices[i]
      if (!s) continue
      for (const t of s.temps) ms[i].free.push(t)
    }
  }

  /** The fallback (and checkFilter): whole node histograms read back in batches, each decided on the host. */
  private async decideFromHistograms(ms: HostModel[], entries: PassEntry[], which: number[]): Promise<void> {
    const per = this.dev.histogramsPerReadBack
    const nodeWords = (this.shape.S * SLOT_BYTES) / 4
    for (let a = 0; a < which.length; a += per) {
      const batch = which.slice(a, a + per).map((e) => entries[e])
      const words = await this.dev.readHistograms(batch.map(({ m, li }) => ({ m, slot: ms[m].level[li].slot })))
      batch.forEach(({ m, li }, k) => {
        this.host.fromHistogram(ms[m], ms[m].level[li], words.subarray(k * nodeWords, (k + 1) * nodeWords))
      })
    }
  }
}

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
  const C = t.shape.C
  try {
    const out: GbdtModel[] = []
    for (let a = 0; a < seeds.length; a += C) {
      const indices = seeds.slice(a, a + C).map((_, k) => a + k)
      const models = await t.trainChunk(seeds.slice(a, a + C), indices)
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
