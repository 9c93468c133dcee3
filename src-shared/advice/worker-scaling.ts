// Time against worker count W for one strategy at one (size, N): Amdahl's law, or Gunther's
// universal scalability law when time rises again (T(W) = T1·(1 + σ(W − 1) + κ·W(W − 1)) / W; κ = 0
// is Amdahl), fitted by a grid over σ and κ with T1 solved in closed form — no library, the
// constraints hold by construction. From the curve: the fastest W and the knee.
import { ADVICE_LIMITS, type WorkerScaling } from '../contract/advice'
import type { Strategy } from '../contract/config'

const SIGMA_STEPS = 400
const KAPPAS = [0, ...Array.from({ length: 61 }, (_, i) => 1e-4 * 10 ** (i / 15))]

/** The USL's shape (T / T1) at W. */
function shape(w: number, sigma: number, kappa: number): number {
  return (1 + sigma * (w - 1) + kappa * w * (w - 1)) / w
}

interface GridFit {
  t1: number
  sigma: number
  kappa: number
  sse: number
}

/** The coarse grid, then a finer one around its best point (one grid step either way). */
function gridFit(points: readonly { workers: number; ms: number }[], kappas: readonly number[]): GridFit {
  const sigmas = Array.from({ length: SIGMA_STEPS + 1 }, (_, i) => i / SIGMA_STEPS)
  const coarse = searchGrid(points, sigmas, kappas)
  const step = 1 / SIGMA_STEPS
  const fineSigmas = Array.from({ length: 41 }, (_, i) => Math.min(1, Math.max(0, coarse.sigma - step + (i * 2 * step) / 40)))
  const kStep = KAPPAS[2] / KAPPAS[1]
  const fineKappas = coarse.kappa === 0 ? [0] : Array.from({ length: 41 }, (_, i) => coarse.kappa * kStep ** (-1 + i / 20))
  const fine = searchGrid(points, fineSigmas, fineKappas)
  return fine.sse <= coarse.sse ? fine : coarse
}

function searchGrid(points: readonly { workers: number; ms: number }[], sigmas: readonly number[], kappas: readonly number[]): GridFit {
  let best: GridFit = { t1: NaN, sigma: 0, kappa: 0, sse: Infinity }
  for (const kappa of kappas) {
    for (const sigma of sigmas) {
      let sgg = 0
      let syg = 0
      for (const p of points) {
        const g = shape(p.workers, sigma, kappa)
        sgg += g * g
        syg += p.ms * g
      }
      const t1 = syg / sgg
      let sse = 0
      for (const p of points) sse += (p.ms - t1 * shape(p.workers, sigma, kappa)) ** 2
      if (sse < best.sse) best = { t1, sigma, kappa, sse }
    }
  }
  return best
}

/** Time rises again: the largest measured W is slower than the fastest measured one. */
function risesAgain(points: readonly { workers: number; ms: number }[]): boolean {
  const sorted = [...points].sort((a, b) => a.workers - b.workers)
  const fastest = Math.min(...sorted.map((p) => p.ms))
  return sorted.length >= 3 && sorted[sorted.length - 1].ms > fastest
}

/**
 * Fits the law to the measured (W, median ms) points (at least two distinct W). The curve runs from
 * W = 1 to a little past the measured W (twice the largest; at most N, as each worker needs a model;
 * at most `cores`, the machine's, when known: past them the laws' "more workers, more parallel" no
 * longer holds, the workers only share cores). The fastest W and the knee are read off it, so they
 * may lie just past what was measured.
 */
export function fitWorkerScaling(
  strategy: Strategy,
  size: number,
  models: number,
  points: readonly { workers: number; ms: number }[],
  cores?: number,
): WorkerScaling {
  const distinct = new Set(points.map((p) => p.workers))
  if (distinct.size < 2) throw new RangeError(`a worker-scaling fit needs at least two worker counts, got ${[...distinct].join(', ') || 'none'}`)
  const law = risesAgain(points) ? 'usl' : 'amdahl'
  const fit = gridFit(points, law === 'usl' ? KAPPAS : [0])
  const at = (w: number) => fit.t1 * shape(w, fit.sigma, fit.kappa)
  const meanY = points.reduce((s, p) => s + p.ms, 0) / points.length
  const syy = points.reduce((s, p) => s + (p.ms - meanY) ** 2, 0)
  const maxMeasured = Math.max(...distinct)
  const wMax = Math.max(maxMeasured, Math.min(models, 2 * maxMeasured, cores ?? Infinity))
  const curve = Array.from({ length: wMax }, (_, i) => ({ workers: i + 1, ms: at(i + 1) }))
  let fastest = curve[0]
  for (const c of curve) if (c.ms < fastest.ms) fastest = c
  // the knee: the first W from which one more worker saves less than kneeGain of its time
  const knee = curve.find((c, i) => i + 1 >= curve.length || curve[i + 1].ms > (1 - ADVICE_LIMITS.kneeGain) * c.ms) ?? curve[curve.length - 1]
  return {
    strategy,
    size,
    models,
    law,
    sigma: fit.sigma,
    kappa: fit.kappa,
    r2: points.length >= 3 ? (syy > 0 ? 1 - fit.sse / syy : 1) : null,
    points: [...points].sort((a, b) => a.workers - b.workers).map((p) => ({ workers: p.workers, ms: p.ms })),
    curve,
    fastestWorkers: fastest.workers,
    kneeWorkers: knee.workers,
  }
}

/**
 * A worker fit in one sentence (the Run view's chart, the report, `trainpool advise`):
 * "pool: Amdahl fit (serial fraction σ 0.12), R² 0.98; fastest at W = 4 (read off the curve past the
 * largest W measured, 2); knee at W = 2 (past it one more worker saves < 10 %)".
 */
export function describeWorkerFit(s: WorkerScaling): string {
  const law =
    s.law === 'usl' ? `USL fit (σ ${s.sigma.toFixed(2)}, contention κ ${s.kappa.toPrecision(2)})` : `Amdahl fit (serial fraction σ ${s.sigma.toFixed(2)})`
  const r2 = s.r2 == null ? `R² – (${s.points.length} W measured)` : `R² ${s.r2.toFixed(2)}`
  const maxMeasured = Math.max(...s.points.map((p) => p.workers))
  const past = s.fastestWorkers > maxMeasured ? ` (read off the curve past the largest W measured, ${maxMeasured})` : ''
  return `${s.backend ? `${s.backend} ` : ''}${s.strategy}: ${law}, ${r2}; fastest at W = ${s.fastestWorkers}${past}; knee at W = ${s.kneeWorkers} (past it one more worker saves < ${Math.round(ADVICE_LIMITS.kneeGain * 100)} %)`
}
