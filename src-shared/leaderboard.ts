// A model set's leaderboard: one row per configuration, ranked by its score — the run's primary
// metric (its task's: MSE, log loss, accuracy, ROC AUC), the mean over its folds and seeds on the
// held-out rows with folds, else over its seeds on the test rows — in the metric's direction, with
// the spread, the objective's other metrics and its time per model, read from one measurement at
// the largest size (the median run's times, and says so). A run from before classifiers (no task)
// is regression ranked by MSE, as it always was. The one home of the ranking and of the words for
// a score ("validation log loss"): the CLI, the exports, the Run view and the report.
import type { Measurement, RunResult } from './contract'
import { configurationParams, describeConfiguration, type GridValue, setMember } from './contract/model-set'
import { familyOf } from './families'
import { formatDuration } from './format'
import { metricValue, validationMetricValue } from './metrics'
import { METRIC_SPECS, type MetricName, metricsOf, REGRESSION_TASK, type Task } from './vocabulary/task'

export interface Spread {
  mean: number
  /** sample standard deviation; null for a single model */
  std: number | null
}

export interface LeaderboardEntry {
  /** the configuration's position in the set's order (contract/model-set.ts) */
  configuration: number
  /** its varied values in words: "max-depth 4 · eta 0.1" ('' when nothing varies: seeds or folds only) */
  label: string
  /** the varied fields' values, by field key */
  params: Record<string, GridValue>
  models: number
  /** what it is ranked by: the primary metric on the held-out rows with folds, else on the test rows */
  score: Spread
  /** the test MSE (a classifier's: of its probabilities against the one-hot label, the Brier score) */
  testMse: Spread
  /** every metric of the objective on the test rows, and (with folds) on the held-out rows; a metric no model has (AUC on one class) is absent */
  metrics: { test: Partial<Record<MetricName, Spread>>; validation: Partial<Record<MetricName, Spread>> | null }
  /** mean training time per model, ms (a fused group's time shared among its models) */
  trainMs: number | null
  /**
   * How far it trained, when its models count their rounds (early stopping, search halving): its
   * last rung (0-based; halving), the rounds its models trained and their best round (early stopping), each over its models
   */
  rounds: { rung: number | null; trained: RoundRange; best: RoundRange | null } | null
  rank: number
}

/** Rounds over a configuration's models: equal (min = max) under halving, each model's own under early stopping. */
export interface RoundRange {
  min: number
  max: number
}

/** Where a board's times per model come from, when its measurement ran more than once. */
export interface BoardTiming {
  /** the run the models' times were measured in (0 = the first) */
  run: number
  runs: number
  /** that run's wall time, ms */
  runMs: number
  /** the measurement's reported time (the median run), ms */
  reportedMs: number
  /** the times were scaled by reportedMs / runMs (an older file's first run): false when they are that run's own */
  scaled: boolean
}

export interface Leaderboard {
  size: number
  /** with search halving: how many rungs the board's measurement ran (an entry's rung is of these) */
  rungs: number | null
  scoreKind: 'validation' | 'test'
  /** what the models learned and the metric they are ranked by (a run without one: regression by MSE) */
  task: Task
  /** null when the measurement ran once (its times are its own) */
  timing: BoardTiming | null
  /** best first */
  entries: LeaderboardEntry[]
}

function spread(values: number[]): Spread {
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  if (values.length < 2) return { mean, std: null }
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1)
  return { mean, std: Math.sqrt(variance) }
}

/** The measurement the board reads: finished, at the largest size, every model, own times first. */
function boardMeasurement(run: Pick<RunResult, 'measurements'>, models: number): Measurement | undefined {
  const done = run.measurements.filter((m) => m.status === 'ok' && m.perModel.length === models)
  if (done.length === 0) return undefined
  const size = Math.max(...done.map((m) => m.size))
  const atSize = done.filter((m) => m.size === size)
  return atSize.find((m) => m.strategy === 'sequential') ?? atSize.find((m) => m.strategy === 'pool') ?? atSize[0]
}

/** The spread of a metric over models that have it; null when none has (a binary fold of one class has no AUC). */
function presentSpread(values: number[]): Spread | null {
  const present = values.filter((v) => !Number.isNaN(v))
  return present.length ? spread(present) : null
}

const NO_SCORE: Spread = { mean: NaN, std: null }

/** Ranks before ranks after: the better mean in the metric's direction first; a score that is not a number last. */
function byScore(metric: MetricName) {
  const sign = METRIC_SPECS[metric].better === 'min' ? 1 : -1
  return (a: LeaderboardEntry, b: LeaderboardEntry) => {
    const [x, y] = [a.score.mean, b.score.mean]
    if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1
    return (Number.isNaN(x) ? 0 : sign * (x - y)) || a.configuration - b.configuration
  }
}

/** The board of a run with a model set; null for a plain run or before a measurement finished. */
export function leaderboardOf(run: Pick<RunResult, 'config' | 'measurements'> & { task?: Task }): Leaderboard | null {
  const set = run.config.set
  if (!set) return null
  const models = run.config.models[0]
  const m = boardMeasurement(run, models)
  if (!m) return null
  const family = familyOf(run.config.model)
  const scoreKind = set.folds !== null ? 'validation' : 'test'
  const task = run.task ?? REGRESSION_TASK
  const metrics = metricsOf(task.objective)
  const timing = timingOf(m)
  const scale = timing?.scaled ? timing.reportedMs / timing.runMs : 1
  // a fused group's time, shared by the models trained in it (same worker, configuration and fold)
  const groupSize = new Map<string, number>()
  const groupOf = (p: Measurement['perModel'][number]) => `${p.worker}/${p.configuration}/${p.fold}`
  for (const p of m.perModel) groupSize.set(groupOf(p), (groupSize.get(groupOf(p)) ?? 0) + 1)
  const byConfiguration = new Map<number, Measurement['perModel']>()
  for (const p of m.perModel) {
    const c = p.configuration ?? setMember(set, p.index).configuration
    byConfiguration.set(c, [...(byConfiguration.get(c) ?? []), p])
  }
  const varied = family.fields.filter((f) => (set.grid[f.key]?.length ?? 0) > 1)
  const entries = [...byConfiguration].map(([configuration, ps]): LeaderboardEntry => {
    const params = configurationParams(family, run.config.model, set, configuration) as unknown as Record<string, GridValue>
    const times = ps.map((p) => {
      const ms = p.trainMs ?? (p.groupTrainMs !== null ? p.groupTrainMs / (groupSize.get(groupOf(p)) ?? 1) : null)
      return ms === null ? null : ms * scale
    })
    return {
      configuration,
      label: describeConfiguration(family, set, params),
      params: Object.fromEntries(varied.map((f) => [f.key, params[f.key]])),
      models: ps.length,
      score: presentSpread(ps.map((p) => (scoreKind === 'validation' ? validationMetricValue(p, task.metric) : metricValue(p, task.metric)))) ?? NO_SCORE,
      testMse: spread(ps.map((p) => p.testMse)),
      metrics: {
        test: spreads(metrics, (metric) => ps.map((p) => metricValue(p, metric))),
        validation: scoreKind === 'validation' ? spreads(metrics, (metric) => ps.map((p) => validationMetricValue(p, metric))) : null,
      },
      trainMs: times.every((t) => t !== null) ? spread(times as number[]).mean : null,
      rounds: roundsOf(ps),
      rank: 0,
    }
  })
  entries.sort(byScore(task.metric))
  entries.forEach((e, i) => (e.rank = i + 1))
  return { size: m.size, rungs: m.rungs?.length ?? null, scoreKind, task, timing, entries }
}

/** The range of some rounds; null when a model lacks them. */
function rangeOf(values: readonly (number | undefined)[]): RoundRange | null {
  if (values.length === 0 || values.some((v) => v === undefined)) return null
  return { min: Math.min(...(values as number[])), max: Math.max(...(values as number[])) }
}

/** A configuration's rounds from its models' results: null unless every one records its rounds trained. */
function roundsOf(ps: Measurement['perModel']): LeaderboardEntry['rounds'] {
  const trained = rangeOf(ps.map((p) => p.roundsTrained))
  if (!trained) return null
  const rungs = ps.map((p) => p.rung).filter((r): r is number => r !== undefined)
  return { rung: rungs.length ? Math.max(...rungs) : null, trained, best: rangeOf(ps.map((p) => p.bestRound)) }
}

/** "20", or "12–20" when the models differ. */
export function roundRangeText(r: RoundRange | null): string {
  if (!r) return '—'
  return r.min === r.max ? String(r.min) : `${r.min}–${r.max}`
}

/**
 * The board's round columns, present when its models count their rounds: "last rung" ("2 of 4",
 * search halving), "rounds" (trained), "best round" (early stopping).
 */
export function roundColumns(board: Pick<Leaderboard, 'entries' | 'rungs'>): { header: string; cell: (e: LeaderboardEntry) => string }[] {
  if (!board.entries.some((e) => e.rounds)) return []
  const columns: { header: string; cell: (e: LeaderboardEntry) => string }[] = []
  if (board.rungs !== null && board.entries.some((e) => e.rounds?.rung != null)) {
    columns.push({ header: 'last rung', cell: (e) => (e.rounds?.rung != null ? `${e.rounds.rung + 1} of ${board.rungs}` : '—') })
  }
  columns.push({ header: 'rounds', cell: (e) => roundRangeText(e.rounds?.trained ?? null) })
  if (board.entries.some((e) => e.rounds?.best)) columns.push({ header: 'best round', cell: (e) => roundRangeText(e.rounds?.best ?? null) })
  return columns
}

/** Each metric's spread over the models that have it (absent when none has). */
function spreads(metrics: readonly MetricName[], valuesOf: (metric: MetricName) => number[]): Partial<Record<MetricName, Spread>> {
  const out: Partial<Record<MetricName, Spread>> = {}
  for (const metric of metrics) {
    const s = presentSpread(valuesOf(metric))
    if (s) out[metric] = s
  }
  return out
}

/** "validation log loss", "test MSE": what a board's score is, in words. */
export function scoreLabel(board: Pick<Leaderboard, 'scoreKind' | 'task'>): string {
  return `${board.scoreKind} ${METRIC_SPECS[board.task.metric].label}`
}

/** "lower is better" (MSE, log loss) or "higher is better" (accuracy, ROC AUC). */
export function betterText(metric: MetricName): string {
  return METRIC_SPECS[metric].better === 'min' ? 'lower is better' : 'higher is better'
}

/** A column of the board's table: which rows (held-out or test) and which metric. */
export interface BoardColumn {
  rows: 'validation' | 'test'
  metric: MetricName
  /** "validation log loss", "test accuracy" */
  label: string
}

/**
 * The board's score columns: the primary metric on the rows it ranks by, then the objective's other
 * metrics on the same rows, then (with folds) the primary metric on the test rows. A regression
 * board: "validation MSE", "test MSE" (or "test MSE" alone), as before classifiers.
 */
export function boardColumns(board: Pick<Leaderboard, 'scoreKind' | 'task'>): BoardColumn[] {
  const primary = board.task.metric
  const ordered = [primary, ...metricsOf(board.task.objective).filter((m) => m !== primary)]
  const column = (rows: BoardColumn['rows'], metric: MetricName): BoardColumn => ({ rows, metric, label: `${rows} ${METRIC_SPECS[metric].label}` })
  return [...ordered.map((m) => column(board.scoreKind, m)), ...(board.scoreKind === 'validation' ? [column('test', primary)] : [])]
}

/** An entry's spread in a column (its score for the first). */
export function columnSpread(e: LeaderboardEntry, c: BoardColumn): Spread | null {
  if (c.metric === 'mse' && c.rows === 'test') return e.testMse
  return (c.rows === 'validation' ? e.metrics.validation : e.metrics.test)?.[c.metric] ?? null
}

/** A repeated measurement's runs: which one the models' times are from, and whether they had to be scaled to the reported one. */
function timingOf(m: Measurement): BoardTiming | null {
  if (!m.runsMs || m.runsMs.length < 2) return null
  // files from before perModelRun kept the first run's models
  const run = m.perModelRun ?? 0
  const runMs = m.runsMs[run]
  return { run, runs: m.runsMs.length, runMs, reportedMs: m.wallMs, scaled: runMs !== m.wallMs && runMs > 0 }
}

/** Where the times per model come from, in words: "time per model from run 2 of 3 (62 ms), the median run"; null for a single run. */
export function timingText(timing: BoardTiming | null): string | null {
  if (!timing) return null
  const from = `run ${timing.run + 1} of ${timing.runs} (${formatDuration(timing.runMs)})`
  return timing.scaled
    ? `time per model from ${from}, scaled to the median ${formatDuration(timing.reportedMs)}`
    : `time per model from ${from}, the median run`
}

/** A measurement's mean score in a metric over its models that have it (a binary test set of one class has no AUC); null when none has. */
export function meanMetric(perModel: readonly Parameters<typeof metricValue>[0][], metric: MetricName): number | null {
  const values = perModel.map((p) => metricValue(p, metric)).filter((v) => !Number.isNaN(v))
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null
}

/** "0.0812 ± 0.0031" (4 significant digits); "—" for none. */
export function spreadText(s: Spread | null): string {
  if (!s || Number.isNaN(s.mean)) return '—'
  return s.std === null ? s.mean.toPrecision(4) : `${s.mean.toPrecision(4)} ± ${s.std.toPrecision(2)}`
}

/** The board as a table (the CLI pads it, the Markdown export pipes it): a title, a header and a row per configuration. */
export function leaderboardTable(board: Leaderboard, set: { seeds: number; folds: number | null }): { title: string; header: string[]; rows: string[][] } {
  const over =
    board.scoreKind === 'validation'
      ? `${scoreLabel(board)} over ${set.folds} folds${set.seeds > 1 ? ` × ${set.seeds} seeds` : ''}`
      : `${scoreLabel(board)}${set.seeds > 1 ? ` over ${set.seeds} seeds` : ''}`
  const timing = timingText(board.timing)
  // the score first (with folds: the held-out rows'), the objective's other metrics, then with folds the test rows' score
  const columns = boardColumns(board)
  const rounds = roundColumns(board)
  return {
    title: `Leaderboard at ${board.size.toLocaleString('en-US')} rows, ranked by ${over}, best first${timing ? `; ${timing}` : ''}`,
    header: ['rank', 'configuration', ...columns.map((c) => c.label), ...rounds.map((r) => r.header), 'time/model'],
    rows: board.entries.map((e) => [
      `${e.rank}${e.rank === 1 ? ' (best)' : ''}`,
      e.label || `#${e.configuration + 1}`,
      ...columns.map((c, i) => spreadText(i === 0 ? e.score : columnSpread(e, c))),
      ...rounds.map((r) => r.cell(e)),
      formatDuration(e.trainMs),
    ]),
  }
}

/**
 * How batched grouped a model set, from its batched measurement at the board's size: "batched
 * trained the 16 models in 4 fused programs (4, 4, 4, 4 models)"; null without one.
 */
export function fusionText(run: Pick<RunResult, 'config' | 'measurements'>): string | null {
  if (!run.config.set) return null
  const batched = run.measurements.filter((m) => m.strategy === 'batched' && m.status === 'ok' && m.perModel.some((p) => p.fusedGroup !== undefined))
  if (batched.length === 0) return null
  const m = batched.reduce((a, b) => (b.size > a.size || (b.size === a.size && b.workers > a.workers) ? b : a))
  const sizes = new Map<string, number>()
  for (const p of m.perModel) sizes.set(`${p.worker}/${p.fusedGroup}`, (sizes.get(`${p.worker}/${p.fusedGroup}`) ?? 0) + 1)
  const counts = [...sizes.values()]
  return `batched W=${m.workers} trained the ${m.perModel.length} models in ${counts.length} fused program${counts.length === 1 ? '' : 's'} (${counts.join(', ')} models): a program fuses configurations that differ only where the backend takes parameters per model, and folds wherever the backend holds a fold's rows out of one training set`
}
