// Early stopping in the trees engine (@shared/contract early-stopping.ts has the rule): after each
// round, a model's validation value of the run's primary metric, scored on its held-out rows from the
// margins the trainer already keeps for them (a held-out row is never sampled, so finishTree walks it
// down every tree) — the outputs predictGbdtOutputs would give, scored by @shared/metrics. Each
// model's value depends only on its own trees, so every strategy stops it at the same round.
import { EarlyStopping, type HeldOutRows, type MetricName, type StoppedRounds } from '@shared/contract'
import { scoreMetric } from '@shared/metrics'
import { type GbdtTask, sigmoidF32, softmaxF32, treesPerRound } from './objective'
import type { GbdtModel } from './tree'

/** What to watch (GbdtTrainOptions.earlyStopping, the workload's): patience in rounds, and the metric. */
export interface GbdtEarlyStopping {
  rounds: number
  metric: MetricName
}

/** One model's watch over its held-out rows: their outputs from its margins each round, scored, fed to the rule. */
export class HeldOutWatch {
  readonly rule: EarlyStopping
  private readonly outputs: Float32Array
  private readonly labels: Float32Array
  private readonly task: { objective: GbdtTask['objective']; classes: number }

  constructor(
    stopping: GbdtEarlyStopping,
    private readonly rows: HeldOutRows,
    y: Float32Array,
    task: GbdtTask | undefined,
  ) {
    this.rule = new EarlyStopping(stopping.rounds, stopping.metric)
    this.task = task ?? { objective: 'regression', classes: 0 }
    this.labels = y.subarray(rows.begin, rows.end)
    this.outputs = new Float32Array((rows.end - rows.begin) * treesPerRound(task))
  }

  /** After a round: the held-out rows' value of the metric from `margins` (one array per class); true when the model stops here. */
  afterRound(margins: readonly Float32Array[]): boolean {
    const { begin, end } = this.rows
    const out = this.outputs
    const objective = this.task.objective
    if (objective === 'multiclass') {
      const K = margins.length
      for (let r = begin; r < end; r++) {
        const at = (r - begin) * K
        for (let k = 0; k < K; k++) out[at + k] = margins[k][r]
        softmaxF32(out, at, K)
      }
    } else {
      const m = margins[0]
      for (let r = begin; r < end; r++) out[r - begin] = objective === 'binary' ? sigmoidF32(m[r]) : m[r]
    }
    const value = scoreMetric(this.task, out, this.labels, this.rule.metric)
    return this.rule.record(value)
  }
}

/** The model kept: its first bestRound rounds (K trees a round), with the rounds it trained recorded. */
export function bestRoundModel(model: GbdtModel, outcome: StoppedRounds): GbdtModel {
  const K = model.objective === 'multiclass' ? model.classes! : 1
  return { ...model, trees: model.trees.slice(0, outcome.bestRound * K), stoppedRounds: outcome }
}
