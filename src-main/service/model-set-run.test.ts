// Model sets through the real pool, runner and service (workers run the real message loop
// in-process): a grid × seeds of trees on the CPU engine in all three strategies, each model the
// same trees everywhere and the same trees as model i of a plain run of its configuration, also
// when batched fuses configurations that differ in depth, lambda and subsample; folds
// scored on their held-out rows; an MLP grid on wasm within the cross-strategy tolerance; the MLP's
// learning rates and folds fused on wasm, onnxruntime and the WGSL engine.
import { beforeAll, describe, expect, it } from 'vitest'
import { type BenchConfig, configurationParams, type ModelSet, presetConfig, type RunResult, setMember, setSize } from '@shared/contract'
import { gbdtFamily, type GbdtParams } from '@shared/families/gbdt'
import { fusionText } from '@shared/leaderboard'
import { builtInWorkerFamilies } from '../engine/families'
import { probeWebgpu } from '../engine/webgpu/dawn'
import { skipWithout } from '../testing/capability'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

async function run(config: BenchConfig): Promise<RunResult> {
  const service = new BenchService({
    launcher: new InProcessLauncher(builtInWorkerFamilies),
    store: null,
    shell: 'cli',
    telemetry: false,
    probe: async () =>
      [
        { name: 'cpu', available: true, detail: 'test cpu' },
        { name: 'wasm', available: true, detail: 'test wasm' },
        { name: 'onnxruntime', available: true, detail: 'test onnxruntime' },
        { name: 'webgpu', available: true, detail: 'test webgpu' },
      ] as never,
  })
  try {
    const { runId } = await service.start({ config })
    return await service.waitForRun(runId)
  } finally {
    await service.shutdown()
  }
}

let webgpu = { available: false, detail: 'not probed' }
beforeAll(async () => {
  webgpu = await probeWebgpu()
})
/** true → skip: the MLP's webgpu engine needs an adapter (lavapipe in CI, where TRAINPOOL_REQUIRE=webgpu) */
const missing = (backend: string) => backend === 'webgpu' && skipWithout('webgpu', webgpu.available, `no WebGPU adapter: ${webgpu.detail}`)

const trees = (set: ModelSet | undefined, model: Record<string, unknown> = {}, models?: number) =>
  presetConfig('smoke', {
    sizes: [600],
    workers: [2],
    backend: 'cpu',
    model: { kind: 'gbdt', rounds: 6, ...model } as never,
    models: [models ?? (set ? setSize(set) : 4)],
    ...(set ? { set } : {}),
  })

const byIndex = (r: RunResult, strategy: string) => new Map(r.measurements.find((m) => m.strategy === strategy)!.perModel.map((p) => [p.index, p]))

describe('a model set through the service', () => {
  it('trees: a 2 × 2 grid × 2 seeds trains 8 different models, the same in every strategy and as in a plain run of each configuration', async () => {
    const set: ModelSet = { grid: { maxDepth: [2, 4], eta: [0.1, 0.5] }, seeds: 2, folds: null }
    const result = await run(trees(set))
    expect(result.status).toBe('ok')
    expect(result.verification).toMatchObject({ sameWork: true })
    expect(result.measurements.map((m) => m.strategy)).toEqual(['sequential', 'pool', 'batched'])
    for (const m of result.measurements) {
      expect(m.modelsTrained).toBe(8)
      for (const p of m.perModel) expect(p.configuration).toBe(setMember(set, p.index).configuration)
    }
    const sequential = byIndex(result, 'sequential')
    expect(new Set([...sequential.values()].map((p) => p.fingerprint)).size).toBe(8)
    // on the CPU engine every configuration of a fold fuses: per worker one program, split by work (a depth-4
    // model's is 4.2× a depth-2 one's at 480 rows, its 15 nodes' bins beside 3): the four depth-2 models and two
    // depth-4 models, then the other two
    expect(fusionText(result)).toMatch(/^batched W=2 trained the 8 models in 2 fused programs \(6, 2 models\)/)
    expect(sequential.get(0)!.fusedGroup).toBeUndefined()
    // configuration c alone: model i of a plain run with c's parameters is model i of the set
    const configs = [
      { maxDepth: 2, eta: 0.1 },
      { maxDepth: 2, eta: 0.5 },
      { maxDepth: 4, eta: 0.1 },
      { maxDepth: 4, eta: 0.5 },
    ]
    for (const [c, params] of configs.entries()) {
      const alone = byIndex(await run({ ...trees(undefined, params, 8), strategies: ['sequential'] }), 'sequential')
      for (const [index, p] of sequential) {
        if (p.configuration === c) expect(p.fingerprint, `model ${index}`).toBe(alone.get(index)!.fingerprint)
      }
    }
  }, 120_000)

  it('trees: a max-depth × lambda × subsample grid is one fused program on the CPU engine, each model the trees of a plain run of its configuration', async () => {
    const set: ModelSet = { grid: { maxDepth: [3, 5], lambda: [0, 1], subsample: [0.8, 1] }, seeds: 1, folds: null }
    const result = await run({ ...trees(set), workers: [1] })
    expect(result.status).toBe('ok')
    expect(result.verification).toMatchObject({ sameWork: true })
    const sequential = byIndex(result, 'sequential')
    expect(new Set([...sequential.values()].map((p) => p.fingerprint)).size).toBe(8)
    // depth, lambda and subsample differ per model in one pass: the worker's 8 models are one program
    expect(fusionText(result)).toMatch(/^batched W=1 trained the 8 models in 1 fused program \(8 models\)/)
    expect(new Set([...byIndex(result, 'batched').values()].map((p) => p.fusedGroup))).toEqual(new Set([0]))
    for (const [index, p] of sequential) {
      const { configuration } = setMember(set, index)
      const { maxDepth, lambda, subsample } = configurationParams(gbdtFamily, trees(undefined).model as GbdtParams, set, configuration)
      const alone = byIndex(
        await run({ ...trees(undefined, { maxDepth, lambda, subsample }, index + 1), workers: [1], strategies: ['sequential'] }),
        'sequential',
      )
      expect(p.fingerprint, `model ${index}`).toBe(alone.get(index)!.fingerprint)
    }
  }, 120_000)

  it('trees: 3 folds × 2 depths are scored on their held-out rows as well as the test rows, the same in every strategy, and batched fuses them into one program', async () => {
    const set: ModelSet = { grid: { maxDepth: [2, 4] }, seeds: 1, folds: 3 }
    const result = await run({ ...trees(set), workers: [1] })
    expect(result.status).toBe('ok')
    expect(result.verification).toMatchObject({ sameWork: true })
    for (const m of result.measurements) {
      expect(m.perModel.map((p) => p.fold).sort()).toEqual([0, 0, 1, 1, 2, 2])
      expect(m.perModel.every((p) => Number.isFinite(p.validationMse) && p.validationMse! > 0)).toBe(true)
    }
    const sequential = [...byIndex(result, 'sequential').values()]
    // each fold trains on other rows: other trees
    expect(new Set(sequential.map((p) => p.fingerprint)).size).toBe(6)
    const batched = byIndex(result, 'batched')
    for (const p of sequential) expect(batched.get(p.index)!.validationMse).toBe(p.validationMse)
    // the folds and the depths in one program on one worker (the folds' rows held out of one binned set)
    expect(new Set([...batched.values()].map((p) => p.fusedGroup))).toEqual(new Set([0]))
    expect(fusionText(result)).toMatch(/^batched W=1 trained the 6 models in 1 fused program \(6 models\)/)
  }, 120_000)

  for (const backend of ['wasm', 'onnxruntime', 'webgpu'] as const) {
    it(`MLP on ${backend}: configurations that differ only in learning rate are fused into one program, each model as if trained alone`, async (ctx) => {
      if (missing(backend)) return ctx.skip()
      const set: ModelSet = { grid: { lr: [0.001, 0.003, 0.01, 0.03] }, seeds: 1, folds: null }
      const config = presetConfig('smoke', {
        sizes: [400],
        workers: [2],
        backend,
        models: [4],
        set,
        model: { kind: 'mlp', epochs: 1, batchSize: 64, hidden: [8] } as never,
      })
      const result = await run(config)
      expect(result.status).toBe('ok')
      expect(result.verification).toMatchObject({ sameWork: true })
      const batched = byIndex(result, 'batched')
      // W = 2: models 0–1 and 2–3, each pair one fused program (one group time for both), and the result says so
      expect(batched.get(0)!.groupTrainMs).toBe(batched.get(1)!.groupTrainMs)
      expect(batched.get(2)!.groupTrainMs).toBe(batched.get(3)!.groupTrainMs)
      expect([0, 1, 2, 3].map((i) => batched.get(i)!.fusedGroup)).toEqual([0, 0, 2, 2])
      expect(fusionText(result)).toMatch(/^batched W=2 trained the 4 models in 2 fused programs \(2, 2 models\)/)
      // model i, trained alone with its learning rate: the same numbers (one program, its lr as a scalar)
      const sequential = byIndex(result, 'sequential')
      const alone = byIndex(await run({ ...config, set: undefined, strategies: ['sequential'], model: { ...config.model, lr: 0.01 } as never }), 'sequential')
      expect(sequential.get(2)!.testMse).toBe(alone.get(2)!.testMse)
      expect(new Set([...sequential.values()].map((p) => p.testMse)).size).toBe(4)
    }, 120_000)
  }

  for (const backend of ['wasm', 'onnxruntime', 'webgpu'] as const) {
    it(`MLP on ${backend}: 3 folds × 2 learning rates in one fused program (each model's fold rows held out of the shared batch order), scored on their held-out rows, the same in every strategy`, async (ctx) => {
      if (missing(backend)) return ctx.skip()
      const set: ModelSet = { grid: { lr: [0.003, 0.03] }, seeds: 1, folds: 3 }
      const config = presetConfig('smoke', {
        sizes: [400],
        workers: [1],
        backend,
        models: [setSize(set)],
        set,
        model: { kind: 'mlp', epochs: 2, batchSize: 64, hidden: [8] } as never,
      })
      const result = await run(config)
      expect(result.status).toBe('ok')
      expect(result.verification).toMatchObject({ sameWork: true })
      const sequential = byIndex(result, 'sequential')
      const batched = byIndex(result, 'batched')
      expect(new Set([...batched.values()].map((p) => p.fusedGroup))).toEqual(new Set([0]))
      expect(fusionText(result)).toMatch(/^batched W=1 trained the 6 models in 1 fused program \(6 models\)/)
      for (const [index, p] of sequential) {
        expect(p.fold).toBe(index % 3)
        expect(Number.isFinite(p.validationMse) && p.validationMse! > 0).toBe(true)
        expect(batched.get(index)!.validationMse).toBeCloseTo(p.validationMse!, 5)
      }
      // each fold trains on other rows: 6 different models
      expect(new Set([...sequential.values()].map((p) => p.testMse.toPrecision(7))).size).toBe(6)
    }, 120_000)
  }

  it('MLP: learning rates × hidden widths on wasm, the same work within tolerance, with folds', async () => {
    const set: ModelSet = { grid: { hidden: [[8], [16]], lr: [0.003, 0.03] }, seeds: 1, folds: 2 }
    const config = presetConfig('smoke', {
      sizes: [400],
      workers: [2],
      backend: 'wasm',
      models: [setSize(set)],
      set,
      model: { kind: 'mlp', epochs: 1, batchSize: 64 } as never,
    })
    const result = await run(config)
    expect(result.status).toBe('ok')
    expect(result.verification).toMatchObject({ sameWork: true })
    const sequential = [...byIndex(result, 'sequential').values()]
    expect(sequential).toHaveLength(8)
    expect(sequential.every((p) => Number.isFinite(p.validationMse))).toBe(true)
    expect(new Set(sequential.map((p) => p.testMse.toPrecision(6))).size).toBeGreaterThan(4)
  }, 120_000)
})
