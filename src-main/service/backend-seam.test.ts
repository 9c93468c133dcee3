// Adding a backend is one folder plus one registry line on each half: shown with a backend that
// exists only in this test. Its shared entry is registered for the MLP family (registerBackend) and
// its worker entry added to the MLP's table (withBackends); nothing else changes. Through the real
// pool, runner and service (workers run the real message loop in-process) it is probed, accepted by
// the contract, estimated from its own speed, trained in all three strategies on the data set the
// family built — the result records exactly what it trained — and refused for a family without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BenchConfig, modelSeed, splitRows, type Workload, workloadFor } from '@shared/contract'
import { estimateRun } from '@shared/estimate'
import { type BackendSpec, registerBackend } from '@shared/families'
import type { MlpParams } from '@shared/families/mlp'
import { configFromFlags } from '../cli/options'
import { datasetFor, type Dataset } from '../engine/datasets/generated'
import { builtInWorkerFamilies } from '../engine/families'
import { mlpWorkerFamily } from '../engine/families/mlp'
import { defineBackend } from '../engine/families/define-backend'
import { withBackends } from '../engine/families/seam'
import { CancelledError, type WorkerBackend, type WorkerRuntime } from '../engine/backend/types'
import { Rng } from '../engine/random'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

// ---- the backend: what a new backend's folder holds ----------------------------------------------

const toySpec: BackendSpec = {
  name: 'toy',
  gpu: false,
  auto: false,
  batched: true,
  speed: { workPerSecond: 2e8, stepMs: 0.2, jobMs: 1, poolStartMs: 50, sharedDevice: false },
}

/** Model i predicts the mean target of the training rows its seed draws, refined once per batch (a stand-in for real training). */
function toyModel(data: Dataset, w: Workload<MlpParams>, index: number): number {
  const rng = new Rng(modelSeed(w.seed, index), 7)
  let sum = 0
  let count = 0
  for (let r = 0; r < data.train; r++) {
    if (rng.uniform() < 0.5) {
      sum += data.yTrain[r]
      count++
    }
  }
  return sum / Math.max(1, count)
}

const toyRuntime: WorkerRuntime = {
  backend: 'toy',
  hardware: false,
  device: 'toy device (the test process)',
  flags: { toy: true },
  versions: { toy: '1.0' },
  memory: () => ({ numTensors: 0, numBytes: 0 }),
  heapBytes: () => null,
  release: () => {},
}

const toyBackend: WorkerBackend<MlpParams, WorkerRuntime, Dataset> = {
  name: 'toy',
  probe: async () => ({ name: 'toy' as never, available: true, gpu: false, detail: 'toy backend, in the test process' }),
  start: async () => ({ ...toyRuntime, flags: { ...toyRuntime.flags } }),
  prepare: (_rt, dataset) => dataset,
  dispose: () => {},
  warmUp: async () => {},
  async train(_rt, data, w, indices, { fused }, hooks) {
    const groups = fused ? [indices] : indices.map((i) => [i])
    const { test } = splitRows(w.size, w.testSplit)
    for (const group of groups) {
      const started = performance.now()
      const epochs = w.model.epochs
      for (let e = 1; e <= epochs; e++) {
        if (hooks.shouldStop()) throw new CancelledError()
        hooks.onProgress(group, { done: e, total: epochs, unit: 'batch' })
        await new Promise((resolve) => setImmediate(resolve))
      }
      const ms = performance.now() - started
      for (const index of group) {
        const mean = toyModel(data, w, index)
        let se = 0
        for (let r = 0; r < test; r++) se += (data.yTest[r] - mean) ** 2
        hooks.onModelDone({
          index,
          seed: modelSeed(w.seed, index),
          trainMs: fused ? null : ms,
          groupTrainMs: fused ? ms : null,
          testMse: se / test,
          finalLoss: null,
        })
      }
    }
  },
}

// ---- the registry lines ---------------------------------------------------------------------------

let unregister: () => void
beforeAll(() => {
  unregister = registerBackend('mlp', toySpec)
})
afterAll(() => unregister())

const families = (kind: string) => (kind === 'mlp' ? withBackends(mlpWorkerFamily, [defineBackend(toyBackend)]) : builtInWorkerFamilies(kind))

describe('a backend registered only in a test', () => {
  it('is probed with its own probe, accepted for its family only, and estimated from its own speed', async () => {
    const service = new BenchService({ launcher: new InProcessLauncher(families), store: null, shell: 'cli', telemetry: false })
    const caps = await service.capabilities()
    expect(caps.backends.find((b) => b.name === ('toy' as never))).toEqual({
      name: 'toy',
      available: true,
      gpu: false,
      detail: 'toy backend, in the test process',
    })
    // not in the family's auto: auto stays what the built-in backends give
    expect(caps.autoBackends.mlp).not.toBe('toy')
    expect(() => configFromFlags({ model: 'gbdt', backend: 'toy' })).toThrow(
      /^--backend toy cannot train a gradient-boosted trees; accepted: auto, cpu, webgpu, xgboost/,
    )
    const config = configFromFlags({ backend: 'toy', sizes: '400', models: '4', workers: '2', repeats: '1', epochs: '2', 'batch-size': '64' })
    const estimate = estimateRun(config, 'toy' as never, { cpuCount: 2 })
    expect(estimate.backend).toBe('toy')
    expect(estimate.totalMs).toBeGreaterThan(0)
    // its own speed: a slower toy takes longer on the same plan
    const slower = registerBackend('mlp', { ...toySpec, name: 'toy-slow', speed: { ...toySpec.speed, workPerSecond: 2e6 } })
    try {
      expect(estimateRun({ ...config, backend: 'toy-slow' as never }, 'toy-slow' as never, { cpuCount: 2 }).totalMs!).toBeGreaterThan(estimate.totalMs!)
    } finally {
      slower()
    }
  })

  it('trains in all three strategies through the service, on the data set the result records, verified', async () => {
    const service = new BenchService({
      launcher: new InProcessLauncher(families),
      store: null,
      shell: 'cli',
      telemetry: false,
      probe: async () => [{ name: 'toy' as never, available: true, gpu: false, detail: 'toy' }],
    })
    const config: BenchConfig = configFromFlags({ backend: 'toy', sizes: '400', models: '4', workers: '2', repeats: '1', epochs: '2', 'batch-size': '64' })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)

    expect(run.status, run.error ?? '').toBe('ok')
    expect(run.environment).toMatchObject({ backend: 'toy', device: 'toy device (the test process)', versions: { toy: '1.0' } })
    expect(run.measurements.map((m) => m.strategy)).toEqual(['sequential', 'pool', 'batched'])
    expect(run.verification).toMatchObject({ sameWork: true })
    // every model is the one the toy trains on the family's data set for this workload
    const workload = workloadFor(config, 400) as Workload<MlpParams>
    const data = datasetFor(workload)
    const { test } = splitRows(400, config.testSplit)
    for (const m of run.measurements) {
      for (const p of m.perModel) {
        const mean = toyModel(data, workload, p.index)
        let se = 0
        for (let r = 0; r < test; r++) se += (data.yTest[r] - mean) ** 2
        expect(p.testMse).toBeCloseTo(se / test, 12)
      }
    }
  })
})
