// The gradient-boosted trees family's worker half: its backend table. `cpu` is Trainpool's own
// TypeScript engine (engine/gbdt/): the data set (generated from the seed or the user's cached table;
// missing values stay NaN and take each split's default side) binned once per worker; every strategy
// trains model i from seed + i + 1 on those same bins, so its trees — and the fingerprint (tree hash)
// and test MSE reported with it — are bit-identical everywhere. Rounds run asynchronously (a yield
// between rounds), so cancel and heartbeats get through. `webgpu` trains the same trees bit for bit
// in WGSL (engine/gbdt-webgpu/); `xgboost` the same workload on the user's own libxgboost
// (engine/xgboost/). Order, `auto` and batching: src-shared/families/gbdt.ts GBDT_BACKENDS.
import { modelSeed } from '@shared/contract'
import type { GbdtParams } from '@shared/families/gbdt'
import type { Dataset } from '../data'
import { prepareGbdtData, trainGbdtGroupAsync, type GbdtData } from '../gbdt'
import { webgpuTreesBackend } from '../gbdt-webgpu/backend'
import { userDataKey } from '../user-data'
import { xgboostBackend } from '../xgboost/backend'
import { plainCpuRuntime } from './cpu-runtime'
import { type GroupTrainer, trainTreesAndReport } from './gbdt-report'
import { backendEntry, workerFamily } from './seam'
import type { WorkerBackend, WorkerRuntime } from './types'

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
    await trainGbdtGroupAsync(d.binned, { ...w.model, rounds: 1 }, indices.map((i) => modelSeed(w.seed, i)))
  },
  /** eta scales a model's leaves and rounds ends its trees: neither changes a split, so they differ per model in one pass */
  perModel: ['eta', 'rounds'],
  async train(_rt, d, w, indices, options, hooks) {
    const everyModel = (seeds: readonly number[]) => seeds.map((_, k) => k)
    const own = (group: readonly number[]) =>
      options.paramsOf ? group.map((i) => ({ eta: (options.paramsOf!(i) as GbdtParams).eta, rounds: (options.paramsOf!(i) as GbdtParams).rounds })) : undefined
    const train: GroupTrainer = (seeds, { onRound, shouldStop, cancelError }, group) =>
      trainGbdtGroupAsync(d.binned, w.model, seeds, { onRound: (round, rounds) => onRound(everyModel(seeds), round, rounds), shouldStop, cancelError, perModel: own(group) })
    return trainTreesAndReport(train, d.dataset, w, indices, options, hooks)
  },
}

export const gbdtWorkerFamily = workerFamily<GbdtParams>({
  kind: 'gbdt',
  dataKey: (w) => `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}:bins${w.model.maxBin}${userDataKey(w)}`,
  backends: [backendEntry(cpuTreesBackend), backendEntry(webgpuTreesBackend), backendEntry(xgboostBackend)],
})
