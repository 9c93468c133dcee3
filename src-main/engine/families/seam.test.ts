// A family's two halves are paired by its backend names: the worker table (workerFamily) names
// exactly the shared table's backends — the compiler refuses one missing or extra (each expected
// error below fails the type check if it ever stops refusing), and the module load refuses them too. And a table's backends differ in runtime and data types, yet each entry is only
// ever handed its own runtime and its own data (defineBackend seals them in).
import { describe, expect, it } from 'vitest'
import type { Workload } from '@shared/contract'
import { type BackendSpec, mlpFamily, type ModelFamily } from '@shared/families'
import type { Dataset } from '../datasets/dataset'
import { type ConstantParams, constantFamily } from '../../testing/constant-family'
import { defineBackend } from './define-backend'
import { workerFamily } from './seam'
import type { WorkerBackend, WorkerRuntime } from '../backend/types'

const spec = <N extends string>(name: N): BackendSpec<N> => ({
  name,
  gpu: false,
  auto: true,
  batched: true,
  speed: { workPerSecond: 1e6, stepMs: 1, jobMs: 1, poolStartMs: 1, sharedDevice: false },
})

/** The toy family's shared half with two backends, a and b. */
const shared: ModelFamily<ConstantParams, 'a' | 'b'> = { ...constantFamily, backends: [spec('a'), spec('b')] }

const runtimeOf = (backend: string): WorkerRuntime => ({
  backend,
  hardware: false,
  device: `${backend} device`,
  flags: {},
  versions: {},
  memory: () => ({ numTensors: 0, numBytes: 0 }),
  heapBytes: () => null,
  release: () => {},
})

/** What each entry was handed, by the entry's name. */
const seen: { backend: string; what: string; runtime: unknown; data: unknown }[] = []

// a: a runtime with a counter, its data the training rows' count
type RuntimeA = WorkerRuntime & { counter: { steps: number } }
const entryA: WorkerBackend<ConstantParams, RuntimeA, { rows: number }> = {
  name: 'a',
  probe: async () => ({ name: 'a' as never, available: true, gpu: false, detail: 'a' }),
  start: async () => ({ ...runtimeOf('a'), counter: { steps: 0 } }),
  prepare: (_rt, dataset) => ({ rows: dataset.train }),
  dispose: (rt, data) => void seen.push({ backend: 'a', what: 'dispose', runtime: rt, data }),
  warmUp: async (rt, data) => void seen.push({ backend: 'a', what: 'warmUp', runtime: rt, data }),
  async train(rt, data, w, indices, _options, hooks) {
    rt.counter.steps += data.rows
    seen.push({ backend: 'a', what: 'train', runtime: rt, data })
    for (const index of indices) hooks.onModelDone({ index, seed: index, trainMs: 0, groupTrainMs: null, testMse: rt.counter.steps, finalLoss: null })
  },
}

// b: the plain runtime, its data the data set itself
const entryB: WorkerBackend<ConstantParams, WorkerRuntime, Dataset> = {
  name: 'b',
  probe: async () => ({ name: 'b' as never, available: true, gpu: false, detail: 'b' }),
  start: async () => runtimeOf('b'),
  prepare: (_rt, dataset) => dataset,
  dispose: (rt, data) => void seen.push({ backend: 'b', what: 'dispose', runtime: rt, data }),
  warmUp: async (rt, data) => void seen.push({ backend: 'b', what: 'warmUp', runtime: rt, data }),
  async train(rt, data, _w, indices, _options, hooks) {
    seen.push({ backend: 'b', what: 'train', runtime: rt, data })
    for (const index of indices) hooks.onModelDone({ index, seed: index, trainMs: 0, groupTrainMs: null, testMse: data.yTest[0], finalLoss: null })
  },
}

const dataKey = () => 'k'
const workload: Workload<ConstantParams> = { size: 100, features: 3, seed: 1, target: 'teacher', testSplit: 0.2, model: { kind: 'constant', rounds: 1 } }
const hooks = { onProgress: () => {}, onModelDone: () => {}, shouldStop: () => false }

describe("a family's worker table", () => {
  it("names exactly its shared table's backends: one missing or extra is refused by the compiler and when the module loads", () => {
    // @ts-expect-error b is missing
    expect(() => workerFamily(shared, { dataKey, backends: { a: defineBackend(entryA) } })).toThrow("the constant family's worker table has no backend b")
    const [a, b, c] = [defineBackend(entryA), defineBackend(entryB), defineBackend({ ...entryB, name: 'c' })]
    // @ts-expect-error c is not in the shared table
    const withExtra = () => workerFamily(shared, { dataKey, backends: { a, b, c } })
    expect(withExtra).toThrow("the constant family's worker table has a backend c its shared table lacks (a, b)")
    expect(() => workerFamily(shared, { dataKey, backends: { a: defineBackend(entryA), b: defineBackend({ ...entryB, name: 'a' }) } })).toThrow(
      "the constant family's worker table lists the backend a under b",
    )
    // the built-in families too: the MLP's table without webgpu does not compile
    // @ts-expect-error webgpu is missing
    expect(() => workerFamily(mlpFamily, { dataKey, backends: { tensorflow: defineBackend({ ...entryB, name: 'tensorflow' }) } })).toThrow(
      /has no backend webgpu, onnxruntime, wasm, cpu$/,
    )
  })

  it("lists its backends in the shared table's order, whatever the table's", () => {
    const family = workerFamily(shared, { dataKey, backends: { b: defineBackend(entryB), a: defineBackend(entryA) } })
    expect(family.backends.map((b) => b.name)).toEqual(['a', 'b'])
  })

  it('hands each entry its own runtime and its own data', async () => {
    seen.length = 0
    const family = workerFamily(shared, { dataKey, backends: { a: defineBackend(entryA), b: defineBackend(entryB) } })
    for (const name of ['a', 'b'] as const) {
      // a test's backend names are not the contract's
      const started = await family.init(name as never)
      expect(started.runtime.backend).toBe(name)
      const data = family.prepare(started, workload)
      await family.warmUp(started, data, workload, [0])
      await family.train(started, data, workload, [0, 1], { fused: false }, hooks)
      family.disposeData(started, data)
      const mine = seen.filter((s) => s.backend === name)
      expect(mine.map((s) => s.what)).toEqual(['warmUp', 'train', 'dispose'])
      for (const s of mine) expect(s.runtime).toBe(started.runtime)
      // one prepared data per (data key, fold): the same object in each call
      expect(new Set(mine.map((s) => s.data)).size).toBe(1)
      expect(mine[0].data).toEqual(name === 'a' ? { rows: 80 } : data.dataset)
    }
    expect(seen.map((s) => s.backend)).toEqual(['a', 'a', 'a', 'b', 'b', 'b'])
  })
})

describe('a halving rung’s job', () => {
  it('reaches a backend that continues models (halving), and is refused on one that does not, before it trains', async () => {
    seen.length = 0
    const resumed: (number | null)[] = []
    const continuing: typeof entryB = {
      ...entryB,
      name: 'a',
      halving: true,
      async train(rt, data, w, indices, options, h) {
        for (const i of indices) resumed.push(options.resumeOf?.(i)?.rounds ?? null)
        return entryB.train(rt, data, w, indices, options, h)
      },
    }
    const family = workerFamily(shared, { dataKey, backends: { a: defineBackend(continuing), b: defineBackend(entryB) } })
    const artifact = { format: 'gbdt-trees' as const, features: 3, baseScore: 0.5, trees: [] }
    const resumeOf = (index: number) => (index === 1 ? { index, rounds: 4, artifact } : null)
    for (const name of ['a', 'b'] as const) {
      const started = await family.init(name as never)
      const data = family.prepare(started, workload)
      const training = family.train(started, data, workload, [0, 1], { fused: false, resumeOf }, hooks)
      if (name === 'a') await training
      else await expect(training).rejects.toThrow('search halving: backend b cannot continue a model between rungs')
    }
    expect(resumed).toEqual([null, 4])
    // entry b's train ran once: inside a (which delegates to it), never as b
    expect(seen.filter((s) => s.what === 'train')).toHaveLength(1)
  })
})
