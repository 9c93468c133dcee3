// The train-and-report loop of the tree engines' worker halves (Trainpool's CPU engine in
// ../families/gbdt.ts, the WGSL one in ../gbdt-webgpu/webgpu-trees-runtime.ts): one group per job when fused, one per model
// otherwise; progress per round; per model its time, its test scores and tree hash computed on the
// host from its trees, or from the test margins the engine computed while training (the WGSL engine's;
// the trees themselves when the job keeps its models); with early stopping,
// the trees are the best round's (the engine kept them) and the rounds trained and kept are recorded. A regressor's score
// is its MSE; a classifier's are @shared/metrics' on its probabilities (testMse their `mse`). One
// loop, so both backends report the same numbers in the same way.
import { type Metrics, modelSeed, type Workload, type WorkloadTask } from '@shared/contract'
import type { GbdtParams } from '@shared/families/gbdt'
import { scoreOutputs } from '@shared/metrics'
import type { Dataset } from '../datasets/generated'
import {
  GBDT_PER_MODEL_PARAMS,
  type GbdtData,
  type GbdtModel,
  type GbdtPerModelParams,
  type GbdtTree,
  type HeldOutRows,
  meanSquaredError,
  outputsOfMargins,
  predictGbdt,
  predictGbdtOutputs,
  treeHash,
  treesArtifact,
} from '../gbdt'
import { resumedTrees } from '../gbdt/resume'
import { CancelledError, type TrainHooks, type TrainOptions } from '../backend/types'

export interface GroupTrainHooks {
  /** after a round of the models at these positions of `seeds` */
  onRound(positions: readonly number[], round: number, rounds: number): void
  shouldStop(): boolean
  cancelError(): Error
}

/**
 * A trained model, with its test rows' margins where the engine computed them while training (the
 * WGSL engine keeps the test rows on the device): predictGbdt's on the data set's test rows, bit for
 * bit (rows × K, row-major). The report then scores them instead of predicting on the host.
 */
export type GbdtModelWithTestMargins = GbdtModel & { testMargins?: Float32Array }

/** Trains one model per seed (the engine's group trainer, with the workload's parameters); `indices` are the models' indices in the run. */
export type GroupTrainer = (seeds: readonly number[], hooks: GroupTrainHooks, indices: readonly number[]) => Promise<GbdtModelWithTestMargins[]>

/**
 * A model set's job fused across configurations: each model of `group`'s own GBDT_PER_MODEL_PARAMS
 * (the engines' `perModel` option), from the seam's paramsOf; undefined outside a set.
 */
export function perModelParams(options: TrainOptions, group: readonly number[]): GbdtPerModelParams[] | undefined {
  const paramsOf = options.paramsOf
  if (!paramsOf) return undefined
  return group.map((i) => {
    const p = paramsOf(i) as GbdtParams
    return Object.fromEntries(GBDT_PER_MODEL_PARAMS.map((k) => [k, p[k]]))
  })
}

/** A model set's folds fused (the backend's foldsHeldOut): each model of `group`'s held-out rows; undefined without folds. */
export function heldOutRowsOf(options: TrainOptions, group: readonly number[]): (HeldOutRows | null)[] | undefined {
  const heldOutOf = options.heldOutOf
  return heldOutOf ? group.map((i) => heldOutOf(i)) : undefined
}

/**
 * A halving rung (options.resumeOf): each model of `group`'s trees so far on this worker's binned
 * data (resume.ts), the engines' `resume` option; undefined outside a rung.
 */
export function resumedTreesOf(options: TrainOptions, group: readonly number[], binned: GbdtData, w: Workload<GbdtParams>): (GbdtTree[] | null)[] | undefined {
  const resumeOf = options.resumeOf
  if (!resumeOf) return undefined
  return group.map((i) => {
    const state = resumeOf(i)
    return state ? resumedTrees(state.artifact, state.rounds, binned, w.task, w.model.baseScore) : null
  })
}

/**
 * A model's scores on rows x (row-major, F features) with labels y: a regressor's MSE; a classifier's
 * metrics on its probabilities, its MSE theirs. `margins`: predictGbdt's on x, computed by the engine
 * (then x is not read).
 */
function scoreTrees(
  model: GbdtModel,
  task: WorkloadTask | undefined,
  x: Float32Array,
  rows: number,
  F: number,
  y: Float32Array,
  margins?: Float32Array,
): { mse: number; metrics?: Metrics } {
  if (!task || task.objective === 'regression') return { mse: meanSquaredError(margins ?? predictGbdt(model, x, rows, F), y) }
  // outputsOfMargins works in place: the engine's margins stay as they came
  const outputs = margins ? outputsOfMargins(model, margins.slice(), rows) : predictGbdtOutputs(model, x, rows, F)
  const metrics = scoreOutputs(task, outputs, y)
  return { mse: metrics.mse!, metrics }
}

export async function trainTreesAndReport(
  train: GroupTrainer,
  dataset: Dataset,
  w: Workload<GbdtParams>,
  indices: readonly number[],
  { fused, keep = false, heldOutOf }: TrainOptions,
  hooks: TrainHooks,
): Promise<void> {
  const F = w.features
  const test = dataset.test
  const validation = dataset.validation
  const task = w.task
  const asValidation = (s: { mse: number; metrics?: Metrics }) => ({ validationMse: s.mse, ...(s.metrics ? { validationMetrics: s.metrics } : {}) })
  /** a fold model's scores on its fold's rows: the fold's data set's validation rows, or its rows held out of the training set */
  const validationOf = (model: GbdtModel, index: number): { validationMse?: number; validationMetrics?: Metrics } => {
    if (validation) return asValidation(scoreTrees(model, task, validation.x, validation.rows, F, validation.y))
    const h = heldOutOf?.(index)
    if (!h) return {}
    return asValidation(scoreTrees(model, task, dataset.xTrain.subarray(h.begin * F, h.end * F), h.end - h.begin, F, dataset.yTrain.subarray(h.begin, h.end)))
  }
  const groups = fused ? [indices] : indices.map((i) => [i])
  for (const group of groups) {
    const seeds = group.map((i) => modelSeed(w.seed, i))
    const started = performance.now()
    const models = await train(
      seeds,
      {
        onRound: (positions, round, rounds) =>
          hooks.onProgress(
            positions.map((k) => group[k]),
            { done: round, total: rounds, unit: 'round' },
          ),
        shouldStop: hooks.shouldStop,
        cancelError: () => new CancelledError(),
      },
      group,
    )
    const elapsedMs = performance.now() - started
    models.forEach((model, k) => {
      const scores = scoreTrees(model, task, dataset.xTest, test, w.features, dataset.yTest, model.testMargins)
      hooks.onModelDone({
        index: group[k],
        seed: seeds[k],
        trainMs: fused ? null : elapsedMs,
        groupTrainMs: fused ? elapsedMs : null,
        testMse: scores.mse,
        ...(scores.metrics ? { metrics: scores.metrics } : {}),
        finalLoss: null,
        fingerprint: treeHash(model),
        ...(keep ? { artifact: treesArtifact(model) } : {}),
        ...validationOf(model, group[k]),
        ...(model.stoppedRounds ?? {}),
        // a halving rung: the rounds this job grew (the runner sums them over the rungs)
        ...(model.roundsGrown !== undefined ? { roundsTrained: model.roundsGrown } : {}),
      })
    })
  }
}
