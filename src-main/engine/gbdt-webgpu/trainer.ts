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
//
// The models of a group may each have their own GBDT_PER_MODEL_PARAMS (options.perModel: a model
// set's configurations fused, checked by the CPU engine's own modelTrainingParams). Each reads its
// own split coefficients (host, and ModelInfo on the device), depth, rounds and samplers; buffers and
// chunks are sized for the group's widest model (most sampled features, most node histograms). A
// model whose depth is reached has no nodes left while deeper ones go on; models with more rounds
// come first in their chunk, so those that sit the last rounds out are the chunk's last positions.
import { featuresPerTree, type GbdtParams, resolveGbdtParams } from '@shared/families/gbdt'
import type { GbdtData } from '../gbdt/binning'
import { type HeldOutRows, histogramSlots, samplesEveryRow, throwIfStopped, trainingParams } from '../gbdt/rules'
import { heldOutRows, modelTrainingParams } from '../gbdt/train'
import type { GbdtModel } from '../gbdt/tree'
import { GbdtCommands, type PassEntry } from './commands'
import type { GpuGbdtData } from './data'
import { HostDecider } from './decide'
import type { GbdtGpu, GbdtGpuLimits } from './gpu'
import { HostModel, planLevel, type Slice, type TrainShape } from './level'
import { DEFAULT_CANDIDATES_PER_NODE, emptyStats, type WebgpuTrainOptions } from './options'
import { type ChunkPlan, type ChunkPlanInput, planChunks, SLOT_BYTES } from './plan'

export { DEFAULT_CANDIDATES_PER_NODE, emptyStats, type HistogramMode, type WebgpuTrainOptions, type WebgpuTrainStats } from './options'

const f32 = Math.fround

/** The chunk plan's input for a group of models (each with its own parameters): sized for the widest. */
function chunkInput(
  own: readonly GbdtParams[],
  host: GbdtData,
  limits: GbdtGpuLimits,
  histogramBudgetBytes: number | undefined,
  candidatesPerNode: number,
): ChunkPlanInput & { perTree: number } {
  const perTree = Math.max(...own.map((p) => featuresPerTree(p.colsampleBytree, host.features)))
  return {
    models: own.length,
    rows: host.rows,
    perTree,
    slotsPerNode: histogramSlots(host.width, perTree),
    trees: own,
    limits,
    histogramBudgetBytes,
    candidatesPerNode,
  }
}

class WebgpuTrainer {
  readonly shape: TrainShape
  private readonly dev: GbdtCommands
  private readonly host: HostDecider
  /** one round's sampled rows of the model being sampled (packed into its mask) */
  private sampledScratch: Uint8Array | null = null

  constructor(
    gpu: GbdtGpu,
    private d: GpuGbdtData,
    /** every model's own parameters (the group's, where perModel leaves them) */
    own: readonly GbdtParams[],
    /** every model's held-out rows (null: none) */
    heldOut: readonly (HeldOutRows | null)[],
    private readonly baseScore: number,
    private options: WebgpuTrainOptions,
  ) {
    const host = d.host
    const n = host.rows
    const K = options.candidatesPerNode ?? DEFAULT_CANDIDATES_PER_NODE
    const input = chunkInput(own, host, gpu.limits, options.histogramBudgetBytes, K)
    const chunk: ChunkPlan = planChunks(input)
    this.shape = {
      n,
      F: host.features,
      perTree: input.perTree,
      S: input.slotsPerNode,
      maskWords: Math.ceil(n / 32),
      // one model that samples rows: every model has a mask (all ones for those that take every row)
      rowsAll: own.every(samplesEveryRow) && heldOut.every((h) => h === null),
      C: chunk.modelsPerChunk,
      P: chunk.nodeSlots,
      K,
    }
    const stats = options.stats ?? emptyStats()
    Object.assign(stats, {
      chunks: stats.chunks + chunk.chunks,
      modelsPerChunk: this.shape.C,
      nodeSlots: this.shape.P,
      histogramBytes: chunk.histogramBytes,
    })
    this.dev = new GbdtCommands(gpu, d, this.shape, chunk.histogramBytes, options.histogramMode ?? 'auto', stats, options.profile ?? false)
    this.host = new HostDecider(this.shape, host, stats, options.checkFilter ?? false)
  }

  dispose(): void {
    this.dev.dispose()
  }

  /** One chunk, all its rounds; `params` in order of rounds, most first (see trainGbdtGroupWebgpu). */
  async trainChunk(seeds: readonly number[], params: readonly GbdtParams[], heldOut: readonly (HeldOutRows | null)[], indices: readonly number[]): Promise<GbdtModel[]> {
    const { F, maskWords } = this.shape
    if (params.some((p, k) => k > 0 && p.rounds > params[k - 1].rounds)) throw new Error('webgpu: a chunk\'s models must come most rounds first (planning error)')
    const ms = seeds.map((s, k) => new HostModel(s, F, params[k], maskWords, heldOut[k]))
    this.dev.writeBaseScore(ms.length, this.baseScore)
    const rounds = Math.max(...ms.map((m) => m.rounds))
    for (let round = 0; round < rounds; round++) {
      throwIfStopped(this.options)
      // a model with fewer rounds has all its trees and sits the rest out: the chunk's last
      // positions, so every growing model keeps its place in the device's per-model arrays
      await this.round(ms.filter((m) => round < m.rounds))
      this.options.onRound?.(indices, round + 1, rounds)
    }
    return ms.map((m) => ({ params: m.params, seed: m.seed, features: F, baseScore: this.baseScore, trees: m.trees }))
  }

  private async round(ms: HostModel[]): Promise<void> {
    await this.startRound(ms)
    await this.growLevels(ms)
    for (const m of ms) m.trees.push(m.tb.finish())
  }

  /** Sampling, the gradient's largest magnitude, quantisation: each model's new tree, its root alone. */
  private async startRound(ms: HostModel[]): Promise<void> {
    const { n, rowsAll, P } = this.shape
    const sampled = rowsAll ? null : (this.sampledScratch ??= new Uint8Array(n))
    for (const m of ms) m.sample(this.d.host.width, n, sampled)
    this.dev.writeSamples(ms)
    const maxBits = await this.dev.maxGradients(ms.length)
    const info = this.host.quantise(ms, maxBits)
    for (const m of ms) m.startTree(P)
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
 * to fit). Model i's trees equal the CPU engine's trainGbdtGroup(data, { ...params,
 * ...options.perModel[i] }, [seeds[i]]).
 */
export async function trainGbdtGroupWebgpu(
  gpu: GbdtGpu,
  d: GpuGbdtData,
  paramsIn: Partial<GbdtParams>,
  seeds: readonly number[],
  options: WebgpuTrainOptions = {},
): Promise<GbdtModel[]> {
  const rows = d.host.rows
  const maxBin = d.host.cuts.maxBin
  const params = trainingParams(paramsIn, rows, maxBin, seeds)
  const own = modelTrainingParams(params, seeds, options.perModel, rows, maxBin)
  const heldOut = heldOutRows(options.heldOut, seeds, rows)
  if (d.disposed) throw new Error('webgpu: the data set was disposed')
  if (seeds.length === 0) return []
  const t = new WebgpuTrainer(gpu, d, own, heldOut, f32(params.baseScore), options)
  const C = t.shape.C
  // chunks take the models with the most rounds first (stable: index order otherwise)
  const order = [...seeds.keys()].sort((a, b) => own[b].rounds - own[a].rounds)
  try {
    const out: GbdtModel[] = new Array(seeds.length)
    for (let a = 0; a < order.length; a += C) {
      const indices = order.slice(a, a + C)
      const models = await t.trainChunk(
        indices.map((i) => seeds[i]),
        indices.map((i) => own[i]),
        indices.map((i) => heldOut[i]),
        indices,
      )
      models.forEach((model, k) => {
        out[indices[k]] = model
        options.onModelDone?.(indices[k], model)
      })
    }
    return out
  } finally {
    t.dispose()
  }
}

/** The chunking a group of `models` with the same parameters would get on this device (for flags and reports). */
export function chunkPlanFor(gpu: GbdtGpu, d: GpuGbdtData, paramsIn: Partial<GbdtParams>, models: number, histogramBudgetBytes?: number): ChunkPlan {
  const own = Array.from({ length: models }, () => resolveGbdtParams(paramsIn))
  return planChunks(chunkInput(own, d.host, gpu.limits, histogramBudgetBytes, DEFAULT_CANDIDATES_PER_NODE))
}
