import { describe, expect, it } from 'vitest'
import { foldRows } from '@shared/contract'
import { generateDataset } from './generated'
import { stratifyTrainingRows } from './dataset'

const spec = (objective: 'binary' | 'multiclass', classes: number, size = 3000) => ({
  size,
  features: 30,
  seed: 11,
  target: objective,
  testSplit: 0.2,
  task: { objective, classes },
})

const counts = (y: ArrayLike<number>, K: number, begin = 0, end = y.length) => {
  const c = new Array<number>(K).fill(0)
  for (let r = begin; r < end; r++) c[y[r]]++
  return c
}

describe('generated classification data (make_classification-like)', () => {
  it('labels are class indices in about equal shares, seeded, with informative features', () => {
    const d = generateDataset(spec('multiclass', 5))
    const all = [...d.yTrain, ...d.yTest]
    expect(new Set(all)).toEqual(new Set([0, 1, 2, 3, 4]))
    for (const n of counts(all, 5)) expect(n).toBeGreaterThan(540) // 600 each, 1 % flipped at random
    expect(generateDataset(spec('multiclass', 5)).yTrain).toEqual(d.yTrain)
    expect(generateDataset({ ...spec('multiclass', 5), seed: 12 }).yTrain).not.toEqual(d.yTrain)
    // the classes differ in the informative features (the first 10) and not in the noise ones
    const meanOf = (f: number, k: number) => {
      let s = 0
      let n = 0
      for (let r = 0; r < d.train; r++) {
        if (d.yTrain[r] !== k) continue
        s += d.xTrain[r * 30 + f]
        n++
      }
      return s / n
    }
    const spread = (f: number) => Math.max(...[0, 1, 2, 3, 4].map((k) => meanOf(f, k))) - Math.min(...[0, 1, 2, 3, 4].map((k) => meanOf(f, k)))
    const informative = [...Array(10).keys()].map(spread)
    const noise = [...Array(20).keys()].map((f) => spread(f + 10))
    expect(Math.max(...informative)).toBeGreaterThan(1)
    expect(Math.max(...noise)).toBeLessThan(0.3)
  })

  it('binary labels are 0/1', () => {
    const d = generateDataset(spec('binary', 2))
    expect(new Set(d.yTrain)).toEqual(new Set([0, 1]))
  })
})

describe('stratified folds', () => {
  it('every contiguous fold keeps every class in its proportion (±1 row a class), whatever K', () => {
    const d = generateDataset(spec('multiclass', 5, 2003))
    const whole = counts(d.yTrain, 5)
    for (const K of [2, 3, 5, 7, 10]) {
      for (let f = 0; f < K; f++) {
        const { begin, end } = foldRows(d.train, K, f)
        const share = counts(d.yTrain, 5, begin, end)
        share.forEach((n, c) => expect(Math.abs(n - (whole[c] * (end - begin)) / d.train)).toBeLessThanOrEqual(1.5))
      }
    }
  })

  it('an unbalanced set: the rare class lands in every fold', () => {
    const train = 100
    const y = new Float32Array(train)
    for (let r = 0; r < 10; r++) y[r * 7] = 1 // 10 rare rows, clustered at the front
    const x = new Float32Array(train).map((_, r) => r)
    stratifyTrainingRows(x, y, train, 1, 2)
    for (let f = 0; f < 5; f++) {
      const { begin, end } = foldRows(train, 5, f)
      expect(counts(y, 2, begin, end)[1]).toBe(2)
    }
    // rows move with their labels
    for (let r = 0; r < train; r++) expect(y[r]).toBe(x[r] % 7 === 0 && x[r] < 70 ? 1 : 0)
  })
})
