// Successive halving's rule (halving.ts): the rungs' arithmetic, the default first rung, the
// promotion (direction, NaN last, ties by configuration index), and every refusal naming its field.
import { describe, expect, it } from 'vitest'
import { gbdtFamily } from '../families/gbdt'
import { mlpFamily } from '../families/mlp'
import { BenchConfigSchema, presetConfig } from './config'
import { defaultMinRounds, describeRungs, halvingRungs, promote, rungsShare } from './halving'
import type { ModelSet } from './model-set'
import { workloadFor } from './workload'
import { ToWorkerSchema } from './worker-socket'

describe('the rungs', () => {
  it('r·η^i rounds to the full rounds, ⌈n/η⌉ configurations a rung, the rung with one configuration left the last', () => {
    expect(halvingRungs(100, 54, 3, 3)).toEqual([
      { rounds: 3, configurations: 54 },
      { rounds: 9, configurations: 18 },
      { rounds: 27, configurations: 6 },
      { rounds: 81, configurations: 2 },
      { rounds: 100, configurations: 1 },
    ])
    // the full rounds reached before one configuration is left: that rung is the last
    expect(halvingRungs(20, 27, 3, 5)).toEqual([
      { rounds: 5, configurations: 27 },
      { rounds: 15, configurations: 9 },
      { rounds: 20, configurations: 3 },
    ])
    expect(halvingRungs(10, 4, 2, 10)).toEqual([{ rounds: 10, configurations: 4 }])
  })

  it('defaults the first rung to the longest whose search trains at most 1/η of the grid’s rounds, at least 1', () => {
    // 54 × 16 → 18 × 48 → 6 × 100: 864 + 576 + 312 = 1 752 of 5 400 rounds (32.4 %); 17 would train 1 824 (33.8 %)
    expect(defaultMinRounds(100, 54, 3)).toBe(16)
    expect(rungsShare(halvingRungs(100, 54, 3, 16))).toBeCloseTo(1752 / 5400, 12)
    expect(rungsShare(halvingRungs(100, 54, 3, 17))).toBeGreaterThan(1 / 3)
    // a factor of 2 allows half the grid: 8 configurations × 25 → 4 × 50 → 2 × 100 is 200 + 100 + 100 = 400 of 800
    expect(defaultMinRounds(100, 8, 2)).toBe(25)
    expect(rungsShare(halvingRungs(100, 8, 2, 26))).toBeGreaterThan(1 / 2)
    // two configurations and η 3: one rung before the last can never stay within a third: the shortest, 1
    expect(defaultMinRounds(100, 2, 3)).toBe(1)
    expect(defaultMinRounds(5, 1000, 2)).toBe(1)
  })

  it('says the rungs in one line', () => {
    expect(
      describeRungs([
        { rounds: 3, configurations: [0, 1, 2] },
        { rounds: 9, configurations: [2] },
      ]),
    ).toBe('3 configurations × 3 rounds → 1 × 9 rounds')
  })
})

describe('promotion', () => {
  const set: ModelSet = { grid: { eta: [0.1, 0.2, 0.3, 0.4] }, seeds: 1, folds: 2 }
  /** model index → its validation MSE (configuration c's models are 2c and 2c + 1) */
  const scores = (values: number[]) => new Map(values.map((v, index) => [index, { index, validationMse: v }]))

  it('keeps the best by the mean over each configuration’s models, in the metric’s direction, in configuration order', () => {
    const perModel = scores([4, 4, 1, 3, 2, 2, 9, 0])
    // means: 4, 2, 2, 4.5 → MSE (lower is better): 1 and 2 tie at 2, configuration 1 first
    expect(promote(set, [0, 1, 2, 3], perModel, 'mse', 1)).toEqual([1])
    expect(promote(set, [0, 1, 2, 3], perModel, 'mse', 3)).toEqual([0, 1, 2])
    // accuracy (higher is better) turns the order round
    const acc = new Map([...perModel].map(([i, p]) => [i, { index: i, validationMetrics: { accuracy: p.validationMse } }]))
    expect(promote(set, [0, 1, 2, 3], acc, 'accuracy', 1)).toEqual([3])
  })

  it('a tie is broken by configuration index, a NaN mean ranks last', () => {
    const perModel = scores([1, 1, 1, 1, NaN, 0, 1, 1])
    expect(promote(set, [3, 2, 1, 0], perModel, 'mse', 3)).toEqual([0, 1, 3])
  })
})

describe('refused, naming the field', () => {
  const set: ModelSet = { grid: { eta: [0.1, 0.3] }, seeds: 1, folds: 2 }
  const base = (over: Record<string, unknown>) =>
    presetConfig('smoke', {
      backend: 'cpu',
      models: [2 * 2],
      set,
      search: { method: 'halving', factor: 3 },
      model: { kind: 'gbdt', rounds: 20 } as never,
      ...over,
    } as never)
  const issues = (over: Record<string, unknown>) => {
    const parsed = BenchConfigSchema.safeParse(base(over))
    return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
  }

  it('a valid halving search passes, with its factor defaulted', () => {
    expect(issues({})).toEqual([])
    expect(BenchConfigSchema.parse(base({ search: { method: 'halving' } })).search).toEqual({ method: 'halving', factor: 3 })
  })

  it('factor 1, a first rung above the rounds', () => {
    expect(issues({ search: { method: 'halving', factor: 1 } })).toEqual(['search.factor: factor must be an integer from 2 to 10'])
    expect(issues({ search: { method: 'halving', factor: 3, minRounds: 21 } })).toEqual([
      "search.minRounds: minRounds 21 is above the model's 20 rounds; accepted: 1 to 20 (the last rung ends at the full rounds)",
    ])
  })

  it('one configuration, no held-out rows', () => {
    expect(issues({ set: { grid: {}, seeds: 2, folds: 2 }, models: [4] })).toEqual([
      expect.stringMatching(/^search.method: search halving ranks configurations and this run has 1: accepted: a model set with two or more configurations/),
    ])
    expect(issues({ set: { ...set, folds: null }, models: [2] })).toEqual([
      expect.stringMatching(/^search.method: search halving ranks configurations by their validation metric on held-out rows, and this run holds none out/),
    ])
    // a validation fraction is held-out rows too
    expect(issues({ set: { ...set, folds: null }, models: [2], validation: 0.2 })).toEqual([])
  })

  it('rounds as a grid axis, early stopping beside it', () => {
    expect(issues({ set: { grid: { rounds: [10, 20] }, seeds: 1, folds: 2 } })).toEqual([
      expect.stringMatching(/^search.method: search halving decides how many rounds each configuration trains \(its rungs\), so rounds cannot be a grid axis/),
    ])
    expect(issues({ earlyStopping: 3 })).toEqual([expect.stringMatching(/^search.method: search halving continues each model from its last round/)])
  })

  it('every trees backend continues a model (the WGSL trees too); a family without rounds cannot', () => {
    expect(issues({ backend: 'webgpu' })).toEqual([])
    // xgboost continues its boosters (XGBoost's own saved model, engine/xgboost)
    expect(issues({ backend: 'xgboost', strategies: ['sequential', 'pool'] })).toEqual([])
    const mlp = presetConfig('smoke', {
      backend: 'cpu',
      models: [4],
      set: { grid: { lr: [0.01, 0.1] }, seeds: 1, folds: 2 },
      search: { method: 'halving', factor: 3 },
    } as never)
    const parsed = BenchConfigSchema.safeParse(mlp)
    expect(parsed.success ? [] : parsed.error.issues.map((i) => i.message)).toEqual([
      `search halving: the ${mlpFamily.label} family does not train in rounds that a rung could continue; accepted: search grid`,
    ])
    expect(gbdtFamily.withRounds!({ ...gbdtFamily.defaults, rounds: 100 }, 9).rounds).toBe(9)
  })
})

describe('a rung’s job crosses the worker socket validated', () => {
  const config = presetConfig('smoke', {
    backend: 'cpu',
    models: [4],
    set: { grid: { eta: [0.1, 0.3] }, seeds: 1, folds: 2 },
    search: { method: 'halving', factor: 3 },
    earlyStopping: undefined,
    model: { kind: 'gbdt', rounds: 20 } as never,
  } as never)
  const leaf = { feature: [-1], threshold: [0], defaultLeft: [0], left: [-1], leafValue: [0.25] }
  const job = (resume: unknown) => ({ type: 'job', jobId: 1, workload: workloadFor(config, 2000), modelIndices: [2, 3], fused: true, keep: true, resume })

  it('takes each model’s trees so far, checked like every artifact', () => {
    const artifact = { format: 'gbdt-trees', features: 10, baseScore: 0.5, trees: [leaf, leaf] }
    expect(ToWorkerSchema.safeParse(job([{ index: 2, rounds: 2, artifact }])).success).toBe(true)
    // a crafted tree (a child index outside it) and a resume state without its rounds are refused
    expect(ToWorkerSchema.safeParse(job([{ index: 2, rounds: 2, artifact: { ...artifact, trees: [{ ...leaf, feature: [0], left: [7] }] } }])).success).toBe(
      false,
    )
    expect(ToWorkerSchema.safeParse(job([{ index: 2, artifact }])).success).toBe(false)
  })

  it('carries early stopping and a validation fraction in the workload', () => {
    const stopping = { ...job(undefined), workload: { ...workloadFor(config, 2000), earlyStopping: { rounds: 3, metric: 'mse' }, validation: 0.2 } }
    expect(ToWorkerSchema.safeParse(stopping).success).toBe(true)
  })
})
