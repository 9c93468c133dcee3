// Medians, spreads, speedups, efficiency and hyperfine-style timing warnings.
import { type Measurement, optionKey, type SummaryEntry } from '@shared/contract'
import { type ModelFamily, workRate } from '@shared/families'

export const FIRST_REPEAT_SLOW_FACTOR = 1.5
export const WIDE_SPREAD_FRACTION = 0.25

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN
  const s = [...values].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/** Which of the runs is the median one (of an even count, the faster middle one): the run a measurement's models are read from. */
export function medianRun(runsMs: readonly number[]): number {
  const order = runsMs.map((ms, i) => [ms, i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1])
  return order[Math.floor((order.length - 1) / 2)][1]
}

/** Per (size, models, strategy, W): timing statistics, speedups and the work rate in the family's unit. */
export function summarize(measurements: readonly Measurement[], family: Pick<ModelFamily, 'work'>): SummaryEntry[] {
  const groups = new Map<string, Measurement[]>()
  for (const m of measurements) {
    if (m.status !== 'ok') continue
    const key = `${m.size}/${m.models}/${optionKey(m)}`
    const list = groups.get(key) ?? []
    list.push(m)
    groups.set(key, list)
  }
  const entries: SummaryEntry[] = []
  for (const list of groups.values()) {
    const ms = list.map((m) => m.wallMs)
    const med = median(ms)
    const min = Math.min(...ms)
    const max = Math.max(...ms)
    const { size, models, workers, strategy, backend } = list[0]
    entries.push({
      size,
      models,
      workers,
      strategy,
      ...(backend ? { backend } : {}),
      repeats: list.length,
      medianMs: med,
      minMs: min,
      maxMs: max,
      speedupVsSequential: null,
      efficiency: null,
      workRate: workRate(family, list[0].work, med),
      warnings: timingWarnings([...list].sort((a, b) => a.repeat - b.repeat).map((m) => m.wallMs)),
    })
  }
  for (const e of entries) {
    const seq = entries.find((s) => s.strategy === 'sequential' && s.size === e.size && s.models === e.models && s.backend === e.backend)
    if (seq && e.medianMs > 0) {
      e.speedupVsSequential = seq.medianMs / e.medianMs
      e.efficiency = e.speedupVsSequential / e.workers
    }
  }
  return entries
}

/** Warnings in the spirit of hyperfine: a slow first run, or a wide spread between repeats. */
export function timingWarnings(wallMsInRepeatOrder: readonly number[]): string[] {
  const warnings: string[] = []
  if (wallMsInRepeatOrder.length >= 3) {
    const [first, ...rest] = wallMsInRepeatOrder
    const restMedian = median(rest)
    if (first > FIRST_REPEAT_SLOW_FACTOR * restMedian) {
      warnings.push(`first repeat ${(first / restMedian).toFixed(1)}× slower than the rest: warm-up or caches may be incomplete`)
    }
  }
  if (wallMsInRepeatOrder.length >= 2) {
    const med = median(wallMsInRepeatOrder)
    const spread = (Math.max(...wallMsInRepeatOrder) - Math.min(...wallMsInRepeatOrder)) / med
    if (spread > WIDE_SPREAD_FRACTION) {
      warnings.push(`wide spread: max−min is ${(spread * 100).toFixed(0)}% of the median (a busy or throttled machine?)`)
    }
  }
  return warnings
}
