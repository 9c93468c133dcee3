import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { expandPlan } from '@shared/plan'
import { measurementFor } from '@shared/testing/fixtures'
import { checksBySize, checksText } from './verification'

describe('what a stopped run verified, per data size', () => {
  const config = presetConfig('quick', { sizes: [2000, 5000], models: [16], workers: [2], repeats: 1 })
  const plan = expandPlan(config)

  it('counts the sizes that finished every strategy, and says which did not', () => {
    // cancelled during the second size's pool measurement: the first size is complete
    const first = plan.filter((k) => k.size === 2000).map((k) => measurementFor(k, false, config))
    const seq5k = measurementFor(
      plan.find((k) => k.size === 5000 && k.strategy === 'sequential')!,
      false,
      config,
    )
    const cut = {
      ...measurementFor(
        plan.find((k) => k.size === 5000 && k.strategy === 'pool')!,
        false,
        config,
      ),
      status: 'cancelled' as const,
      modelsTrained: 3,
    }
    const checks = checksBySize(config, [...first, seq5k, cut])
    expect(checks.map((c) => c.state)).toEqual(['finished', 'unfinished'])
    expect(checksText(checks)).toBe('2,000 rows: 16/16 models per strategy; 5,000 rows: not finished')
  })

  it('a size never reached says so; a size whose measurement was cancelled is not finished', () => {
    const cut = { ...measurementFor(plan[0], false, config), status: 'cancelled' as const, modelsTrained: 0 }
    expect(checksText(checksBySize(config, [cut]))).toBe('2,000 rows: not finished; 5,000 rows: not reached')
  })
})
