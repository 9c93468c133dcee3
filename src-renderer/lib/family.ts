// The renderer's view of a run's model family: the views name the family, its rate unit and its
// progress only through these, so a new family shows up everywhere without touching a view.
import type { BenchConfig } from '@shared/contract/config'
import { modelLine } from '@shared/contract/run-list'
import { findFamily, type ModelFamily } from '@shared/families'

/** The family of a config's model, or undefined for a kind this build does not know (an old or foreign run). */
export function familyFor(config: Pick<BenchConfig, 'model'> | null | undefined): ModelFamily | undefined {
  const kind = config?.model?.kind
  return typeof kind === 'string' ? findFamily(kind) : undefined
}

/** "MLP · 100→64→1, Adam lr 0.01, batch 512, 3 epochs": the family and its parameters in one line. */
export function modelSummary(config: Pick<BenchConfig, 'model' | 'features'>): string {
  const family = familyFor(config)
  if (!family) return `unknown model family ${JSON.stringify(config.model?.kind ?? null)}`
  return modelLine(config as BenchConfig)
}

/** The header of a work-rate column: the family's rate unit ("GFLOP/s" for the MLP). */
export function rateLabel(config: Pick<BenchConfig, 'model'> | null | undefined): string {
  return familyFor(config)?.work.rateLabel ?? 'work rate'
}
