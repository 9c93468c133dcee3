// Pure helpers of the History view: filtering and sorting the run list, and comparing two runs
// measurement by measurement (Δ% of the median, as pytest-benchmark compare does).
import type { RunListEntry } from '@shared/contract/api'
import { PRESETS, type PresetName } from '@shared/contract/config'
import { optionKey, type RunResult, type SummaryEntry } from '@shared/contract/result'
import { backendLine, modelLine } from '@shared/contract/run-list'
import { findFamily } from '@shared/families'
import { formatNumber } from '@shared/format'
import { leaderboardOf } from '@shared/leaderboard'
import { describeTask, METRIC_SPECS, REGRESSION_TASK } from '@shared/vocabulary/task'

export type SortKey = 'date' | 'speedup' | 'status' | 'name'
export type StatusFilter = 'all' | RunListEntry['status']

export interface HistoryQuery {
  /** free text over name, id, preset, backend, device, tags, sizes, the data set */
  text: string
  status: StatusFilter
  sort: SortKey
  descending: boolean
}

export const DEFAULT_QUERY: HistoryQuery = { text: '', status: 'all', sort: 'date', descending: true }

function haystack(r: RunListEntry): string {
  return [r.name, r.runId, r.preset, r.backend, r.device, ...(r.tags ?? []), ...r.sizes.map(String), r.status, r.data].filter(Boolean).join(' ').toLowerCase()
}

export function filterRuns(runs: readonly RunListEntry[], q: HistoryQuery): RunListEntry[] {
  const words = q.text.toLowerCase().split(/\s+/).filter(Boolean)
  const kept = runs.filter((r) => (q.status === 'all' || r.status === q.status) && words.every((w) => haystack(r).includes(w)))
  const key = (r: RunListEntry): string | number => {
    switch (q.sort) {
      case 'speedup':
        return r.bestSpeedup ?? -1
      case 'status':
        return r.status
      case 'name':
        return (r.name ?? r.preset ?? r.runId).toLowerCase()
      default:
        return r.startedAt ?? ''
    }
  }
  const dir = q.descending ? -1 : 1
  return [...kept].sort((a, b) => {
    const ka = key(a)
    const kb = key(b)
    const c = typeof ka === 'number' && typeof kb === 'number' ? ka - kb : String(ka).localeCompare(String(kb))
    return c * dir || b.runId.localeCompare(a.runId)
  })
}

export interface CompareRow {
  key: string
  size: number
  models: number
  strategy: SummaryEntry['strategy']
  workers: number
  /** backends side by side: the backend of this row (absent in one-backend runs) */
  backend?: string
  aMs: number | null
  bMs: number | null
  /** (b − a) / a × 100: negative means run B was faster */
  deltaPct: number | null
}

/**
 * One row per (size, models, backend, strategy, W) present in either run; Δ% where both have it. A
 * one-backend run's entries carry no backend: matched against a side-by-side run, they stand for
 * the backend that run trained on (environment.backend), so wasm against wasm-and-cpu lines up.
 */
export function compareRuns(a: RunResult, b: RunResult): CompareRow[] {
  const sideBySide = [a, b].some((r) => r.summary.some((s) => s.backend))
  const backendOf = (r: RunResult, s: SummaryEntry) => s.backend ?? (sideBySide ? r.environment?.backend : undefined)
  const rows = new Map<string, CompareRow>()
  const order0 = new Map<string, number>()
  for (const [side, run] of [
    ['a', a],
    ['b', b],
  ] as const) {
    for (const s of run.summary) {
      const backend = backendOf(run, s)
      if (backend && !order0.has(backend)) order0.set(backend, order0.size)
      const key = `${s.size}/${s.models}/${optionKey({ ...s, backend })}`
      const row = rows.get(key) ?? {
        key,
        size: s.size,
        models: s.models,
        strategy: s.strategy,
        workers: s.workers,
        ...(backend ? { backend } : {}),
        aMs: null,
        bMs: null,
        deltaPct: null,
      }
      if (side === 'a') row.aMs = s.medianMs
      else row.bMs = s.medianMs
      rows.set(key, row)
    }
  }
  const order = ['sequential', 'pool', 'batched']
  return [...rows.values()]
    .map((r) => ({ ...r, deltaPct: r.aMs != null && r.bMs != null && r.aMs > 0 ? ((r.bMs - r.aMs) / r.aMs) * 100 : null }))
    .sort(
      (x, y) =>
        x.models - y.models ||
        x.size - y.size ||
        (order0.get(x.backend ?? '') ?? 0) - (order0.get(y.backend ?? '') ?? 0) ||
        order.indexOf(x.strategy) - order.indexOf(y.strategy) ||
        x.workers - y.workers,
    )
}

export function formatDelta(pct: number | null): string {
  if (pct == null || !Number.isFinite(pct)) return '—'
  const sign = pct > 0 ? '+' : pct < 0 ? '−' : '±'
  return `${sign}${Math.abs(pct).toFixed(1)}%`
}

export interface ConfigurationDelta {
  label: string
  aScore: number | null
  bScore: number | null
  /** (B − A) / A of the score, in % */
  scorePct: number | null
  aTrainMs: number | null
  bTrainMs: number | null
  trainPct: number | null
}

/**
 * Two model-set runs per configuration (matched by their varied values): each one's score and time
 * per model, and Δ of both; [] unless both runs have a leaderboard scored the same way (the same
 * metric, on held-out or test rows alike). In A's order (best first).
 */
export function compareLeaderboards(a: RunResult, b: RunResult): ConfigurationDelta[] {
  const [la, lb] = [leaderboardOf(a), leaderboardOf(b)]
  // scores compare only in the same metric on the same rows (a classifier's log loss is no regressor's MSE)
  if (!la || !lb || la.scoreKind !== lb.scoreKind || la.task.metric !== lb.task.metric) return []
  const pct = (x: number | null, y: number | null) => (x != null && y != null && x !== 0 ? ((y - x) / x) * 100 : null)
  const bBy = new Map(lb.entries.map((e) => [e.label, e]))
  const labels = [...la.entries.map((e) => e.label), ...lb.entries.filter((e) => !la.entries.some((x) => x.label === e.label)).map((e) => e.label)]
  return labels.map((label) => {
    const ea = la.entries.find((e) => e.label === label)
    const eb = bBy.get(label)
    const [aScore, bScore] = [ea?.score.mean ?? null, eb?.score.mean ?? null]
    const [aTrainMs, bTrainMs] = [ea?.trainMs ?? null, eb?.trainMs ?? null]
    return { label: label || 'every model', aScore, bScore, scorePct: pct(aScore, bScore), aTrainMs, bTrainMs, trainPct: pct(aTrainMs, bTrainMs) }
  })
}

/** Tags typed as "a, b ,c" → ["a","b","c"]. */
export function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ]
}

/** "2 Dec, 16:49" (with seconds: "2 Dec, 16:49:05"): a run's start, short, in the viewer's locale. */
export function shortWhen(iso: string | null | undefined, seconds = false): string {
  if (!iso) return ''
  const d = new Date(iso)
  return Number.isNaN(d.getTime())
    ? iso
    : d.toLocaleString(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', ...(seconds ? { second: '2-digit' } : {}) })
}

/**
 * A run as people call it: its name, else its preset ("Quick run of 2 Dec, 16:49"), else "Custom run
 * of …". `seconds`: the start to the second, to tell apart two runs of the same minute.
 */
export function runLabel(r: { name?: string; startedAt: string | null; config?: { preset: string }; preset?: string | null }, seconds = false): string {
  if (r.name) return r.name
  const preset = r.config?.preset ?? r.preset ?? 'custom'
  const known = preset in PRESETS ? PRESETS[preset as PresetName].label.split(':')[0] : null
  const when = shortWhen(r.startedAt, seconds)
  return `${known ? `${known} run` : 'Custom run'}${when ? ` of ${when}` : ''}`
}

export interface SettingRow {
  setting: string
  a: string
  b: string
}

/**
 * Each setting of two runs, said the same way, for the compare view: the ones that differ come
 * first. What the models learned is a setting once either run is a classifier (two regression
 * runs, or runs from before classifiers, compare as they always did).
 */
export function compareSettings(a: RunResult, b: RunResult): { differ: SettingRow[]; same: SettingRow[] } {
  const classifiers = [a, b].some((r) => r.task && r.task.objective !== 'regression')
  const taskText = (r: RunResult) => {
    const t = r.task ?? REGRESSION_TASK
    return `${describeTask(t)}, ranked by ${METRIC_SPECS[t.metric].label}`
  }
  const rows = (r: RunResult): [string, string][] => {
    const c = r.config
    const model = findFamily(c.model.kind) ? modelLine(c) : `unknown model family ${JSON.stringify(c.model.kind)}`
    return [
      ['Data sizes', c.sizes.map(formatNumber).join(', ') + ' rows'],
      ['Models', c.models.join(', ')],
      ['Workers', c.workers.join(', ')],
      ['Strategies', c.strategies.join(', ')],
      ['Backend', backendLine(r)],
      ['Model', model],
      ['Repeats', String(c.repeats)],
      ['Data', `${c.features} features, ${c.target} target, seed ${c.seed}, test split ${c.testSplit}`],
      ...(classifiers ? ([['Objective', taskText(r)]] as [string, string][]) : []),
      ['Status', r.status],
    ]
  }
  const ra = rows(a)
  const rb = new Map(rows(b))
  const differ: SettingRow[] = []
  const same: SettingRow[] = []
  for (const [setting, va] of ra) {
    const vb = rb.get(setting) ?? '—'
    ;(va === vb ? same : differ).push({ setting, a: va, b: vb })
  }
  return { differ, same }
}
