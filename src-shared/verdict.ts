// The report's plain-language verdict, derived from a run's summary alone (pure; the PDF test and
// the report page both call it): the fastest strategy per data size, the best worker count, the
// speedups, whether every strategy did the same work (in the run's primary metric), what a
// classifier learned, and any timing warnings.
import type { Strategy } from './contract/config'
import type { RunResult, SummaryEntry } from './contract/result'
import { formatDuration } from './format'
import { metricLabel } from './metrics'
import { describeTask, REGRESSION_TASK, type Task } from './vocabulary/task'

export function reportRows(n: number): string {
  return n.toLocaleString('en-US')
}

export function speedupText(x: number): string {
  return `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}×`
}

/** "batched (W=2)", or just "sequential"; side by side with its backend: "onnxruntime batched (W=2)". */
export function strategyLabel(s: { strategy: Strategy; workers: number; backend?: string }): string {
  const label = s.strategy === 'sequential' ? 'sequential' : `${s.strategy} (W=${s.workers})`
  return s.backend ? `${s.backend} ${label}` : label
}

/**
 * Backends side by side, per (size, models): the fastest (backend, strategy, W) and how much faster it
 * was than each other backend's best — "On this machine, for 50 models at 10,000 rows: onnxruntime
 * batched (W=2), 3.10× faster than wasm's best (wasm batched (W=2), 2.9 s)."
 */
export function backendSentences(summary: readonly SummaryEntry[]): string[] {
  if (new Set(summary.map((s) => s.backend).filter(Boolean)).size < 2) return []
  return groups(summary).map((g) => {
    const best = g[0]
    const others = [...new Set(g.map((s) => s.backend))].filter((b) => b !== best.backend)
    const against = others.map((b) => {
      const theirs = g.find((s) => s.backend === b)!
      return `${speedupText(theirs.medianMs / best.medianMs)} faster than ${b}'s best (${strategyLabel(theirs)}, ${formatDuration(theirs.medianMs)})`
    })
    return `On this machine, for ${best.models} model${best.models === 1 ? '' : 's'} at ${reportRows(best.size)} rows: ${strategyLabel(best)} (${formatDuration(best.medianMs)}), ${against.join('; ')}.`
  })
}

/** Efficiency (speedup / W) where it means something: the pool's W processes sharing the work; null otherwise. */
export function efficiencyOf(s: Pick<SummaryEntry, 'strategy' | 'efficiency'>): number | null {
  return s.strategy === 'pool' ? s.efficiency : null
}

export interface Verdict {
  /** one sentence: the answer a reader wants first */
  headline: string
  /** backends side by side: the fastest (backend, strategy, W) per size against each other backend's best */
  backends: string[]
  /** the fastest strategy for each (size, models) */
  perSize: string[]
  /** best worker count per parallel strategy */
  workers: string[]
  /** same work proven, or not */
  verification: string
  /** a classifier's task: "Objective: binary (2 classes: no, yes), read from the target; the models are ranked and compared by log loss."; null for regression */
  task: string | null
  /** timing warnings and run-level warnings, in plain words */
  warnings: string[]
}

function groups(summary: readonly SummaryEntry[]): SummaryEntry[][] {
  const map = new Map<string, SummaryEntry[]>()
  for (const s of summary) {
    const k = `${s.size}/${s.models}`
    map.set(k, [...(map.get(k) ?? []), s])
  }
  return [...map.values()].map((g) => [...g].sort((a, b) => a.medianMs - b.medianMs)).sort((a, b) => a[0].models - b[0].models || a[0].size - b[0].size)
}

export function verdictFor(run: RunResult): Verdict {
  const summary = run.summary.filter((s) => Number.isFinite(s.medianMs))
  const gs = groups(summary)
  const manyModelCounts = new Set(summary.map((s) => s.models)).size > 1
  const backends = backendSentences(summary)
  const notes = (run.verification.notes ?? []).map((n) => `Across backends, ${n}.`)
  return {
    headline: headlineOf(run, summary, gs, backends),
    backends,
    perSize: gs.map((g) => sizeSentence(g, manyModelCounts)),
    workers: (['pool', 'batched'] as const).flatMap((strategy) => workerSentence(summary, strategy) ?? []),
    verification: [verificationSentence(run), ...notes].join(' '),
    task: taskSentence(run.task ?? REGRESSION_TASK),
    warnings: warningsOf(run, summary),
  }
}

/** One data size's (and model count's) measurements, fastest first, as a sentence. */
function sizeSentence(g: SummaryEntry[], manyModelCounts: boolean): string {
  const best = g[0]
  const where = `At ${reportRows(best.size)} rows${manyModelCounts ? ` × ${best.models} models` : ''}`
  const seq = g.find((s) => s.strategy === 'sequential')
  if (g.length === 1) return `${where}, only ${strategyLabel(best)} was measured: ${formatDuration(best.medianMs)}.`
  const runnerUp = g[1]
  // per model too: the article's "28.9 s vs 2.1 s" compared 50 models with 5; per-model times cannot mislead so
  const perModel = (s: SummaryEntry) => `${formatDuration(s.medianMs / s.models)} per model`
  let text = `${where}, ${strategyLabel(best)} was fastest: ${formatDuration(best.medianMs)} (${perModel(best)})`
  if (best.strategy !== 'sequential' && seq && best.speedupVsSequential != null) {
    text += `, ${speedupText(best.speedupVsSequential)} faster than sequential (${formatDuration(seq.medianMs)}, ${perModel(seq)})`
  } else if (best.strategy === 'sequential') {
    text += `; no parallel strategy beat it (next: ${strategyLabel(runnerUp)}, ${formatDuration(runnerUp.medianMs)})`
  }
  if (runnerUp && runnerUp !== seq && best.strategy !== 'sequential') {
    text += `; next was ${strategyLabel(runnerUp)} at ${formatDuration(runnerUp.medianMs)}`
  }
  return text + '.'
}

/** A parallel strategy's best worker count, at the largest size where it was measured with ≥ 2 W; null when never swept. */
function workerSentence(summary: readonly SummaryEntry[], strategy: 'pool' | 'batched'): string | null {
  const mine = summary.filter((s) => s.strategy === strategy)
  const sizes = [...new Set(mine.map((s) => `${s.size}/${s.models}`))]
  const swept = sizes
    .map((k) => mine.filter((s) => `${s.size}/${s.models}` === k))
    .filter((list) => new Set(list.map((s) => s.workers)).size >= 2)
    .sort((a, b) => b[0].models - a[0].models || b[0].size - a[0].size)
  if (!swept.length) return null
  const list = swept[0]
  const best = list.reduce((a, b) => (b.medianMs < a.medianMs ? b : a))
  const ws = [...list].sort((a, b) => a.workers - b.workers).map((s) => s.workers)
  let text = `Best worker count for ${strategy}: W=${best.workers} (${formatDuration(best.medianMs)} at ${reportRows(best.size)} rows, tried W=${ws.join(', ')})`
  if (best.speedupVsSequential != null) {
    // efficiency (speedup / W) only for the pool: W processes sharing the work. Batched fuses models
    // into one program per worker, so its speedup is not W workers' share (it can pass 100 % at W=1)
    text += `; speedup ${speedupText(best.speedupVsSequential)}`
    const eff = efficiencyOf(best)
    if (eff != null) text += `, efficiency ${Math.round(eff * 100)}%`
  }
  return text + '.'
}

/** The run's first sentence: how it ended, else what a side-by-side or the best speedup says. */
function headlineOf(run: RunResult, summary: readonly SummaryEntry[], gs: SummaryEntry[][], backends: string[]): string {
  if (run.status !== 'ok' && run.status !== 'running') {
    return `This run ${run.status === 'failed' ? 'FAILED' : `was ${run.status}`}${run.error ? `: ${run.error}` : ''}.${summary.length ? ' The numbers below cover what finished.' : ''}`
  }
  if (!summary.length) return 'No measurement finished, so there is nothing to compare.'
  // side by side, the first question is on what: the largest measured size and model count
  if (backends.length) return backends.at(-1)!
  const parallel = summary.filter((s) => s.strategy !== 'sequential' && s.speedupVsSequential != null)
  if (!parallel.length) return `Only ${[...new Set(summary.map((s) => s.strategy))].join(', ')} was measured: no speedup to report.`
  const best = parallel.reduce((a, b) => ((b.speedupVsSequential ?? 0) > (a.speedupVsSequential ?? 0) ? b : a))
  const winners = new Set(gs.map((g) => strategyLabel(g[0])))
  const overall =
    winners.size === 1
      ? `${gs.length > 1 ? 'At every data size' : `At ${reportRows(gs[0][0].size)} rows`}, the fastest was ${[...winners][0]}`
      : 'The fastest strategy depends on the data size'
  return (best.speedupVsSequential ?? 0) > 1
    ? `${overall}; the best speedup over sequential was ${speedupText(best.speedupVsSequential!)} (${strategyLabel(best)} at ${reportRows(best.size)} rows).`
    : `No parallel strategy beat sequential: the best was ${strategyLabel(best)} at ${speedupText(best.speedupVsSequential!)}.`
}

/** A classifier's objective, classes and primary metric in one sentence; null for regression (a run from before classifiers, or one asked for). */
export function taskSentence(task: Task): string | null {
  if (task.objective === 'regression') return null
  const read = task.auto ? ', read from the target' : ''
  return `Objective: ${describeTask(task)}${read}; the models are ranked and compared by ${metricLabel(task)}.`
}

/** Whether every strategy did the same work, in one sentence. */
function verificationSentence(run: RunResult): string {
  const v = run.verification
  const trained = Object.entries(v.modelsTrained)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')
  if (run.status === 'cancelled' || run.status === 'interrupted') {
    return `Not verified: the run was ${run.status} before every strategy trained every model${trained ? ` (models trained: ${trained})` : ''}; the numbers cover only the measurements that finished.`
  }
  return v.sameWork
    ? `Same work verified: every strategy trained every model (${trained}) and each model's test ${metricLabel(run.task ?? REGRESSION_TASK)} agrees across strategies to ${v.maxRelMseDiff.toExponential(1)} relative (tolerance ${v.tolerance}).`
    : `Same work NOT verified: ${v.problems.length} problem${v.problems.length === 1 ? '' : 's'}${v.problems.length ? ` — ${v.problems.slice(0, 3).join('; ')}${v.problems.length > 3 ? '; …' : ''}` : ''}. Do not trust the speedups.`
}

/** Each measurement's timing warnings, the run's own (once), and too few repeats. */
function warningsOf(run: RunResult, summary: readonly SummaryEntry[]): string[] {
  const warnings: string[] = []
  for (const s of summary) for (const w of s.warnings) warnings.push(`${strategyLabel(s)} at ${reportRows(s.size)} rows: ${w}.`)
  for (const w of run.warnings) if (!warnings.some((x) => x.startsWith(w)) && !summary.some((s) => s.warnings.some((sw) => w.endsWith(sw)))) warnings.push(w)
  if (run.config.repeats < 3 && summary.length) {
    warnings.push(
      `Only ${run.config.repeats} repeat${run.config.repeats === 1 ? '' : 's'} per measurement: medians are indicative, not robust (3 or more recommended).`,
    )
  }
  return warnings
}

/** The verdict as plain text paragraphs (CLI, tests). */
export function verdictText(v: Verdict): string {
  return [
    v.headline,
    ...v.backends.filter((b) => b !== v.headline),
    ...v.perSize,
    ...v.workers,
    ...(v.task ? [v.task] : []),
    v.verification,
    ...v.warnings.map((w) => `Warning: ${w}`),
  ].join('\n')
}

/** The timing warnings of a run, summed up: how many measurements were noisy, and what each said. */
export interface TimingNoise {
  /** summary entries (strategy, W, size, model count) with a timing warning */
  noisy: number
  /** summary entries in all */
  total: number
  /** "7 of 10 measurements noisy: add repeats or close other programs", or null when none was */
  line: string | null
  /** one line per warning, "pool (W=2) at 2,000 rows: wide spread: …" */
  details: string[]
  /** the run's other warnings (not about timing): said as they are */
  other: string[]
  /** "Only 2 repeats per measurement: …", or null */
  repeatsNote: string | null
}

export function timingNoise(run: RunResult): TimingNoise {
  const summary = run.summary.filter((s) => Number.isFinite(s.medianMs))
  const details: string[] = []
  let noisy = 0
  for (const s of summary) {
    if (!s.warnings.length) continue
    noisy++
    for (const w of s.warnings)
      details.push(`${strategyLabel(s)} at ${reportRows(s.size)} rows${new Set(summary.map((x) => x.models)).size > 1 ? ` × ${s.models} models` : ''}: ${w}`)
  }
  // the run's own list repeats the summary's warnings ("pool W=2 at 2000 rows: wide spread …"): leave those out
  const other = run.warnings.filter((w) => !summary.some((s) => s.warnings.some((sw) => w.endsWith(sw))))
  const total = summary.length
  const line = noisy ? `${noisy} of ${total} measurement${total === 1 ? '' : 's'} noisy: add repeats or close other programs` : null
  const repeatsNote =
    run.config.repeats < 3 && summary.length
      ? `Only ${run.config.repeats} repeat${run.config.repeats === 1 ? '' : 's'} per measurement: medians are indicative, not robust (3 or more recommended).`
      : null
  return { noisy, total, line, details, other, repeatsNote }
}
