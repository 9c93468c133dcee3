// Early stopping in the trees engine: each model stops at the same round alone and in a batched group,
// keeps its best round's trees (the first bestRound rounds, K trees a round), costs nothing once
// stopped (the engine's count of rounds grown), and stops where XGBoost 1.7's own early stopping does
// (Python's xgb.train(early_stopping_rounds), and the xgboost backend's FFI loop) where the trees agree.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { HeldOutRows, MetricName } from '@shared/contract'
import { scoreOutputs } from '@shared/metrics'
import { skipWithout } from '../../testing/capability'
import { loadXgboost } from '../xgboost/library'
import { createXgbData, freeXgbData, trainXgbModel, xgbParams } from '../xgboost/xgboost-train'
import { heldOutDataset, type Dataset } from '../datasets/dataset'
import {
  GBDT_DEFAULTS,
  type GbdtModel,
  type GbdtParams,
  type GbdtTask,
  type GbdtTrainStats,
  predictGbdtOutputs,
  prepareGbdtData,
  trainGbdt,
  trainGbdtGroup,
  treeHash,
} from './index'
import { pythonForXgboost, xgboostVersion } from './xgb-reference'
import { syntheticClassification, syntheticRegression, type SyntheticData } from './synthetic'

const ROUNDS = 60
const PATIENCE = 4

/** The held-out rows' value of `metric` for the model's first `rounds` rounds, as the engine scores them. */
function heldOutValue(model: GbdtModel, d: SyntheticData, h: HeldOutRows, metric: MetricName, rounds: number, task?: GbdtTask): number {
  const K = task?.objective === 'multiclass' ? task.classes : 1
  const prefix = { ...model, trees: model.trees.slice(0, rounds * K) }
  const F = d.features
  const out = predictGbdtOutputs(prefix, d.x.subarray(h.begin * F, h.end * F), h.end - h.begin)
  return scoreOutputs(task ?? { objective: 'regression', classes: 0 }, out, d.y.subarray(h.begin, h.end))[metric]!
}

interface Case {
  name: string
  d: SyntheticData
  task?: GbdtTask
  metric: MetricName
}

const noisy = syntheticRegression({ rows: 500, features: 8, seed: 5, noise: 1.2 })
const CASES: Case[] = [
  { name: 'regression (MSE)', d: noisy, metric: 'mse' },
  {
    name: 'binary (log loss)',
    d: syntheticClassification({ rows: 500, features: 8, seed: 6, noise: 1.5, classes: 2 }),
    task: { objective: 'binary', classes: 2 },
    metric: 'logloss',
  },
  {
    name: 'multiclass (log loss)',
    d: syntheticClassification({ rows: 500, features: 8, seed: 7, noise: 1.5, classes: 3 }),
    task: { objective: 'multiclass', classes: 3 },
    metric: 'logloss',
  },
  {
    name: 'binary (accuracy, higher is better)',
    d: syntheticClassification({ rows: 500, features: 8, seed: 8, noise: 1.5, classes: 2 }),
    task: { objective: 'binary', classes: 2 },
    metric: 'accuracy',
  },
]

const params: Partial<GbdtParams> = { rounds: ROUNDS, maxDepth: 6, eta: 0.5, maxBin: 64, subsample: 0.8, colsampleBytree: 0.8 }
const seeds = [3, 4, 5, 6]
/** two folds' worth of held-out rows, and per-model learning rates: a fused model set */
const heldOut: HeldOutRows[] = [
  { begin: 400, end: 500 },
  { begin: 0, end: 100 },
  { begin: 400, end: 500 },
  { begin: 0, end: 100 },
]
const perModel = [{ eta: 0.5 }, { eta: 0.5 }, { eta: 0.1 }, { eta: 0.02 }]

describe.each(CASES)('early stopping, $name', ({ d, task, metric }) => {
  const data = prepareGbdtData(d.x, d.y, d.rows, d.features, 64)
  const earlyStopping = { rounds: PATIENCE, metric }
  const stats: GbdtTrainStats = { peakNodeHistograms: 0 }
  const together = trainGbdtGroup(data, params, seeds, { heldOut, perModel, task, earlyStopping, stats })
  const alone = seeds.map((s, i) => trainGbdt(data, { ...params, ...perModel[i] }, s, { heldOut: [heldOut[i]], task, earlyStopping }))
  const K = task?.objective === 'multiclass' ? task.classes : 1

  it('stops each model at the same round, with the same trees, alone and in a batched group', () => {
    for (let i = 0; i < seeds.length; i++) {
      expect(together[i].stoppedRounds, `model ${i}`).toEqual(alone[i].stoppedRounds)
      expect(treeHash(together[i])).toBe(treeHash(alone[i]))
    }
    // the fast learners stop early (after PATIENCE rounds without a better value), each at its own round
    const stopped = together.filter((m) => m.stoppedRounds!.roundsTrained < ROUNDS)
    expect(stopped.length).toBeGreaterThanOrEqual(2)
    for (const m of stopped) expect(m.stoppedRounds!.roundsTrained - m.stoppedRounds!.bestRound).toBe(PATIENCE)
  })

  it("keeps the best round's model: its first bestRound rounds, whose held-out value no earlier or later round beats", () => {
    for (let i = 0; i < seeds.length; i++) {
      const { roundsTrained, bestRound } = together[i].stoppedRounds!
      expect(together[i].trees).toHaveLength(bestRound * K)
      // the same model without early stopping, to the round it stopped at: the kept model is its prefix
      const full = trainGbdt(data, { ...params, ...perModel[i], rounds: roundsTrained }, seeds[i], { heldOut: [heldOut[i]], task })
      expect(treeHash({ ...full, trees: full.trees.slice(0, bestRound * K) })).toBe(treeHash(together[i]))
      const values = Array.from({ length: roundsTrained }, (_, r) => heldOutValue(full, d, heldOut[i], metric, r + 1, task))
      const better = (a: number, b: number) => (metric === 'accuracy' ? a > b : a < b)
      values.forEach((v, r) => {
        // the first best: strictly better than every earlier round, and no later round beats it
        if (r + 1 < bestRound) expect(better(values[bestRound - 1], v), `best ${bestRound} vs round ${r + 1}`).toBe(true)
        if (r + 1 > bestRound) expect(better(v, values[bestRound - 1]), `round ${r + 1} beats best ${bestRound}`).toBe(false)
      })
      // the kept model's own held-out value is the best round's
      expect(heldOutValue(together[i], d, heldOut[i], metric, bestRound, task)).toBe(values[bestRound - 1])
    }
  })

  it('a stopped model costs nothing afterwards: the group grew exactly the rounds its models trained', () => {
    const trained = together.reduce((n, m) => n + m.stoppedRounds!.roundsTrained, 0)
    expect(stats.modelRounds).toBe(trained)
    expect(trained).toBeLessThan(seeds.length * ROUNDS)
  })
})

describe('early stopping refusals in the engine', () => {
  const data = prepareGbdtData(noisy.x, noisy.y, noisy.rows, noisy.features, 64)
  it('needs every model to hold rows out', () => {
    expect(() => trainGbdtGroup(data, params, [1, 2], { heldOut: [{ begin: 0, end: 50 }, null], earlyStopping: { rounds: 3, metric: 'mse' } })).toThrow(
      /earlyStopping needs every model's held-out rows \(heldOut\); model 1 has none/,
    )
    expect(() => trainGbdt(data, params, 1, { earlyStopping: { rounds: 3, metric: 'mse' } })).toThrow(/model 0 has none/)
  })
})

// ---- against XGBoost 1.7: where the trees agree (≤ 256 distinct values a feature, no sampling), the same stopping round ----

const exact = syntheticRegression({ rows: 600, features: 6, seed: 21, levels: 16, noise: 1.0 })
const exactParams: Partial<GbdtParams> = { rounds: 80, maxDepth: 5, eta: 0.4, maxBin: 256, subsample: 1, colsampleBytree: 1 }
const TRAIN = 480
const exactHeldOut: HeldOutRows = { begin: 400, end: 480 }

function cpuStopped(patience: number): GbdtModel {
  const d = prepareGbdtData(exact.x.slice(0, TRAIN * exact.features), exact.y.slice(0, TRAIN), TRAIN, exact.features, 256)
  return trainGbdt(d, exactParams, 9, { heldOut: [exactHeldOut], earlyStopping: { rounds: patience, metric: 'mse' } })
}

const PY = `
import sys, json, numpy as np, xgboost as xgb
F = int(sys.argv[3]); x = np.fromfile(sys.argv[1], dtype=np.float32).reshape(-1, F); y = np.fromfile(sys.argv[2], dtype=np.float32)
b, e, n, patience = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
keep = np.r_[0:b, e:n]
dtrain = xgb.DMatrix(x[keep], label=y[keep]); dvalid = xgb.DMatrix(x[b:e], label=y[b:e])
params = dict(objective='reg:squarederror', tree_method='hist', grow_policy='depthwise', max_depth=5, eta=0.4, max_bin=256,
              subsample=1, colsample_bytree=1, base_score=0.5, nthread=1, eval_metric='rmse', seed=9)
bst = xgb.train(params, dtrain, 80, evals=[(dvalid, 'v')], early_stopping_rounds=patience, verbose_eval=False)
print(json.dumps({'best': bst.best_iteration, 'rounds': bst.num_boosted_rounds()}))
`

describe('the same stopping round as XGBoost 1.7 on exact bins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trainpool-early-stopping-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("Python XGBoost's xgb.train(early_stopping_rounds): the same best iteration and rounds trained", (ctx) => {
    if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost`)) ctx.skip('python3 lacks xgboost')
    // the held-out rows are [400, 480) of the 480 training rows: the last rows, so XGBoost's dtrain is the first 400 in the same order
    writeFileSync(join(dir, 'x.f32'), Buffer.from(exact.x.buffer, 0, TRAIN * exact.features * 4))
    writeFileSync(join(dir, 'y.f32'), Buffer.from(exact.y.buffer, 0, TRAIN * 4))
    for (const patience of [2, 5]) {
      const r = spawnSync(
        pythonForXgboost(),
        ['-c', PY, join(dir, 'x.f32'), join(dir, 'y.f32'), String(exact.features), '400', '480', String(TRAIN), String(patience)],
        { encoding: 'utf8' },
      )
      expect(r.status, r.stderr).toBe(0)
      const xgbOut = JSON.parse(r.stdout) as { best: number; rounds: number }
      const cpu = cpuStopped(patience)
      expect(cpu.stoppedRounds!.roundsTrained, `patience ${patience}`).toBeLessThan(80)
      // XGBoost's best_iteration is 0-based; RMSE and MSE have the same best round
      expect({ best: cpu.stoppedRounds!.bestRound - 1, rounds: cpu.stoppedRounds!.roundsTrained }).toEqual(xgbOut)
    }
  }, 60_000)

  it('the xgboost backend (libxgboost through the FFI) stops at the same round and keeps the best round only', async (ctx) => {
    let lib: ReturnType<typeof loadXgboost>
    try {
      lib = loadXgboost()
    } catch (err) {
      if (skipWithout('xgboost', false, (err as Error).message)) return ctx.skip('no libxgboost')
      throw err
    }
    const F = exact.features
    const whole: Dataset = {
      spec: { size: exact.rows, features: F, seed: 0, target: 'teacher', testSplit: 0.2 },
      train: TRAIN,
      test: exact.rows - TRAIN,
      xTrain: exact.x.slice(0, TRAIN * F),
      yTrain: exact.y.slice(0, TRAIN),
      xTest: exact.x.slice(TRAIN * F),
      yTest: exact.y.slice(TRAIN),
    }
    const data = createXgbData(lib.api, heldOutDataset(whole, exactHeldOut), F, 1)
    try {
      const { kind: _k, rounds: _r, ...p } = { ...GBDT_DEFAULTS, ...exactParams }
      const booster = xgbParams(p, 9, 1, { kind: 'cpu' }, lib.major)
      const trained = await trainXgbModel(lib.api, data, booster, 80, { earlyStopping: { rounds: 3, metric: 'mse' }, keep: true })
      const cpu = cpuStopped(3)
      expect(cpu.stoppedRounds!.roundsTrained).toBeLessThan(80)
      expect(trained.stoppedRounds).toEqual(cpu.stoppedRounds)
      // the kept booster is the best round's: its JSON holds bestRound trees
      const json = JSON.parse(trained.json!) as { learner: { gradient_booster: { model: { trees: unknown[] } } } }
      expect(json.learner.gradient_booster.model.trees).toHaveLength(cpu.stoppedRounds!.bestRound)
    } finally {
      freeXgbData(lib.api, data)
    }
  }, 60_000)
})
