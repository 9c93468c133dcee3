// The gradient-boosted trees family's worker half: its backend table. `cpu` is Trainpool's own
// TypeScript engine (engine/gbdt/): the data set (generated from the seed or the user's cached table;
// missing values stay NaN and take each split's default side) binned once per worker; every strategy
// trains model i from seed + i + 1 on those same bins, so its trees — and the fingerprint (tree hash)
// and test MSE reported with it — are bit-identical everywhere. Rounds run asynchronously (a yield
// between rounds), so cancel and heartbeats get through. `webgpu` trains the same trees bit for bit
// in WGSL (engine/gbdt-webgpu/); `xgboost` the same workload on the user's own libxgboost
// (engine/xgboost/). Order, `auto` and batching: src-shared/families/gbdt.ts GBDT_BACKENDS.
import { modelSeed, splitRows, type Workload } from '@shared/contract'
import type { GbdtParams } from '@shared/families/gbdt'
import type { Dataset } from '../data'
import { meanSquaredError, predictGbdt, prepareGbdtData, treeHash, trainGbdtGroupAsync, type GbdtData } from '../gbdt'
import { webgpuTreesBackend } from '../gbdt-webgpu/backend'
import { userDataKey } from '../user-data'
import { xgboostBackend } from '../xgboost/backend'
import { plainCpuRuntime } from './cpu-runtime'
import { backendEntry, workerFamily } from './seam'
import { CancelledError, type TrainHooks, type WorkerBackend, type WorkerRuntime } from './types'

type GbdtWorkload = Workload<GbdtParams>
interface CpuTrees {
  dataset: Dataset
  binned: GbdtData
}

/** The engine's parameters: the family's, without the kind. */
function engineParams({ kind: _kind, ...params }: GbdtParams) {
  return params
}

async function trainGroup(d: CpuTrees, w: GbdtWorkload, indices: readonly number[], fused: boolean, hooks: TrainHooks): Promise<void> {
  const seeds = indices.map((i) => modelSeed(w.seed, i))
  const started = performance.now()
  const models = await trainGbdtGroupAsync(d.binned, engineParams(w.model), seeds, {
    onRound: (round, rounds) => hooks.onProgress(indices, { done: round, total: rounds, unit: 'round' }),
    shouldStop: hooks.shouldStop,
    cancelError: () => new CancelledError(),
  })
  const elapsedMs = performance.now() - started
  const { test } = splitRows(w.size, w.testSplit)
  models.forEach((model, k) => {
    const testMse = meanSquaredError(predictGbdt(model, d.dataset.xTest, test, w.features), d.dataset.yTest)
    hooks.onModelDone({
      index: indices[k],
      seed: seeds[k],
      trainMs: fused ? null : elapsedMs,
      groupTrainMs: fused ? elapsedMs : null,
      testMse,
      finalLoss: null,
      fingerprint: treeHash(model),
    })
  })
}

const cpuTreesBackend: WorkerBackend<GbdtParams, WorkerRuntime, CpuTrees> = {
  name: 'cpu',
  probe: async () => ({ name: 'cpu', available: true, gpu: false, detail: plainCpuRuntime().device }),
  start: async () => plainCpuRuntime({ 'trainpool-gbdt': 'xgboost-1.7-hist' }),
  prepare: (_rt, dataset, w) => ({ dataset, binned: prepareGbdtData(dataset.xTrain, dataset.yTrain, dataset.train, w.features, w.model.maxBin) }),
  dispose: () => {},
  /** One round of the job's models before the clock: the JIT compiles the hot loops. */
  async warmUp(_rt, d, w, indices) {
    await trainGbdtGroupAsync(d.binned, { ...engineParams(w.model), rounds: 1 }, indices.map((i) => modelSeed(w.seed, i)))
  },
  async train(_rt, d, w, indices, { fused }, hooks) {
    const groups = fused ? [indices] : indices.map((i) => [i])
    for (const group of groups) await trainGroup(d, w, group, fused, hooks)
  },
}

export const gbdtWorkerFamily = workerFamily<GbdtParams>({
  kind: 'gbdt',
  dataKey: (w) => `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}:bins${w.model.maxBin}${userDataKey(w)}`,
  backends: [backendEntry(cpuTreesBackend), backendEntry(webgpuTreesBackend), backendEntry(xgboostBackend)],
})
