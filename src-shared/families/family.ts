// The shared half of a model family: everything the renderer, the CLI and main need to know about a
// kind of model without training it: its hyperparameters (as field specs, from which the schema, the
// CLI flags and the config panel's inputs are all derived), its unit of progress and of work, its
// memory need, and which backends and strategies it supports. The worker half (training) lives in
// src-main/engine/families/. Pool, runner, verify, service and the shells see only this interface.
import { z } from 'zod'
import { intField, intListField, type Range, realField } from '../vocabulary/fields'
import type { PresetName } from '../vocabulary/names'
import type { Progress } from '../vocabulary/progress'
import type { WorkloadOf, WorkloadTask } from '../vocabulary/workload-shape'
import type { ModelSet } from '../vocabulary/model-set-shape'
import type { BackendSpec } from './backend'

export type Workload<P extends ModelParamsBase = ModelParamsBase> = WorkloadOf<P>

/** One hyperparameter: its schema, CLI flag and form input all come from this. */
export type ParamField = {
  key: string
  /** what the config panel shows, and what error messages call it */
  label: string
  /** the `trainpool bench` flag */
  flag: string
  help: string
  /** the field may take several values in a model set's grid (contract/model-set.ts) */
  vary?: true
} & ({ type: 'int'; range: Range } | { type: 'real'; range: Range & { exclusiveMin?: boolean } } | { type: 'intList'; range: Range; count: Range })

export interface ModelParamsBase {
  kind: string
}

/** A family's shared half; N: its backends' names (a built-in family's, exactly those of its table, which its worker half must match). */
export interface ModelFamily<P extends ModelParamsBase = ModelParamsBase, N extends string = string> {
  kind: P['kind']
  /** "neural network (MLP)" */
  label: string
  /** "MLP", for tight places (chart titles, table cells) */
  shortLabel: string
  fields: readonly ParamField[]
  paramsSchema: z.ZodType<P>
  defaults: P
  /** the backends that can train this family, one entry each (families/backend.ts), in the order `auto` prefers them */
  backends: readonly BackendSpec<N>[]
  /** steps one job reports as progress (a job trains one model, or a fused group in the same steps) */
  progressTotal(w: Workload<P>): number
  /** the rounds (trees) or epochs a model trains at most, what early stopping counts (contract/early-stopping.ts); absent: the family does not stop early */
  maxRounds?(model: P): number
  /** what maxRounds counts, in words: 'round' (trees), 'epoch' (MLP) — early stopping's and halving's lines say it */
  roundWord?: 'round' | 'epoch'
  /** the same model trained to `rounds` rounds (a successive-halving rung, contract/halving.ts); absent: the family cannot be searched by halving */
  withRounds?(model: P, rounds: number): P
  /** a lane's words for a progress report: "epoch 2/3 · batch 5/16", "tree 37/100" */
  describeProgress(p: Progress, w: Workload<P>): string
  /** the unit work is counted in, and how its rate is shown */
  work: { unit: string; rateLabel: string; rateScale: number }
  /**
   * work of training `models` models on this workload (FLOPs for the MLP), each on `rowShare` of the
   * training rows (a fold's model: contract/model-set.ts foldRowShare; absent: 1)
   */
  workCount(w: Workload<P>, models: number, rowShare?: number): number
  /** peak bytes of one worker holding `modelsInWorker` models at once */
  workerPeakBytes(w: Workload<P>, modelsInWorker: number): number
  /** relative tolerance on model i's test MSE across strategies on one backend (0: exact) */
  sameWorkTolerance: number
  /**
   * Backends side by side: how model i on backend `a` compares with model i on `b` — the same model
   * bit for bit (fingerprints), within a relative test-MSE tolerance, or not one by one (`incomparable`: why).
   */
  crossBackend(a: string, b: string, run: { model: P; set?: ModelSet }): { fingerprints: boolean; tolerance: number } | { incomparable: string }
  /**
   * On the user's data: whether training takes missing feature values as they are (`native`: trees
   * learn a default direction) or they must be imputed or the run is refused (`refuse`), and whether
   * features are standardised with the training rows' statistics first. Absent: refuse, raw.
   */
  userData?: { missingValues: 'native' | 'refuse'; standardise: boolean }
  /**
   * The small fixed workload `auto`'s calibration times on every backend it may pick
   * (src-shared/calibration.ts): `size` rows, one model alone and `models` fused, the defaults with
   * `params` over them; `step` names its progress unit; `stepsParam` is the parameter that counts
   * passes (epochs, rounds), multiplied where a job is too short to time its steps. Absent: a small default.
   */
  calibration?: { size: number; models: number; params: Partial<P>; stepsParam?: string; step: string }
  /** the family's tweak of each preset (smoke must take seconds), and how the preset says it */
  presets: Partial<Record<PresetName, { params: Partial<P>; note: string }>>
  /** what a user should know about these settings before running them (shown by the config panel) */
  notes(params: P): string[]
  /** one line: "100→64→1, Adam lr 0.01, batch 512, 3 epochs" */
  describe(params: P, features: number, task?: WorkloadTask): string
}

/** The zod schema of a family's parameters, derived from its field specs. */
export function paramsSchemaFrom<P extends ModelParamsBase>(kind: P['kind'], fields: readonly ParamField[]): z.ZodType<P> {
  const shape: Record<string, z.ZodType> = { kind: z.literal(kind) }
  for (const f of fields) {
    shape[f.key] = f.type === 'int' ? intField(f.key, f.range) : f.type === 'real' ? realField(f.key, f.range) : intListField(f.key, f.range, f.count)
  }
  return z.object(shape).strict() as unknown as z.ZodType<P>
}

/** "accepted: an integer from 1 to 1000" for a field, as the CLI and the form say it. */
export function acceptedText(f: ParamField): string {
  switch (f.type) {
    case 'int':
      return `an integer from ${f.range.min} to ${f.range.max}`
    case 'real':
      return f.range.exclusiveMin ? `a number above ${f.range.min} and at most ${f.range.max}` : `a number from ${f.range.min} to ${f.range.max}`
    case 'intList':
      return `${f.count.max > 1 ? `1 to ${f.count.max} comma-separated integers` : 'an integer'} from ${f.range.min} to ${f.range.max}`
  }
}

/** A family's entry for a backend; undefined when the family has no such backend. */
export function backendSpec(family: Pick<ModelFamily, 'backends'>, name: string): BackendSpec | undefined {
  return family.backends.find((b) => b.name === name)
}

/** The names of a family's backends, in its `auto` preference order. */
export function backendNames(family: Pick<ModelFamily, 'backends'>): string[] {
  return family.backends.map((b) => b.name)
}

/** Why `batched` does not exist for a family on a backend, or null when it does. */
export function whyNoBatched(family: Pick<ModelFamily, 'backends'>, name: string): string | null {
  const batched = backendSpec(family, name)?.batched
  return batched === undefined || batched === true ? null : batched.why
}

/** Work per second in the family's rate unit (GFLOP/s for the MLP); 0 for a zero wall time. */
export function workRate(family: Pick<ModelFamily, 'work'>, work: number, wallMs: number): number {
  return wallMs > 0 ? work / (wallMs / 1000) / family.work.rateScale : 0
}
