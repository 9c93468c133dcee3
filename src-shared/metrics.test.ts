import { describe, expect, it } from 'vitest'
import { metricValue, rocAuc, scoreOutputs, softmaxInPlace, validationMetricValue } from './metrics'

// references computed with scikit-learn 1.2 (log_loss, roc_auc_score, accuracy_score) on the same numbers
describe('scoreOutputs', () => {
  it('binary: log loss, accuracy, ROC AUC as scikit-learn 1.2, and the Brier score as mse', () => {
    const y = [0, 1, 1, 0, 1, 0, 1, 1]
    const p = [0.1, 0.8, 0.6, 0.4, 0.4, 0.2, 0.9, 0.6]
    const m = scoreOutputs({ objective: 'binary', classes: 2 }, p, y)
    expect(m.logloss).toBeCloseTo(0.38822196713952495, 12)
    expect(m.auc).toBeCloseTo(0.9666666666666668, 12)
    expect(m.accuracy).toBe(0.875)
    expect(m.mse).toBeCloseTo(p.reduce((s, v, i) => s + (v - y[i]) ** 2, 0) / y.length, 12)
  })

  it('multiclass: log loss and accuracy over K probabilities a row', () => {
    const y = [0, 1, 2, 2, 1]
    const P = [0.7, 0.2, 0.1, 0.1, 0.6, 0.3, 0.2, 0.2, 0.6, 0.3, 0.4, 0.3, 0.5, 0.25, 0.25]
    const m = scoreOutputs({ objective: 'multiclass', classes: 3 }, P, y)
    expect(m.logloss).toBeCloseTo(0.793718671383308, 12)
    expect(m.accuracy).toBe(0.6)
    expect(m.auc).toBeUndefined()
  })

  it('a probability of 0 for the true class is clipped, not infinite', () => {
    const m = scoreOutputs({ objective: 'binary', classes: 2 }, [0, 1], [1, 0])
    expect(m.logloss).toBeCloseTo(36.04365338911715, 6)
  })

  it('regression: mse only', () => {
    expect(scoreOutputs({ objective: 'regression', classes: 0 }, [1, 2], [0, 4])).toEqual({ mse: 2.5 })
  })

  it('AUC is left out when the rows hold one class (never stored as NaN)', () => {
    expect(scoreOutputs({ objective: 'binary', classes: 2 }, [0.2, 0.7], [1, 1]).auc).toBeUndefined()
  })
})

describe('rocAuc', () => {
  it('counts ties as half (Mann–Whitney)', () => {
    expect(rocAuc([0.5, 0.5], [0, 1])).toBe(0.5)
    expect(rocAuc([0.1, 0.9, 0.5, 0.5], [0, 1, 0, 1])).toBeCloseTo(0.875, 12)
  })
})

describe('metricValue', () => {
  it('reads a metric, and MSE from testMse in a run from before classifiers', () => {
    expect(metricValue({ testMse: 0.3 }, 'mse')).toBe(0.3)
    expect(metricValue({ testMse: 0.3, metrics: { logloss: 0.5 } }, 'logloss')).toBe(0.5)
    expect(metricValue({ testMse: 0.3 }, 'auc')).toBeNaN()
    expect(validationMetricValue({ validationMse: 0.2 }, 'mse')).toBe(0.2)
    expect(validationMetricValue({ validationMetrics: { accuracy: 0.9 } }, 'accuracy')).toBe(0.9)
  })
})

it('softmaxInPlace sums to one and keeps the order', () => {
  const m = new Float64Array([1, 2, 3, 1000, 1000, 0])
  softmaxInPlace(m, 0, 3)
  softmaxInPlace(m, 3, 3)
  expect(m[0] + m[1] + m[2]).toBeCloseTo(1, 12)
  expect(m[2]).toBeGreaterThan(m[1])
  expect(m[3]).toBeCloseTo(0.5, 12)
})

it('rocAuc is the pairwise definition (positives × negatives, ties half) on random scores with ties', () => {
  const rng = (seed: number) => () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32
  const next = rng(7)
  for (let t = 0; t < 100; t++) {
    const n = 2 + Math.floor(next() * 30)
    const s = Array.from({ length: n }, () => Math.floor(next() * 5) / 4)
    const y = Array.from({ length: n }, (_, i) => (i < 2 ? i : next() < 0.4 ? 1 : 0))
    let wins = 0
    let pairs = 0
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        if (y[i] !== 1 || y[j] !== 0) continue
        pairs++
        wins += s[i] > s[j] ? 1 : s[i] === s[j] ? 0.5 : 0
      }
    expect(rocAuc(s, y)).toBeCloseTo(wins / pairs, 12)
  }
})
