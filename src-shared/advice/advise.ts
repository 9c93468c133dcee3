// Advice from a finished run: which strategy and W to use for N models at a data size, predicted
// from the run's own summary, and the check of that advice against a run that measured it. Pure:
// the CLI, the service and the renderer call the same code. One line per (strategy, W) at a
// measured size; it refuses rather than guesses. The choices and why: ../README.md, "advice/".
import { ADVICE_LIMITS, type Advice, type AdviceCheck, type AdviceOption, type AdviceTarget, type CostModel, type WorkerScaling } from '../contract/advice'
import type { BenchConfig, ConcreteBackend, Strategy } from '../contract/config'
import { setSize } from '../contract/model-set'
import { optionKey, type RunResult, type SummaryEntry } from '../contract/result'
import { formatDuration } from '../format'
import { fitLine, predictWithInterval } from './linear-fit'
import { fitWorkerScaling } from './worker-scaling'

/** the fewest model counts a line is fitted and checked on */
export const MIN_MODEL_COUNTS = 3

/** "50 000": rows and counts in advice text, grouped by thin spaces as in the design's prose. */
export function groupedNumber(n: number): string {
  return Math.round(n).toLocaleString('en-US').replace(/,/g, ' ')
}

/** "batched, W=2", "sequential"; backends side by side "onnxruntime batched, W=2" */
export function optionLabel(o: { strategy: Strategy; workers: number; backend?: string }, separator = ', '): string {
  const label = o.strategy === 'sequential' ? 'sequential' : `${o.strategy}${separator}W=${o.workers}`
  return o.backend ? `${o.backend} ${label}` : label
}

/** "36–47 s" when both ends are plain numbers of the same unit, else "950 ms–1.20 s", "25.2 s–3 min 41 s". */
export function formatRange(lowMs: number, highMs: number): string {
  const low = formatDuration(lowMs)
  const high = formatDuration(highMs)
  const plain = /^[\d.]+ (ms|s)$/
  const unit = plain.exec(low)?.[1]
  return unit && plain.exec(high)?.[1] === unit ? `${low.slice(0, -unit.length - 1)}–${high}` : `${low}–${high}`
}

/** Cost models (time against N) per (strategy, W) at one size, each with its refusal or null. */
export function costModelsAt(summary: readonly SummaryEntry[], size: number, setN?: number): CostModel[] {
  const bySeries = new Map<string, SummaryEntry[]>()
  for (const s of summary) {
    if (s.size !== size || !Number.isFinite(s.medianMs)) continue
    const key = optionKey(s)
    bySeries.set(key, [...(bySeries.get(key) ?? []), s])
  }
  const models: CostModel[] = []
  for (const entries of bySeries.values()) {
    const { strategy, workers, backend } = entries[0]
    const points = entries.map((e) => ({ x: e.models, ms: e.medianMs })).sort((a, b) => a.x - b.x)
    const fit = fitLine(points)
    models.push({
      ...(backend ? { backend } : {}),
      strategy,
      workers,
      size,
      fit,
      refusal: refusalOf(
        points.map((p) => p.x),
        fit,
        setN,
      ),
    })
  }
  // a backend's options together, in the run's order
  const backendOrder: (string | undefined)[] = [...new Set(summary.map((s) => s.backend))]
  return models.sort(
    (a, b) =>
      backendOrder.indexOf(a.backend) - backendOrder.indexOf(b.backend) || strategyOrder(a.strategy) - strategyOrder(b.strategy) || a.workers - b.workers,
  )
}

function strategyOrder(s: Strategy): number {
  return ['sequential', 'pool', 'batched'].indexOf(s)
}

/** setN: the run is a model set of that many models (it cannot be swept: say what to ask instead) */
function refusalOf(counts: number[], fit: CostModel['fit'], setN?: number): string | null {
  if (counts.length < MIN_MODEL_COUNTS) {
    const instead =
      setN !== undefined
        ? `a model set is measured at its own N only: ask for advice at N = ${setN}, ranked by what was measured`
        : 'run a model-count sweep: “sweep model counts” in the app, --sweep models on the command line; or ask at a measured N'
    return `only ${counts.length} model count${counts.length === 1 ? '' : 's'} measured (N = ${counts.join(', ')}); at least ${MIN_MODEL_COUNTS} are needed to fit and check a line (${instead})`
  }
  if (fit.r2 === null || fit.r2 < ADVICE_LIMITS.minR2) {
    return `the line fits poorly (R² ${fit.r2 === null ? '–' : fit.r2.toFixed(2)} < ${ADVICE_LIMITS.minR2}): time does not grow linearly with N here`
  }
  if (!(fit.b > 0)) return `time does not grow with N here (slope ${fit.b.toFixed(2)} ms per model)`
  return null
}

/** Worker scaling per parallel strategy and N at one size, wherever at least two W were measured (curves end at `cores` when known). */
export function workerScalingAt(summary: readonly SummaryEntry[], size: number, cores?: number): WorkerScaling[] {
  const series = new Map<string, SummaryEntry[]>()
  for (const s of summary) {
    if (s.size !== size || s.strategy === 'sequential' || !Number.isFinite(s.medianMs)) continue
    const key = `${s.backend ?? ''}/${s.strategy}/${s.models}`
    series.set(key, [...(series.get(key) ?? []), s])
  }
  const out: WorkerScaling[] = []
  for (const entries of series.values()) {
    if (new Set(entries.map((e) => e.workers)).size < 2) continue
    const { strategy, models, backend } = entries[0]
    const fit = fitWorkerScaling(
      strategy,
      size,
      models,
      entries.map((e) => ({ workers: e.workers, ms: e.medianMs })),
      cores,
    )
    out.push(backend ? { backend, ...fit } : fit)
  }
  return out.sort((a, b) => strategyOrder(a.strategy) - strategyOrder(b.strategy) || a.models - b.models)
}

/**
 * The runner-up against the pick, in words: "1.7× slower", and when their 95 % intervals overlap
 * "… (the intervals overlap: as good as a tie)" — then the measured order may well come out the
 * other way. The advice's text, the advice card and the report all say it so.
 */
export function howMuchSlower(best: AdviceOption, next: AdviceOption): string {
  const slower = `${(next.predictedMs / best.predictedMs).toFixed(1)}× slower`
  return next.lowMs <= best.highMs ? `${slower} (the intervals overlap: as good as a tie)` : slower
}

/** The advice for a target, from a run's summary; a refusal (text, no options) when it cannot be trusted. */
export function adviseFrom(run: Pick<RunResult, 'runId' | 'summary'> & Partial<Pick<RunResult, 'environment' | 'config'>>, target: AdviceTarget): Advice {
  const { models: n, size } = target
  const head = `${groupedNumber(n)} model${n === 1 ? '' : 's'} at ${groupedNumber(size)} rows`
  const sizes = [...new Set(run.summary.map((s) => s.size))].sort((a, b) => a - b)
  const refuse = (fittedSize: number, why: string, costModels: CostModel[] = [], scaling: WorkerScaling[] = [], extrapolated = false): Advice => ({
    runId: run.runId,
    target: { models: n, size },
    fittedSize,
    extrapolated,
    options: [],
    costModels,
    scaling,
    text: `${head}: no advice — ${why}`,
    refusal: why,
  })
  if (!sizes.includes(size)) {
    const why = sizes.length
      ? `${groupedNumber(size)} rows was not measured (measured: ${sizes.map(groupedNumber).join(', ')}); time per model depends on rows in a way a sweep at other sizes cannot tell, so measure this size`
      : 'the run has no finished measurement'
    return refuse(sizes[0] ?? size, why)
  }
  const costModels = costModelsAt(run.summary, size, run.config?.set ? setSize(run.config.set) : undefined)
  const scaling = workerScalingAt(run.summary, size, run.environment?.cpuCount)
  const largestN = Math.max(...run.summary.filter((s) => s.size === size).map((s) => s.models))
  const extrapolated = n > ADVICE_LIMITS.extrapolationFactor * largestN
  const usable = costModels.filter((c) => c.refusal === null && c.workers <= n)
  const measuredOptions = measuredAtTarget(run.summary, costModels, size, n)
  if (usable.length === 0 && measuredOptions.length === 0) {
    const reasons = costModels.filter((c) => c.workers <= n).map((c) => `${optionLabel(c, ' ')}: ${c.refusal}`)
    const why = reasons.length ? `no fit can be trusted — ${[...new Set(reasons)].join('; ')}` : `every measured W is more than ${n} models`
    return refuse(size, why, costModels, scaling, extrapolated)
  }
  const options: AdviceOption[] = [
    ...usable.map((c) => ({ ...(c.backend ? { backend: c.backend } : {}), strategy: c.strategy, workers: c.workers, ...predictWithInterval(c.fit, n) })),
    ...measuredOptions,
  ].sort((a, b) => a.predictedMs - b.predictedMs)
  const ranked = new Set(options.map(optionKey))
  const [best, next] = options
  const beaten = fasterUnranked(costModels, best, n, ranked)
  if (beaten) return refuse(size, beaten, costModels, scaling, extrapolated)
  const unranked = costModels.filter((c) => c.refusal !== null && c.workers <= n && !ranked.has(optionKey(c)))
  const text = `${head}: ${adviceSentence(best, next)}${extrapolated ? `; extrapolated: ${groupedNumber(n)} is ${(n / largestN).toFixed(0)}× the largest measured N (${largestN})` : ''}${notRanked(unranked)}`
  return { runId: run.runId, target: { models: n, size }, fittedSize: size, extrapolated, options, costModels, scaling, text, refusal: null }
}

/** Options with too few model counts for a line but measured at the target itself: ranked by that measurement. */
function measuredAtTarget(summary: readonly SummaryEntry[], costModels: readonly CostModel[], size: number, n: number): AdviceOption[] {
  return costModels.flatMap((c) => {
    if (c.refusal === null || c.fit.points.length >= MIN_MODEL_COUNTS || c.workers > n) return []
    const s = summary.find((e) => e.size === size && e.models === n && Number.isFinite(e.medianMs) && optionKey(e) === optionKey(c))
    if (!s) return []
    return [
      {
        ...(c.backend ? { backend: c.backend } : {}),
        strategy: c.strategy,
        workers: c.workers,
        predictedMs: s.medianMs,
        lowMs: s.minMs,
        highMs: s.maxMs,
        measured: true,
      },
    ]
  })
}

/** "batched, W=2, ≈ 1.2 s (1.1–1.3 s); pool W=2 ≈ 1.7× slower" — the pick and the runner-up. */
function adviceSentence(best: AdviceOption, next: AdviceOption | undefined): string {
  const pick = best.measured
    ? `measured ${formatDuration(best.predictedMs)} (repeats ${formatRange(best.lowMs, best.highMs)})`
    : `≈ ${formatDuration(best.predictedMs)} (${formatRange(best.lowMs, best.highMs)})`
  const runnerUp = next ? `; ${optionLabel(next, ' ')} ${next.measured && best.measured ? '' : '≈ '}${howMuchSlower(best, next)}` : ''
  return `${optionLabel(best)}, ${pick}${runnerUp}`
}

/** The options whose fit was refused and that were not measured at the target, with the first words of why. */
function notRanked(left: readonly CostModel[]): string {
  return left.length ? `; not ranked: ${left.map((c) => `${optionLabel(c, ' ')} (${c.refusal!.split(':')[0].split(';')[0]})`).join(', ')}` : ''
}

/**
 * A pick among the trusted fits only is no pick when an option whose fit was refused measured faster
 * than it at the largest N both have: say so instead of recommending the slower one.
 */
function fasterUnranked(costModels: readonly CostModel[], best: AdviceOption, n: number, ranked: ReadonlySet<string>): string | null {
  const pick = costModels.find((c) => optionKey(c) === optionKey(best))!
  // the refused option that beat the pick by the widest margin names the problem best
  let worst: { c: CostModel; x: number; ms: number; pickMs: number } | null = null
  for (const c of costModels) {
    if (c.refusal === null || c.workers > n || ranked.has(optionKey(c))) continue
    const at = c.fit.points.filter((p) => pick.fit.points.some((q) => q.x === p.x)).at(-1)
    if (!at) continue
    const pickMs = pick.fit.points.find((q) => q.x === at.x)!.ms
    if (at.ms < pickMs && (!worst || pickMs / at.ms > worst.pickMs / worst.ms)) worst = { c, x: at.x, ms: at.ms, pickMs }
  }
  if (!worst) return null
  return `${optionLabel(worst.c, ' ')} measured faster than ${optionLabel(best, ' ')} at N = ${worst.x} (${formatDuration(worst.ms)} vs ${formatDuration(worst.pickMs)}) but its fit cannot be trusted (${worst.c.refusal!.split(':')[0].split(';')[0]}), so the options cannot be ranked; measure again on a quieter machine or with more repeats`
}

/** The options a check measures: the recommended one and the runner-up. */
export function optionsToVerify(advice: Advice): AdviceOption[] {
  return advice.options.slice(0, 2)
}

/**
 * The config of the run that checks an advice: the source run's, at the target size and N, with
 * just the recommended and runner-up strategies and Ws, one repeat (the check costs one training
 * of the target per option). The plan crosses strategies × Ws, so when the two options differ in
 * both, a third (or fourth) combination is measured too and compared as well.
 */
export function verificationConfig(source: BenchConfig, advice: Advice): BenchConfig {
  const picked = optionsToVerify(advice)
  if (picked.length === 0) throw new RangeError(`the advice has no option to verify: ${advice.refusal ?? 'no options'}`)
  const strategies = (['sequential', 'pool', 'batched'] as const).filter((s) => picked.some((o) => o.strategy === s))
  const parallel = picked.filter((o) => o.strategy !== 'sequential').map((o) => o.workers)
  // backends side by side: the picks' backends (one: a one-backend run on it)
  const backends = [...new Set(picked.map((o) => o.backend).filter((b): b is ConcreteBackend => b !== undefined))]
  return {
    ...structuredClone(source),
    ...(backends.length ? { backend: backends.length > 1 ? backends : backends[0] } : {}),
    preset: 'custom',
    sizes: [advice.target.size],
    models: [advice.target.models],
    strategies,
    workers: parallel.length ? [...new Set(parallel)].sort((a, b) => a - b) : [1],
    repeats: 1,
  }
}

/**
 * Predicted against measured for every advised option the verification run measured at the
 * target (its config crosses strategies × Ws, so it may measure a third option too; that one is
 * compared as well). pickRight: the measured fastest is the recommended one; null when the
 * recommended one or every other was not measured.
 */
export function checkAdvice(
  advice: Advice,
  verifyRun: Pick<RunResult, 'runId' | 'summary'> & Partial<Pick<RunResult, 'environment'>>,
  checkedAt = new Date().toISOString(),
): AdviceCheck {
  const { models, size } = advice.target
  // a check on one backend (both picks on it) has no backend in its entries: it is the environment's
  const backendOf = (s: SummaryEntry) => s.backend ?? (advice.options.some((o) => o.backend) ? verifyRun.environment?.backend : undefined)
  const measured = (o: AdviceOption) =>
    verifyRun.summary.find((s) => s.size === size && s.models === models && s.strategy === o.strategy && s.workers === o.workers && backendOf(s) === o.backend)
      ?.medianMs ?? null
  const asked = new Set(optionsToVerify(advice).map(optionKey))
  const rows = advice.options
    .map((o) => ({
      ...(o.backend ? { backend: o.backend } : {}),
      strategy: o.strategy,
      workers: o.workers,
      predictedMs: o.predictedMs,
      lowMs: o.lowMs,
      highMs: o.highMs,
      measuredMs: measured(o),
    }))
    .filter((r) => asked.has(optionKey(r)) || r.measuredMs !== null)
  const withTimes = rows.filter((r) => r.measuredMs !== null)
  const recommended = rows[0]
  const pickRight =
    recommended && recommended.measuredMs !== null && withTimes.length >= 2 ? withTimes.every((r) => r.measuredMs! >= recommended.measuredMs!) : null
  return { advice, verifyRunId: verifyRun.runId, checkedAt, rows, pickRight }
}

/** The error of a prediction as a signed fraction of the measured time ((predicted − measured) / measured). */
export function predictionError(row: { predictedMs: number; measuredMs: number | null }): number | null {
  return row.measuredMs === null || row.measuredMs <= 0 ? null : (row.predictedMs - row.measuredMs) / row.measuredMs
}
