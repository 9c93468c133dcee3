// Exports of a run: CSV (one row per measurement; header documented in README) and a Markdown
// summary table with a "relative" column like hyperfine's.
import type { RunResult } from '../contract'

export const CSV_COLUMNS = [
  'runId', 'backend', 'device', 'size', 'models', 'workers', 'strategy', 'repeat', 'status',
  'wallMs', 'startupMs', 'warmupMs', 'modelsTrained', 'trainGflops', 'meanTestMse',
] as const

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v)
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export function toCsv(run: RunResult): string {
  const rows = run.measurements.map((m) => {
    const mse = m.perModel.length ? m.perModel.reduce((s, p) => s + p.testMse, 0) / m.perModel.length : null
    return [
      run.runId, run.environment?.backend ?? '', run.environment?.device ?? '', m.size, m.models, m.workers, m.strategy,
      m.repeat, m.status, m.wallMs.toFixed(3), m.startupMs.toFixed(3), m.warmupMs.toFixed(3), m.modelsTrained,
      m.wallMs > 0 ? (m.trainFlops / m.wallMs / 1e6).toFixed(4) : '', mse === null ? '' : mse.toPrecision(9),
    ].map(csvCell).join(',')
  })
  return [CSV_COLUMNS.join(','), ...rows].join('\n') + '\n'
}

export function formatMs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`
}

/** Markdown table per (size, models): strategy, median ± range, relative to the fastest, speedup. */
export function toMarkdown(run: RunResult): string {
  const lines: string[] = [
    `| rows | models | strategy | workers | median | min | max | relative | speedup vs sequential |`,
    `|---:|---:|:---|---:|---:|---:|---:|---:|---:|`,
  ]
  const groups = new Map<string, typeof run.summary>()
  for (const s of run.summary) {
    const k = `${s.size}/${s.models}`
    groups.set(k, [...(groups.get(k) ?? []), s])
  }
  for (const entries of groups.values()) {
    const fastest = Math.min(...entries.map((e) => e.medianMs))
    for (const e of [...entries].sort((a, b) => a.medianMs - b.medianMs)) {
      lines.push(
        `| ${e.size} | ${e.models} | ${e.strategy} | ${e.workers} | ${formatMs(e.medianMs)} | ${formatMs(e.minMs)} | ${formatMs(e.maxMs)} | ${(e.medianMs / fastest).toFixed(2)} | ${e.speedupVsSequential === null ? '–' : `${e.speedupVsSequential.toFixed(2)}×`} |`,
      )
    }
  }
  return lines.join('\n') + '\n'
}
