// Config → the ordered list of measurements: sizes × models × strategies × workers × repeats.
// `sequential` is one worker by definition, so it is measured once per (size, models), not per W.
import type { BenchConfig, MeasurementKey, Strategy } from './contract'

export function expandPlan(config: BenchConfig): MeasurementKey[] {
  const plan: MeasurementKey[] = []
  for (const size of config.sizes) {
    for (const models of config.models) {
      for (const strategy of config.strategies) {
        for (const workers of workersFor(strategy, config.workers)) {
          for (let repeat = 0; repeat < config.repeats; repeat++) plan.push({ size, models, workers, strategy, repeat })
        }
      }
    }
  }
  return plan
}

function workersFor(strategy: Strategy, workers: number[]): number[] {
  return strategy === 'sequential' ? [1] : [...new Set(workers)].sort((a, b) => a - b)
}

/** Consecutive plan entries that share one warmed pool (same size, models, strategy, workers). */
export function groupKey(k: MeasurementKey): string {
  return `${k.size}/${k.models}/${k.strategy}/${k.workers}`
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
