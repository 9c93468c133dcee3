// Plain least-squares line y ≈ a + b·x (time against model count), its quality (R², residuals,
// residual standard error) and a prediction interval for a new point. Pure arithmetic, no library:
// the renderer draws the same fit the CLI prints. The fit carries its points (x, measured,
// fitted), so the interval is recomputed from them rather than stored twice.
import type { LinearFit } from '../contract/advice'

/** Two-sided 95 % Student-t quantiles t(0.975, df) for df = 1…30 (standard tables). */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069,
  2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
]

/** t(0.975, df): the table up to 30, then the Cornish–Fisher expansion around z = 1.96 (error < 1e-3 there). */
export function tQuantile975(df: number): number {
  if (!(df >= 1)) throw new RangeError(`degrees of freedom must be ≥ 1, got ${df}`)
  if (df <= 30) return T975[Math.floor(df) - 1]
  const z = 1.959964
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
}

/** Least squares through (x, ms); R² and σ are null with fewer than 3 points (two points always fit exactly). */
export function fitLine(points: readonly { x: number; ms: number }[]): LinearFit {
  const n = points.length
  if (n === 0) return { a: NaN, b: NaN, r2: null, sigma: null, points: [] }
  const meanX = points.reduce((s, p) => s + p.x, 0) / n
  const meanY = points.reduce((s, p) => s + p.ms, 0) / n
  let sxx = 0
  let sxy = 0
  let syy = 0
  for (const p of points) {
    sxx += (p.x - meanX) ** 2
    sxy += (p.x - meanX) * (p.ms - meanY)
    syy += (p.ms - meanY) ** 2
  }
  // one distinct x: no slope can be told; the line is flat through the mean
  const b = sxx > 0 ? sxy / sxx : 0
  const a = meanY - b * meanX
  const fitted = points.map((p) => ({ x: p.x, ms: p.ms, predictedMs: a + b * p.x }))
  const sse = fitted.reduce((s, p) => s + (p.ms - p.predictedMs) ** 2, 0)
  const enough = n >= 3 && sxx > 0
  return {
    a,
    b,
    r2: enough ? (syy > 0 ? 1 - sse / syy : 1) : null,
    sigma: enough ? Math.sqrt(sse / (n - 2)) : null,
    points: fitted,
  }
}

export function residuals(fit: LinearFit): number[] {
  return fit.points.map((p) => p.ms - p.predictedMs)
}

/**
 * The fitted time at x and a 95 % prediction interval for one new measurement there:
 * ŷ ± t(0.975, n−2) · σ · √(1 + 1/n + (x − x̄)² / Sxx) — wider than the line's own confidence band,
 * and wider the further x is from the measured ones (extrapolation pays for itself). With fewer
 * than 3 points there is no σ and the interval is the point itself (callers refuse such fits).
 */
export function predictWithInterval(fit: LinearFit, x: number): { predictedMs: number; lowMs: number; highMs: number } {
  const predictedMs = fit.a + fit.b * x
  const n = fit.points.length
  if (fit.sigma === null || n < 3) return { predictedMs, lowMs: predictedMs, highMs: predictedMs }
  const meanX = fit.points.reduce((s, p) => s + p.x, 0) / n
  const sxx = fit.points.reduce((s, p) => s + (p.x - meanX) ** 2, 0)
  const half = tQuantile975(n - 2) * fit.sigma * Math.sqrt(1 + 1 / n + (x - meanX) ** 2 / sxx)
  return { predictedMs, lowMs: Math.max(0, predictedMs - half), highMs: predictedMs + half }
}
