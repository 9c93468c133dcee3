// Config → the ordered list of measurements: sizes × models × strategies × workers × repeats.
// `sequential` is measured once per (size, models), not per W; a W larger than N is skipped at that
// N, so one list of Ws serves a model-count sweep (modelSweep: its one definition). Backends side by
// side: the whole plan per backend; a backend without batched measures the other strategies.
import { type BenchConfig, type ConcreteBackend, type MeasurementKey, type Strategy } from './contract'
import { findFamily, whyNoBatched } from './families'

export function expandPlan(config: BenchConfig): MeasurementKey[] {
  const plan: MeasurementKey[] = []
  const family = findFamily(config.model.kind)
  const backends: (ConcreteBackend | undefined)[] = Array.isArray(config.backend) ? config.backend : [undefined]
  for (const backend of backends) {
    const strategies = backend && family ? config.strategies.filter((s) => s !== 'batched' || whyNoBatched(family, backend) === null) : config.strategies
    for (const size of config.sizes) {
      for (const models of config.models) {
        for (const strategy of strategies) {
          for (const workers of workersFor(strategy, config.workers).filter((w) => w <= models)) {
            for (let repeat = 0; repeat < config.repeats; repeat++) plan.push({ size, models, workers, strategy, repeat, ...(backend ? { backend } : {}) })
          }
        }
      }
    }
  }
  return plan
}

function workersFor(strategy: Strategy, workers: number[]): number[] {
  return strategy === 'sequential' ? [1] : [...new Set(workers)].sort((a, b) => a - b)
}

/** The model counts of a sweep up to `upTo`: 1, 2, 4, … (powers of two below it), then `upTo` itself. */
export function modelSweep(upTo: number): number[] {
  if (!Number.isInteger(upTo) || upTo < 1) throw new RangeError(`a model-count sweep needs a whole number of models ≥ 1, got ${upTo}`)
  const counts: number[] = []
  for (let n = 1; n < upTo; n *= 2) counts.push(n)
  return [...counts, upTo]
}

/** Consecutive plan entries that share one warmed pool (same backend, size, models, strategy, workers). */
export function groupKey(k: MeasurementKey): string {
  return `${k.backend ? `${k.backend}/` : ''}${k.size}/${k.models}/${k.strategy}/${k.workers}`
}

/** Splits 0..n-1 into `parts` contiguous groups whose sizes differ by at most one. */
export function contiguousGroups(n: number, parts: number): number[][] {
  const groups: number[][] = []
  let start = 0
  for (let p = 0; p < parts; p++) {
    const size = Math.floor(n / parts) + (p < n % parts ? 1 : 0)
    groups.push(Array.from({ length: size }, (_, i) => start + i))
    start += size
  }
  return groups.filter((g) => g.length > 0)
}

/**
 * Splits items 0..n−1, item i weighing weights[i], into at most `parts` contiguous non-empty groups
 * of near-equal weight: a batched run's fused programs, so that a grid whose configurations cost
 * differently (depth 3 beside depth 8) does not leave one worker with most of the work while the
 * other waits. Each group takes items while that brings it closer to an equal share of what is left.
 * Equal weights give contiguousGroups' split exactly.
 */
export function balancedGroups(weights: readonly number[], parts: number): number[][] {
  const n = weights.length
  if (weights.every((w) => w === weights[0])) return contiguousGroups(n, parts)
  const groups: number[][] = []
  let left = weights.reduce((a, b) => a + b, 0)
  let i = 0
  for (let p = 0; p < parts && i < n; p++) {
    const share = left / (parts - p)
    const group = [i]
    let sum = weights[i++]
    // keep one item for each group still to come
    while (i < n - (parts - p - 1) && Math.abs(sum + weights[i] - share) <= Math.abs(sum - share)) {
      sum += weights[i]
      group.push(i++)
    }
    if (p === parts - 1) while (i < n) group.push(i++)
    groups.push(group)
    left -= sum
  }
  return groups
}
