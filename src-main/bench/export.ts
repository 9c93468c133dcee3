// Exports of a run: the full JSON, CSV (one row per measurement; its columns documented in
// docs/guide-command-line.md) and a Markdown summary table with a "relative" column like
// hyperfine's, followed by an Advice section when the run's advice was checked (predicted vs
// measured, src-shared/advice). Numbers are written at full precision so JSON and CSV round-trip.
// A classifier's exports carry its task (objective, class names in output order, primary metric)
// and its models' scores in every metric of the objective; a regression run's are as they always
// were (the same columns and sections), so what reads them keeps working.
import {
  backendLine,
  describeTask,
  EXPORT_EXTENSION,
  EXPORT_MIME,
  type ExportedFile,
  type ExportFormat,
  exportFileName,
  gridValueText,
  METRIC_SPECS,
  type MetricName,
  metricsOf,
  modelLine,
  REGRESSION_TASK,
  type RunResult,
  type SummaryEntry,
  type Task,
  TrainpoolError,
} from '@shared/contract'
import { optionLabel, predictionError } from '@shared/advice'
import { familyOf, workRate } from '@shared/families'
import { formatDataSet } from '@shared/format'
import { columnSpread, fusionText, leaderboardOf, leaderboardTable, meanMetric } from '@shared/leaderboard'
import { searchLines } from '@shared/search-summary'

export const CSV_COLUMNS = [
  'runId',
  'family',
  'backend',
  'device',
  'size',
  'models',
  'workers',
  'strategy',
  'repeat',
  'status',
  'wallMs',
  'startupMs',
  'warmupMs',
  'modelsTrained',
  'work',
  'workRate',
  'workRateUnit',
  'meanTestMse',
  'dataset',
  'datasetSha256',
  'target',
] as const

/** A classifier run's mean test score columns, by metric (MSE stays meanTestMse: a classifier's is the Brier score). */
const MEAN_COLUMNS = [
  ['meanTestLogloss', 'logloss'],
  ['meanTestAccuracy', 'accuracy'],
  ['meanTestAuc', 'auc'],
] as const satisfies readonly (readonly [string, MetricName])[]
/** A classifier run's CSV adds these after CSV_COLUMNS: its task, and per measurement the mean test score in each classifier metric (empty where the objective has none: multiclass AUC). */
export const CLASSIFIER_CSV_COLUMNS = ['objective', 'classes', 'metric', ...MEAN_COLUMNS.map(([column]) => column)] as const

/** The run's task; a run from before classifiers is regression ranked by MSE. */
function taskOf(run: Pick<RunResult, 'task'>): Task {
  return run.task ?? REGRESSION_TASK
}

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v)
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** Mean test MSE of a measurement's models, or null when none finished. */
export function meanTestMse(perModel: readonly { testMse: number }[]): number | null {
  return perModel.length ? perModel.reduce((s, p) => s + p.testMse, 0) / perModel.length : null
}

export function toCsv(run: RunResult): string {
  const family = familyOf(run.config.model)
  const task = taskOf(run)
  const classifier = task.objective !== 'regression'
  // the class names as JSON (a name may hold a comma or a quote)
  const classifierCells = (m: RunResult['measurements'][number]) =>
    classifier
      ? [
          task.objective,
          JSON.stringify(task.classes),
          task.metric,
          ...MEAN_COLUMNS.map(([, metric]) => (metricsOf(task.objective).includes(metric) ? meanMetric(m.perModel, metric) : null)),
        ]
      : []
  // side by side, each measurement's own backend and that backend's device
  const deviceOf = (backend: string | undefined) => run.environment?.backends?.find((b) => b.backend === backend)?.device ?? run.environment?.device ?? ''
  const rows = run.measurements.map((m) =>
    [
      run.runId,
      family.kind,
      m.backend ?? run.environment?.backend ?? '',
      deviceOf(m.backend),
      m.size,
      m.models,
      m.workers,
      m.strategy,
      m.repeat,
      m.status,
      m.wallMs,
      m.startupMs,
      m.warmupMs,
      m.modelsTrained,
      m.work,
      m.wallMs > 0 ? workRate(family, m.work, m.wallMs) : null,
      family.work.rateLabel,
      meanTestMse(m.perModel),
      run.dataset?.name,
      run.dataset?.sha256,
      run.dataset?.target,
      ...classifierCells(m),
    ]
      .map(csvCell)
      .join(','),
  )
  return [[...CSV_COLUMNS, ...(classifier ? CLASSIFIER_CSV_COLUMNS : [])].join(','), ...rows].join('\n') + '\n'
}

/** Minimal RFC 4180 reader (quoted cells, doubled quotes, commas and newlines in quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(cell)
      cell = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
    } else cell += c
  }
  if (cell !== '' || row.length) {
    row.push(cell)
    rows.push(row)
  }
  return rows
}

/** Milliseconds for a Markdown cell: one decimal, thousands separated (hyperfine's "Mean [ms]"). */
export function mdMs(ms: number): string {
  return ms.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })
}

export const MARKDOWN_HEADER = ['rows', 'models', 'strategy', 'workers', 'median [ms]', 'min [ms]', 'max [ms]', 'relative', 'speedup vs sequential'] as const

/** Summary entries grouped by (size, models), each group sorted fastest first. */
export function summaryGroups(summary: readonly SummaryEntry[]): SummaryEntry[][] {
  const groups = new Map<string, SummaryEntry[]>()
  for (const s of summary) {
    const k = `${s.size}/${s.models}`
    groups.set(k, [...(groups.get(k) ?? []), s])
  }
  return [...groups.values()].map((g) => [...g].sort((a, b) => a.medianMs - b.medianMs))
}

/** One Markdown table: per (size, models), strategies fastest first; relative = median / fastest median. */
export function toMarkdown(run: RunResult): string {
  // side by side, a backend column after the strategy; relative is against the fastest of every backend
  const side = run.summary.some((s) => s.backend)
  const header = side ? [...MARKDOWN_HEADER.slice(0, 3), 'backend', ...MARKDOWN_HEADER.slice(3)] : [...MARKDOWN_HEADER]
  const lines: string[] = [`| ${header.join(' | ')} |`, `|---:|---:|:---|${side ? ':---|' : ''}---:|---:|---:|---:|---:|---:|`]
  for (const entries of summaryGroups(run.summary)) {
    const fastest = entries[0].medianMs
    for (const e of entries) {
      const relative = fastest > 0 ? (e.medianMs / fastest).toFixed(2) : '–'
      const speedup = e.speedupVsSequential === null ? '–' : `${e.speedupVsSequential.toFixed(2)}×`
      lines.push(
        `| ${e.size.toLocaleString('en-US')} | ${e.models} | ${e.strategy} |${side ? ` ${e.backend ?? ''} |` : ''} ${e.workers} | ${mdMs(e.medianMs)} | ${mdMs(e.minMs)} | ${mdMs(e.maxMs)} | ${relative} | ${speedup} |`,
      )
    }
  }
  return lines.join('\n') + '\n'
}

/** Markdown with a one-line heading naming the run, backend and device, then the table (and the Advice section when the run's advice was checked). */
export function toMarkdownDocument(run: RunResult): string {
  const env = run.environment
  const head =
    `**Trainpool run ${run.name ? `${run.name} (${run.runId})` : run.runId}** — ${run.status}` +
    (env ? ` · ${backendLine(run)}` : '') +
    ` · ${modelLine(run.config)}` +
    ` · ${run.config.repeats} repeat${run.config.repeats === 1 ? '' : 's'}, median shown` +
    (run.verifies ? ` · checks the advice of run ${run.verifies}` : '')
  const data = run.dataset ? `Data: ${formatDataSet(run.dataset)}\n\n` : ''
  const task = taskMarkdown(run)
  // early stopping's and halving's lines, as the CLI summary and the report say them
  const search = searchLines(run, taskOf(run))
    .map((line) => `${line.charAt(0).toUpperCase()}${line.slice(1)}\n\n`)
    .join('')
  const scores = scoresMarkdown(run)
  const advice = adviceMarkdown(run)
  const board = leaderboardMarkdown(run)
  return `${head}\n\n${data}${task}${search}${toMarkdown(run)}${scores ? `\n${scores}` : ''}${board ? `\n${board}` : ''}${advice ? `\n${advice}` : ''}`
}

/** A classifier's line: "Objective: binary (2 classes: no, yes), read from the target · primary metric: log loss"; '' for regression. */
export function taskMarkdown(run: Pick<RunResult, 'task'>): string {
  const task = taskOf(run)
  if (task.objective === 'regression') return ''
  return `Objective: ${describeTask(task)}${task.auto ? ', read from the target' : ''} · primary metric: ${METRIC_SPECS[task.metric].label}\n\n`
}

/**
 * A classifier's Scores section: per measurement (its first repeat: every repeat trains the same
 * models), the mean test score over its models in each metric of the objective; '' for regression.
 */
export function scoresMarkdown(run: Pick<RunResult, 'task' | 'measurements' | 'summary'>): string {
  const task = taskOf(run)
  if (task.objective === 'regression') return ''
  const metrics = metricsOf(task.objective)
  const side = run.measurements.some((m) => m.backend)
  const header = ['rows', 'models', 'strategy', ...(side ? ['backend'] : []), 'workers', ...metrics.map((m) => `mean test ${METRIC_SPECS[m].label}`)]
  const measured = run.measurements.filter((m) => m.status === 'ok' && m.repeat === 0 && m.perModel.length)
  if (!measured.length) return ''
  const cell = (v: number | null) => (v === null ? '–' : v.toPrecision(5))
  return [
    '## Scores',
    '',
    `Mean over each measurement's models on the test rows; ranked by ${METRIC_SPECS[task.metric].label} (${METRIC_SPECS[task.metric].better === 'min' ? 'lower' : 'higher'} is better).`,
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i === 2 || (side && i === 3) ? ':---' : '---:')).join('|')}|`,
    ...measured.map(
      (m) =>
        `| ${[m.size.toLocaleString('en-US'), m.models, m.strategy, ...(side ? [m.backend ?? ''] : []), m.workers, ...metrics.map((metric) => cell(meanMetric(m.perModel, metric)))].join(' | ')} |`,
    ),
    '',
  ].join('\n')
}

/** The model set's leaderboard as a Markdown section; '' for a plain run. */
export function leaderboardMarkdown(run: Pick<RunResult, 'config' | 'measurements' | 'task'>): string {
  const board = leaderboardOf(run)
  if (!board || !run.config.set) return ''
  const t = leaderboardTable(board, run.config.set)
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`
  const fusion = fusionText(run)
  return [
    '## Leaderboard',
    '',
    t.title,
    '',
    row(t.header),
    row(t.header.map((_, i) => (i === 1 ? ':---' : '---:'))),
    ...t.rows.map(row),
    '',
    ...(fusion ? [fusion, ''] : []),
  ].join('\n')
}

/** "+4.9 %" / "−12.0 %" */
function signedPercent(fraction: number): string {
  return `${fraction >= 0 ? '+' : '−'}${Math.abs(fraction * 100).toFixed(1)} %`
}

/** The Advice section: per check of this run's advice, the advice line and predicted (interval) vs measured; '' without checks. */
export function adviceMarkdown(run: Pick<RunResult, 'adviceChecks'>): string {
  const checks = run.adviceChecks ?? []
  if (checks.length === 0) return ''
  const out = ['## Advice', '']
  for (const check of checks) {
    const { models, size } = check.advice.target
    out.push(
      `**${models} models at ${size.toLocaleString('en-US')} rows**, checked ${check.checkedAt.slice(0, 16).replace('T', ' ')} UTC by run ${check.verifyRunId}: ${check.advice.text}`,
      '',
    )
    out.push('| option | predicted [ms] | 95 % interval [ms] | measured [ms] | error | in interval |', '|:---|---:|---:|---:|---:|:---|')
    for (const r of check.rows) {
      const error = predictionError(r)
      const inside = r.measuredMs === null ? '–' : r.measuredMs >= r.lowMs && r.measuredMs <= r.highMs ? 'yes' : 'no'
      out.push(
        `| ${optionLabel(r, ' ')} | ${mdMs(r.predictedMs)} | ${mdMs(r.lowMs)}–${mdMs(r.highMs)} | ${r.measuredMs === null ? 'not measured' : mdMs(r.measuredMs)} | ${error === null ? '–' : signedPercent(error)} | ${inside} |`,
      )
    }
    out.push(
      '',
      `The recommended option was the fastest measured: ${check.pickRight === null ? 'not decided (an option was not measured)' : check.pickRight ? 'yes' : 'no'}.`,
      '',
    )
  }
  return out.join('\n')
}

/**
 * A model set's leaderboard as CSV: one row per configuration, best first — rank, its varied values
 * (a column per varied field), score and test MSE (mean, std), time per model, models. A classifier
 * adds, after those, each metric of its objective on the rows it is ranked on and on the test rows
 * (mean, std: validation_logloss_mean, …, test_accuracy_std). Refused (not-found) for a run without
 * a set or before a measurement finished.
 */
export function leaderboardCsv(run: RunResult): string {
  const board = leaderboardOf(run)
  if (!board || !run.config.set)
    throw new TrainpoolError('not-found', `run ${run.runId} has no leaderboard: only a model set (a grid, seeds or folds) with a finished measurement has one`)
  const family = familyOf(run.config.model)
  const varied = family.fields.filter((f) => (run.config.set!.grid[f.key]?.length ?? 0) > 1)
  const classifier = board.task.objective !== 'regression'
  // a classifier's metrics: each of the objective's, on the held-out rows (with folds) then the test rows
  const extra = classifier
    ? [...(board.scoreKind === 'validation' ? (['validation', 'test'] as const) : (['test'] as const))].flatMap((rows) =>
        metricsOf(board.task.objective).map((metric) => ({ rows, metric, label: `${rows} ${METRIC_SPECS[metric].label}` })),
      )
    : []
  const header = [
    'rank',
    'configuration',
    ...varied.map((f) => f.key),
    'score',
    'score_mean',
    'score_std',
    'test_mse_mean',
    'test_mse_std',
    'train_ms_per_model',
    'models',
    'rows',
    ...extra.flatMap((c) => [`${c.rows}_${c.metric}_mean`, `${c.rows}_${c.metric}_std`]),
  ]
  const rows = board.entries.map((e) =>
    [
      e.rank,
      e.label,
      ...varied.map((f) => gridValueText(e.params[f.key])),
      `${board.scoreKind}_${board.task.metric}`,
      e.score.mean,
      e.score.std,
      e.testMse.mean,
      e.testMse.std,
      e.trainMs,
      e.models,
      board.size,
      ...extra.flatMap((c) => {
        const spread = columnSpread(e, c)
        return [spread?.mean, spread?.std]
      }),
    ]
      .map(csvCell)
      .join(','),
  )
  return [header.join(','), ...rows].join('\n') + '\n'
}

export function exportRun(run: RunResult, format: ExportFormat): ExportedFile {
  const content =
    format === 'json'
      ? JSON.stringify(run, null, 2) + '\n'
      : format === 'csv'
        ? toCsv(run)
        : format === 'leaderboard'
          ? leaderboardCsv(run)
          : toMarkdownDocument(run)
  return { fileName: exportFileName(run, EXPORT_EXTENSION[format]), mimeType: EXPORT_MIME[format], content }
}
