// Early stopping in the MLP engines (@shared/contract early-stopping.ts has the rule: XGBoost's
// early_stopping_rounds, patience in epochs). After every epoch the engine scores its live models on
// their held-out rows (ModelScores, as it scores validation at the end) and hands them here with the
// epoch's training loss; each model's value of the run's primary metric (@shared/metrics
// validationMetricValue) is fed to its rule. A model that improved has its parameters copied to the
// host (one read of the live program's parameters in an epoch where any improved: the models' weights
// once more in host memory, at most), so the model kept is its best epoch's, whatever came after.
// Engine-neutral: models are positions in a group, parameters the shared fused layout (fused-layout.ts);
// a compacted program starts from its survivors' ProgramState (survivorsState), whatever the engine.
import { EarlyStopping, type StoppedRounds, type WorkloadEarlyStopping } from '@shared/contract'
import { validationMetricValue } from '@shared/metrics'
import { joinModels, selectModels } from './fused-layout'
import type { ModelScores } from './objective'

/** What one epoch decided: who stopped, and which of the program's models train on (the survivors a compacted program keeps). */
export interface EpochVerdict {
  /** group positions of the models that stopped after this epoch */
  stopped: number[]
  /** program positions (0 … live models before this epoch − 1) of the models still training, in order */
  continuing: number[]
}

/** A group's models as early stopping keeps them: their best epoch's parameters, validation scores and training loss, and the epochs counted. */
export interface KeptModels {
  /** the fused layout of every model of the group, each its best epoch's parameters */
  params: Float32Array[]
  validation: ModelScores[]
  /** each model's mean training loss in its best epoch */
  loss: number[]
  rounds: StoppedRounds[]
}

/** A fused program's training state in the shared layout (fused-layout.ts): parameters, and Adam's moments and steps taken (absent: zero, step 0). */
export interface ProgramState {
  values: Float32Array[]
  adam?: { m: Float32Array[]; v: Float32Array[]; step: number }
}

/**
 * The state of models `positions` (in that order) of a program of n: what a compacted program of the
 * survivors starts from. Each model's weights and moments are its own and Adam's step is shared, so
 * the survivors train on exactly as they would have in the larger program. H1: the first hidden layer's width.
 */
export function survivorsState(state: Required<ProgramState>, n: number, h1: number, positions: readonly number[]): Required<ProgramState> {
  const select = (params: readonly Float32Array[]) => selectModels(params, n, h1, positions)
  return { values: select(state.values), adam: { m: select(state.adam.m), v: select(state.adam.v), step: state.adam.step } }
}

/** The early-stopping watches of one fused group of n models (one for sequential and pool). */
export class EpochWatches {
  private readonly rules: EarlyStopping[]
  private readonly bestScores: (ModelScores | null)[]
  private readonly bestLoss: number[]
  private readonly bestParams: (Float32Array[] | null)[]
  /** group positions of the models still training, in program order */
  private liveModels: number[]

  constructor(
    stopping: WorkloadEarlyStopping,
    readonly n: number,
    /** the first hidden layer's width: the fused layout's W1 block per model */
    private readonly h1: number,
  ) {
    this.rules = Array.from({ length: n }, () => new EarlyStopping(stopping.rounds, stopping.metric))
    this.bestScores = new Array<ModelScores | null>(n).fill(null)
    this.bestLoss = new Array<number>(n).fill(NaN)
    this.bestParams = new Array<Float32Array[] | null>(n).fill(null)
    this.liveModels = Array.from({ length: n }, (_, i) => i)
  }

  /** The watches of a fused group of n models of `workload`, or null when it does not stop early. */
  static of(workload: { earlyStopping?: WorkloadEarlyStopping; model: { hidden: readonly number[] } }, n: number): EpochWatches | null {
    return workload.earlyStopping ? new EpochWatches(workload.earlyStopping, n, workload.model.hidden[0]) : null
  }

  /** Group positions of the models still training, in the order the program holds them. */
  get live(): readonly number[] {
    return this.liveModels
  }

  /**
   * After an epoch: each live model's validation scores and training loss (program order); reads the
   * live program's parameters (`parameters`, the fused layout) once when any model improved.
   */
  async afterEpoch(
    validation: readonly (ModelScores | null)[] | null,
    loss: ArrayLike<number>,
    parameters: () => Promise<Float32Array[]>,
  ): Promise<EpochVerdict> {
    const live = this.liveModels
    const improved: number[] = []
    const verdict: EpochVerdict = { stopped: [], continuing: [] }
    live.forEach((i, k) => {
      const scores = validation?.[k]
      if (!scores) throw new RangeError(`earlyStopping needs every model's held-out rows (a fold's, or --validation); model ${i} of the group has none`)
      const rule = this.rules[i]
      const best = rule.bestRound
      if (rule.record(validationMetricValue({ validationMse: scores.mse, ...(scores.metrics ? { validationMetrics: scores.metrics } : {}) }, rule.metric))) {
        verdict.stopped.push(i)
      } else {
        verdict.continuing.push(k)
      }
      if (rule.bestRound !== best) {
        improved.push(k)
        this.bestScores[i] = scores
        this.bestLoss[i] = loss[k]
      }
    })
    if (improved.length > 0) {
      const params = await parameters()
      for (const k of improved) this.bestParams[live[k]] = selectModels(params, live.length, this.h1, [k])
    }
    this.liveModels = verdict.continuing.map((k) => live[k])
    return verdict
  }

  /** Every model of the group as kept: its best epoch's (needs at least one epoch watched). */
  kept(): KeptModels {
    const params = this.bestParams.map((p, i) => {
      if (!p) throw new Error(`model ${i} of the group was never watched: no epoch's parameters to keep`)
      return p
    })
    return {
      params: joinModels(params, this.h1),
      validation: this.bestScores as ModelScores[],
      loss: [...this.bestLoss],
      rounds: this.rules.map((r) => r.outcome),
    }
  }
}
