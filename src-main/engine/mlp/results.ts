// A fused MLP group's per-model results, the same words for every MLP engine: its own training time
// when trained alone, the group's when fused; test scores (MSE, and a classifier's metrics), last
// epoch's loss, validation scores and artifact.
import type { StoppedRounds } from '@shared/contract'
import type { MlpArtifact } from './artifact'
import type { ModelScores } from './objective'
import type { TrainedModel, TrainHooks } from '../backend/types'

export interface GroupOutcome {
  indices: readonly number[]
  seeds: readonly number[]
  fused: boolean
  elapsedMs: number
  test: readonly ModelScores[]
  epochLoss: ArrayLike<number> | null
  /** each model's scores on its validation rows (null: a model without them, whose validation MSE is NaN); null without validation */
  validation: readonly (ModelScores | null)[] | null
  artifacts: readonly MlpArtifact[] | null
  /** with early stopping: each model's epochs trained and best epoch (the others then describe the best epoch's model) */
  rounds?: readonly StoppedRounds[]
}

export function trainedModels(g: GroupOutcome): TrainedModel[] {
  return g.indices.map((index, k) => {
    const validation = g.validation ? g.validation[k] : undefined
    return {
      index,
      seed: g.seeds[k],
      trainMs: g.fused ? null : g.elapsedMs,
      groupTrainMs: g.fused ? g.elapsedMs : null,
      testMse: g.test[k].mse,
      ...(g.test[k].metrics ? { metrics: g.test[k].metrics } : {}),
      finalLoss: g.epochLoss ? g.epochLoss[k] : null,
      ...(validation !== undefined ? { validationMse: validation?.mse ?? NaN } : {}),
      ...(validation?.metrics ? { validationMetrics: validation.metrics } : {}),
      ...(g.artifacts ? { artifact: g.artifacts[k] } : {}),
      ...(g.rounds ? g.rounds[k] : {}),
    }
  })
}

/** The job's models in one fused program (batched), else one after another; each model reported as its group ends. */
export async function trainInGroups(
  indices: readonly number[],
  fused: boolean,
  hooks: TrainHooks,
  trainGroup: (group: readonly number[]) => Promise<TrainedModel[]>,
): Promise<void> {
  for (const group of fused ? [indices] : indices.map((i) => [i])) {
    for (const m of await trainGroup(group)) hooks.onModelDone(m)
  }
}
