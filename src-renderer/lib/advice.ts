// What the advice views (the card, the printable report) say about an Advice and an AdviceCheck,
// derived once: the default target a run is advised for, the recommendation's lines, and the check
// table's rows. Pure; the fits and the advice themselves come from src-shared/advice.
import { ADVICE_LIMITS, type Advice, type AdviceCheck, type AdviceTarget, AdviceTargetSchema } from '@shared/contract/advice'
import { numberOf } from '@shared/vocabulary/fields'
import type { Measurement } from '@shared/contract/result'
import { formatRange, howMuchSlower, optionLabel, predictionError } from '@shared/advice'
import { formatDuration, formatNumber } from '@shared/format'

/**
 * The target a run is first advised for: the size with the most model counts (the largest of those)
 * and the largest N measured there — the fits at the run's own sweep, before the user types anything.
 */
export function defaultTarget(measurements: readonly Measurement[]): AdviceTarget | null {
  const ok = measurements.filter((m) => m.status === 'ok')
  if (!ok.length) return null
  const counts = new Map<number, Set<number>>()
  for (const m of ok) counts.set(m.size, (counts.get(m.size) ?? new Set()).add(m.models))
  const [size, ns] = [...counts].sort((a, b) => b[1].size - a[1].size || b[0] - a[0])[0]
  return { models: Math.max(...ns), size }
}

/** Text boxes → a target, or each field's message (from the contract's schema: it names the field and its range). */
export function parseTarget(text: { models: string; size: string }): { target: AdviceTarget } | { errors: Record<'models' | 'size', string[]> } {
  // digits may be grouped ("50 000", "50,000"); the number itself by the shared rule (decimal, an integer written as one)
  const num = (t: string) => numberOf(t.replace(/[\s,]/g, ''), 'integer')
  const r = AdviceTargetSchema.safeParse({ models: num(text.models), size: num(text.size) })
  if (r.success) return { target: r.data }
  const errors: Record<'models' | 'size', string[]> = { models: [], size: [] }
  for (const issue of r.error.issues) {
    const f = issue.path[0]
    if ((f === 'models' || f === 'size') && !errors[f].includes(issue.message)) errors[f].push(issue.message)
  }
  return { errors }
}

export interface Recommendation {
  /** "batched, W=2" */
  label: string
  /** "≈" for a prediction from a fitted line, "measured" for an option ranked by its measurement at the target */
  how: '≈' | 'measured'
  predicted: string
  /** what `interval` is: "95 % interval" of a prediction, or the "repeats" of a measurement */
  intervalLabel: '95 % interval' | 'repeats'
  /** "36–47 s" */
  interval: string
  /** the next best option and how much slower it is predicted (or measured) to be; null when there is none */
  next: { label: string; how: '≈' | 'measured'; predicted: string; slower: string } | null
  /** N > 4× the largest measured N: the line is used beyond the points it was fitted to */
  extrapolation: string | null
}

/** The advice's recommendation in words; null when it refused. */
export function recommendation(advice: Advice, largestMeasuredN: number | null): Recommendation | null {
  const [best, next] = advice.options
  if (!best || advice.refusal) return null
  const times = largestMeasuredN
    ? `${(advice.target.models / largestMeasuredN).toFixed(0)}× the largest N measured (${formatNumber(largestMeasuredN)})`
    : `more than ${ADVICE_LIMITS.extrapolationFactor}× the largest N measured`
  return {
    label: optionLabel(best),
    how: best.measured ? 'measured' : '≈',
    predicted: formatDuration(best.predictedMs),
    intervalLabel: best.measured ? 'repeats' : '95 % interval',
    interval: formatRange(best.lowMs, best.highMs),
    next: next
      ? { label: optionLabel(next), how: next.measured ? 'measured' : '≈', predicted: formatDuration(next.predictedMs), slower: howMuchSlower(best, next) }
      : null,
    extrapolation: advice.extrapolated
      ? `Extrapolation: ${formatNumber(advice.target.models)} models is ${times}; the interval widens with the distance, but the line may not hold that far.`
      : null,
  }
}

export interface CheckRow {
  label: string
  recommended: boolean
  predicted: string
  interval: string
  measured: string
  /** signed error of the prediction against the measured time, "+12 %"; "—" without a measurement */
  error: string
  /** the measured time fell inside the predicted interval; null without a measurement */
  inside: boolean | null
}

/** The check table: predicted against measured per option, the recommended one first. */
export function checkRows(check: AdviceCheck): CheckRow[] {
  return check.rows.map((r, i) => {
    const err = predictionError(r)
    return {
      label: optionLabel(r),
      recommended: i === 0,
      predicted: formatDuration(r.predictedMs),
      interval: formatRange(r.lowMs, r.highMs),
      measured: r.measuredMs == null ? 'not measured' : formatDuration(r.measuredMs),
      error: err == null ? '—' : `${err > 0 ? '+' : err < 0 ? '−' : '±'}${Math.abs(err * 100).toFixed(0)} %`,
      inside: r.measuredMs == null ? null : r.measuredMs >= r.lowMs && r.measuredMs <= r.highMs,
    }
  })
}

/** One line under the check table: was the pick right, and how many predictions held. */
export function checkVerdict(check: AdviceCheck): string {
  const rows = checkRows(check)
  const measured = rows.filter((r) => r.inside != null)
  const inside = measured.filter((r) => r.inside).length
  const pick =
    check.pickRight == null
      ? 'The pick could not be judged (an option was not measured).'
      : check.pickRight
        ? 'The recommended option was the fastest measured: the pick was right.'
        : 'Another option was faster when measured: the pick was wrong.'
  return `${pick} ${inside} of ${measured.length} measured time${measured.length === 1 ? '' : 's'} inside the predicted interval.`
}

/** "500 models at 50,000 rows" */
export function targetText(t: AdviceTarget): string {
  return `${formatNumber(t.models)} model${t.models === 1 ? '' : 's'} at ${formatNumber(t.size)} rows`
}
