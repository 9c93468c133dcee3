// Successive halving over a model set (issue 39, part 3), the one home of its rule: rung i trains
// every surviving configuration (with all its seeds × folds) to r_i = min(rounds, r·η^i) rounds;
// after a rung the configurations are ranked by the mean over their models of the validation value
// of the run's primary metric at the rung's last round (in the metric's direction, ties by
// configuration index) and the best ⌈n_i/η⌉ continue — from where they stopped, nothing retrained.
// The last rung ends at the full rounds. Rung boundaries are the only sync points (bench/runner.ts),
// and every strategy computes the same per-model metrics, so every strategy promotes the same ones.
// Peers: scikit-learn's HalvingGridSearchCV (factor 3, resource='max_iter'), Ray Tune's ASHA.
import { z } from 'zod'
import { whyNoHalving } from '../families/backend'
import type { ModelFamily } from '../families/family'
import { validationMetricValue } from '../metrics'
import { intField } from '../vocabulary/fields'
import { isBetter, type MetricName, type Metrics } from '../vocabulary/task'
import { backendKnown } from '../families'
import type { ModelArtifact } from './model-artifact-shape'
import { configurationCount, configurationParams, foldRowShare, type ModelSet, type PathIssue, setMember } from './model-set'
import type { WorkloadOf } from '../vocabulary/workload-shape'

/** --factor η and --min-rounds r: their limits (η above 10 keeps a tenth or less after the first rung: hardly a search). */
export const HALVING_LIMITS = {
  factor: { min: 2, max: 10 },
  minRounds: { min: 1, max: 100_000 },
} as const

export const DEFAULT_HALVING_FACTOR = 3

export const SEARCH_METHODS = ['grid', 'halving'] as const
export type SearchMethod = (typeof SEARCH_METHODS)[number]

/** config.search: how a model set is searched; absent: grid (every configuration to its last round). */
export const SearchSchema = z.discriminatedUnion(
  'method',
  [
    z.object({ method: z.literal('grid') }).strict(),
    z
      .object({
        method: z.literal('halving'),
        factor: intField('factor', HALVING_LIMITS.factor).default(DEFAULT_HALVING_FACTOR),
        /** the first rung's rounds; absent: defaultMinRounds */
        minRounds: intField('minRounds', HALVING_LIMITS.minRounds).optional(),
      })
      .strict(),
  ],
  { error: `search.method accepts ${SEARCH_METHODS.join(', ')}` },
)
export type Search = z.infer<typeof SearchSchema>
export type HalvingSearch = Extract<Search, { method: 'halving' }>

/** The halving search of a config, or null (grid). */
export function halvingOf(c: { search?: Search }): HalvingSearch | null {
  return c.search?.method === 'halving' ? c.search : null
}

/** One rung: the rounds every live model has at its end, and how many configurations train in it. */
export interface RungPlan {
  rounds: number
  configurations: number
}

/**
 * The default first rung: the longest whose search trains at most 1/η of the grid's rounds (at least 1).
 * Successive halving as first defined spends a fixed budget (Karnin et al., ICML 2013; Jamieson &
 * Talwalkar, AISTATS 2016); this one is the grid's 1/η, and within it the first rung is made as long as
 * it can be because its ranking is the least reliable (Hyperband's reason for its brackets). Measured on
 * the 54-configuration trees grid of issue 39 (100 rounds, η 3): scikit-learn's min_resources='exhaust'
 * (r = ⌊rounds / η^⌊log_η n⌋⌋ = 3, the earlier default) trained 9 % of the grid's rounds and kept a
 * configuration 56 % worse than the grid's best — deep trees lead every rung up to 36 rounds and the
 * shallow best only from 45 — where this rule's r = 16 (32 %) keeps the best itself.
 */
export function defaultMinRounds(rounds: number, configurations: number, factor: number): number {
  let best = 1
  for (let r = 2; r <= rounds; r++) if (rungsShare(halvingRungs(rounds, configurations, factor, r)) <= 1 / factor) best = r
  return best
}

/** The share of the grid's rounds that rungs train: Σ n_i·(r_i − r_{i−1}) over n_0·(the last rung's rounds). */
export function rungsShare(rungs: readonly RungPlan[]): number {
  let trained = 0
  let before = 0
  for (const r of rungs) {
    trained += r.configurations * (r.rounds - before)
    before = r.rounds
  }
  return trained / (rungs[0].configurations * rungs.at(-1)!.rounds)
}

/**
 * The rungs: r_i = min(rounds, r·η^i) with n_0 = configurations and n_{i+1} = ⌈n_i/η⌉; the rung
 * once one configuration is left, and the rung that reaches `rounds`, end at the full rounds (the last).
 */
export function halvingRungs(rounds: number, configurations: number, factor: number, minRounds: number): RungPlan[] {
  const rungs: RungPlan[] = []
  let n = configurations
  let r = Math.min(rounds, minRounds)
  for (let i = 0; ; i++) {
    rungs.push({ rounds: r, configurations: n })
    if (r >= rounds) return rungs
    n = Math.ceil(n / factor)
    r = n === 1 ? rounds : Math.min(rounds, minRounds * factor ** (i + 1))
  }
}

/** A run's rungs from its config: the rounds its model trains, its set's configurations, its factor and first rung. */
export function rungsOf(family: Pick<ModelFamily, 'maxRounds'>, c: { model: { kind: string }; set?: ModelSet; search?: Search }): RungPlan[] | null {
  const halving = halvingOf(c)
  if (!halving || !c.set || !family.maxRounds) return null
  const rounds = family.maxRounds(c.model as never)
  const n = configurationCount(c.set)
  return halvingRungs(rounds, n, halving.factor, halving.minRounds ?? defaultMinRounds(rounds, n, halving.factor))
}

/**
 * The share of the grid's rounds a search trains, before it runs: 1 for a grid; for halving the rung
 * arithmetic (rungsShare: every configuration taken at the mean cost, which ones survive is not known
 * before the run). 54 configurations, η 3, 100 rounds, first rung 16 (the default): 32.4 %.
 */
export function searchShare(family: Pick<ModelFamily, 'maxRounds'>, c: { model: { kind: string }; set?: ModelSet; search?: Search }): number {
  const rungs = rungsOf(family, c)
  return rungs ? rungsShare(rungs) : 1
}

/** The models of configuration c (contiguous: model i = (c · seeds + s) · folds + f). */
export function configurationModels(set: ModelSet, c: number): number[] {
  const per = set.seeds * (set.folds ?? 1)
  return Array.from({ length: per }, (_, k) => c * per + k)
}

/** What a model's result says of its held-out rows. */
type Validated = { index: number; validationMse?: number; validationMetrics?: Metrics }

/**
 * The configurations that continue: `live` ranked by the mean over each one's models (`perModel`, by
 * index) of their validation `metric`, better first in its direction, a NaN mean last, ties by
 * configuration index; the best `keep`, returned in configuration order.
 */
export function promote(set: ModelSet, live: readonly number[], perModel: ReadonlyMap<number, Validated>, metric: MetricName, keep: number): number[] {
  const scored = live.map((c) => ({ c, mean: configurationMean(set, c, perModel, metric) }))
  scored.sort((a, b) => {
    if (Number.isNaN(a.mean) !== Number.isNaN(b.mean)) return Number.isNaN(a.mean) ? 1 : -1
    if (isBetter(metric, a.mean, b.mean)) return -1
    if (isBetter(metric, b.mean, a.mean)) return 1
    return a.c - b.c
  })
  return scored
    .slice(0, keep)
    .map((s) => s.c)
    .sort((a, b) => a - b)
}

/** The mean over configuration c's models of their validation `metric` (NaN when one has none). */
export function configurationMean(set: ModelSet, c: number, perModel: ReadonlyMap<number, Validated>, metric: MetricName): number {
  const models = configurationModels(set, c)
  let sum = 0
  for (const i of models) {
    const m = perModel.get(i)
    sum += m ? validationMetricValue(m, metric) : NaN
  }
  return sum / models.length
}

/**
 * The work a halving search did, in the family's unit: each model's configuration's work for the
 * rounds it trained (workOf's count, a fold's model on (K−1)/K of the rows), not the grid's.
 */
export function halvingWork(
  family: Pick<ModelFamily, 'fields' | 'workCount' | 'withRounds'>,
  w: WorkloadOf<{ kind: string }>,
  perModel: readonly { index: number; roundsTrained?: number }[],
): number {
  const set = w.set!
  const share = foldRowShare(set)
  let work = 0
  for (const p of perModel) {
    const params = configurationParams(family, w.model, set, setMember(set, p.index).configuration)
    work += family.workCount({ ...w, set: undefined, model: family.withRounds!(params as never, p.roundsTrained ?? 0) } as never, 1, share)
  }
  return work
}

/** A trained model's state that a rung hands the next: its model so far (trees) and the rounds in it (worker-socket.ts validates it). */
export interface ResumeState {
  index: number
  rounds: number
  artifact: ModelArtifact
}

/**
 * What a halving measurement records of each rung: its rounds, the configurations that trained in
 * it and their models, and each one's mean validation metric at the rung's end (what promote ranked;
 * null where a model had none) — a chart's points of metric against rounds, cut at each rung.
 */
export const RungRecordSchema = z
  .object({
    rounds: z.number().int().min(1),
    configurations: z.array(z.number().int().min(0)),
    models: z.number().int().min(0),
    /** by position in `configurations` */
    validation: z.array(z.number().nullable()),
  })
  .strict()
export type RungRecord = z.infer<typeof RungRecordSchema>

/** "54 configurations × 3 rounds → 18 × 9 rounds → 6 × 27 rounds → 2 × 81 rounds → 1 × 100 rounds" (a rung of 1 round: "× 1 round") */
export function describeRungs(rungs: readonly Pick<RungRecord, 'rounds' | 'configurations'>[]): string {
  return rungs.map((r, i) => `${r.configurations.length}${i === 0 ? ' configurations' : ''} × ${r.rounds} round${r.rounds === 1 ? '' : 's'}`).join(' → ')
}

/** The config's fields halving reads (config.ts passes itself). */
interface HalvingConfig {
  model: { kind: string }
  set?: ModelSet
  search?: Search
  backend: string | string[]
  earlyStopping?: number
  validation?: number
}

/**
 * Halving's refusals, each naming its field: a model set of two or more configurations, held-out rows
 * to rank them on (folds, or a validation fraction), a first rung within the rounds, rounds not a grid
 * axis (the rungs decide every configuration's rounds), no early stopping beside it (a stopped model
 * keeps its best round, so a rung could not continue it from its last), and a backend that resumes.
 */
export function halvingProblems(c: HalvingConfig, family: ModelFamily): PathIssue[] {
  const halving = halvingOf(c)
  if (!halving) return []
  const problems: PathIssue[] = []
  const at = (field: string, message: string) => problems.push({ path: ['search', field], message })
  if (!family.maxRounds || !family.withRounds) {
    at('method', `search halving: the ${family.label} family does not train in rounds that a rung could continue; accepted: search grid`)
    return problems
  }
  const set = c.set
  const configurations = set ? configurationCount(set) : 1
  if (configurations < 2) {
    at(
      'method',
      `search halving ranks configurations and this run has ${configurations}: accepted: a model set with two or more configurations (several values of a field), or search grid`,
    )
  }
  if ((set?.folds ?? null) === null && c.validation === undefined) {
    at(
      'method',
      'search halving ranks configurations by their validation metric on held-out rows, and this run holds none out; accepted: with folds (2 to 10) or a validation fraction (0.05 to 0.5)',
    )
  }
  const rounds = family.maxRounds(c.model as never)
  if (halving.minRounds !== undefined && halving.minRounds > rounds) {
    at('minRounds', `minRounds ${halving.minRounds} is above the model's ${rounds} rounds; accepted: 1 to ${rounds} (the last rung ends at the full rounds)`)
  }
  if (set && configurations >= 2) {
    const varies = new Set(Array.from({ length: configurations }, (_, k) => family.maxRounds!(configurationParams(family, c.model, set, k) as never)))
    if (varies.size > 1) {
      at(
        'method',
        'search halving decides how many rounds each configuration trains (its rungs), so rounds cannot be a grid axis; accepted: one rounds value (the last rung), or search grid',
      )
    }
  }
  if (c.earlyStopping !== undefined) {
    at(
      'method',
      "search halving continues each model from its last round, and early stopping keeps a model's best round instead; accepted: one of them (no --early-stopping with --search halving)",
    )
  }
  for (const backend of Array.isArray(c.backend) ? c.backend : [c.backend]) {
    // auto picks among the family's auto backends: refused only when none of them resumes
    const why =
      backend === 'auto'
        ? family.backends.some((b) => b.auto && b.halving === true)
          ? null
          : `no backend auto may pick for the ${family.label} family continues a model between rungs; accepted: search grid`
        : backendKnown(backend)
          ? whyNoHalving(family, backend)
          : null
    if (why) at('method', `search halving: ${why}`)
  }
  return problems
}
