// The trees' `xgboost` backend entry: the user's own libxgboost (xgboost-runtime.ts, xgboost-train.ts), one booster
// per model, never fused (its shared entry in src-shared/families/gbdt.ts says why). DMatrices are
// built once per worker from the family's data set. A classifier trains XGBoost's own objective
// (binary:logistic, multi:softprob) and keeps XGBoost's own model JSON, which a halving rung's job
// loads to continue the booster (xgboost-train.ts resume).
import { modelSeed, type Workload } from '@shared/contract'
import { whyNoBatched } from '@shared/families'
import { gbdtFamily, type GbdtParams } from '@shared/families/gbdt'
import { CancelledError, type WorkerBackend } from '../backend/types'
import { probeXgboost, startXgboostRuntime, type XgboostRuntime } from './xgboost-runtime'
import { boosterToContinue, createXgbData, freeXgbData, trainXgbModel, type XgbData, xgbParams } from './xgboost-train'

/** The booster's parameters for model `index` of the workload (its own seed, the workload's objective). */
function boosterParams(rt: XgboostRuntime, w: Workload<GbdtParams>, index: number) {
  const { kind: _kind, rounds: _rounds, ...params } = w.model
  return xgbParams(params, modelSeed(w.seed, index), rt.xgb.nthread, rt.xgb.device, rt.xgb.lib.major, w.task)
}

export const xgboostBackend: WorkerBackend<GbdtParams, XgboostRuntime, XgbData> = {
  name: 'xgboost',
  probe: async () => probeXgboost(),
  start: async () => startXgboostRuntime(),
  prepare: (rt, dataset, w) => createXgbData(rt.xgb.lib.api, dataset, w.features, rt.xgb.nthread),
  dispose: (rt, data) => freeXgbData(rt.xgb.lib.api, data),
  /** One round before the clock: XGBoost builds the DMatrix's bins. */
  async warmUp(rt, data, w, indices) {
    await trainXgbModel(rt.xgb.lib.api, data, boosterParams(rt, w, indices[0] ?? 0), 1)
  },
  /** XGBoost's own early stopping on the data set's validation rows (xgboost-train.ts), the model kept the best round's */
  earlyStopping: true,
  /** a halving rung's boosters continue from the JSON the earlier rung kept (xgboost-train.ts resume), XGBoost's own continuation */
  halving: true,
  /** One booster per model, one after another (XGBoost's training is not thread-safe; the pool's processes are the parallelism). */
  async train(rt, data, w, indices, { fused, keep, resumeOf }, hooks) {
    // the contract refuses batched here before a run starts (the shared entry's reason); a guard, in its words
    if (fused) throw new Error(`batched is not available on backend xgboost: ${whyNoBatched(gbdtFamily, 'xgboost')}`)
    for (const index of indices) {
      const resume = resumeOf?.(index)
      const trained = await trainXgbModel(rt.xgb.lib.api, data, boosterParams(rt, w, index), w.model.rounds, {
        onRound: (done, total) => hooks.onProgress([index], { done, total, unit: 'round' }),
        shouldStop: hooks.shouldStop,
        cancelError: () => new CancelledError(),
        keep,
        ...(w.earlyStopping ? { earlyStopping: w.earlyStopping } : {}),
        ...(resume ? { resume: boosterToContinue(resume) } : {}),
      })
      const { trainMs, testMse, metrics, fingerprint, validationMse, validationMetrics, json, stoppedRounds, roundsGrown } = trained
      hooks.onModelDone({
        index,
        seed: modelSeed(w.seed, index),
        trainMs,
        groupTrainMs: null,
        testMse,
        ...(metrics ? { metrics } : {}),
        finalLoss: null,
        fingerprint,
        ...(validationMse !== undefined ? { validationMse } : {}),
        ...(validationMetrics ? { validationMetrics } : {}),
        ...(json !== undefined ? { artifact: { format: 'xgboost-json' as const, json } } : {}),
        ...(stoppedRounds ?? {}),
        // a rung's job: the rounds it grew (the runner adds the earlier rungs')
        ...(resumeOf ? { roundsTrained: roundsGrown } : {}),
      })
    }
  },
}
