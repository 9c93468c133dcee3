// Classifiers: binary:logistic and multi:softprob on the CPU engine — XGBoost 1.7's arithmetic on
// cases small enough to do by hand, K trees a round in round-major order, the same trees in every
// strategy (batched == alone, any tree group, a tiny histogram budget, either kernel, folds held
// out), probabilities, the hash and the artifact saying what the model is, and the refusals.
import { describe, expect, it } from 'vitest'
import { gbdtMemory } from '@shared/families/gbdt'
import {
  type GbdtParams,
  type GbdtPerModelParams,
  initialMargin,
  predictGbdt,
  predictGbdtOutputs,
  prepareGbdtData,
  trainGbdt,
  trainGbdtGroup,
  treeHash,
  treesArtifact,
} from './index'
import { sigmoidF32, softmaxF32 } from './objective'
import { leafWeight } from './rules'
import { splitRows, syntheticClassification } from './synthetic'

const f32 = Math.fround
const BINARY = { objective: 'binary', classes: 2 } as const
const THREE = { objective: 'multiclass', classes: 3 } as const

const noSampling: Partial<GbdtParams> = { subsample: 1, colsampleBytree: 1 }

describe('by hand: one round on a toy set', () => {
  // x = [0, 0, 1, 1], y = [0, 0, 1, 1]. Binary, base 0.5: margin 0, p = 0.5, g = p − y = ±0.5, h = 0.25.
  const x = Float32Array.from([0, 0, 1, 1])
  const data = prepareGbdtData(x, Float32Array.from([0, 0, 1, 1]), 4, 1, 256)

  it('binary: leaves eta·w with w = −G/(H + λ), G and H from p(1 − p)', () => {
    const m = trainGbdt(data, { ...noSampling, rounds: 1, maxDepth: 1, eta: 0.3, minChildWeight: 0.5 }, 1, { task: BINARY })
    const t = m.trees[0]
    expect(Array.from(t.feature)).toEqual([0, -1, -1])
    expect(t.leafValue[1]).toBe(f32(leafWeight(1, 0.5, 1, 0, 0.5) * f32(0.3))) // left: G = 0.5 + 0.5, H = 0.25 + 0.25
    expect(t.leafValue[2]).toBe(f32(leafWeight(-1, 0.5, 1, 0, 0.5) * f32(0.3)))
    // min_child_weight compares the hessian sum (0.5 a side), not the rows (2 a side)
    expect(trainGbdt(data, { ...noSampling, rounds: 1, maxDepth: 1, minChildWeight: 0.6 }, 1, { task: BINARY }).trees[0].feature.length).toBe(1)
    expect(trainGbdt(data, { ...noSampling, rounds: 1, maxDepth: 1, minChildWeight: 0.5 }, 1, { task: BINARY }).trees[0].feature.length).toBe(3)
    // outputs: sigmoid of the margin, in float32
    const p = predictGbdtOutputs(m, x, 4)
    expect(p[0]).toBe(sigmoidF32(f32(0 + t.leafValue[1])))
    expect(p[3]).toBe(sigmoidF32(f32(0 + t.leafValue[2])))
    expect(p[0]).toBeLessThan(0.5)
    expect(p[3]).toBeGreaterThan(0.5)
  })

  it('binary: the initial margin is logit(baseScore), and baseScore outside (0, 1) is refused naming it', () => {
    expect(initialMargin('binary', 0.5)).toBe(-0) // −logf(1/0.5 − 1), as XGBoost
    expect(initialMargin('binary', 0.8)).toBe(f32(-f32(Math.log(f32(f32(1 / f32(0.8)) - 1)))))
    const m = trainGbdt(data, { ...noSampling, rounds: 1, maxDepth: 1, minChildWeight: 0, baseScore: 0.8 }, 1, { task: BINARY })
    expect(predictGbdt(m, Float32Array.from([0]), 1)[0]).toBe(f32(initialMargin('binary', 0.8) + m.trees[0].leafValue[1]))
    for (const baseScore of [0, 1, 1.5, -0.2]) {
      expect(() => trainGbdt(data, { baseScore }, 1, { task: BINARY })).toThrow(/baseScore must be a probability in \(0, 1\).*got/)
    }
  })

  it('multiclass: K trees a round, tree t for class t mod K; base score added to every margin as is; g = p − [y = k], h = 2p(1 − p)', () => {
    // 3 classes, labels [0, 1, 2, 2]; base 0.5 everywhere → p = 1/3 for every class
    const x3 = Float32Array.from([0, 1, 2, 2])
    const d3 = prepareGbdtData(x3, Float32Array.from([0, 1, 2, 2]), 4, 1, 256)
    const m = trainGbdt(d3, { ...noSampling, rounds: 2, maxDepth: 1, eta: 1, lambda: 0, minChildWeight: 0 }, 1, { task: THREE })
    expect(m.trees.length).toBe(6)
    expect([m.objective, m.classes]).toEqual(['multiclass', 3])
    const p = f32(f32(1) / f32(3)) // expf(0)/3 in float32
    const h = f32(f32(2 * p) * f32(1 - p))
    // class 2's first tree: rows with y = 2 (x = 2) apart from the others; right leaf: G = 2(p − 1), H = 2h
    const t2 = m.trees[2]
    expect(t2.feature[0]).toBe(0)
    const right = f32(-(2 * f32(p - 1)) / (2 * h))
    expect(t2.leafValue[2]).toBeCloseTo(right, 5) // the sums are quantised (30 bits), so to a float32 ulp or so
    // margins: every class starts at 0.5 and gets its own trees only
    const margins = predictGbdt(m, x3, 4)
    expect(margins.length).toBe(12)
    for (let r = 0; r < 4; r++) {
      for (let k = 0; k < 3; k++) {
        let v = f32(0.5)
        for (let t = k; t < 6; t += 3) {
          const tree = m.trees[t]
          const node = tree.feature[0] < 0 ? 0 : x3[r] < tree.threshold[0] ? tree.left[0] : tree.left[0] + 1
          v = f32(v + tree.leafValue[node])
        }
        expect(margins[r * 3 + k]).toBe(v)
      }
    }
    // outputs: softmax rows that sum to 1, the right class most likely
    const out = predictGbdtOutputs(m, x3, 4)
    const ref = margins.slice()
    for (let r = 0; r < 4; r++) softmaxF32(ref, r * 3, 3)
    expect(Array.from(out)).toEqual(Array.from(ref))
    for (let r = 0; r < 4; r++) {
      expect(out[r * 3] + out[r * 3 + 1] + out[r * 3 + 2]).toBeCloseTo(1, 6)
      const label = [0, 1, 2, 2][r]
      expect(out[r * 3 + label]).toBeGreaterThan(0.5)
    }
  })
})

describe('refusals', () => {
  const data = prepareGbdtData(Float32Array.from([0, 1, 2]), Float32Array.from([0, 1, 2]), 3, 1, 256)
  it('labels that are not class indices, and class counts outside the objective', () => {
    expect(() => trainGbdt(data, {}, 1, { task: BINARY })).toThrow('a binary label must be a class index 0 … 1, row 2 has 2')
    expect(() => trainGbdt(data, {}, 1, { task: { objective: 'binary', classes: 3 } })).toThrow('a binary task has 2 classes, got 3')
    expect(() => trainGbdt(data, {}, 1, { task: { objective: 'multiclass', classes: 2 } })).toThrow('a multiclass task has 3 to 32 classes, got 2')
    const half = prepareGbdtData(Float32Array.from([0, 1]), Float32Array.from([0, 0.5]), 2, 1, 256)
    expect(() => trainGbdt(half, {}, 1, { task: THREE })).toThrow('a multiclass label must be a class index 0 … 2, row 1 has 0.5')
  })
})

describe('same work in every strategy', () => {
  for (const task of [BINARY, { objective: 'multiclass', classes: 4 } as const]) {
    const all = syntheticClassification({ rows: 1500, features: 12, seed: 13, missing: 0.05, classes: task.classes })
    const [train, test] = splitRows(all, 1200)
    const data = prepareGbdtData(train.x, train.y, train.rows, train.features, 64)
    const params: Partial<GbdtParams> = { rounds: 8, maxDepth: 5, maxBin: 64, subsample: 0.8, colsampleBytree: 0.7 }
    const seeds = [2, 3, 4, 5]
    const perModel: GbdtPerModelParams[] = [{}, { maxDepth: 3, eta: 0.3 }, { rounds: 5, lambda: 0, minChildWeight: 0 }, { subsample: 1, alpha: 0.5 }]
    const heldOut = [null, { begin: 0, end: 300 }, null, { begin: 900, end: 1200 }]
    const alone = seeds.map((s, i) => trainGbdt(data, { ...params, ...perModel[i] }, s, { task, heldOut: [heldOut[i]] }))
    const hashes = alone.map(treeHash)

    it(`${task.objective}: batched == alone, bit for bit (per-model parameters, folds held out), in any tree group and histogram budget, with either kernel`, () => {
      expect(new Set(hashes).size).toBe(seeds.length)
      expect(trainGbdtGroup(data, params, seeds, { task, perModel, heldOut }).map(treeHash)).toEqual(hashes)
      for (const treeGroup of [1, 3]) expect(trainGbdtGroup(data, params, seeds, { task, perModel, heldOut, treeGroup }).map(treeHash)).toEqual(hashes)
      const slots = data.width.reduce((s, w) => s + w, 0)
      expect(trainGbdtGroup(data, params, seeds, { task, perModel, heldOut, histogramBudgetBytes: 3 * slots * 16 }).map(treeHash)).toEqual(hashes)
      expect(trainGbdtGroup(data, params, seeds, { task, perModel, heldOut, kernel: 'ts' }).map(treeHash)).toEqual(hashes)
      expect(
        trainGbdtGroup(data, params, seeds.slice().reverse(), { task, perModel: perModel.slice().reverse(), heldOut: heldOut.slice().reverse() })
          .map(treeHash)
          .reverse(),
      ).toEqual(hashes)
    })

    it(`${task.objective}: a fold's held-out labels change no bit of its trees`, () => {
      const y = train.y.slice()
      for (let r = 0; r < 300; r++) y[r] = (y[r] + 1) % task.classes
      const other = prepareGbdtData(train.x, y, train.rows, train.features, 64, data.cuts)
      expect(treeHash(trainGbdt(other, { ...params, ...perModel[1] }, seeds[1], { task, heldOut: [heldOut[1]] }))).toBe(hashes[1])
    })

    it(`${task.objective}: probabilities that learn (test log loss well below the prior's), K trees a round`, () => {
      const K = task.classes
      for (const [i, m] of alone.entries()) {
        const rounds = perModel[i].rounds ?? params.rounds!
        expect(m.trees.length).toBe(rounds * (task.objective === 'multiclass' ? K : 1))
        const out = predictGbdtOutputs(m, test.x, test.rows)
        let loss = 0
        for (let r = 0; r < test.rows; r++) {
          const p = task.objective === 'binary' ? (test.y[r] === 1 ? out[r] : 1 - out[r]) : out[r * K + test.y[r]]
          expect(p).toBeGreaterThan(0)
          expect(p).toBeLessThan(1)
          loss -= Math.log(p)
        }
        expect(loss / test.rows).toBeLessThan(0.95 * Math.log(K))
      }
    })
  }
})

describe('what a classifier says it is', () => {
  const all = syntheticClassification({ rows: 400, features: 5, seed: 3, classes: 2 })
  const data = prepareGbdtData(all.x, all.y, all.rows, all.features, 256)
  const p = { ...noSampling, rounds: 3 }

  it('its hash includes the objective (a regressor with the same trees hashes differently); a regressor trained with task regression is the regressor', () => {
    const m = trainGbdt(data, p, 1, { task: BINARY })
    const asRegressor = { ...m, objective: undefined, classes: undefined }
    expect(treeHash(asRegressor)).not.toBe(treeHash(m))
    expect(treeHash(trainGbdt(data, p, 1, { task: { objective: 'regression', classes: 0 } }))).toBe(treeHash(trainGbdt(data, p, 1)))
    expect(trainGbdt(data, p, 1).objective).toBeUndefined()
  })

  it('its artifact carries objective and K, baseScore as XGBoost takes it (a probability); a regressor artifact has neither', () => {
    const a = treesArtifact(trainGbdt(data, { ...p, baseScore: 0.3 }, 1, { task: BINARY }))
    expect([a.objective, a.classes, a.baseScore]).toEqual(['binary', 2, f32(0.3)])
    const r = treesArtifact(trainGbdt(data, p, 1))
    expect('objective' in r || 'classes' in r).toBe(false)
  })

  it('the memory model counts a K-class model as K trees a round (regression unchanged)', () => {
    const q = { rows: 8000, features: 100, models: 4 }
    const reg = gbdtMemory(q)
    expect(gbdtMemory({ ...q, task: { objective: 'regression', classes: 0 } })).toEqual(reg)
    const five = gbdtMemory({ ...q, task: { objective: 'multiclass', classes: 5 } })
    expect(five.perModelBytes).toBeGreaterThan(5 * reg.perModelBytes)
    expect(five.histogramUnboundedBytes).toBeGreaterThanOrEqual(reg.histogramUnboundedBytes)
  })
})
