// The gradient-boosted trees family's worker half: its backend table — `cpu` (Trainpool's engine,
// engine/gbdt/), `webgpu` (the same trees in WGSL, engine/gbdt-webgpu/), `xgboost` (the user's
// libxgboost, engine/xgboost/), one entry per name of src-shared/families/gbdt.ts GBDT_BACKENDS
// (the compiler checks it). Model i's trees are bit-identical in every strategy; what each engine
// fuses in a model set: ../README.md.
import { modelSeed } from '@shared/contract'
import { gbdtFamily, type GbdtParams } from '@shared/families/gbdt'
import type { Dataset } from '../datasets/generated'
import { GBDT_PER_MODEL_PARAMS, prepareGbdtData, trainGbdtGroupAsync, type GbdtData } from '../gbdt'
import { webgpuTreesBackend } from '../gbdt-webgpu/webgpu-trees-backend'
import { userDataKey } from '../datasets/user-data'
import { taskKey } from '../datasets/dataset'
import { xgboostBackend } from '../xgboost/xgboost-backend'
import { plainCpuRuntime } from './cpu-runtime'
import { type GroupTrainer, heldOutRowsOf, perModelParams, resumedTreesOf, trainTreesAndReport } from '../trees/gbdt-report'
import { defineBackend } from './define-backend'
import { workerFamily } from './seam'
import type { WorkerBackend, WorkerRuntime } from '../backend/types'

interface CpuTrees {
  dataset: Dataset
  binned: GbdtData
}

const cpuTreesBackend: WorkerBackend<GbdtParams, WorkerRuntime, CpuTrees> = {
  name: 'cpu',
  probe: async () => ({ name: 'cpu', available: true, gpu: false, detail: plainCpuRuntime().device }),
  start: async () => plainCpuRuntime({ 'trainpool-gbdt': 'xgboost-1.7-hist' }),
  prepare: (_rt, dataset, w) => ({ dataset, binned: prepareGbdtData(dataset.xTrain, dataset.yTrain, dataset.train, w.features, w.model.maxBin) }),
  dispose: () => {},
  /** One round of the job's models before the clock: the JIT compiles the hot loops. */
  async warmUp(_rt, d, w, indices) {
    await trainGbdtGroupAsync(
      d.binned,
      { ...w.model, rounds: 1 },
      indices.map((i) => modelSeed(w.seed, i)),
      { task: w.task },
    )
  },
  /** each model of one level pass reads its own depth, coefficients and samplers: all but maxBin (the bins) and baseScore differ per model */
  perModel: GBDT_PER_MODEL_PARAMS,
  /** a fold is its rows held out of the one binned training set: a set's folds fuse */
  foldsHeldOut: true,
  /** each model watches its held-out rows after every round; a stopped one leaves the fused group (train.ts) */
  earlyStopping: true,
  /** a halving rung's models continue from the trees the earlier rung sent back (train.ts resume) */
  halving: true,
  async train(_rt, d, w, indices, options, hooks) {
    const train: GroupTrainer = (seeds, { onRound, shouldStop, cancelError }, group) =>
      trainGbdtGroupAsync(d.binned, w.model, seeds, {
        resume: resumedTreesOf(options, group, d.binned, w),
        onRound: (round, rounds, positions) => onRound(positions, round, rounds),
        shouldStop,
        cancelError,
        perModel: perModelParams(options, group),
        heldOut: heldOutRowsOf(options, group),
        task: w.task,
        ...(w.earlyStopping ? { earlyStopping: w.earlyStopping } : {}),
      })
    return trainTreesAndReport(train, d.dataset, w, indices, options, hooks)
  },
}

export const gbdtWorkerFamily = workerFamily(gbdtFamily, {
  dataKey: (w) => `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}:bins${w.model.maxBin}${taskKey(w)}${userDataKey(w)}`,
  backends: {
    cpu: defineBackend(cpuTreesBackend),
    webgpu: defineBackend(webgpuTreesBackend),
    xgboost: defineBackend(xgboostBackend),
  },
})
