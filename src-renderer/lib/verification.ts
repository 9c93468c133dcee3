// What a stopped (cancelled, interrupted) run did verify, data size by data size: a size where every
// planned measurement finished had every strategy train every model; a later size that was cut short
// says so, instead of one run-wide minimum ("0/16 models per strategy") that hides the finished sizes.
import type { BenchConfig } from '@shared/contract/config'
import type { Measurement } from '@shared/contract/result'
import { expandPlan } from '@shared/plan'
import { reportRows } from '@shared/verdict'

export interface SizeCheck {
  size: number
  models: number
  /** finished: every planned measurement at this size and model count finished */
  state: 'finished' | 'unfinished' | 'not-reached'
}

export function checksBySize(config: BenchConfig, measurements: readonly Measurement[]): SizeCheck[] {
  const plan = expandPlan(config)
  const out: SizeCheck[] = []
  for (const size of config.sizes) {
    for (const models of config.models) {
      const planned = plan.filter((k) => k.size === size && k.models === models)
      const here = measurements.filter((m) => m.size === size && m.models === models)
      const finished = planned.every((k) =>
        here.some(
          (m) =>
            m.status === 'ok' &&
            m.backend === k.backend &&
            m.strategy === k.strategy &&
            m.workers === k.workers &&
            m.repeat === k.repeat &&
            m.modelsTrained === models,
        ),
      )
      out.push({ size, models, state: finished ? 'finished' : here.length ? 'unfinished' : 'not-reached' })
    }
  }
  return out
}

/** "2,000 rows: 16/16 models per strategy; 5,000 rows: not finished" */
export function checksText(checks: readonly SizeCheck[]): string {
  const manyModels = new Set(checks.map((c) => c.models)).size > 1
  return checks
    .map((c) => {
      const where = `${reportRows(c.size)} rows${manyModels ? ` × ${c.models} models` : ''}`
      if (c.state === 'finished') return `${where}: ${c.models}/${c.models} models per strategy`
      return `${where}: ${c.state === 'unfinished' ? 'not finished' : 'not reached'}`
    })
    .join('; ')
}
