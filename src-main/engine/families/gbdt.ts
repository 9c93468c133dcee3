// The gradient-boosted trees family's worker half, on Trainpool's own TypeScript engine (engine/
// gbdt/): no tfjs backend. The data set is generated from the seed (as for the MLP) and binned once
// per worker; every strategy trains model i from seed + i + 1 on those same bins, so its trees —
// and the fingerprint (tree hash) and test MSE reported with it — are bit-identical everywhere.
// Rounds run asynchronously (a yield between rounds), so cancel and heartbeats get through.
// Backend `webgpu` trains the same trees (bit for bit) in WGSL on the device (engine/gbdt-webgpu/).
import { modelSeed, splitRows, type Workload } from '@shared/contract'
import type { GbdtParams } from '@shared/families/gbdt'
import { generateDataset, type Dataset } from '../data'
import { meanSquaredError, predictGbdt, prepareGbdtData, treeHash, trainGbdtGroupAsync, type GbdtData } from '../gbdt'
import { disposeWebgpu, isWebgpuGbdtRuntime, prepareWebgpu, startWebgpuGbdtRuntime, trainWebgpu, warmUpWebgpu, type WebgpuPrepared } from '../gbdt-webgpu/runtime'
import { plainCpuRuntime } from './cpu-runtime'
import { CancelledError, type TrainHooks, type WorkerFamily, type WorkerRuntime } from './types'

type GbdtPrepared = { engine: 'typescript'; dataset: Dataset; binned: GbdtData } | WebgpuPrepared

type GbdtWorkload = Workload<GbdtParams>

/** The engine's parameters: the family's, without the kind. */
function engineParams({ kind: _kind, ...params }: GbdtParams) {
  return params
}

async function trainGroup(d: GbdtPrepared, w: GbdtWorkload, indices: readonly number[], fused: boolean, hooks: TrainHooks): Promise<void> {
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

export const gbdtWorkerFamily: WorkerFamily<GbdtParams, WorkerRuntime, GbdtPrepared> = {
  kind: 'gbdt',
  async init(backend) {
    if (backend === 'webgpu') return startWebgpuGbdtRuntime()
    if (backend !== 'cpu' && backend !== 'auto') throw new Error(`backend ${backend} cannot train gradient-boosted trees here; accepted: cpu, webgpu`)
    return plainCpuRuntime({ 'trainpool-gbdt': 'xgboost-1.7-hist' })
  },
  dataKey: (w) => `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}:bins${w.model.maxBin}`,
  prepare(rt, w) {
    if (isWebgpuGbdtRuntime(rt)) return prepareWebgpu(rt, w)
    const dataset = generateDataset(w)
    return { engine: 'typescript', dataset, binned: prepareGbdtData(dataset.xTrain, dataset.yTrain, dataset.train, w.features, w.model.maxBin) }
  },
  disposeData(rt, d) {
    if (d.engine === 'webgpu' && isWebgpuGbdtRuntime(rt)) disposeWebgpu(rt, d)
  },
  /** One round of the job's models before the clock: the JIT compiles the hot loops. */
  async warmUp(rt, d, w, indices) {
    if (d.engine === 'webgpu' && isWebgpuGbdtRuntime(rt)) return warmUpWebgpu(rt, d, w, indices)
    await trainGbdtGroupAsync(d.binned, { ...engineParams(w.model), rounds: 1 }, indices.map((i) => modelSeed(w.seed, i)))
  },
  async train(rt, d, w, indices, { fused }, hooks) {
    if (d.engine === 'webgpu' && isWebgpuGbdtRuntime(rt)) return trainWebgpu(rt, d, w, indices, fused, hooks)
    const groups = fused ? [indices] : indices.map((i) => [i])
    for (const group of groups) await trainGroup(d, w, group, fused, hooks)
  },
}
