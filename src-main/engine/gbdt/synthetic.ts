// Seeded regression data for the engine's tests and benchmarks (not the app's data sets).
import { Rng } from '../random'

export interface SyntheticSpec {
  rows: number
  features: number
  seed: number
  /** when set, every feature takes at most this many distinct values (k/levels, k = 0..levels−1) */
  levels?: number
  /** fraction of feature values replaced by NaN */
  missing?: number
  /** standard deviation of the label noise */
  noise?: number
}

export interface SyntheticData {
  rows: number
  features: number
  /** row-major float32 features */
  x: Float32Array
  y: Float32Array
}

/**
 * y = Σ over a few features of smooth and step terms + interactions + noise, on features in [0, 1).
 * Missing values (NaN) do not change y's formula (the clean value is used), so a learned default
 * direction matters.
 */
export function syntheticRegression(spec: SyntheticSpec): SyntheticData {
  const { rows, features, seed } = spec
  const rng = new Rng(seed, 7)
  const x = new Float32Array(rows * features)
  const y = new Float32Array(rows)
  const noise = spec.noise ?? 0.1
  const levels = spec.levels
  for (let r = 0; r < rows; r++) {
    for (let f = 0; f < features; f++) {
      const u = rng.uniform()
      x[r * features + f] = levels ? Math.floor(u * levels) / levels : u
    }
    const v = (f: number) => x[r * features + (f % features)]
    let t = 2 * Math.sin(3 * v(0)) + (v(1) > 0.5 ? 1 : -1) + 1.5 * v(2) * v(3) - v(4) * v(4) + 0.5 * Math.cos(5 * v(5) * v(6))
    if (features > 10) t += 0.8 * (v(7) - v(8)) + (v(9) < 0.3 ? 0.7 : 0)
    y[r] = t + noise * rng.normal()
  }
  if (spec.missing && spec.missing > 0) {
    const mr = new Rng(seed, 8)
    for (let i = 0; i < x.length; i++) if (mr.uniform() < spec.missing) x[i] = NaN
  }
  return { rows, features, x, y }
}

/** The first `train` rows and the rest, as two data sets. */
export function splitRows(d: SyntheticData, train: number): [SyntheticData, SyntheticData] {
  const F = d.features
  return [
    { rows: train, features: F, x: d.x.slice(0, train * F), y: d.y.slice(0, train) },
    { rows: d.rows - train, features: F, x: d.x.slice(train * F), y: d.y.slice(train) },
  ]
}

/**
 * The same features with class labels 0 … K−1: syntheticRegression's target (noise included, so no
 * class is perfectly separable) cut at its K-quantiles, so the classes are of equal size.
 */
export function syntheticClassification(spec: SyntheticSpec & { classes: number }): SyntheticData {
  const d = syntheticRegression(spec)
  const order = Array.from({ length: d.rows }, (_, r) => r).sort((a, b) => d.y[a] - d.y[b])
  const y = new Float32Array(d.rows)
  order.forEach((r, i) => (y[r] = Math.floor((i * spec.classes) / d.rows)))
  return { ...d, y }
}
