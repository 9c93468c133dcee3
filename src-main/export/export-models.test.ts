// A run keeps the models of its first measurement at the largest size, and `trainpool
// export-models` writes them as XGBoost JSON that real XGBoost 1.7 loads and that predicts what
// Trainpool predicted: its test MSE on the run's own test rows is the one the result records. The best
// model is the best configuration's best; a run that kept none is refused naming why.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { modelAttributes, modelFileName, type ModelSet, presetConfig, setSize, workloadFor } from '@shared/contract'
import { leaderboardOf } from '@shared/leaderboard'
import { exportModelsCommand } from '../cli/export-models-command'
import { datasetFor } from '../engine/datasets/generated'
import { builtInWorkerFamilies } from '../engine/families'
import { pythonForXgboost, xgboostVersion } from '../engine/gbdt/xgb-reference'
import { BenchService } from '../service/bench-service'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { bestModelIndex } from './models'

const MSE = `
import sys, json, numpy as np, xgboost as xgb
x = np.fromfile(sys.argv[1], dtype=np.float32).reshape(int(sys.argv[3]), int(sys.argv[4]))
y = np.fromfile(sys.argv[2], dtype=np.float32)
out = {}
for path in sys.argv[5:]:
    b = xgb.Booster(); b.load_model(path)
    p = b.predict(xgb.DMatrix(x, missing=np.nan)).astype(np.float64)
    out[path] = float(np.mean((p - y.astype(np.float64)) ** 2))
print(json.dumps(out))
`

const ATTRIBUTE = `
import sys, xgboost as xgb
b = xgb.Booster(); b.load_model(sys.argv[1])
print(b.attr('trainpool_configuration'))
`

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trainpool-export-models-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('trained models out', () => {
  it('a trees model set keeps its models; export-models writes the best and all, which XGBoost loads with the recorded test MSE', async (ctx) => {
    if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost (apt-get install python3-xgboost)`))
      ctx.skip('python3 lacks xgboost')
    const store = new RunStore(join(dir, 'runs'))
    const service = new BenchService({
      launcher: new InProcessLauncher(builtInWorkerFamilies),
      store,
      shell: 'cli',
      telemetry: false,
      probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
    })
    const set: ModelSet = { grid: { maxDepth: [2, 4] }, seeds: 2, folds: null }
    const config = presetConfig('smoke', {
      sizes: [300, 600],
      workers: [2],
      backend: 'cpu',
      models: [setSize(set)],
      set,
      model: { kind: 'gbdt', rounds: 5 } as never,
    })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.status).toBe('ok')
    // the first measurement at the largest size kept its models
    expect(run.keptModels).toEqual({ size: 600, strategy: 'sequential', workers: 1, count: 4, format: 'gbdt-trees' })
    const kept = await store.getModels(runId)
    const best = bestModelIndex(run, kept)!
    const board = leaderboardOf(run)!
    const measured = run.measurements.find((m) => m.size === 600 && m.strategy === 'sequential')!
    expect(measured.perModel.find((p) => p.index === best)!.configuration).toBe(board.entries[0].configuration)

    const out = join(dir, 'models')
    expect(await exportModelsCommand(runId, { all: true, out, store: store.dir })).toBe(0)
    // each file named by its model and configuration (max-depth 2 for models 0, 1; 4 for 2, 3)
    expect(readdirSync(out).sort()).toEqual([0, 1, 2, 3].map((i) => `trainpool-${runId}-model-${i}-max-depth-${i < 2 ? 2 : 4}.json`))
    expect(await exportModelsCommand(runId, { best: true, out: join(dir, 'best'), store: store.dir })).toBe(0)
    expect(readdirSync(join(dir, 'best'))).toEqual([modelFileName(run, best, 'json')])

    // XGBoost's predictions on the run's own test rows give the test MSE the result records
    const data = datasetFor(workloadFor(run.config, 600))
    writeFileSync(join(dir, 'x.f32'), Buffer.from(data.xTest.buffer, data.xTest.byteOffset, data.xTest.byteLength))
    writeFileSync(join(dir, 'y.f32'), Buffer.from(data.yTest.buffer, data.yTest.byteOffset, data.yTest.byteLength))
    const paths = [0, 1, 2, 3].map((i) => join(out, modelFileName(run, i, 'json')))
    const r = spawnSync(pythonForXgboost(), ['-c', MSE, join(dir, 'x.f32'), join(dir, 'y.f32'), String(data.test), String(run.config.features), ...paths], {
      encoding: 'utf8',
    })
    expect(r.status, r.stderr).toBe(0)
    const mse = JSON.parse(r.stdout) as Record<string, number>
    for (const [i, path] of paths.entries()) {
      const recorded = measured.perModel.find((p) => p.index === i)!.testMse
      expect(Math.abs(mse[path] - recorded) / recorded, `model ${i}`).toBeLessThan(1e-6)
    }
    // XGBoost reads the model's configuration from its attributes
    const attr = spawnSync(pythonForXgboost(), ['-c', ATTRIBUTE, join(dir, 'best', modelFileName(run, best, 'json'))], { encoding: 'utf8' })
    expect(attr.status, attr.stderr).toBe(0)
    expect(attr.stdout.trim()).toBe(modelAttributes(run, best).trainpool_configuration)
  }, 120_000)

  it('refuses a run that kept no models, and a flag pair that does not combine', async () => {
    const store = new RunStore(join(dir, 'runs'))
    expect(await exportModelsCommand('20250101-120000-abcdef', { best: true, out: join(dir, 'x'), store: store.dir })).toBe(2)
    expect(await exportModelsCommand('20250101-120000-abcdef', { best: true, all: true, out: join(dir, 'x'), store: store.dir })).toBe(2)
    expect(await exportModelsCommand('20250101-120000-abcdef', { best: true, store: store.dir })).toBe(2)
  })
})
