// Accuracy against real XGBoost 1.7 (Debian's python3-xgboost, tree_method=hist, nthread=1), on the
// same float32 data, through benchmarks/gbdt/xgb_reference.py. Skips only when python3 cannot
// import xgboost (and says so); with TRAINPOOL_REQUIRE containing "xgboost" it fails instead.
import { beforeAll, describe, expect, it } from 'vitest'
import { skipWithout } from '../../testing/capability'
import { meanSquaredError, predictGbdt, prepareGbdtData, trainGbdt, type GbdtModel, type GbdtParams } from './index'
import { splitRows, syntheticRegression, type SyntheticData } from './synthetic'
import { pythonForXgboost, runXgboost, xgboostVersion, type XgbTree } from './xgb-reference'

let version: string | null = null
beforeAll(() => {
  version = xgboostVersion()
})

const noSampling = { subsample: 1, colsampleBytree: 1 }
/** several models, each with its own parameters (no sampling: XGBoost's RNG is not ours) */
const MODELS: Partial<GbdtParams>[] = [
  { rounds: 40, ...noSampling },
  { rounds: 40, ...noSampling, maxDepth: 4, eta: 0.3, lambda: 3, alpha: 0.5, gamma: 0.2, minChildWeight: 5 },
  { rounds: 40, ...noSampling, maxDepth: 8, lambda: 0, minChildWeight: 0, baseScore: -1 },
  { rounds: 40, ...noSampling, maxBin: 32 },
]

function compare(train: SyntheticData, test: SyntheticData) {
  const ref = runXgboost(train, test, MODELS, 'first')
  expect(ref.xgboost).toMatch(/^1\.7\./)
  return MODELS.map((p, i) => {
    const data = prepareGbdtData(train.x, train.y, train.rows, train.features, p.maxBin ?? 256)
    const model = trainGbdt(data, p, 1)
    const mse = meanSquaredError(predictGbdt(model, test.x, test.rows), test.y)
    return { model, mse, xgbMse: ref.models[i].mse, xgbTree: ref.models[i].trees[0] }
  })
}

/** the first tree's internal nodes, in XGBoost's (breadth-first) order: [feature, float32 threshold, default left] */
function splitsOf(t: GbdtModel['trees'][number]): [number, number, number][] {
  const out: [number, number, number][] = []
  for (let i = 0; i < t.feature.length; i++) if (t.feature[i] >= 0) out.push([t.feature[i], t.threshold[i], t.defaultLeft[i]])
  return out
}
function xgbSplitsOf(t: XgbTree): [number, number, number][] {
  const out: [number, number, number][] = []
  for (let i = 0; i < t.feature.length; i++) if (t.feature[i] >= 0) out.push([t.feature[i], Math.fround(t.threshold[i]), t.defaultLeft[i]])
  return out
}

describe('against XGBoost 1.7 (hist, 1 thread)', () => {
  const unavailable = (ctx: { skip: (note?: string) => never }) => {
    if (skipWithout('xgboost', version !== null, `${pythonForXgboost()} cannot import xgboost (apt-get install python3-xgboost)`))
      ctx.skip('python3 lacks xgboost')
  }

  it('≤ 256 distinct values per feature, no sampling: test MSE within 1e-4 relative, first tree equal', (ctx) => {
    unavailable(ctx)
    const all = syntheticRegression({ rows: 3000, features: 16, seed: 21, levels: 200 })
    const [train, test] = splitRows(all, 2400)
    for (const r of compare(train, test)) {
      expect(Math.abs(r.mse - r.xgbMse) / r.xgbMse).toBeLessThan(1e-4)
      expect(splitsOf(r.model.trees[0])).toEqual(xgbSplitsOf(r.xgbTree))
    }
  })

  it('the same with missing values (learned default directions)', (ctx) => {
    unavailable(ctx)
    const all = syntheticRegression({ rows: 3000, features: 16, seed: 22, levels: 50, missing: 0.1 })
    const [train, test] = splitRows(all, 2400)
    for (const r of compare(train, test)) {
      expect(Math.abs(r.mse - r.xgbMse) / r.xgbMse).toBeLessThan(1e-4)
      expect(splitsOf(r.model.trees[0])).toEqual(xgbSplitsOf(r.xgbTree))
    }
  })

  it('continuous features (quantile sketch, 12 000 training rows): test MSE within 1 %', (ctx) => {
    unavailable(ctx)
    const all = syntheticRegression({ rows: 15000, features: 10, seed: 23 })
    const [train, test] = splitRows(all, 12000)
    for (const r of compare(train, test)) {
      expect(Math.abs(r.mse - r.xgbMse) / r.xgbMse).toBeLessThan(0.01)
      // our sketch is a port of XGBoost's, so the cuts (hence the first tree) agree too
      expect(splitsOf(r.model.trees[0])).toEqual(xgbSplitsOf(r.xgbTree))
    }
  })
})
