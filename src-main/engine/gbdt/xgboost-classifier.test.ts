// Classifiers against real XGBoost 1.7 (binary:logistic, multi:softprob; hist, 1 thread) on the same
// float32 data through benchmarks/gbdt/xgb_reference.py: where both grow the same splits (no
// sampling, ≤ 256 distinct values a feature) the probabilities agree within 1e-4, and on a realistic
// generated classification set (continuous features) the test log loss within 2 %. Skips only when
// python3 cannot import xgboost; with TRAINPOOL_REQUIRE containing "xgboost" it fails instead.
import { beforeAll, describe, expect, it } from 'vitest'
import { scoreOutputs } from '@shared/metrics'
import { skipWithout } from '../../testing/capability'
import { generateDataset } from '../datasets/generated'
import { type GbdtParams, type GbdtTask, predictGbdtOutputs, prepareGbdtData, trainGbdt } from './index'
import { splitRows, syntheticClassification, type SyntheticData } from './synthetic'
import { pythonForXgboost, runXgboost, xgboostVersion, type XgbTree } from './xgb-reference'

let version: string | null = null
beforeAll(() => {
  version = xgboostVersion()
})

const unavailable = (ctx: { skip: (note?: string) => never }) => {
  if (skipWithout('xgboost', version !== null, `${pythonForXgboost()} cannot import xgboost (apt-get install python3-xgboost)`))
    ctx.skip('python3 lacks xgboost')
}

const noSampling: Partial<GbdtParams> = { subsample: 1, colsampleBytree: 1 }
const BINARY: GbdtTask = { objective: 'binary', classes: 2 }

/** our model and XGBoost's on the same data and parameters: both test outputs, all trees */
function both(train: SyntheticData, test: SyntheticData, p: Partial<GbdtParams>, task: GbdtTask) {
  const ref = runXgboost(train, test, [{ ...p, objective: task.objective as 'binary' | 'multiclass', classes: task.classes }], 'all', undefined, true)
  expect(ref.xgboost).toMatch(/^1\.7\./)
  const data = prepareGbdtData(train.x, train.y, train.rows, train.features, p.maxBin ?? 256)
  const model = trainGbdt(data, p, 1, { task })
  return { model, ours: predictGbdtOutputs(model, test.x, test.rows), theirs: Float32Array.from(ref.models[0].predictions!), xgbTrees: ref.models[0].trees }
}

function splitsOf(t: { feature: ArrayLike<number>; threshold: ArrayLike<number>; defaultLeft: ArrayLike<number> }): [number, number, number][] {
  const out: [number, number, number][] = []
  for (let i = 0; i < t.feature.length; i++) if (t.feature[i] >= 0) out.push([t.feature[i], Math.fround(t.threshold[i]), t.defaultLeft[i]])
  return out
}
const maxDifference = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0)

describe('classifiers against XGBoost 1.7 (hist, 1 thread)', () => {
  for (const [task, missing] of [
    [BINARY, 0],
    [BINARY, 0.1],
    [{ objective: 'multiclass', classes: 3 }, 0],
    [{ objective: 'multiclass', classes: 3 }, 0.1],
  ] as [GbdtTask, number][]) {
    it(`${task.objective}${task.objective === 'multiclass' ? ` (K = ${task.classes})` : ''}, ≤ 256 distinct values, no sampling${missing ? ', missing values' : ''}: the same splits, probabilities within 1e-4`, (ctx) => {
      unavailable(ctx)
      const all = syntheticClassification({ rows: 3000, features: 12, seed: 41, levels: 120, missing, classes: task.classes })
      const [train, test] = splitRows(all, 2400)
      for (const p of [
        { ...noSampling, rounds: 30, maxDepth: 4 },
        { ...noSampling, rounds: 20, maxDepth: 6, eta: 0.3, lambda: 2, minChildWeight: 0.5, gamma: 0.1, baseScore: 0.3 },
      ]) {
        const { model, ours, theirs, xgbTrees } = both(train, test, p, task)
        expect(model.trees.length).toBe(xgbTrees.length)
        // the first round's trees (one per class) split where XGBoost's do
        const K = task.objective === 'multiclass' ? task.classes : 1
        for (let k = 0; k < K; k++) expect(splitsOf(model.trees[k])).toEqual(splitsOf(xgbTrees[k] as XgbTree))
        expect(maxDifference(ours, theirs)).toBeLessThan(1e-4)
      }
    })
  }

  for (const classes of [2, 5]) {
    it(`a generated classification set (continuous features${classes > 2 ? `, K = ${classes}` : ''}): test log loss within 2 % of XGBoost's`, (ctx) => {
      unavailable(ctx)
      const task: GbdtTask = classes === 2 ? BINARY : { objective: 'multiclass', classes }
      const d = generateDataset({ size: 5000, features: 20, seed: 7, target: 'teacher', testSplit: 0.2, task })
      const train = { rows: d.train, features: 20, x: d.xTrain, y: d.yTrain }
      const test = { rows: d.test, features: 20, x: d.xTest, y: d.yTest }
      const { ours, theirs } = both(train, test, { ...noSampling, rounds: 60, maxDepth: 6 }, task)
      const mine = scoreOutputs(task, ours, test.y).logloss!
      const xgb = scoreOutputs(task, theirs, test.y).logloss!
      expect(mine).toBeLessThan(0.8 * Math.log(classes)) // it learned
      expect(Math.abs(mine - xgb) / xgb).toBeLessThan(0.02)
    })
  }
})
