// The one estimator of a run's cost, before it starts: memory (checked by the service, shown by the
// renderer) from the real plan (plan.ts) and each family's own memory model.
import type { BenchConfig } from './contract/config'
import { workloadFor } from './contract/workload'
import { familyOf } from './families'
import { contiguousGroups, expandPlan, groupKey } from './plan'

/** Models each worker of a measurement holds at once: a fused group (batched) or one model. */
export function modelsPerWorker(strategy: string, models: number, workers: number): number[] {
  if (strategy === 'batched') return contiguousGroups(models, workers).map((g) => g.length)
  return new Array(strategy === 'sequential' ? 1 : Math.min(workers, models)).fill(1)
}

/** Peak bytes of the whole run: the largest measurement, all its workers together. */
export function estimateRunPeakBytes(config: BenchConfig): number {
  const family = familyOf(config.model)
  let peak = 0
  const seen = new Set<string>()
  for (const key of expandPlan(config)) {
    if (seen.has(groupKey(key))) continue
    seen.add(groupKey(key))
    const workload = workloadFor(config, key.size)
    const bytes = modelsPerWorker(key.strategy, key.models, key.workers).reduce((sum, n) => sum + family.workerPeakBytes(workload, n), 0)
    peak = Math.max(peak, bytes)
  }
  return peak
}
