// A fused MLP group's per-model results, the same words for every MLP engine: its own training time
// when trained alone, the group's when fused; test MSE, last epoch's loss, validation and artifact.
import type { MlpArtifact } from './artifact'
import type { TrainedModel, TrainHooks } from '../families/types'

export interface GroupOutcome {
  indices: readonly number[]
  seeds: readonly number[]
  fused: boolean
  elapsedMs: number
  testMse: ArrayLike<number>
  epochLoss: ArrayLike<number> | null
  validationMse: ArrayLike<number> | null
  artifacts: readonly MlpArtifact[] | null
}

export function trainedModels(g: GroupOutcome): TrainedModel[] {
  return g.indices.map((index, k) => ({
    index,
    seed: g.seeds[k],
    trainMs: g.fused ? null : g.elapsedMs,
    groupTrainMs: g.fused ? g.elapsedMs : null,
    testMse: g.testMse[k],
    finalLoss: g.epochLoss ? g.epochLoss[k] : null,
    ...(g.validationMse ? { validationMse: g.validationMse[k] } : {}),
    ...(g.artifacts ? { artifact: g.artifacts[k] } : {}),
  }))
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
