// `trainpool bench`: validate flags (exit 2, nothing started), load --data FILE into the store's data
// cache (rows × columns and the load time on stderr), run through the BenchService, progress bar on
// stderr when it is a TTY, summary table on stdout, --json/--csv files (output-files.ts), exit 0/1
// (1 also when the store could not keep the run whole).
import { SingleBar } from 'cli-progress'
import {
  backendLine,
  type BenchConfig,
  type Capabilities,
  type ConcreteBackend,
  deviceWorkRows,
  firstBackend,
  type DataSetInfo,
  describeSet,
  MEASUREMENT_FLOOR,
  type RunResult,
  TrainpoolError,
  gpuBusyLine,
  describeTask,
  METRIC_SPECS,
  metricsOf,
  REGRESSION_TASK,
  type Task,
  allLaunchers,
  type DataSource,
  LIMITS,
} from '@shared/contract'
import { checkDataChoice } from '@shared/data-check'
import { workloadTaskOf } from '@shared/contract/task'
import { chooseColumns, skippedTextColumns } from '@shared/data-columns'
import { familyOf } from '@shared/families'
import { earlyStoppingLine, halvingLine } from '@shared/search-summary'
import { formatDataSet, formatDuration } from '@shared/format'
import { fusionText, leaderboardOf, leaderboardTable, meanMetric } from '@shared/leaderboard'
import { backendSentences } from '@shared/verdict'
import { estimateRun, shortMeasurementsNote } from '@shared/estimate'
import { toCsv } from '../bench/export'
import type { BenchService } from '../service/bench-service'
import { openService } from '../service/open-service'
import { RunStore, defaultStoreDir } from '../store/run-store'
import { datasetsDir, loadIntoCache, removeFromCache } from '../data'
import { type BenchFlags, UsageError, configFromFlags, dataSourceFromFlags, flagForField, flagMessage } from './options'
import { type ListenAddress, parseListenAddress, workerSocketOption } from '../pool/remote/gateway'
import { OutputError, STDOUT_PATH, checkOutputFile, writeOutputFile } from './output-files'

/** `-` on --json / --csv is standard output, as report and advise take it */
const STDOUT_TOO = { dashIsStdout: true }

export interface BenchCommandFlags extends BenchFlags {
  /** the user's CSV or Parquet file */
  data?: string
  json?: string
  csv?: string
  store?: string
  save?: boolean
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

/** A bench step that ends the command: its exit code, the line said on stderr, and whether the data it added to the cache goes again. */
class BenchExit extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly undoData = false,
  ) {
    super(message)
  }
}

export async function benchCommand(flags: BenchCommandFlags, version: string): Promise<number> {
  const storeDir = flags.store ?? defaultStoreDir()
  /** the data set this command added to the cache: a run refused for its data takes it out again */
  const added: { sha256: string | null } = { sha256: null }
  try {
    let config = configOf(flags)
    await checkOutputs(flags)
    const listen = listenOf(flags, config)
    // the data cache and the calibration live in the store's folder even when this run is not kept (--no-save)
    const { service, store } = await openService({
      storeDir,
      keepRuns: flags.save !== false,
      shell: 'cli',
      appVersion: version,
      workerSocket: workerSocketOption(listen, (line) => process.stderr.write(`trainpool bench: worker socket: ${line}\n`)),
    })
    const damaged = store ? await sayDamagedEntries(store) : null
    if (damaged) process.stderr.write(`${damaged}\n`)
    if (flags.data !== undefined) config = await withUserData(flags, config, storeDir, added)
    // asked once: --backend all and the short-measurement note both read them
    let asked: Promise<Capabilities> | null = null
    const capabilities = () => (asked ??= service.capabilities())
    config = await withAvailableBackends(flags, config, capabilities)
    await noteShortMeasurements(config, capabilities)
    const result = await runWithSignals(service, await startRun(service, config))
    return await reportRun(result, flags, store)
  } catch (err) {
    if (!(err instanceof BenchExit)) throw err
    if (err.message) process.stderr.write(`trainpool bench: ${err.message}\n`)
    if (err.undoData && added.sha256) await removeFromCache(storeDir, added.sha256).catch(() => undefined)
    return err.code
  }
}

function configOf(flags: BenchCommandFlags): BenchConfig {
  try {
    return configFromFlags(flags)
  } catch (err) {
    if (err instanceof UsageError) throw new BenchExit(EXIT.usage, err.message)
    throw err
  }
}

/** A result file that could not be written is said before the run, not after it. */
async function checkOutputs(flags: BenchCommandFlags): Promise<void> {
  try {
    if (flags.json === STDOUT_PATH && flags.csv === STDOUT_PATH)
      throw new BenchExit(EXIT.usage, '--json - and --csv - both ask for standard output: give one of them a file')
    if (flags.json) await checkOutputFile('--json', flags.json, STDOUT_TOO)
    if (flags.csv) await checkOutputFile('--csv', flags.csv, STDOUT_TOO)
  } catch (err) {
    if (err instanceof OutputError) throw new BenchExit(EXIT[err.exit], err.message)
    throw err
  }
}

function listenOf(flags: BenchCommandFlags, config: BenchConfig): ListenAddress | undefined {
  let listen: ListenAddress | undefined
  try {
    if (typeof flags.listen === 'string') listen = parseListenAddress(flags.listen)
  } catch (err) {
    throw new BenchExit(EXIT.usage, (err as Error).message)
  }
  if (listen && !config.launcher) {
    throw new BenchExit(
      EXIT.usage,
      `--listen applies to remote workers only: add --launcher ${allLaunchers()
        .map((l) => l.engine)
        .join('|')}`,
    )
  }
  return listen
}

/** --data FILE: loaded into the store's data cache (said on stderr), the config's data source from the flags. */
async function withUserData(flags: BenchCommandFlags, config: BenchConfig, storeDir: string, added: { sha256: string | null }): Promise<BenchConfig> {
  try {
    const { info, added: isNew } = await loadIntoCache(flags.data!, storeDir)
    if (isNew) added.sha256 = info.sha256
    const data = dataSourceFromFlags(flags, info)
    const withData = { ...config, data, sizes: sizesForData(flags, config, usableRowsOf(info, data, config)) }
    process.stderr.write(`${describeLoad(info, withData)}\n`)
    return withData
  } catch (err) {
    if (err instanceof UsageError || (err instanceof TrainpoolError && err.code !== 'internal')) {
      const storeIssue = err instanceof TrainpoolError && err.issues?.[0]?.field === 'store'
      const message = err instanceof UsageError ? err.message : storeIssue ? storeMessage(err.message, flags.store) : flagMessage('--data', 'data', err.message)
      throw new BenchExit(EXIT.usage, message, true)
    }
    const code = (err as NodeJS.ErrnoException).code
    // the disk failed while the table was written (the cache left nothing half-written)
    if (typeof code === 'string')
      throw new BenchExit(
        EXIT.failed,
        `--data ${flags.data}: the data cache in ${datasetsDir(storeDir)} could not be written (${(err as Error).message.split(', ')[0]})`,
      )
    throw err
  }
}

/** Rows of the file with a target value under the flags' column choice; null when the choice is refused (the service then says why). */
function usableRowsOf(info: DataSetInfo, data: DataSource, config: BenchConfig): number | null {
  return checkDataChoice({ info, data, family: familyOf(config.model), sizes: [], objective: config.objective, metric: config.metric }).usableRows
}

/**
 * --data without --sizes: the sizes the user never gave follow the file, not generated data's default.
 * No --preset: every row with a target (up to the size limit). A preset: its sizes, each at most the
 * file's rows. --sizes given: as typed (a size past the file is refused naming --sizes).
 */
export function sizesForData(flags: BenchFlags, config: Pick<BenchConfig, 'sizes'>, usableRows: number | null): number[] {
  if (flags.sizes !== undefined || usableRows === null || usableRows < 1) return config.sizes
  const most = Math.min(usableRows, LIMITS.size.max)
  if (flags.preset === undefined) return [most]
  return [...new Set(config.sizes.map((size) => Math.min(size, most)))]
}

/** --backend all: every backend of the family available here; the rest said, not tried. */
async function withAvailableBackends(flags: BenchCommandFlags, config: BenchConfig, capabilities: () => Promise<Capabilities>): Promise<BenchConfig> {
  if (!(typeof flags.backend === 'string' && flags.backend.trim() === 'all' && Array.isArray(config.backend))) return config
  const caps = await capabilities()
  const available = config.backend.filter((b) => caps.backends.some((c) => c.name === b && c.available))
  const skipped = config.backend.filter((b) => !available.includes(b))
  if (skipped.length)
    process.stderr.write(
      `trainpool bench: --backend all: ${skipped.map((b) => `${b} (${caps.backends.find((c) => c.name === b)?.detail ?? 'not available'})`).join(', ')} not available here; measuring ${available.join(', ')}\n`,
    )
  if (available.length === 0) throw new BenchExit(EXIT.usage, '--backend all: no backend of this model family is available here')
  return { ...config, backend: available.length > 1 ? available : available[0] }
}

/** Measurements too short alone for a sweep's fits: said before the run, with what to change. */
async function noteShortMeasurements(config: BenchConfig, capabilities: () => Promise<Capabilities>): Promise<void> {
  const caps = await capabilities().catch(() => null)
  const first = firstBackend(config)
  const backend = first === 'auto' ? (caps?.autoBackends[config.model.kind] ?? null) : first
  const note = caps
    ? shortMeasurementsNote(config, estimateRun(config, backend as ConcreteBackend | null, { cpuCount: caps.cpuCount, calibration: caps.calibration.families }))
    : null
  if (note) process.stderr.write(`trainpool bench: note: ${note}\n`)
}

/** Starts the run; a config the service refuses is said on the flag it names. */
async function startRun(service: BenchService, config: BenchConfig): Promise<string> {
  try {
    return (await service.start({ config })).runId
  } catch (err) {
    if (err instanceof TrainpoolError && err.code !== 'internal') {
      const field = err.issues?.[0]?.field ?? ''
      const flag = flagForField(field)
      throw new BenchExit(EXIT.usage, flag ? flagMessage(flag, field, err.message) : err.message, true)
    }
    throw err
  }
}

/** Waits for the run with progress on stderr; Ctrl+C cancels it (twice: exits at once). */
async function runWithSignals(service: BenchService, runId: string): Promise<RunResult> {
  const bar = process.stderr.isTTY ? progressBar(service, runId) : null
  if (!bar) logPhases(service)
  let interrupted = false
  const onSignal = () => {
    if (interrupted) process.exit(EXIT.failed)
    interrupted = true
    process.stderr.write('\ntrainpool bench: cancelling (Ctrl+C again to force)…\n')
    void service.cancel({ runId })
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  const result = await service.waitForRun(runId)
  bar?.stop()
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
  return result
}

/** The summary on stdout, the result files, and whether the store kept the run whole (a run it could not keep is a failed command). */
async function reportRun(result: RunResult, flags: BenchCommandFlags, store: { dir: string } | null): Promise<number> {
  // a file on standard output (--json - / --csv -) keeps it for that file: the summary goes to stderr
  const stdoutTaken = flags.json === STDOUT_PATH || flags.csv === STDOUT_PATH
  ;(stdoutTaken ? process.stderr : process.stdout).write(summaryTable(result))
  let exit: number = result.status === 'ok' ? EXIT.ok : EXIT.failed
  try {
    if (flags.json) await writeOutputFile('--json', flags.json, JSON.stringify(result, null, 2), STDOUT_TOO)
    if (flags.csv) await writeOutputFile('--csv', flags.csv, toCsv(result), STDOUT_TOO)
  } catch (err) {
    if (!(err instanceof OutputError)) throw err
    process.stderr.write(`trainpool bench: ${err.message}\n`)
    exit = Math.max(exit, EXIT[err.exit])
  }
  if (!store) return exit
  const unsaved = result.warnings.find((w) => w.startsWith('could not save') || w.startsWith('could not keep the trained models'))
  if (unsaved) throw new BenchExit(EXIT.failed, `--store ${store.dir}: run ${result.runId} was not saved whole: ${unsaved}`)
  process.stderr.write(`saved run ${result.runId} in ${store.dir}\n`)
  return exit
}

/** The data cache could not be written: said on --store (the default store named when there was no --store). */
function storeMessage(message: string, storeFlag: string | undefined): string {
  return storeFlag === undefined ? `--store (default ${defaultStoreDir()}): ${message}; choose another with --store DIR` : `--store: ${message}`
}

/** "the store … has 2 entries it cannot read, listed as damaged: a (run.json is a FIFO …), …"; null when none. */
export async function sayDamagedEntries(store: RunStore): Promise<string | null> {
  const damaged = (await store.list().catch(() => [])).filter((e) => e.status === 'damaged')
  if (damaged.length === 0) return null
  const shown = damaged.slice(0, 5).map((e) => `  ${e.runId}: ${(e.problem ?? '').replace(`run ${e.runId}: `, '')}`)
  const more = damaged.length > 5 ? [`  … and ${damaged.length - 5} more (trainpool report ID names the problem of each)`] : []
  return [
    `warning: the store ${store.dir} has ${damaged.length} ${damaged.length === 1 ? 'entry' : 'entries'} it cannot read (listed as damaged, left as they are):`,
    ...shown,
    ...more,
  ].join('\n')
}

/** "data: houses.csv — 1 200 rows × 5 columns, loaded in 0.4 s; target price, 3 features (city left out: text)" */
function describeLoad(info: DataSetInfo, config: BenchConfig): string {
  const how = info.loadMs === 0 ? 'already in the data cache (parse skipped)' : `loaded in ${formatDuration(info.loadMs)}`
  const lines = [`data: ${info.name} — ${info.rows} rows × ${info.columns.length} columns, ${how}`]
  const source = config.data!
  try {
    const choice = chooseColumns(info, source)
    const skipped = skippedTextColumns(info, source).map((c) => `${c.name} (row ${c.firstTextRow} is not a number)`)
    lines.push(
      `  target ${choice.target.name}; ${choice.features.length} feature${choice.features.length === 1 ? '' : 's'}${skipped.length ? `; left out, not numeric: ${skipped.join(', ')}` : ''}`,
    )
    const family = familyOf(config.model)
    if (source.impute !== 'none' && family.userData?.missingValues === 'native') {
      lines.push(`  --impute ${source.impute} does not apply: ${family.label} take missing values as they are (nothing is imputed)`)
    }
  } catch {
    // the service says what is wrong with the column choice, naming the flag
  }
  return lines.join('\n')
}

function progressBar(service: BenchService, runId: string): SingleBar {
  const bar = new SingleBar({
    format: ' {bar} {percentage}% | {value}/{total} model trainings | {phase}',
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: true,
    fps: 10,
  })
  let total = 0
  let doneBefore = 0
  let current = 0
  service.onEvent((e) => {
    if (e.runId !== runId) return
    if (e.type === 'run-started') {
      total = e.plan.reduce((s, k) => s + k.models, 0)
      bar.start(total, 0, { phase: 'starting' })
    } else if (e.type === 'phase') {
      bar.update(doneBefore + current, { phase: e.message })
    } else if (e.type === 'progress') {
      current = e.modelsDone
      bar.update(doneBefore + current)
    } else if (e.type === 'measurement') {
      doneBefore += e.measurement.models
      current = 0
      bar.update(doneBefore)
    }
  })
  return bar
}

function logPhases(service: BenchService): void {
  service.onEvent((e) => {
    if (e.type === 'phase' && e.phase !== 'measuring') process.stderr.write(`${e.message}\n`)
    if (e.type === 'scheduler') {
      const id = e.scheduler.jobIds.at(-1)
      process.stderr.write(`submitted Slurm job ${id} (squeue -j ${id})\n`)
    }
    if (e.type === 'measurement') {
      const m = e.measurement
      process.stderr.write(
        `  ${m.strategy} W=${m.workers} · ${m.size} rows × ${m.models} models, repeat ${m.repeat + 1}: ${formatDuration(m.wallMs)}${m.runsMs ? `, the median of ${m.runsMs.length} runs (one alone is under ${MEASUREMENT_FLOOR.minMs} ms)` : ''} (${m.status})\n`,
      )
    }
  })
}

export function summaryTable(run: RunResult): string {
  const env = run.environment
  const out: string[] = []
  const family = familyOf(run.config.model)
  const task = run.task ?? REGRESSION_TASK
  out.push(
    `Trainpool ${run.runId} · ${env ? (env.backends ? backendLine(run) : `${env.backend} on ${env.device}`) : 'no backend started'} · status ${run.status.toUpperCase()} · ${family.shortLabel} ${family.describe(run.config.model, run.config.features, workloadTaskOf(task))}${run.config.set ? ` · set: ${describeSet(family, run.config.set)}` : ''}`,
  )
  if (env?.auto) out.push(env.auto.reason)
  if (run.dataset) out.push(`data: ${formatDataSet(run.dataset)}`)
  if (run.task && task.objective !== 'regression') out.push(taskLine(run, task))
  const stopping = earlyStoppingLine(run, task)
  if (stopping) out.push(stopping)
  const halving = halvingLine(run, task)
  if (halving) out.push(halving)
  // side by side, a backend column first
  const side = run.summary.some((s) => s.backend)
  const header = [...(side ? ['backend'] : []), 'rows', 'models', 'strategy', 'W', 'median', 'min', 'max', 'speedup', 'effic.', family.work.rateLabel]
  const rows = run.summary.map((s) => [
    ...(side ? [s.backend ?? ''] : []),
    String(s.size),
    String(s.models),
    s.strategy,
    String(s.workers),
    formatDuration(s.medianMs),
    formatDuration(s.minMs),
    formatDuration(s.maxMs),
    s.speedupVsSequential === null ? '–' : `${s.speedupVsSequential.toFixed(2)}×`,
    s.efficiency === null ? '–' : `${(s.efficiency * 100).toFixed(0)}%`,
    s.workRate.toFixed(2),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const textColumns = side ? 4 : 3
  const line = (cells: string[]) => cells.map((c, i) => (i < textColumns ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  out.push(line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line))
  out.push(...backendSentences(run.summary))
  const board = leaderboardOf(run)
  if (board && run.config.set) {
    const t = leaderboardTable(board, run.config.set)
    const bw = t.header.map((h, i) => Math.max(h.length, ...t.rows.map((r) => r[i].length)))
    const bline = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(bw[i]) : c.padStart(bw[i]))).join('  ')
    const fusion = fusionText(run)
    out.push('', t.title, bline(t.header), bw.map((w) => '-'.repeat(w)).join('  '), ...t.rows.map(bline), ...(fusion ? [fusion] : []), '')
  }
  const v = run.verification
  const stopped = run.status === 'cancelled' || run.status === 'interrupted'
  out.push(
    v.sameWork && v.problems.length === 0
      ? `same work: ${Object.entries(v.modelsTrained)
          .map(([s, n]) => `${s} ${n}/${run.config.models.join('/')}`)
          .join(
            ', ',
          )} models; per-model test ${METRIC_SPECS[task.metric].label} agree (max rel. Δ ${v.maxRelMseDiff.toExponential(1)}, tolerance ${v.tolerance})${v.maxCrossBackendRelMseDiff !== undefined ? `; across backends max rel. Δ ${v.maxCrossBackendRelMseDiff.toExponential(1)}` : ''}`
      : stopped
        ? `not verified: run ${run.status} before every strategy finished`
        : `SAME-WORK CHECK FAILED:\n${v.problems.map((p) => `  - ${p}`).join('\n')}`,
  )
  for (const note of v.notes ?? []) out.push(`across backends: ${note}`)
  const gpu = telemetryLine(run)
  if (gpu) out.push(gpu)
  const device = deviceWorkRows(run.measurements)
  if (device.length) out.push('device work (what the GPU engine asked of its device):', ...device.map(([label, text]) => `  ${label}: ${text}`))
  for (const w of run.warnings) out.push(`warning: ${w}`)
  if (run.error) out.push(`error: ${run.error}`)
  return out.join('\n') + '\n'
}

/**
 * A classifier's line: "objective: binary (2 classes: no, yes), read from the target · ranked by log loss ·
 * test (mean over the models of the first measurement at the largest size): log loss 0.312 · accuracy 0.874 · ROC AUC 0.931".
 */
function taskLine(run: RunResult, task: Task): string {
  const largest = Math.max(...run.config.sizes)
  const m = run.measurements.find((x) => x.size === largest && x.status === 'ok' && x.perModel.length > 0)
  const scores = m
    ? metricsOf(task.objective)
        .filter((name) => name !== 'mse')
        .map((name) => {
          const mean = meanMetric(m.perModel, name)
          return mean === null ? null : `${METRIC_SPECS[name].label} ${mean.toPrecision(3)}`
        })
        .filter((s) => s !== null)
    : []
  const read = task.auto ? ', read from the target' : ''
  return `objective: ${describeTask(task)}${read} · ranked by ${METRIC_SPECS[task.metric].label}${scores.length ? ` · test, mean over ${m!.perModel.length} models at ${largest} rows: ${scores.join(' · ')}` : ''}`
}

/**
 * "GPU busy 23 % in sequential, 96 % in batched" when the run's telemetry has GPU utilisation
 * samples; otherwise "GPU telemetry: <status>" if the run has telemetry at all; null without.
 */
export function telemetryLine(run: RunResult): string | null {
  const t = run.telemetry
  if (!t) return null
  return gpuBusyLine(t.samples) ?? `GPU telemetry: ${t.gpu.message || t.gpu.state}`
}
