// A toy model family for tests only: a "constant predictor" (model i predicts the mean target of
// its own seeded half of the training rows, refined over `rounds` passes). It is registered by the
// test that uses it, never by the app: it shows that a family plugs into the pool, runner, verify,
// service and CLI parsing through the seam alone (both halves below), with no tfjs backend.
import os from 'node:os'
import { splitRows } from '@shared/contract'
import { type ModelFamily, paramsSchemaFrom, type ParamField } from '@shared/families'
import type { Dataset } from '../engine/datasets/generated'
import { defineBackend } from '../engine/families/define-backend'
import { workerFamily } from '../engine/families/seam'
import { CancelledError, type WorkerBackend, type WorkerRuntime } from '../engine/backend/types'
import { Rng } from '../engine/random'

export interface ConstantParams {
  kind: 'constant'
  rounds: number
}

const FIELDS = [
  { key: 'rounds', label: 'Passes', flag: '--passes', help: 'passes over the rows', type: 'int', range: { min: 1, max: 50 } },
] as const satisfies readonly ParamField[]

export const constantFamily: ModelFamily<ConstantParams> = {
  kind: 'constant',
  label: 'constant predictor',
  shortLabel: 'Constant',
  fields: FIELDS,
  paramsSchema: paramsSchemaFrom<ConstantParams>('constant', FIELDS),
  defaults: { kind: 'constant', rounds: 3 },
  backends: [{ name: 'cpu', gpu: false, auto: true, batched: true, speed: { workPerSecond: 5e7, stepMs: 3, jobMs: 5, poolStartMs: 400, sharedDevice: false } }],
  progressTotal: (w) => w.model.rounds,
  describeProgress: (p) => `pass ${p.done}/${p.total}`,
  work: { unit: 'row', rateLabel: 'Mrow/s', rateScale: 1e6 },
  workCount: (w, models, rowShare = 1) => splitRows(w.size, w.testSplit).train * rowShare * w.model.rounds * models,
  workerPeakBytes: (w) => 50 * 2 ** 20 + w.size * (w.features + 1) * 4,
  sameWorkTolerance: 0,
  crossBackend: () => ({ fingerprints: false, tolerance: 0 }),
  presets: {},
  notes: () => [],
  describe: (p) => `mean of a seeded half, ${p.rounds} passes`,
}

const plainCpu: WorkerRuntime = {
  backend: 'cpu',
  hardware: false,
  device: os.cpus()[0]?.model ?? 'cpu',
  flags: {},
  versions: {},
  memory: () => ({ numTensors: 0, numBytes: 0 }),
  heapBytes: () => null,
  release: () => {},
}

const constantCpu: WorkerBackend<ConstantParams, WorkerRuntime, Dataset> = {
  name: 'cpu',
  probe: async () => ({ name: 'cpu', available: true, gpu: false, detail: plainCpu.device }),
  start: async () => plainCpu,
  prepare: (_rt, dataset) => dataset,
  dispose: () => {},
  warmUp: async () => {},
  async train(_rt, data, w, indices, { fused }, hooks) {
    const groups = fused ? [indices] : indices.map((i) => [i])
    for (const group of groups) {
      const started = performance.now()
      const sums = group.map(() => 0)
      const counts = group.map(() => 0)
      for (let pass = 1; pass <= w.model.rounds; pass++) {
        if (hooks.shouldStop()) throw new CancelledError()
        group.forEach((index, k) => {
          const rng = new Rng(w.seed + index + 1, pass)
          for (let r = 0; r < data.train; r++) {
            if (rng.uniform() < 0.5) {
              sums[k] += data.yTrain[r]
              counts[k]++
            }
          }
        })
        hooks.onProgress(group, { done: pass, total: w.model.rounds, unit: 'pass' })
        // a pass takes a few ms, so live progress has something to show
        await new Promise((resolve) => setTimeout(resolve, 3))
      }
      const ms = performance.now() - started
      group.forEach((index, k) => {
        const mean = sums[k] / Math.max(1, counts[k])
        let se = 0
        for (const y of data.yTest) se += (y - mean) ** 2
        hooks.onModelDone({
          index,
          seed: w.seed + index + 1,
          trainMs: fused ? null : ms,
          groupTrainMs: fused ? ms : null,
          testMse: se / data.test,
          finalLoss: null,
          fingerprint: mean.toString(16),
        })
      })
    }
  },
}

export const constantWorkerFamily = workerFamily(constantFamily, {
  dataKey: (w) => `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}`,
  backends: { cpu: defineBackend(constantCpu) },
})
