// Training one XGBoost booster per model through the C API: the family's parameters as XGBoost's,
// the model's seed, nthread = the worker's share of the cores; one update per round with a yield in
// between (cancel and heartbeats get through), then the test scores, fingerprint, free. One booster at a
// time per process: XGBoost's training is not thread-safe, so `batched` does not exist here. A
// classifier is XGBoost's own binary:logistic or multi:softprob, scored on the probabilities XGBoost
// predicts with @shared/metrics like every other engine's.
import { createHash } from 'node:crypto'
import { EarlyStopping, type Metrics, outputsOf, type ResumeState, type StoppedRounds, type WorkloadEarlyStopping, type WorkloadTask } from '@shared/contract'
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
  /**
   * A halving rung's model to continue (contract/halving.ts ResumeState): the booster XGBoost saved
   * `rounds` rounds in (its JSON, the artifact a job keeps) is loaded, then only the rounds after it
   * are updated, iteration numbers continuing — xgb.train(xgb_model=…)'s continuation. Without row or
   * column sampling the model equals one trained straight, byte for byte; with sampling it does not:
   * XGBoost reseeds its one global RNG with `seed` when the loaded booster is configured, so the later
   * rounds draw the first rounds' samples again (XGBoost's own continuation does the same).
   */
  resume?: { json: string; rounds: number }
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
  /** the rounds this call updated (all of them, or those after hooks.resume's) */
  roundsGrown: number
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
  const resume = hooks.resume
  if (resume && watch) throw new RangeError('resume continues a model from its last round: not with earlyStopping')
  if (watch && !v) throw new RangeError("earlyStopping needs the data set's validation rows (a fold's, or a validation fraction's)")
  if (resume && resume.rounds >= rounds) throw new RangeError(`resume: a model ${resume.rounds} rounds in has nothing left of its ${rounds}`)
  // the validation rows in the booster's prediction cache: each round's prediction adds only the new trees
  const booster = api.createBooster(watch ? [data.dtrain, v!.dmatrix] : [data.dtrain])
  let kept: Handle | null = null
  try {
    // the job's parameters after the loaded model's: they are the ones a straight run trained with
    if (resume) loadResumed(api, booster, resume, params)
    for (const [name, value] of params) api.setParam(booster, name, value)
    const first = resume?.rounds ?? 0
    for (let round = first; round < rounds; round++) {
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
      roundsGrown: (watch?.roundsTrained ?? rounds) - first,
    }
  } finally {
    if (kept) api.freeBooster(kept)
    api.freeBooster(booster)
  }
}

/** A rung's state as the booster to continue: only XGBoost's own saved model can be (Trainpool's tree artifact has no XGBoost learner). */
export function boosterToContinue(state: ResumeState): NonNullable<XgbTrainHooks['resume']> {
  if (state.artifact.format !== 'xgboost-json') throw new RangeError(`resume: a ${state.artifact.format} model is not an XGBoost booster to continue`)
  return { json: state.artifact.json, rounds: state.rounds }
}

/**
 * Loads the model a rung sent back into `booster`, refusing one that is not `resume.rounds` rounds of
 * the job's objective (setting the job's objective over another would silently retrain its margins).
 */
function loadResumed(api: XgbApi, booster: Handle, resume: NonNullable<XgbTrainHooks['resume']>, params: readonly (readonly [string, string])[]): void {
  const objective = params.find(([name]) => name === 'objective')?.[1]
  const saved = (JSON.parse(resume.json) as { learner?: { objective?: { name?: string } } }).learner?.objective?.name
  if (saved !== objective) throw new RangeError(`resume: the model sent back is ${saved ?? 'no XGBoost model'}, the job trains ${objective}`)
  api.loadModel(booster, Buffer.from(resume.json, 'utf8'))
  const has = api.boostedRounds(booster)
  if (has !== resume.rounds) throw new RangeError(`resume: the model sent back has ${has} rounds, its state says ${resume.rounds}`)
}

/** The validation rows' value of the watched metric after this round, from XGBoost's predictions, scored as every engine scores. */
function validationValue(api: XgbApi, booster: Handle, v: NonNullable<XgbData['validation']>, task: WorkloadTask | undefined, watch: EarlyStopping): number {
  const outputs = api.predict(booster, v.dmatrix, v.rows, task ? outputsOf(task) : 1)
  return scoreMetric(task ?? { objective: 'regression', classes: 0 }, outputs, v.y, watch.metric)
}
