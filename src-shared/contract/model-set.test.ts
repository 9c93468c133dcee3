// The model set's rules: the documented order (configurations, then replicas, then folds), a
// configuration's parameters, folds over the training rows, and every bad input refused by the
// config schema naming its field and what is accepted.
import { describe, expect, it } from 'vitest'
import { gbdtFamily, mlpFamily } from '../families'
import { BenchConfigSchema, presetConfig } from './config'
import { fieldIssues } from '../vocabulary/errors'
import { configurationCount, configurationParams, describeConfiguration, describeMembers, foldRows, type ModelSet, setMember, setSize } from './model-set'

const set = (s: Partial<ModelSet>): ModelSet => ({ grid: {}, seeds: 1, folds: null, ...s })

describe('model set order', () => {
  it('enumerates configurations (last field fastest), then replicas, then folds', () => {
    const s = set({ grid: { maxDepth: [4, 6], eta: [0.1, 0.3] }, seeds: 2, folds: 3 })
    expect(configurationCount(s)).toBe(4)
    expect(setSize(s)).toBe(24)
    // the family's field order is rounds, maxDepth, eta: maxDepth first, eta fastest
    const params = [0, 1, 2, 3].map((c) => configurationParams(gbdtFamily, gbdtFamily.defaults, s, c))
    expect(params.map((p) => [p.maxDepth, p.eta])).toEqual([
      [4, 0.1],
      [4, 0.3],
      [6, 0.1],
      [6, 0.3],
    ])
    expect(params[3].lambda).toBe(gbdtFamily.defaults.lambda)
    expect([0, 1, 2, 3, 5, 6, 23].map((i) => setMember(s, i))).toEqual([
      { configuration: 0, replica: 0, fold: 0 },
      { configuration: 0, replica: 0, fold: 1 },
      { configuration: 0, replica: 0, fold: 2 },
      { configuration: 0, replica: 1, fold: 0 },
      { configuration: 0, replica: 1, fold: 2 },
      { configuration: 1, replica: 0, fold: 0 },
      { configuration: 3, replica: 1, fold: 2 },
    ])
    expect(setMember(set({ seeds: 3 }), 2)).toEqual({ configuration: 0, replica: 2, fold: null })
    expect(describeConfiguration(gbdtFamily, s, params[1])).toBe('max-depth 4 · eta 0.3')
  })

  it('varies a list field (hidden layers) by whole lists', () => {
    const s = set({ grid: { hidden: [[32], [64, 32]], lr: [0.01, 0.03] } })
    expect(configurationParams(mlpFamily, mlpFamily.defaults, s, 2)).toMatchObject({ hidden: [64, 32], lr: 0.01 })
    expect(describeConfiguration(mlpFamily, s, configurationParams(mlpFamily, mlpFamily.defaults, s, 1))).toBe('hidden 32 · lr 0.03')
  })

  it('splits the training rows into K contiguous folds that cover them once', () => {
    const rows = [0, 1, 2, 3, 4].map((f) => foldRows(23, 5, f))
    expect(rows[0].begin).toBe(0)
    expect(rows[4].end).toBe(23)
    for (let f = 1; f < 5; f++) expect(rows[f].begin).toBe(rows[f - 1].end)
    expect(rows.every((r) => r.end - r.begin >= 4)).toBe(true)
  })
})

describe('model set validation', () => {
  const trees = (s: Partial<ModelSet>, models?: number[]) =>
    presetConfig('smoke', { model: { kind: 'gbdt' }, set: set(s), models: models ?? [setSize(set(s))], workers: [1] })
  const issuesOf = (config: unknown) => {
    const r = BenchConfigSchema.safeParse(config)
    return r.success ? [] : fieldIssues(r.error, config)
  }

  it("accepts a grid, seeds and folds, with models the set's size", () => {
    expect(issuesOf(trees({ grid: { eta: [0.1, 0.3], maxDepth: [3, 5] }, seeds: 2, folds: 3 }))).toEqual([])
  })

  it('refuses each bad input naming its field and what is accepted', () => {
    const cases: [Partial<ModelSet>, number[] | undefined, string, RegExp][] = [
      [
        { grid: { baseScore: [0.1, 0.5] } },
        undefined,
        'set.grid.baseScore',
        /baseScore cannot vary in a gradient-boosted trees grid; accepted: rounds, maxDepth, eta/,
      ],
      [{ grid: { epochs: [1, 2] } }, undefined, 'set.grid.epochs', /epochs cannot vary/],
      [{ grid: { eta: [] } }, [1], 'set.grid.eta', /eta takes 1 to 16 values in a grid \(got 0\)/],
      [{ grid: { eta: [0.1, 0.1] } }, undefined, 'set.grid.eta.1', /eta lists 0.1 twice/],
      [{ grid: { eta: [0.1, 0] } }, undefined, 'set.grid.eta.1', /eta must be above 0 and at most 1/],
      [{ grid: { maxDepth: [2, 3.5] } }, undefined, 'set.grid.maxDepth.1', /maxDepth must be a whole number/],
      [{ seeds: 0 }, [1], 'set.seeds', /seeds must be an integer from 1 to 100/],
      [{ folds: 1 }, [1], 'set.folds', /folds must be an integer from 2 to 10/],
      [{ folds: 11 }, [11], 'set.folds', /folds must be an integer from 2 to 10/],
      [
        { grid: { eta: [0.1, 0.2, 0.3, 0.4] }, seeds: 100, folds: 5 },
        [1000],
        'set',
        /the model set makes 2000 models \(4 configurations × 100 seeds × 5 folds\), more than the limit of 1000/,
      ],
      [{ seeds: 2 }, [1, 2], 'models', /a model set and a model-count sweep do not combine/],
      [{ seeds: 2 }, [3], 'models', /models must be 2 for this model set \(1 configuration × 2 seeds\), got 3/],
    ]
    for (const [s, models, field, message] of cases) {
      const issues = issuesOf(trees(s, models))
      expect(
        issues.map((i) => i.field),
        JSON.stringify(s),
      ).toContain(field)
      expect(issues.find((i) => i.field === field)?.message, JSON.stringify(s)).toMatch(message)
    }
  })

  it('refuses more folds than a size has training rows', () => {
    const config = { ...trees({ folds: 10 }), sizes: [10], testSplit: 0.5 }
    expect(issuesOf(config).find((i) => i.field === 'set.folds')?.message).toMatch(/folds 10 is more than the 5 training rows of size 10/)
  })

  it('a list on a field that cannot take one, for the MLP', () => {
    const config = presetConfig('smoke', { set: set({ grid: { hidden: [64, 32] } }), models: [2], workers: [1] })
    expect(issuesOf(config).map((i) => i.field)).toContain('set.grid.hidden.0')
  })
})

describe("a lane's models in words", () => {
  it("names the shared configuration, and a single model's seed and fold", () => {
    const s = set({ grid: { maxDepth: [4, 6], eta: [0.1, 0.3] }, seeds: 2, folds: 3 })
    expect(describeMembers(gbdtFamily, s, gbdtFamily.defaults, [23])).toBe('max-depth 6 · eta 0.3 · seed 2 · fold 3')
    expect(describeMembers(gbdtFamily, s, gbdtFamily.defaults, [0, 1, 2, 3])).toBe('max-depth 4 · eta 0.1')
  })

  it('names the configurations a batched lane fuses: how many, and the values of each varied field among them', () => {
    const s = set({ grid: { maxDepth: [4, 6], eta: [0.1, 0.3] }, seeds: 2, folds: 3 })
    // models 5 and 6: the last of configuration 0 (depth 4, eta 0.1), the first of configuration 1 (depth 4, eta 0.3)
    expect(describeMembers(gbdtFamily, s, gbdtFamily.defaults, [5, 6])).toBe('2 configurations: max-depth 4 · eta 0.1,0.3')
    expect(
      describeMembers(
        gbdtFamily,
        s,
        gbdtFamily.defaults,
        Array.from({ length: 24 }, (_, i) => i),
      ),
    ).toBe('4 configurations: max-depth 4,6 · eta 0.1,0.3')
    const layers = set({ grid: { hidden: [[32], [64, 32]], lr: [0.01] } })
    expect(describeMembers(mlpFamily, layers, mlpFamily.defaults, [0, 1])).toBe('2 configurations: hidden 32/64,32')
  })
})
