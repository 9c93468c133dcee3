// Early stopping's contract: the rule (XGBoost's early_stopping_rounds), the validation rows, the
// classes a validation tail must hold, the rounds counted against the grid's, and every refusal of
// the config naming its field and what is accepted.
import { describe, expect, it } from 'vitest'
import { gbdtFamily } from '../families/gbdt'
import { BenchConfigSchema, presetConfig } from './config'
import { classesMissingFrom, EarlyStopping, heldOutRowsFor, roundsTrainedShare, validationRowCount, validationRows } from './early-stopping'
import { workloadFor } from './workload'

describe('the rule', () => {
  it('stops after `patience` rounds without a strictly better value, keeping the first best round', () => {
    const rule = new EarlyStopping(2, 'mse')
    // round:          1    2    3    4 (tie: not better)  5 → stop
    const stops = [1.0, 0.5, 0.7, 0.5].map((v) => rule.record(v))
    expect(stops).toEqual([false, false, false, true])
    expect(rule.outcome).toEqual({ roundsTrained: 4, bestRound: 2 })
    expect(rule.bestValue).toBe(0.5)
  })

  it("follows the metric's direction, and a NaN never improves", () => {
    const accuracy = new EarlyStopping(1, 'accuracy')
    expect([0.6, 0.7, 0.65].map((v) => accuracy.record(v))).toEqual([false, false, true])
    expect(accuracy.outcome).toEqual({ roundsTrained: 3, bestRound: 2 })
    const nan = new EarlyStopping(2, 'logloss')
    expect([0.4, NaN, NaN].map((v) => nan.record(v))).toEqual([false, false, true])
    expect(nan.bestRound).toBe(1)
  })
})

describe('the validation rows', () => {
  it('are the last ⌈fraction · train⌉ training rows, the product rounded first', () => {
    expect(validationRowCount(30, 0.1)).toBe(3)
    expect(validationRowCount(31, 0.1)).toBe(4)
    expect(validationRows(400, 0.2)).toEqual({ begin: 320, end: 400 })
  })

  it("are a fold's held-out rows with folds, the validation tail without, none otherwise", () => {
    const set = { grid: {}, seeds: 1, folds: 4 }
    expect(heldOutRowsFor({ set }, 100, 2)).toEqual({ begin: 50, end: 75 })
    expect(heldOutRowsFor({ validation: 0.1 }, 100, 7)).toEqual({ begin: 90, end: 100 })
    expect(heldOutRowsFor({}, 100, 0)).toBeNull()
  })

  it('name a class the training rows hold and the held-out rows do not', () => {
    const y = [0, 1, 2, 0, 1, 0, 0]
    expect(classesMissingFrom(y, { begin: 5, end: 7 }, 3)).toEqual([1, 2])
    expect(classesMissingFrom(y, { begin: 2, end: 5 }, 3)).toEqual([])
    // a class no training row holds is not the validation's to hold
    expect(classesMissingFrom([0, 1, 0, 1], { begin: 2, end: 4 }, 3)).toEqual([])
  })
})

describe('the rounds trained against the grid', () => {
  it("sums each model's rounds trained and its configuration's rounds", () => {
    const config = presetConfig('smoke', {
      model: { kind: 'gbdt', rounds: 50 } as never,
      set: { grid: { rounds: [50, 100] }, seeds: 1, folds: 2 },
      models: [4],
    })
    const perModel = [
      { index: 0, roundsTrained: 10 },
      { index: 1, roundsTrained: 20 },
      { index: 2, roundsTrained: 30 },
      { index: 3, roundsTrained: 100 },
    ]
    expect(roundsTrainedShare(gbdtFamily, config, perModel)).toEqual({ trained: 160, grid: 300 })
    expect(roundsTrainedShare(gbdtFamily, config, [{ index: 0 }])).toBeNull()
  })

  it('the workload carries the patience, the metric watched and the validation fraction', () => {
    const config = presetConfig('smoke', { model: { kind: 'gbdt' } as never, earlyStopping: 5, validation: 0.2, target: 'binary' })
    const w = workloadFor(config, 2000, undefined, { objective: 'binary', classes: ['0', '1'], metric: 'auc' })
    expect(w.earlyStopping).toEqual({ rounds: 5, metric: 'auc' })
    expect(w.validation).toBe(0.2)
    expect(workloadFor(presetConfig('smoke'), 2000).earlyStopping).toBeUndefined()
  })
})

describe('bad input, refused naming the field', () => {
  const issues = (overrides: Parameters<typeof presetConfig>[1]) => {
    const parsed = BenchConfigSchema.safeParse(presetConfig('smoke', { model: { kind: 'gbdt' } as never, backend: 'cpu', ...overrides }))
    return parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }))
  }

  it('accepts early stopping with a validation fraction, or with folds', () => {
    expect(issues({ earlyStopping: 10, validation: 0.2 })).toEqual([])
    expect(issues({ earlyStopping: 10, set: { grid: {}, seeds: 1, folds: 4 }, models: [4] })).toEqual([])
    expect(issues({ earlyStopping: 10, validation: 0.2, backend: 'xgboost', strategies: ['sequential'] })).toEqual([])
  })

  it('early stopping with no held-out rows', () => {
    expect(issues({ earlyStopping: 10 })).toEqual([
      {
        path: 'earlyStopping',
        message: expect.stringMatching(
          /^earlyStopping 10 watches .* holds none out; accepted: with folds \(2 to 10\) or a validation fraction \(0\.05 to 0\.5\)$/,
        ),
      },
    ])
  })

  it('a validation fraction with folds, out of range, or leaving no training rows', () => {
    expect(issues({ validation: 0.2, set: { grid: {}, seeds: 1, folds: 4 }, models: [4] })).toEqual([
      { path: 'validation', message: expect.stringMatching(/^validation 0\.2 holds rows out only without folds: .*accepted: folds or validation, not both$/) },
    ])
    expect(issues({ validation: 0.7 })).toEqual([{ path: 'validation', message: 'validation must be from 0.05 to 0.5' }])
    expect(issues({ validation: 0.5, sizes: [2], testSplit: 0.5 })).toEqual([
      { path: 'validation', message: expect.stringMatching(/^validation 0\.5 holds out 1 of the 1 training rows of size 2, leaving none to train on/) },
    ])
  })

  it('a patience out of range', () => {
    expect(issues({ earlyStopping: 0, validation: 0.2 })).toEqual([{ path: 'earlyStopping', message: expect.stringMatching(/^earlyStopping must be/) }])
    expect(issues({ earlyStopping: 1001, validation: 0.2 }).map((i) => i.path)).toEqual(['earlyStopping'])
  })

  it('every trees backend stops early (the WGSL trees too), and every MLP backend, auto included', () => {
    for (const backend of ['cpu', 'webgpu']) expect(issues({ earlyStopping: 5, validation: 0.2, backend: backend as never }), backend).toEqual([])
    // the MLP: its tfjs, ONNX and WGSL engines all stop early, so auto may pick any
    const mlp = (backend: string) => BenchConfigSchema.safeParse(presetConfig('smoke', { earlyStopping: 5, validation: 0.2, backend: backend as never }))
    for (const backend of ['tensorflow', 'webgpu', 'onnxruntime', 'wasm', 'cpu', 'auto']) expect(mlp(backend).error?.issues, backend).toBeUndefined()
    // the trees' auto picks only cpu, which can
    expect(issues({ earlyStopping: 5, validation: 0.2, backend: 'auto' })).toEqual([])
  })
})
