// Early stopping (issue 39), the rule every engine applies the same way: XGBoost 1.7's
// `early_stopping_rounds` — a model stops once its validation value of the run's primary metric has
// not improved (strictly, in the metric's direction) for R rounds (trees) or epochs (MLP), and the
// model kept is the best round's. The validation rows are a fold's held-out rows, or, without folds,
// the last ⌈fraction · train⌉ training rows (a classifier's training rows are stratified, so that
// tail keeps the class proportions). One home for the rule, the rows and the rounds counted, so every
// strategy and backend stops each model at the same round.
import type { ModelFamily } from '../families/family'
import { isBetter, type MetricName } from '../vocabulary/task'
import type { WorkloadOf } from '../vocabulary/workload-shape'
import { configurationParams, foldRows, type HeldOutRows, setMember } from './model-set'

/** --early-stopping R and --validation FRACTION: their product limits. */
export const EARLY_STOPPING_LIMITS = {
  rounds: { min: 1, max: 1000 },
  validation: { min: 0.05, max: 0.5 },
} as const

/** How many of `train` rows a validation fraction holds out: ⌈fraction · train⌉ (the product rounded first, so 0.1 · 30 is 3, not 4). */
export function validationRowCount(train: number, fraction: number): number {
  return Math.ceil(Number((fraction * train).toPrecision(12)))
}

/** The validation rows without folds: the last ⌈fraction · train⌉ training rows. */
export function validationRows(train: number, fraction: number): HeldOutRows {
  return { begin: train - validationRowCount(train, fraction), end: train }
}

/** Model `index`'s held-out rows of `train` training rows: its fold's, else the validation fraction's, else none. */
export function heldOutRowsFor(w: Pick<WorkloadOf<{ kind: string }>, 'set' | 'validation'>, train: number, index: number): HeldOutRows | null {
  const folds = w.set?.folds ?? null
  if (w.set && folds !== null) return foldRows(train, folds, setMember(w.set, index).fold!)
  return w.validation !== undefined ? validationRows(train, w.validation) : null
}

/**
 * The classes (indices 0 … K−1) that the training labels `y` hold but the held-out rows [begin, end)
 * do not: a model could not be validated on them, so a validation fraction that leaves one out is refused.
 */
export function classesMissingFrom(y: ArrayLike<number>, rows: HeldOutRows, classes: number): number[] {
  const inTrain = new Uint8Array(classes)
  const heldOut = new Uint8Array(classes)
  for (let r = 0; r < y.length; r++) {
    inTrain[y[r]] = 1
    if (r >= rows.begin && r < rows.end) heldOut[y[r]] = 1
  }
  const missing: number[] = []
  for (let k = 0; k < classes; k++) if (inTrain[k] === 1 && heldOut[k] === 0) missing.push(k)
  return missing
}

/** What early stopping records of a model: the rounds (epochs) it trained, and the 1-based round whose model is kept (the first bestRound rounds). */
export interface StoppedRounds {
  roundsTrained: number
  bestRound: number
}

/**
 * One model's watch: fed its validation value after every round, it says when patience has run out.
 * Ties are not improvements and a NaN never improves (XGBoost's comparison), the first round is the
 * first best.
 */
export class EarlyStopping {
  roundsTrained = 0
  bestRound = 0
  bestValue = NaN
  stopped = false

  constructor(
    readonly patience: number,
    readonly metric: MetricName,
  ) {}

  /** The value after the next round; true when the model stops after it. */
  record(value: number): boolean {
    this.roundsTrained++
    if (this.bestRound === 0 || isBetter(this.metric, value, this.bestValue)) {
      this.bestValue = value
      this.bestRound = this.roundsTrained
    } else if (this.roundsTrained - this.bestRound >= this.patience) {
      this.stopped = true
    }
    return this.stopped
  }

  get outcome(): StoppedRounds {
    return { roundsTrained: this.roundsTrained, bestRound: this.bestRound }
  }
}

/**
 * The rounds (trees) or epochs a measurement's models trained against what the grid would have
 * trained (every model to its configuration's last round), for "trained 37 % of the rounds"; null
 * when no model records its rounds (early stopping off) or the family does not count rounds.
 */
export function roundsTrainedShare(
  family: Pick<ModelFamily, 'fields' | 'maxRounds'>,
  w: Pick<WorkloadOf<{ kind: string }>, 'model' | 'set'>,
  perModel: readonly { index: number; roundsTrained?: number }[],
): { trained: number; grid: number } | null {
  const maxRounds = family.maxRounds
  if (!maxRounds || perModel.length === 0 || perModel.some((p) => p.roundsTrained === undefined)) return null
  let trained = 0
  let grid = 0
  for (const p of perModel) {
    const params = w.set ? configurationParams(family, w.model, w.set, setMember(w.set, p.index).configuration) : w.model
    trained += p.roundsTrained!
    grid += maxRounds(params as never)
  }
  return { trained, grid }
}
