// Training one XGBoost booster per model through the C API: the family's parameters as XGBoost's,
// the model's seed, nthread = the worker's share of the cores; one update per round with a yield in
// between (cancel and heartbeats get through), then test MSE, fingerprint, free. One booster at a
// time per process: XGBoost's training is not thread-safe, so `batched` does not exist here.
import { createHash } from 'node:crypto'
import type { GbdtParams } from '@shared/families/gbdt'
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
}

/** Builds the train (with labels) and test DMatrices from row-major float32 (NaN = missing). */
export function createXgbData(
  api: XgbApi,
  d: Pick<Dataset, 'xTrain' | 'yTrain' | 'xTest' | 'yTest' | 'train' | 'test' | 'validation'>,
  features: number,
  nthread: number,
): XgbData {
  const dtrain = api.dmatrixFromDense(d.xTrain, d.train, features, nthread)
  try {
    api.setLabels(dtrain, d.yTrain)
    const dtest = api.dmatrixFromDense(d.xTest, d.test, features, nthread)
    const v = d.validation
    const validation = v ? { dmatrix: api.dmatrixFromDense(v.x, v.rows, features, nthread), rows: v.rows, y: v.y } : null
    return { dtrain, dtest, testRows: d.test, yTest: d.yTest, validation }
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

/** The booster's parameters, in the order they are set. `major` is XGBoost's major version (CUDA flags differ). */
export function xgbParams(p: Omit<GbdtParams, 'kind' | 'rounds'>, seed: number, nthread: number, device: XgbDevice, major: number): [string, string][] {
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
    ['objective', 'reg:squarederror'],
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
}

export interface XgbTrained {
  /** booster creation, parameters and every round (the clock of one model), ms */
  trainMs: number
  testMse: number
  /** on the data's validation rows, when it has them */
  validationMse?: number
  /** the booster's JSON, when asked for (hooks.keep) */
  json?: string
  /** the first 16 hex digits of SHA-256 over the model's JSON: equal models, equal fingerprints */
  fingerprint: string
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Trains one model: booster, parameters, `rounds` updates (yielding between them), predict, fingerprint, free. */
export async function trainXgbModel(
  api: XgbApi,
  data: XgbData,
  params: readonly [string, string][],
  rounds: number,
  hooks: XgbTrainHooks = {},
): Promise<XgbTrained> {
  const started = performance.now()
  const booster = api.createBooster([data.dtrain])
  try {
    for (const [name, value] of params) api.setParam(booster, name, value)
    for (let round = 0; round < rounds; round++) {
      if (hooks.shouldStop?.()) throw hooks.cancelError?.() ?? new Error('cancelled')
      api.updateOneIter(booster, round, data.dtrain)
      hooks.onRound?.(round + 1, rounds)
      if (round + 1 < rounds) await yieldToEventLoop()
    }
    const trainMs = performance.now() - started
    const testMse = meanSquaredError(api.predict(booster, data.dtest, data.testRows), data.yTest)
    const v = data.validation
    const validationMse = v ? meanSquaredError(api.predict(booster, v.dmatrix, v.rows), v.y) : undefined
    const json = api.saveModelJson(booster)
    const fingerprint = createHash('sha256').update(json).digest('hex').slice(0, 16)
    return { trainMs, testMse, fingerprint, ...(validationMse !== undefined ? { validationMse } : {}), ...(hooks.keep ? { json: json.toString('utf8') } : {}) }
  } finally {
    api.freeBooster(booster)
  }
}
