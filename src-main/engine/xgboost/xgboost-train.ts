// Training one XGBoost booster per model through the C API: the family's parameters as XGBoost's,
// the model's seed, nthread = the worker's share of the cores; one update per round with a yield in
// between (cancel and heartbeats get through), then the test scores, fingerprint, free. One booster at a
// time per process: XGBoost's training is not thread-safe, so `batched` does not exist here. A
// classifier is XGBoost's own binary:logistic or multi:softprob, scored on the probabilities XGBoost
// predicts with @shared/metrics like every other engine's.
import { createHash } from 'node:crypto'
import { EarlyStopping, type Metrics, outputsOf, type StoppedRounds, type WorkloadEarlyStopping, type WorkloadTask } from '@shared/contract'
import type { GbdtParams } from '@shared/families/gbdt'
import { scoreMetric, scoreOutputs } from '@shared/metrics'
import { meanSquaredError } from '../gbdt'
import type { Dataset } from '../datasets/dataset'
import type { Handle, XgbApi } from './library'
import type { XgbDevice } from './xgboost-runtime'

/** The data one worker trains on: DMatrix handles built once per data set (XGBoost caches its bins on them). */
export interface XgbData {
  dtrain: Handle
  dtest: Handle
  testRows: number
  yTest: Float32Array
  /** a fold's validation rows (model sets with folds) */
  validation: { dmatrix: Handle; rows: number; y: Float32Array } | null
  /** what the labels are: a classifier's objective and class count (labels 0 … K−1); absent: regression */
  task?: WorkloadTask
}

/** Builds the train (with labels: a classifier's are class indices) and test DMatrices from row-major float32 (NaN = missing). */
export function createXgbData(
  api: XgbApi,
  d: Pick<Dataset, 'spec' | 'xTrain' | 'yTrain' | 'xTest' | 'yTest' | 'train' | 'test' | 'validation'>,
  features: number,
  nthread: number,
): XgbData {
  const dtrain = api.dmatrixFromDense(d.xTrain, d.train, features, nthread)
  try {
    api.setLabels(dtrain, d.yTrain)
    const dtest = api.dmatrixFromDense(d.xTest, d.test, features, nthread)
    const v = d.validation
    const validation = v ? { dmatrix: api.dmatrixFromDense(v.x, v.rows, features, nthread), rows: v.rows, y: v.y } : null
    const task = d.spec.task
    return { dtrain, dtest, testRows: d.test, yTest: d.yTest, validation, ...(task && task.objective !== 'regression' ? { task } : {}) }
  } catch (err) {
    api.freeDMatrix(dtrain)
    throw err
  }
}

export function freeXgbData(api: XgbApi, data: XgbData): void {
  api.freeDMatrix(data.dtrain)
  api.freeDMatrix(data.dtest)
  if (data.validation) api.freeDMatrix(data.validation.dmatrix)
}

/** XGBoost's spelling of a number: integers as integers, others at full (round-trip) precision. */
function num(x: number): string {
  return String(x)
}

/** XGBoost's objective for the task: reg:squarederror, binary:logistic, or multi:softprob over num_class = K. */
function objectiveParams(task: WorkloadTask | undefined): [string, string][] {
  if (!task || task.objective === 'regression') return [['objective', 'reg:squarederror']]
  if (task.objective === 'binary') return [['objective', 'binary:logistic']]
  return [
    ['objective', 'multi:softprob'],
    ['num_class', String(task.classes)],
  ]
}

/**
 * The booster's parameters, in the order they are set. `major` is XGBoost's major version (CUDA flags
 * differ); `task` a classifier's objective (absent: regression). base_score is the family's, as XGBoost
 * takes it: binary:logistic reads it as a probability (its logit the first margin), multi:softprob adds it to every class's margin.
 */
export function xgbParams(
  p: Omit<GbdtParams, 'kind' | 'rounds'>,
  seed: number,
  nthread: number,
  device: XgbDevice,
  major: number,
  task?: WorkloadTask,
): [string, string][] {
  const deviceParams: [string, string][] =
    device.kind === 'cpu'
      ? major >= 2
        ? [
            ['device', 'cpu'],
            ['tree_method', 'hist'],
          ]
        : [['tree_method', 'hist']]
      : major >= 2
        ? [
            ['device', device.ordinal === null ? 'cuda' : `cuda:${device.ordinal}`],
            ['tree_method', 'hist'],
          ]
        : [
            ['tree_method', 'gpu_hist'],
            ['gpu_id', String(device.ordinal ?? 0)],
          ]
  return [
    ...objectiveParams(task),
    ...deviceParams,
    ['grow_policy', 'depthwise'],
    ['max_depth', num(p.maxDepth)],
    ['eta', num(p.eta)],
    ['lambda', num(p.lambda)],
    ['alpha', num(p.alpha)],
    ['gamma', num(p.gamma)],
    ['min_child_weight', num(p.minChildWeight)],
    ['max_bin', num(p.maxBin)],
    ['subsample', num(p.subsample)],
    ['colsample_bytree', num(p.colsampleBytree)],
    ['base_score', num(p.baseScore)],
    ['seed', String(seed)],
    ['nthread', String(nthread)],
    ['verbosity', '0'],
  ]
}

export interface XgbTrainHooks {
  onRound?(done: number, total: number): void
  shouldStop?(): boolean
  cancelError?(): Error
  /** return the booster's JSON too (the run keeps the model) */
  keep?: boolean
  /**
   * XGBoost's early stopping (early_stopping_rounds): after each round the validation rows' metric,
   * computed here from XGBoosterPredict's outputs with @shared/metrics (the very numbers Trainpool's
   * engines score), then the model kept is the best round's (XGBoosterSlice), as XGBoost's
   * best_iteration with iteration_range would predict. Needs the data's validation rows.
   */
  earlyStopping?: WorkloadEarlyStopping
}

export interface XgbTrained {
  /** booster creation, parameters and every round (the clock of one model), ms */
  trainMs: number
  /** MSE on the test rows: of the predictions, or (a classifier) of the probabilities against the one-hot label */
  testMse: number
  /** a classifier's every metric on the test rows */
  metrics?: Metrics
  /** on the data's validation rows, when it has them */
  validationMse?: number
  validationMetrics?: Metrics
  /** the booster's JSON, when asked for (hooks.keep) */
  json?: string
  /** the first 16 hex digits of SHA-256 over the model's JSON: equal models, equal fingerprints */
  fingerprint: string
  /** with early stopping: the rounds trained and the round kept (the model is its first bestRound rounds) */
  stoppedRounds?: StoppedRounds
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** The booster's scores on some rows: a regressor's MSE as always; a classifier's metrics on the probabilities XGBoost predicts ([rows·K] for softprob), its MSE theirs. */
function scoreBooster(
  api: XgbApi,
  booster: Handle,
  dmatrix: Handle,
  rows: number,
  y: Float32Array,
  task: WorkloadTask | undefined,
): { mse: number; metrics?: Metrics } {
  if (!task) return { mse: meanSquaredError(api.predict(booster, dmatrix, rows), y) }
  const metrics = scoreOutputs(task, api.predict(booster, dmatrix, rows, outputsOf(task)), y)
  return { mse: metrics.mse!, metrics }
}

/** Trains one model: booster, parameters, `rounds` updates (yielding between them), predict, fingerprint, free. */
export async function trainXgbModel(
  api: XgbApi,
  data: XgbData,
  params: readonly [string, string][],
  rounds: number,
  hooks: XgbTrainHooks = {},
): Promise<XgbTrained> {
  const started = performance.now()
  const v = data.validation
  const watch = hooks.earlyStopping ? new EarlyStopping(hooks.earlyStopping.rounds, hooks.earlyStopping.metric) : null
  if (watch && !v) throw new RangeError("earlyStopping needs the data set's validation rows (a fold's, or a validation fraction's)")
  // the validation rows in the booster's prediction cache: each round's prediction adds only the new trees
  const booster = api.createBooster(watch ? [data.dtrain, v!.dmatrix] : [data.dtrain])
  let kept: Handle | null = null
  try {
    for (const [name, value] of params) api.setParam(booster, name, value)
    for (let round = 0; round < rounds; round++) {
      if (hooks.shouldStop?.()) throw hooks.cancelError?.() ?? new Error('cancelled')
      api.updateOneIter(booster, round, data.dtrain)
      hooks.onRound?.(round + 1, rounds)
      if (watch && watch.record(validationValue(api, booster, v!, data.task, watch))) break
      if (round + 1 < rounds) await yieldToEventLoop()
    }
    // the best round's model: its first bestRound rounds
    if (watch && watch.bestRound < watch.roundsTrained) kept = api.slice(booster, watch.bestRound)
    const model = kept ?? booster
    const trainMs = performance.now() - started
    const test = scoreBooster(api, model, data.dtest, data.testRows, data.yTest, data.task)
    const validation = v ? scoreBooster(api, model, v.dmatrix, v.rows, v.y, data.task) : undefined
    const json = api.saveModelJson(model)
    const fingerprint = createHash('sha256').update(json).digest('hex').slice(0, 16)
    return {
      trainMs,
      testMse: test.mse,
      ...(test.metrics ? { metrics: test.metrics } : {}),
      fingerprint,
      ...(validation ? { validationMse: validation.mse } : {}),
      ...(validation?.metrics ? { validationMetrics: validation.metrics } : {}),
      ...(hooks.keep ? { json: json.toString('utf8') } : {}),
      ...(watch ? { stoppedRounds: watch.outcome } : {}),
    }
  } finally {
    if (kept) api.freeBooster(kept)
    api.freeBooster(booster)
  }
}

/** The validation rows' value of the watched metric after this round, from XGBoost's predictions, scored as every engine scores. */
function validationValue(api: XgbApi, booster: Handle, v: NonNullable<XgbData['validation']>, task: WorkloadTask | undefined, watch: EarlyStopping): number {
  const outputs = api.predict(booster, v.dmatrix, v.rows, task ? outputsOf(task) : 1)
  return scoreMetric(task ?? { objective: 'regression', classes: 0 }, outputs, v.y, watch.metric)
}
