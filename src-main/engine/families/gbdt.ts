// The gradient-boosted trees family's worker half, on Trainpool's own TypeScript engine (engine/
// gbdt/): no tfjs backend. The data set is generated from the seed or read from the user's cached
// table (as for the MLP; missing values stay NaN and take each split's default side) and binned once
// per worker; every strategy trains model i from seed + i + 1 on those same bins, so its trees —
// and the fingerprint (tree hash) and test MSE reported with it — are bit-identical everywhere.
// Rounds run asynchronously (a yield between rounds), so cancel and heartbeats get through.
// Backend `webgpu` trains the same trees (bit for bit) in WGSL on the device (engine/gbdt-webgpu/).
// Backend `xgboost` trains the same workload on the user's own libxgboost instead (engine/xgboost/):
// DMatrices built once per worker, one booster per model, never fused.
import { modelSeed, type Workload } from '@shared/contract'
import type { GbdtParams } from '@shared/families/gbdt'
import { datasetFor, type Dataset } from '../data'
import { userDataKey } from '../user-data'
import { prepareGbdtData, trainGbdtGroupAsync, type GbdtData } from '../gbdt'
import { createXgbData, freeXgbData, isXgboostRuntime, startXgboostRuntime, trainXgbModel, xgbParams, type XgbData, type XgboostRuntime } from '../xgboost'
import { disposeWebgpu, isWebgpuGbdtRuntime, prepareWebgpu, startWebgpuGbdtRuntime, trainWebgpu, warmUpWebgpu, type WebgpuPrepared } from '../gbdt-webgpu/runtime'
import { plainCpuRuntime } from './cpu-runtime'
import { type GroupTrainer, trainTreesAndReport } from './gbdt-report'
import { CancelledError, type TrainHooks, type WorkerFamily, type WorkerRuntime } from './types'

type GbdtPrepared = { engine: 'typescript'; dataset: Dataset; binned: GbdtData } | { engine: 'xgboost'; dataset: Dataset; xgb: XgbData } | WebgpuPrepared

type GbdtWorkload = Workload<GbdtParams>

/** XGBoost: one booster per model, one after another (its training is not thread-safe; the pool's processes are the parallelism). */
async function trainXgboost(rt: XgboostRuntime, d: Extract<GbdtPrepared, { engine: 'xgboost' }>, w: GbdtWorkload, indices: readonly number[], hooks: TrainHooks): Promise<void> {
  const { kind: _kind, rounds, ...params } = w.model
  for (const index of indices) {
    const seed = modelSeed(w.seed, index)
    const trained = await trainXgbModel(rt.xgb.lib.api, d.xgb, xgbParams(params, seed, rt.xgb.nthread, rt.xgb.device, rt.xgb.lib.major), rounds, {
      onRound: (done, total) => hooks.onProgress([index], { done, total, unit: 'round' }),
      shouldStop: hooks.shouldStop,
      cancelError: () => new CancelledError(),
    })
    hooks.onModelDone({ index, seed, trainMs: trained.trainMs, groupTrainMs: null, testMse: trained.testMse, finalLoss: null, fingerprint: trained.fingerprint })
  }
}

export const gbdtWorkerFamily: WorkerFamily<GbdtParams, WorkerRuntime, GbdtPrepared> = {
  kind: 'gbdt',
  async init(backend) {
    if (backend === 'webgpu') return startWebgpuGbdtRuntime()
    if (backend === 'xgboost') return startXgboostRuntime()
    if (backend !== 'cpu' && backend !== 'auto') throw new Error(`backend ${backend} cannot train gradient-boosted trees here; accepted: cpu, webgpu, xgboost`)
    return plainCpuRuntime({ 'trainpool-gbdt': 'xgboost-1.7-hist' })
  },
  dataKey: (w) => `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}:bins${w.model.maxBin}${userDataKey(w)}`,
  prepare(rt, w) {
    if (isWebgpuGbdtRuntime(rt)) return prepareWebgpu(rt, w)
    const dataset = datasetFor(w)
    if (isXgboostRuntime(rt)) return { engine: 'xgboost', dataset, xgb: createXgbData(rt.xgb.lib.api, dataset, w.features, rt.xgb.nthread) }
    return { engine: 'typescript', dataset, binned: prepareGbdtData(dataset.xTrain, dataset.yTrain, dataset.train, w.features, w.model.maxBin) }
  },
  disposeData(rt, d) {
    if (d.engine === 'webgpu' && isWebgpuGbdtRuntime(rt)) disposeWebgpu(rt, d)
    if (d.engine === 'xgboost' && isXgboostRuntime(rt)) freeXgbData(rt.xgb.lib.api, d.xgb)
  },
  /** One round of the job's models before the clock: the JIT compiles the hot loops (XGBoost: its bins of the DMatrix are built). */
  async warmUp(rt, d, w, indices) {
    if (d.engine === 'webgpu' && isWebgpuGbdtRuntime(rt)) return warmUpWebgpu(rt, d, w, indices)
    if (d.engine === 'xgboost' && isXgboostRuntime(rt)) {
      const { kind: _kind, rounds: _rounds, ...params } = w.model
      await trainXgbModel(rt.xgb.lib.api, d.xgb, xgbParams(params, modelSeed(w.seed, indices[0] ?? 0), rt.xgb.nthread, rt.xgb.device, rt.xgb.lib.major), 1)
      return
    }
    if (d.engine !== 'typescript') throw new Error('gbdt: data prepared for another backend')
    await trainGbdtGroupAsync(d.binned, { ...w.model, rounds: 1 }, indices.map((i) => modelSeed(w.seed, i)))
  },
  async train(rt, d, w, indices, { fused }, hooks) {
    if (d.engine === 'webgpu' && isWebgpuGbdtRuntime(rt)) return trainWebgpu(rt, d, w, indices, fused, hooks)
    if (d.engine === 'xgboost' && isXgboostRuntime(rt)) {
      if (fused) throw new Error('batched is not available on backend xgboost: XGBoost trains one booster at a time; use Trainpool\'s own engine (--backend cpu) for batched trees')
      return trainXgboost(rt, d, w, indices, hooks)
    }
    if (d.engine !== 'typescript') throw new Error('gbdt: data prepared for another backend')
    const everyModel = (seeds: readonly number[]) => seeds.map((_, k) => k)
    const train: GroupTrainer = (seeds, { onRound, shouldStop, cancelError }) =>
      trainGbdtGroupAsync(d.binned, w.model, seeds, { onRound: (round, rounds) => onRound(everyModel(seeds), round, rounds), shouldStop, cancelError })
    return trainTreesAndReport(train, d.dataset, w, indices, fused, hooks)
  },
}
