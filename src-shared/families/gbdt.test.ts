// The gbdt family's field specs are the one range table: the config schema (CLI, config panel,
// service) and the tree engines' resolveGbdtParams must accept exactly the same values.
import { describe, expect, it } from 'vitest'
import { GBDT_DEFAULTS, gbdtFamily, gbdtParamProblems, resolveGbdtParams } from './gbdt'

describe('gbdt parameter ranges', () => {
  it('the engines accept exactly what the config schema accepts, at and beyond every bound', () => {
    for (const f of gbdtFamily.fields) {
      if (f.type === 'intList') throw new Error(`${f.key}: no list fields in gbdt`)
      const { min, max } = f.range
      const step = f.type === 'int' ? 1 : Math.max(1e-9, Math.abs(max - min) * 1e-9)
      const values = [min, max, min - step, max + step, (min + max) / 2 + 0.5, NaN, Infinity]
      for (const v of values) {
        const p = { ...GBDT_DEFAULTS, [f.key]: v }
        const schemaOk = gbdtFamily.paramsSchema.safeParse(p).success
        const problems = gbdtParamProblems(p)
        expect({ key: f.key, v, ok: problems.length === 0 }).toEqual({ key: f.key, v, ok: schemaOk })
        if (!schemaOk) expect(() => resolveGbdtParams(p)).toThrow(new RegExp(`${f.key} must be`))
      }
    }
  })

  it('rounds stop at 10 000 for the engines as for the form (the engine once allowed 100 000)', () => {
    expect(resolveGbdtParams({ rounds: 10_000 }).rounds).toBe(10_000)
    expect(() => resolveGbdtParams({ rounds: 10_001 })).toThrow(/rounds must be an integer ≥ 1 and ≤ 10000, got 10001/)
  })
})
