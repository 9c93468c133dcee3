// Early stopping through the whole path (issue 39): a trees model set with a validation fraction and
// --early-stopping runs sequential, pool and batched on the real worker loop; every strategy stops each
// model at the same round and keeps the same best round (the same-work check says so), the kept model
// is the best round's (bestRound trees), XGBoost 1.7 loads its export and predicts the probabilities
// the result scored, and the CLI's summary says how much of the grid's rounds were trained. Bad input
// is refused naming the field: by the config (exit 2) or, a validation tail without some class, by the worker.
// The MLP on wasm and on onnxruntime: every strategy stops each model at the same epoch, and both engines at the same ones.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type BenchConfig, type ModelSet, modelFileName, presetConfig, setSize, workloadFor } from '@shared/contract'
import { scoreOutputs } from '@shared/metrics'
import { summaryTable } from '../cli/bench-command'
import { configFromFlags } from '../cli/options'
import { exportModelsCommand } from '../cli/export-models-command'
import { datasetFor } from '../engine/datasets/generated'
import { builtInWorkerFamilies } from '../engine/families'
import { pythonForXgboost, xgboostVersion } from '../engine/gbdt/xgb-reference'
import { RunStore } from '../store/run-store'
import { skipWithout, skipWithoutLibXgboost } from '../testing/capability'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

const PROBABILITIES = `
import sys, json, numpy as np, xgboost as xgb
x = np.fromfile(sys.argv[1], dtype=np.float32).reshape(int(sys.argv[2]), int(sys.argv[3]))
out = {}
for path in sys.argv[4:]:
    b = xgb.Booster(); b.load_model(path)
    out[path] = [float(p) for p in b.predict(xgb.DMatrix(x, missing=np.nan))]
print(json.dumps(out))
`

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trainpool-early-stopping-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const ROUNDS = 40

function serviceIn(store?: RunStore): BenchService {
  return new BenchService({
    launcher: new InProcessLauncher(builtInWorkerFamilies),
    store: store ?? null,
    shell: 'cli',
    telemetry: false,
    probe: async () =>
      [
        { name: 'cpu', available: true, detail: 'test cpu' },
        { name: 'webgpu', available: true, gpu: true, detail: 'test webgpu' },
      ] as never,
  })
}

describe('early stopping, every strategy', () => {
  it('stops each model at the same round in sequential, pool and batched, keeps the best round, and exports it for XGBoost 1.7', async (ctx) => {
    const store = new RunStore(join(dir, 'runs'))
    const service = serviceIn(store)
    const set: ModelSet = { grid: { eta: [0.6, 0.05] }, seeds: 2, folds: null }
    const config: BenchConfig = presetConfig('smoke', {
      sizes: [800],
      workers: [2],
      backend: 'cpu',
      target: 'binary',
      features: 8,
      strategies: ['sequential', 'pool', 'batched'],
      models: [setSize(set)],
      set,
      earlyStopping: 3,
      validation: 0.25,
      model: { kind: 'gbdt', rounds: ROUNDS, maxDepth: 6 } as never,
    })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.status, run.error ?? undefined).toBe('ok')
    expect(run.verification.problems).toEqual([])

    // every strategy: the same rounds trained and the same round kept, model by model
    const byStrategy = new Map(run.measurements.map((m) => [m.strategy, new Map(m.perModel.map((p) => [p.index, [p.roundsTrained, p.bestRound]]))]))
    expect([...byStrategy.keys()].sort()).toEqual(['batched', 'pool', 'sequential'])
    const sequential = byStrategy.get('sequential')!
    for (const other of byStrategy.values()) expect(other).toEqual(sequential)
    const rounds = [...sequential.values()]
    expect(rounds.every(([trained, best]) => best! >= 1 && best! <= trained! && trained! <= ROUNDS)).toBe(true)
    // the fast learners (eta 0.6: models 0 and 1) stop early
    expect(sequential.get(0)![0]).toBeLessThan(ROUNDS)
    expect(sequential.get(1)![0]).toBeLessThan(ROUNDS)

    // the kept models are the best round's: bestRound trees each (binary: one a round)
    const kept = await store.getModels(runId)
    for (const { index, artifact } of kept.models) {
      expect(artifact.format).toBe('gbdt-trees')
      if (artifact.format === 'gbdt-trees') expect(artifact.trees).toHaveLength(sequential.get(index)![1]!)
    }

    // the summary counts the rounds trained against the grid's
    const measured = run.measurements.find((m) => m.strategy === 'sequential')!
    const trained = measured.perModel.reduce((n, p) => n + p.roundsTrained!, 0)
    const grid = ROUNDS * setSize(set)
    expect(summaryTable(run)).toContain(
      `early stopping: patience 3 rounds on the validation log loss (the last 25 % of the training rows) · trained ${((100 * trained) / grid).toFixed(0)} % of the grid's rounds (${trained} of ${grid}, sequential at 800 rows)`,
    )

    // XGBoost 1.7 loads each exported model and predicts the probabilities whose log loss the result records
    if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost`)) return ctx.skip('python3 lacks xgboost')
    const out = join(dir, 'models')
    expect(await exportModelsCommand(runId, { all: true, out, store: store.dir })).toBe(0)
    const data = datasetFor(workloadFor(run.config, 800, undefined, run.task))
    writeFileSync(join(dir, 'x.f32'), Buffer.from(data.xTest.buffer, data.xTest.byteOffset, data.xTest.byteLength))
    const paths = kept.models.map(({ index }) => join(out, modelFileName(run, index, 'json')))
    const r = spawnSync(pythonForXgboost(), ['-c', PROBABILITIES, join(dir, 'x.f32'), String(data.test), String(run.config.features), ...paths], {
      encoding: 'utf8',
    })
    expect(r.status, r.stderr).toBe(0)
    const predicted = JSON.parse(r.stdout) as Record<string, number[]>
    for (const [k, { index }] of kept.models.entries()) {
      const recorded = measured.perModel.find((p) => p.index === index)!.metrics!.logloss!
      const theirs = scoreOutputs({ objective: 'binary', classes: 2 }, predicted[paths[k]], data.yTest).logloss!
      expect(Math.abs(theirs - recorded) / recorded, `model ${index}`).toBeLessThan(1e-6)
    }
  }, 180_000)
})

describe('early stopping on the xgboost backend', () => {
  it("uses the validation rows the seam cuts out: sequential and pool stop each booster at the same round and keep the best round's", async (ctx) => {
    if (await skipWithoutLibXgboost()) return ctx.skip('no libxgboost')
    const service = new BenchService({
      launcher: new InProcessLauncher(builtInWorkerFamilies),
      store: null,
      shell: 'cli',
      telemetry: false,
      probe: async () => [{ name: 'xgboost', available: true, detail: 'test xgboost' }] as never,
    })
    const config = presetConfig('smoke', {
      sizes: [600],
      workers: [2],
      models: [2],
      backend: 'xgboost',
      strategies: ['sequential', 'pool'],
      earlyStopping: 3,
      validation: 0.2,
      // no sampling: the in-process launcher's pool workers share one process, and XGBoost's one global RNG with it
      model: { kind: 'gbdt', rounds: ROUNDS, eta: 0.6, maxDepth: 6, subsample: 1, colsampleBytree: 1 } as never,
    })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.status, run.error ?? undefined).toBe('ok')
    expect(run.verification.problems).toEqual([])
    const [sequential, pool] = ['sequential', 'pool'].map((s) =>
      run.measurements.find((m) => m.strategy === s)!.perModel.map((p) => [p.roundsTrained, p.bestRound]),
    )
    expect(pool).toEqual(sequential)
    for (const [trained, best] of sequential) {
      expect(trained).toBeLessThan(ROUNDS)
      expect(trained! - best!).toBe(3)
    }
  }, 120_000)
})

describe('early stopping on the MLP (tfjs on wasm, onnxruntime)', () => {
  const EPOCHS = 30
  const mlpService = (store?: RunStore) =>
    new BenchService({
      launcher: new InProcessLauncher(builtInWorkerFamilies),
      store: store ?? null,
      shell: 'cli',
      telemetry: false,
      probe: async () =>
        [
          { name: 'wasm', available: true, detail: 'test wasm' },
          { name: 'onnxruntime', available: true, detail: 'test onnxruntime' },
          { name: 'webgpu', available: true, gpu: true, detail: 'test webgpu' },
        ] as never,
    })
  const mlp = (overrides: Parameters<typeof presetConfig>[1]) =>
    presetConfig('smoke', {
      backend: 'wasm',
      earlyStopping: 3,
      validation: 0.25,
      model: { kind: 'mlp', epochs: EPOCHS, batchSize: 32, hidden: [32], lr: 0.1 } as never,
      ...overrides,
    })

  it("records each model's epochs trained and best epoch, the same in sequential, pool and batched (verify passes), and keeps the best epoch's model", async () => {
    const store = new RunStore(join(dir, 'runs'))
    const service = mlpService(store)
    const config = mlp({ sizes: [400], features: 10, workers: [2], models: [4], strategies: ['sequential', 'pool', 'batched'] })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.status, run.error ?? undefined).toBe('ok')
    expect(run.verification.problems).toEqual([])
    const byStrategy = new Map(run.measurements.map((m) => [m.strategy, new Map(m.perModel.map((p) => [p.index, [p.roundsTrained, p.bestRound]]))]))
    expect([...byStrategy.keys()].sort()).toEqual(['batched', 'pool', 'sequential'])
    const sequential = byStrategy.get('sequential')!
    for (const other of byStrategy.values()) expect(other).toEqual(sequential)
    const rounds = [...sequential.values()]
    expect(rounds).toHaveLength(4)
    // clear stops: every model before the last epoch, keeping an earlier one
    for (const [trained, best] of rounds) {
      expect(trained!).toBeLessThan(EPOCHS)
      expect(trained! - best!).toBe(3)
    }
    // the kept models are the ones scored (each its best epoch's: engine/mlp-tfjs/early-stopping.test.ts): their test MSE is the one recorded
    const measured = run.measurements.find((m) => m.strategy === 'sequential')!
    const kept = await store.getModels(runId)
    expect(kept.models).toHaveLength(4)
    const data = datasetFor(workloadFor(run.config, 400, undefined, run.task))
    for (const { index, artifact } of kept.models) {
      if (artifact.format !== 'mlp') throw new Error(`model ${index}: an MLP artifact expected, got ${artifact.format}`)
      let se = 0
      for (let r = 0; r < data.test; r++) {
        let a = Array.from(data.xTest.subarray(r * 10, (r + 1) * 10))
        artifact.layers.forEach((layer, l) => {
          const out = layer.b!.slice()
          for (let i = 0; i < layer.inputs; i++) for (let o = 0; o < layer.outputs; o++) out[o] += a[i] * layer.w[i * layer.outputs + o]
          a = l < artifact.layers.length - 1 ? out.map((v) => Math.max(v, 0)) : out
        })
        se += (a[0] - data.yTest[r]) ** 2
      }
      const recorded = measured.perModel.find((p) => p.index === index)!.testMse
      expect(Math.abs(se / data.test - recorded) / recorded, `model ${index}`).toBeLessThan(1e-4)
    }
    const trained = measured.perModel.reduce((n, p) => n + p.roundsTrained!, 0)
    // the MLP's rounds are epochs, in the summary's words too
    expect(summaryTable(run)).toContain('early stopping: patience 3 epochs on the validation')
    expect(summaryTable(run)).toContain(
      `trained ${((100 * trained) / (EPOCHS * 4)).toFixed(0)} % of the grid's epochs (${trained} of ${EPOCHS * 4}, sequential at 400 rows)`,
    )
  }, 180_000)

  it('on onnxruntime: the same epochs trained and kept in sequential, pool and batched (verify passes), and as on wasm', async (ctx) => {
    let available = true
    try {
      await (await import('../engine/mlp-onnx/ort-runtime')).startOnnxRuntime()
    } catch {
      available = false
    }
    if (skipWithout('onnxruntime', available, 'onnxruntime-node does not load')) return ctx.skip('no onnxruntime')
    const perModelRounds = async (config: BenchConfig) => {
      const service = mlpService()
      const { runId } = await service.start({ config })
      const run = await service.waitForRun(runId)
      await service.shutdown()
      expect(run.status, run.error ?? undefined).toBe('ok')
      expect(run.verification.problems).toEqual([])
      return new Map(run.measurements.map((m) => [m.strategy, m.perModel.map((p) => [p.index, p.roundsTrained, p.bestRound])]))
    }
    const shape = { sizes: [400], features: 10, workers: [2], models: [4] }
    const onnx = await perModelRounds(mlp({ ...shape, backend: 'onnxruntime', strategies: ['sequential', 'pool', 'batched'] }))
    expect([...onnx.keys()].sort()).toEqual(['batched', 'pool', 'sequential'])
    const sequential = onnx.get('sequential')!
    for (const other of onnx.values()) expect(other).toEqual(sequential)
    expect(sequential).toHaveLength(4)
    for (const [, trained, best] of sequential) {
      expect(trained!).toBeLessThan(EPOCHS)
      expect(trained! - best!).toBe(3)
    }
    const wasm = await perModelRounds(mlp({ ...shape, strategies: ['batched'] }))
    expect(wasm.get('batched')).toEqual(sequential)
  }, 180_000)

  it('every MLP backend the machine offers, and auto, is accepted with early stopping', async () => {
    for (const backend of ['webgpu', 'onnxruntime', 'wasm', 'auto']) {
      const service = mlpService()
      try {
        expect(await service.validate(mlp({ backend: backend as never })), backend).toMatchObject({ earlyStopping: 3 })
      } finally {
        await service.shutdown()
      }
    }
  })
})

describe('early stopping, bad input', () => {
  const refused = async (config: BenchConfig) => {
    const service = serviceIn()
    try {
      await service.validate(config)
      return null
    } catch (err) {
      return err as { code: string; issues?: { field: string; message: string }[] }
    } finally {
      await service.shutdown()
    }
  }
  const trees = (overrides: Parameters<typeof presetConfig>[1]) => presetConfig('smoke', { model: { kind: 'gbdt' } as never, backend: 'cpu', ...overrides })

  it('no held-out rows, validation with folds: invalid input naming the field; the WGSL trees stop early too', async () => {
    expect(await refused(trees({ earlyStopping: 5 }))).toMatchObject({
      code: 'invalid-input',
      issues: [{ field: 'earlyStopping', message: expect.stringMatching(/holds none out; accepted: with folds/) }],
    })
    expect(await refused(trees({ earlyStopping: 5, validation: 0.2, backend: 'webgpu' }))).toBeNull()
    expect(await refused(trees({ validation: 0.2, set: { grid: {}, seeds: 1, folds: 4 }, models: [4] }))).toMatchObject({
      code: 'invalid-input',
      issues: [{ field: 'validation' }],
    })
    expect(await refused(trees({ earlyStopping: 5, validation: 0.2 }))).toBeNull()
  })

  it('the CLI flags make the fields, and a bad one is a usage error', () => {
    const c = configFromFlags({ model: 'gbdt', preset: 'smoke', backend: 'cpu', earlyStopping: '7', validation: '0.15' } as never)
    expect(c).toMatchObject({ earlyStopping: 7, validation: 0.15 })
    expect(() => configFromFlags({ model: 'gbdt', preset: 'smoke', backend: 'cpu', earlyStopping: 'soon' } as never)).toThrow(
      /--early-stopping "soon" .*accepted: an integer from 1 to 1000/,
    )
  })

  it('a validation fraction whose rows leave a class out: the run fails naming validation and the class', async () => {
    const service = serviceIn()
    const config = presetConfig('smoke', {
      model: { kind: 'gbdt', rounds: 3 } as never,
      backend: 'cpu',
      strategies: ['sequential'],
      target: 'multiclass',
      classes: 32,
      sizes: [80],
      models: [1],
      workers: [1],
      validation: 0.05,
      earlyStopping: 2,
    })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.status).toBe('failed')
    expect(run.error ?? JSON.stringify(run.measurements.flatMap((m) => m.failures))).toMatch(
      /validation 0\.05 holds out the last 4 of the 64 training rows, which hold no row of classes .*accepted: a larger validation fraction/,
    )
  }, 60_000)
})
