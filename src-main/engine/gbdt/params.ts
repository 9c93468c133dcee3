// Hyperparameters of the GBDT engine: XGBoost 1.7's names (camelCased), the article's values as
// defaults (except subsample/colsample 0.8, so that N models differ), and one validator that names
// the offending field and its accepted range.
import { GBDT_DEFAULTS as FAMILY_GBDT_DEFAULTS, type GbdtParams as FamilyGbdtParams } from '@shared/families/gbdt'

/**
 * The engine's parameters: the gbdt family's (src-shared/families/gbdt.ts: names, meaning and the
 * article's defaults are stated there once), without the family's `kind`. Leaf values are stored
 * as fround(fround(w) · fround(eta)); gamma is compared with XGBoost's loss_chg (no ½); the hessian
 * of a child is its number of sampled rows; colsample keeps max(1, ⌊fround(c)·F⌋) features per tree.
 */
export type GbdtParams = Omit<FamilyGbdtParams, 'kind'>

const { kind: _kind, ...familyDefaults } = FAMILY_GBDT_DEFAULTS
export const GBDT_DEFAULTS: Readonly<GbdtParams> = Object.freeze(familyDefaults)

/** The largest training set: per-row quantised gradients are < 2^30, so any sum of ≤ 2^23 of them is < 2^53. */
export const MAX_TRAIN_ROWS = 2 ** 23

interface Range {
  min: number
  max: number
  minOpen?: boolean
  integer?: boolean
}

/** Accepted ranges, per field (also what error messages quote). */
export const GBDT_PARAM_RANGES: Readonly<Record<keyof GbdtParams, Range>> = Object.freeze({
  rounds: { min: 1, max: 100_000, integer: true },
  maxDepth: { min: 1, max: 16, integer: true },
  eta: { min: 0, max: 1, minOpen: true },
  lambda: { min: 0, max: Number.MAX_VALUE },
  alpha: { min: 0, max: Number.MAX_VALUE },
  gamma: { min: 0, max: Number.MAX_VALUE },
  minChildWeight: { min: 0, max: Number.MAX_VALUE },
  maxBin: { min: 2, max: 256, integer: true },
  subsample: { min: 0, max: 1, minOpen: true },
  colsampleBytree: { min: 0, max: 1, minOpen: true },
  baseScore: { min: -Number.MAX_VALUE, max: Number.MAX_VALUE },
})

export function describeRange(key: keyof GbdtParams): string {
  const r = GBDT_PARAM_RANGES[key]
  const hi = r.max === Number.MAX_VALUE ? '' : ` and ≤ ${r.max}`
  if (r.min === -Number.MAX_VALUE) return 'a finite number'
  return `${r.integer ? 'an integer' : 'a number'} ${r.minOpen ? '>' : '≥'} ${r.min}${hi}`
}

/** Problems with `p`, one message per bad field ("maxDepth must be an integer ≥ 1 and ≤ 16, got 0"); empty when valid. */
export function gbdtParamProblems(p: GbdtParams): string[] {
  const out: string[] = []
  for (const key of Object.keys(GBDT_PARAM_RANGES) as (keyof GbdtParams)[]) {
    const r = GBDT_PARAM_RANGES[key]
    const v = p[key]
    const ok =
      typeof v === 'number' &&
      Number.isFinite(v) &&
      (r.minOpen ? v > r.min : v >= r.min) &&
      v <= r.max &&
      (!r.integer || Number.isInteger(v))
    if (!ok) out.push(`${key} must be ${describeRange(key)}, got ${String(v)}`)
  }
  return out
}

/** Fills defaults and throws a RangeError listing every bad field. */
export function resolveGbdtParams(p: Partial<GbdtParams> = {}): GbdtParams {
  const full: GbdtParams = { ...GBDT_DEFAULTS, ...p }
  const problems = gbdtParamProblems(full)
  if (problems.length > 0) throw new RangeError(`invalid GBDT parameters: ${problems.join('; ')}`)
  return full
}
