// What a run's search did, in one line each (issue 39): early stopping's patience and the share of
// the grid's rounds its models trained, successive halving's factor, its rungs and that share. The
// one home of these words: the CLI summary, the Run view's verdict and the PDF report print them.
import type { Measurement, RunResult } from './contract/result'
import { roundsTrainedShare } from './contract/early-stopping'
import { describeRungs, halvingOf } from './contract/halving'
import { familyOf } from './families'
import { METRIC_SPECS, type Task } from './vocabulary/task'

type SearchRun = Pick<RunResult, 'config' | 'measurements'>

/**
 * Early stopping's line: "early stopping: patience 10 rounds on the validation log loss (3 folds) ·
 * trained 37 % of the grid's rounds (1110 of 3000, first measurement at 10000 rows)"; null when off.
 */
export function earlyStoppingLine(run: SearchRun, task: Task): string | null {
  const patience = run.config.earlyStopping
  if (patience === undefined) return null
  return `early stopping: patience ${patience} ${roundWords(run)} on the validation ${METRIC_SPECS[task.metric].label} (${heldOutWords(run)})${trainedShare(run)}`
}

/**
 * Successive halving's line: "search halving: factor 3 on the validation MSE (3 folds) · rungs 6
 * configurations × 3 rounds → 2 × 9 rounds → 1 × 20 rounds · trained 21 % of the grid's rounds (…)"; null for a grid.
 */
export function halvingLine(run: SearchRun, task: Task): string | null {
  const halving = halvingOf(run.config)
  if (!halving) return null
  const m = firstAtLargest(run)
  const rungs = m?.rungs ? ` · rungs ${describeRungs(m.rungs)}` : ''
  return `search halving: factor ${halving.factor} on the validation ${METRIC_SPECS[task.metric].label} (${heldOutWords(run)})${rungs}${trainedShare(run)}`
}

/** Both lines that apply, early stopping's first. */
export function searchLines(run: SearchRun, task: Task): string[] {
  return [earlyStoppingLine(run, task), halvingLine(run, task)].filter((l): l is string => l !== null)
}

/** The held-out rows models are validated on: "3 folds", "the last 25 % of the training rows". */
function heldOutWords(run: SearchRun): string {
  return run.config.set?.folds ? `${run.config.set.folds} folds` : `the last ${((run.config.validation ?? 0) * 100).toFixed(0)} % of the training rows`
}

/** The first finished measurement at the largest size (the one the summary's model lines describe). */
export function firstAtLargest(run: SearchRun): Measurement | undefined {
  const largest = Math.max(...run.config.sizes)
  return run.measurements.find((x) => x.size === largest && x.status === 'ok' && x.perModel.length > 0)
}

/** " · trained 37 % of the grid's rounds (1110 of 3000, sequential at 10000 rows)" (contract/early-stopping.ts roundsTrainedShare), or '' when the models do not count their rounds. */
function trainedShare(run: SearchRun): string {
  const m = firstAtLargest(run)
  const share = m ? roundsTrainedShare(familyOf(run.config.model), run.config, m.perModel) : null
  return share
    ? ` · trained ${((100 * share.trained) / share.grid).toFixed(0)} % of the grid's ${roundWords(run)} (${share.trained} of ${share.grid}, ${m!.strategy} at ${m!.size} rows)`
    : ''
}

/** What the family's rounds are called, plural: "rounds" (trees), "epochs" (MLP). */
function roundWords(run: SearchRun): string {
  return `${familyOf(run.config.model).roundWord ?? 'round'}s`
}
