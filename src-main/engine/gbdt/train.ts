// The trainer: XGBoost 1.7 `hist`, depth-wise growth, squared error or a classifier's objective
// (objective.ts), for a GROUP of models that share one binned matrix. A group of one is the
// single-model trainer: `sequential` and `pool` run this very code with one seed, `batched` with
// many, so model i's trees are the same either way. Here: the public API and the round loop;
// model-state.ts, grow.ts and histograms.ts do the rest. A round, per-model parameters: README.md,
// "Level pass, tree groups and memory".
import { CPU_SLOT_BYTES, DEFAULT_TREE_GROUP, featuresPerTree, type GbdtParams, HISTOGRAM_BUDGET_BYTES } from '@shared/families/gbdt'
import type { GbdtData } from './binning'
import { bestRoundModel, type GbdtEarlyStopping, HeldOutWatch } from './early-stopping'
import { LevelGrower } from './grow'
import { HistPool } from './histograms'
import { arenaBytes, countsArenaBytes, createHistKernel, kernelName, type KernelName, releaseHistKernel } from './kernel'
import { GradientScratch, ModelState } from './model-state'
import { baseScoreProblem, type GbdtTask, taskProblem, treesPerRound } from './objective'
import { type HeldOutRows, heldOutProblem, histogramSlots, type SplitCoefs, splitCoefs, throwIfStopped, trainingParams } from './rules'
import type { GbdtModel, GbdtTree } from './tree'

const f32 = Math.fround

/**
 * The parameters the models of one group may each have their own of (GbdtTrainOptions.perModel;
 * the CPU backend's `perModel` in a model set). maxBin is the binned data's; baseScore stays the group's.
 */
export const GBDT_PER_MODEL_PARAMS = [
  'rounds',
  'maxDepth',
  'eta',
  'lambda',
  'alpha',
  'gamma',
  'minChildWeight',
  'subsample',
  'colsampleBytree',
] as const satisfies readonly (keyof GbdtParams)[]

/** A model's own values of GBDT_PER_MODEL_PARAMS (the rest: the group's). */
export type GbdtPerModelParams = Partial<Pick<GbdtParams, (typeof GBDT_PER_MODEL_PARAMS)[number]>>

export interface GbdtTrainOptions {
  /** after every round (1-based): `positions` the models (by position in `seeds`) that grew trees in it */
  onRound?: (round: number, rounds: number, positions: readonly number[]) => void
  /** checked before every round and between steps of a round; true → throw cancelError() (default: a GbdtCancelledError) */
  shouldStop?: () => boolean
  cancelError?: () => Error
  /** when model `index` (of the group) has all its trees */
  onModelDone?: (index: number, model: GbdtModel) => void
  /** histogram memory for the whole group (default HISTOGRAM_BUDGET_BYTES); above it the level pass is split (results unchanged) */
  histogramBudgetBytes?: number
  /** how many models of the group grow their trees together, one level pass for all (default: DEFAULT_TREE_GROUP) */
  treeGroup?: number
  /** filled in when training ends (what the family's memory model, gbdtMemory, has to bound) */
  stats?: GbdtTrainStats
  /**
   * A model set fused across configurations: model i's own parameters (by position in `seeds`) over
   * the group's, any of GBDT_PER_MODEL_PARAMS. Model i's trees are the ones it grows alone with its
   * parameters (trainGbdt(data, { ...params, ...perModel[i] }, seeds[i])).
   */
  perModel?: readonly GbdtPerModelParams[]
  /**
   * A model set's folds fused: the training rows model i (by position in `seeds`) never trains on,
   * its fold's validation rows (rules.ts HeldOutRows); null or absent: it trains on every row.
   */
  heldOut?: readonly (HeldOutRows | null)[]
  /** the histogram kernel (kernel.ts; default: TRAINPOOL_GBDT_KERNEL, else wasm where WebAssembly SIMD is available); the trees are the same */
  kernel?: KernelName
  /**
   * What the models learn (the workload's task; labels are class indices 0 … K−1): binary:logistic
   * or multi:softprob, K trees a round; absent or regression: squared error.
   */
  task?: GbdtTask
  /**
   * Early stopping (early-stopping.ts): after each round, each model's value of `metric` on its
   * held-out rows (`heldOut`, which every model then needs); a model stops once it has not improved
   * for `rounds` rounds and leaves the group (no more gradients, partitions or histograms), and keeps
   * its best round's trees (GbdtModel.stoppedRounds records both rounds).
   */
  earlyStopping?: GbdtEarlyStopping
  /**
   * A successive-halving rung (@shared/contract halving.ts): the trees model i (by position in
   * `seeds`) has from earlier rungs (null: none yet), continued rather than grown again
   * (ModelState.resume); each model then records the rounds it grew here (GbdtModel.roundsGrown).
   * Absent: every model starts from nothing and records nothing.
   */
  resume?: readonly (readonly GbdtTree[] | null)[]
}

export interface GbdtTrainStats {
  /** the most node histogram buffers alive at once, all models of the group together */
  peakNodeHistograms: number
  /** rounds grown, all models of the group together (a model that stopped early grows no more) */
  modelRounds?: number
}

/**
 * The trainer as a generator: it yields after every block of features (FEATURE_BLOCK) of every level pass (a few
 * milliseconds of work at most) and after every round, and checks shouldStop() at each yield.
 * trainGbdtGroup runs it to the end; trainGbdtGroupAsync gives the event loop a turn now and then.
 */
function* groupTrainer(data: GbdtData, paramsIn: Partial<GbdtParams>, seeds: readonly number[], options: GbdtTrainOptions): Generator<void, GbdtModel[]> {
  const group = prepareGroup(data, paramsIn, seeds, options)
  try {
    return yield* trainGroup(data, group, options)
  } finally {
    // no array in its memory is used again (the models own theirs): the next training may reuse it
    releaseHistKernel(group.kernel)
  }
}

/** groupTrainer's rounds, on its prepared group */
function* trainGroup(data: GbdtData, group: ReturnType<typeof prepareGroup>, options: GbdtTrainOptions): Generator<void, GbdtModel[]> {
  const { own, baseScore, models, grower, pool, treeGroup, heldOut, scratch } = group
  const rounds = Math.max(...own.map((p) => p.rounds))
  const watches = earlyStoppingWatches(options, heldOut, data.y)
  let modelRounds = 0
  const grown = new Int32Array(models.length)
  // Each round, the group's trees grow `treeGroup` models at a time (a K-class model's K trees side
  // by side): per level, one pass over the binned matrix serves every tree of that set. On a CPU the
  // set is one model by default, whose histograms stay in cache (see DEFAULT_TREE_GROUP); the trees
  // do not depend on it.
  for (let round = Math.min(...models.map((m) => m.resumedRounds)); round < rounds; round++) {
    throwIfStopped(options)
    // a model with fewer rounds than the group's most has all its trees, one stopped early keeps
    // what it has: either sits the rest out; a resumed one joins at the round after its last
    const growing = models.flatMap((m, i) => (round >= m.resumedRounds && round < m.rounds && !watches?.[i].rule.stopped ? [i] : []))
    if (growing.length === 0) {
      if (models.some((m) => m.resumedRounds > round)) continue
      break
    }
    for (let t0 = 0; t0 < growing.length; t0 += treeGroup) {
      const set = growing.slice(t0, t0 + treeGroup).map((i) => models[i])
      const trees = set.flatMap((m) => m.startRound(data, scratch))
      // to the set's deepest model: a shallower one has nothing left to evaluate past its own depth
      const depth1 = Math.max(...set.map((m) => m.maxDepth))
      for (let depth = 0; depth < depth1; depth++) yield* grower.growLevel(trees, depth)
      for (const t of trees) grower.endTree(t)
      for (const m of set) m.finishRound(data)
    }
    if (watches) for (const i of growing) watches[i].afterRound(models[i].margins)
    modelRounds += growing.length
    for (const i of growing) grown[i]++
    options.onRound?.(round + 1, rounds, growing)
    yield
  }

  if (options.stats) {
    options.stats.peakNodeHistograms = pool.peak
    options.stats.modelRounds = modelRounds
  }
  const task = options.task
  const classifier = task && task.objective !== 'regression' ? { objective: task.objective, classes: task.classes } : {}
  const out = models.map<GbdtModel>((m, i) => {
    const model: GbdtModel = {
      params: own[i],
      seed: m.seed,
      features: data.features,
      baseScore,
      trees: m.trees,
      ...classifier,
      ...(options.resume ? { roundsGrown: grown[i] } : {}),
    }
    return watches ? bestRoundModel(model, watches[i].rule.outcome) : model
  })
  if (options.onModelDone) out.forEach((model, i) => options.onModelDone!(i, model))
  return out
}

/**
 * A group ready to grow: each model's parameters and state, the histogram kernel with its arena,
 * the buffer pool sized by the budget, the level grower, and how many trees grow together.
 */
function prepareGroup(data: GbdtData, paramsIn: Partial<GbdtParams>, seeds: readonly number[], options: GbdtTrainOptions) {
  const params = trainingParams(paramsIn, data.rows, data.cuts.maxBin, seeds)
  const task = options.task
  checkTask(task, params.baseScore, data.y)
  const K = treesPerRound(task)
  const hessians = task !== undefined && task.objective !== 'regression'
  const n = data.rows
  const F = data.features
  const own = modelTrainingParams(params, seeds, options.perModel, n, data.cuts.maxBin)
  const heldOut = heldOutRows(options.heldOut, seeds, n)
  // the widest model's histogram (most features per tree) sizes every buffer
  const perTree = Math.max(...own.map((p) => featuresPerTree(p.colsampleBytree, F)))
  const slots = histogramSlots(data.width, perTree)
  const capacity = Math.max(2, Math.floor((options.histogramBudgetBytes ?? HISTOGRAM_BUDGET_BYTES) / (slots * CPU_SLOT_BYTES)))
  // models that agree on the split coefficients share them
  const coefs = new Map<string, SplitCoefs>()
  const modelCoefs = own.map((p) => {
    const fresh = splitCoefs(p)
    const key = JSON.stringify(fresh)
    const c = coefs.get(key) ?? fresh
    coefs.set(key, c)
    return c
  })
  // the arrays the histogram kernel reads, all in its memory: the binned matrix, each model's rows,
  // q (qh), sampled flags and margins, the gradient scratch and labels, the terminal scratches and
  // the pool's buffers (only those used are ever touched)
  let maxWidth = 1
  for (let f = 0; f < F; f++) maxWidth = Math.max(maxWidth, data.width[f])
  const kernel = createHistKernel(
    kernelName(options.kernel),
    arenaBytes(data.bins.byteLength) +
      arenaBytes(8 * LevelGrower.scratchALength(maxWidth)) +
      arenaBytes(8 * LevelGrower.scratchBLength(maxWidth)) +
      arenaBytes(4 * n, LevelGrower.partitionScratchArrays(hessians)) +
      arenaBytes(4 * n, (hessians ? 3 : 2) * K * seeds.length) +
      arenaBytes(n, K * seeds.length) +
      arenaBytes(4 * n, K * seeds.length) +
      arenaBytes(4 * n, GradientScratch.loopArrays(hessians)) +
      arenaBytes(16 * slots, capacity) +
      countsArenaBytes(F),
  )
  const pool = new HistPool(2 * slots, capacity, (length) => kernel.float64(length))
  const grower = new LevelGrower(data, pool, options, kernel, hessians)
  const models = seeds.map((s, i) => new ModelState(s, n, F, own[i], modelCoefs[i], kernel, heldOut[i], task))
  /** the sampled rows' float32 gradients (and hessians, probabilities) before quantisation, one model at a time */
  const scratch = new GradientScratch(data, task, kernel)
  resumeModels(models, options, data)
  // a K-class model's K trees hold histograms at the same time: K models' worth
  const treeGroup = Math.max(1, Math.min(models.length, options.treeGroup ?? DEFAULT_TREE_GROUP))
  return { own, baseScore: f32(params.baseScore), models, grower, pool, treeGroup, heldOut, kernel, scratch }
}

/** Each model continues from the trees an earlier rung gave it (options.resume), checked to be one per model and never beside early stopping. */
function resumeModels(models: readonly ModelState[], options: GbdtTrainOptions, data: GbdtData): void {
  const resume = options.resume
  if (!resume) return
  if (resume.length !== models.length) throw new RangeError(`resume has ${resume.length} entries for ${models.length} models`)
  // a stopped model keeps its best round, so a rung could not continue it from its last
  if (options.earlyStopping) throw new RangeError('resume continues each model from its last round: not with earlyStopping')
  models.forEach((m, i) => {
    const trees = resume[i]
    if (trees && trees.length > 0) m.resume(trees, data)
  })
}

/** Each model's early-stopping watch over its held-out rows (every model needs some), or null when early stopping is off. */
function earlyStoppingWatches(options: GbdtTrainOptions, heldOut: readonly (HeldOutRows | null)[], y: Float32Array): HeldOutWatch[] | null {
  const stopping = options.earlyStopping
  if (!stopping) return null
  return heldOut.map((h, i) => {
    if (!h) throw new RangeError(`earlyStopping needs every model's held-out rows (heldOut); model ${i} has none`)
    return new HeldOutWatch(stopping, h, y, options.task)
  })
}

/**
 * Refuses a task the engine cannot train (its class count, a binary baseScore outside (0, 1)) and
 * labels that are not its class indices (0/1 for binary, 0 … K−1 for multiclass).
 */
export function checkTask(task: GbdtTask | undefined, baseScore: number, y: Float32Array): void {
  if (!task || task.objective === 'regression') return
  const problem = taskProblem(task) ?? baseScoreProblem(task.objective, baseScore)
  if (problem) throw new RangeError(problem)
  const K = task.classes
  for (let r = 0; r < y.length; r++) {
    const label = y[r]
    if (!(Number.isInteger(label) && label >= 0 && label < K))
      throw new RangeError(`a ${task.objective} label must be a class index 0 … ${K - 1}, row ${r} has ${label}`)
  }
}

/**
 * Each model's training parameters: the group's (already checked by trainingParams) overridden by
 * its own `perModel[i]`, refusing any that cannot differ within a group and checked the same way.
 * Shared with the WGSL engine, so both train a fused group's model i with the same parameters.
 */
export function modelTrainingParams(
  params: GbdtParams,
  seeds: readonly number[],
  perModel: readonly GbdtPerModelParams[] | undefined,
  rows: number,
  binnedMaxBin: number,
): GbdtParams[] {
  return seeds.map((_, i) => trainingParams({ ...params, ...ownParams(perModel?.[i]) }, rows, binnedMaxBin, seeds))
}

/** Each model's held-out rows (null: none), checked against the training set's n rows. Shared with the WGSL engine. */
export function heldOutRows(heldOut: readonly (HeldOutRows | null)[] | undefined, seeds: readonly number[], n: number): (HeldOutRows | null)[] {
  if (heldOut && heldOut.length !== seeds.length) throw new RangeError(`heldOut has ${heldOut.length} entries for ${seeds.length} models`)
  return seeds.map((_, i) => {
    const h = heldOut?.[i] ?? null
    const problem = heldOutProblem(h, n)
    if (problem) throw new RangeError(`model ${i}: ${problem}`)
    return h
  })
}

/** A model's own parameters, refusing any that cannot differ within a group. */
function ownParams(p: GbdtPerModelParams | undefined): GbdtPerModelParams {
  if (!p) return {}
  const shared = Object.keys(p).filter((k) => !(GBDT_PER_MODEL_PARAMS as readonly string[]).includes(k))
  if (shared.length > 0) throw new RangeError(`perModel may set ${GBDT_PER_MODEL_PARAMS.join(', ')}; ${shared.join(', ')} must be the group's`)
  return p
}

/**
 * Trains one model per seed on `data`, all together (the batched strategy; one seed = one model
 * alone), synchronously. Model i's trees depend only on (data, params, seeds[i]).
 */
export function trainGbdtGroup(data: GbdtData, params: Partial<GbdtParams>, seeds: readonly number[], options: GbdtTrainOptions = {}): GbdtModel[] {
  const it = groupTrainer(data, params, seeds, options)
  for (;;) {
    const r = it.next()
    if (r.done) return r.value
  }
}

const nextTurn: () => Promise<void> =
  typeof setImmediate === 'function' ? () => new Promise((r) => setImmediate(r)) : () => new Promise((r) => setTimeout(r, 0))

/**
 * trainGbdtGroup that hands the event loop a turn at least every `sliceMs` (default 20 ms), so a
 * worker's cancel messages and heartbeats get through; shouldStop() is checked at every step, and
 * the trees are the same as the synchronous trainer's.
 */
export async function trainGbdtGroupAsync(
  data: GbdtData,
  params: Partial<GbdtParams>,
  seeds: readonly number[],
  options: GbdtTrainOptions & { sliceMs?: number } = {},
): Promise<GbdtModel[]> {
  const slice = options.sliceMs ?? 20
  const it = groupTrainer(data, params, seeds, options)
  let last = performance.now()
  for (;;) {
    const r = it.next()
    if (r.done) return r.value
    const now = performance.now()
    if (now - last >= slice) {
      await nextTurn()
      last = performance.now()
    }
  }
}

/** One model alone (the sequential and pool strategies): exactly trainGbdtGroup with one seed. */
export function trainGbdt(data: GbdtData, params: Partial<GbdtParams>, seed: number, options: GbdtTrainOptions = {}): GbdtModel {
  return trainGbdtGroup(data, params, [seed], options)[0]
}
