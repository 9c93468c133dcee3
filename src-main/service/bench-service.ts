// BenchService: the one façade the shells call. Validates configs, refuses a second concurrent
// run, runs the bench runner, coalesces its progress to ≤ 20 events/s, keeps the live run's state
// for tabs that (re)connect, and saves the run after each measurement.
import os from 'node:os'
import {
  type BackendCapability,
  BenchConfigSchema,
  type BenchConfig,
  type Capabilities,
  type Environment,
  type ExportedFile,
  invalidInput,
  type Measurement,
  type MeasurementKey,
  type ModelCell,
  type ParsedRequest,
  PROGRESS_MIN_INTERVAL_MS,
  type PdfReport,
  type RunEvent,
  type RunListEntry,
  type RunResult,
  SCHEMA_VERSION,
  TrainpoolError,
  type Progress,
  type WorkerLane,
} from '@shared/contract'
import { autoBackendFrom } from '@shared/backends'
import { familyOf } from '@shared/families'
import { estimateRunPeakBytes } from '@shared/estimate'
import { exportFileName, exportRun } from '../bench/export'
import { BenchRunner, type RunnerOptions } from '../bench/runner'
import { summarize } from '../bench/stats'
import { verify } from '../bench/verify'
import type { WorkerLauncher } from '../pool/launcher'
import { workerEnv } from '../pool/launcher'
import { cleanName, cleanTags, listEntry, newRunId, type RunStore } from '../store/run-store'
import { type TelemetryContext, TelemetrySession, type TelemetrySessionOptions } from '../telemetry/session'
import type { BenchServiceApi } from './types'

export interface BenchServiceOptions {
  launcher: WorkerLauncher
  /** null: keep runs in memory only */
  store: RunStore | null
  shell: Capabilities['shell']
  appVersion?: string
  runner?: RunnerOptions
  /** overrides the worker-process probe (tests) */
  probe?: () => Promise<BackendCapability[]>
  /**
   * Renders a run's PDF report. Default: headless Chromium via playwright-core
   * (src-main/report/render-pdf.ts, loaded on first use). The Electron shell prints in its own
   * hidden window instead (app/report-window.ts) and never calls this.
   */
  renderPdf?: (run: RunResult) => Promise<Buffer>
  /**
   * GPU (nvidia-smi -l 1) and worker CPU/RSS telemetry, sampled at 1 Hz while a run is live and
   * stored with it; false turns it off. Default: on.
   */
  telemetry?: false | Omit<TelemetrySessionOptions, 'pids' | 'context' | 'onSample'>
}

interface LiveRun {
  runId: string
  result: RunResult
  runner: BenchRunner
  events: RunEvent[]
  lastProgress: RunEvent | null
  lanes: WorkerLane[]
  models: ModelCell[]
  measurementIndex: number
  measurementStarted: number
  progressTimer: NodeJS.Timeout | null
  lastProgressSent: number
  done: Promise<RunResult>
  telemetry: TelemetrySession | null
  /** what the run is doing right now, stamped on each telemetry sample */
  context: TelemetryContext
}

export class BenchService implements BenchServiceApi {
  private listeners = new Set<(event: RunEvent) => void>()
  private live: LiveRun | null = null
  private finished = new Map<string, RunResult>()
  private probed: Promise<BackendCapability[]> | null = null

  constructor(private readonly options: BenchServiceOptions) {}

  onEvent(listener: (event: RunEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private emit(event: RunEvent): void {
    if (this.live && event.runId === this.live.runId && event.type !== 'progress' && event.type !== 'telemetry') this.live.events.push(event)
    for (const l of [...this.listeners]) {
      try {
        l(event)
      } catch {
        /* a broken listener must not break the run */
      }
    }
  }

  async capabilities(): Promise<Capabilities> {
    const backends = await this.probe()
    const cpus = os.cpus()
    return {
      backends,
      autoBackend: autoBackendFrom(backends),
      cpu: cpus[0]?.model?.trim() || os.arch(),
      cpuCount: cpus.length,
      memoryBytes: os.totalmem(),
      freeMemoryBytes: os.freemem(),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      versions: { trainpool: this.options.appVersion ?? 'dev', node: process.versions.node, ...(process.versions.electron ? { electron: process.versions.electron } : {}) },
      shell: this.options.shell,
    }
  }

  /** Probes the backends once, in a short-lived worker process (native backends stay out of this process). */
  private probe(): Promise<BackendCapability[]> {
    if (!this.probed) {
      this.probed = (this.options.probe ?? (() => probeInWorker(this.options.launcher)))().catch((err) => {
        this.probed = null
        throw err
      })
    }
    return this.probed
  }

  /** Validates a raw config: field errors, availability of the backend, memory. Nothing starts. */
  async validate(raw: unknown): Promise<BenchConfig> {
    const parsed = BenchConfigSchema.safeParse(raw)
    if (!parsed.success) throw invalidInput(parsed.error, raw, 'config')
    const config = parsed.data
    if (config.backend !== 'auto') {
      const cap = (await this.probe()).find((b) => b.name === config.backend)
      if (!cap?.available) {
        throw new TrainpoolError('backend-unavailable', `backend ${config.backend} is not available here: ${cap?.detail ?? 'unknown backend'}`, [
          { field: 'backend', message: `${config.backend} is not available here: ${cap?.detail ?? 'unknown'}` },
        ])
      }
    }
    const need = estimateRunPeakBytes(config)
    const free = os.freemem()
    if (need > free) {
      const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`
      throw new TrainpoolError('insufficient-memory', `this run needs about ${gib(need)} at its peak but only ${gib(free)} is free: use fewer rows, models or workers`, [
        { field: 'sizes', message: `needs about ${gib(need)}, ${gib(free)} free` },
      ])
    }
    return config
  }

  async start({ config: raw }: ParsedRequest<'start'>): Promise<{ runId: string }> {
    if (this.live) throw new TrainpoolError('busy', `run ${this.live.runId} is still running: cancel it or wait for it to finish (one run at a time)`)
    const config = await this.validate(raw)
    if (this.live) throw new TrainpoolError('busy', `run ${(this.live as LiveRun).runId} is still running: cancel it or wait for it to finish (one run at a time)`)
    const runId = newRunId()
    const startedAt = new Date().toISOString()
    const result: RunResult = {
      schemaVersion: SCHEMA_VERSION,
      runId,
      status: 'running',
      startedAt,
      finishedAt: null,
      config,
      environment: null,
      measurements: [],
      summary: [],
      verification: { sameWork: false, maxRelMseDiff: 0, tolerance: 1e-4, modelsTrained: {}, problems: ['not finished'] },
      warnings: [],
      error: null,
    }
    const live: LiveRun = {
      runId,
      result,
      runner: null as unknown as BenchRunner,
      events: [],
      lastProgress: null,
      lanes: [],
      models: [],
      measurementIndex: 0,
      measurementStarted: performance.now(),
      progressTimer: null,
      lastProgressSent: 0,
      done: Promise.resolve(result),
      telemetry: null,
      context: { index: null, strategy: null, workerCount: null, phase: null },
    }
    live.runner = new BenchRunner(this.options.launcher, config, this.runnerHooks(live), {
      appVersion: this.options.appVersion,
      ...this.options.runner,
    })
    this.live = live
    live.telemetry = this.startTelemetry(live)
    this.emit({ type: 'run-started', runId, config, plan: live.runner.plan, startedAt })
    await this.persist(live)
    live.done = this.execute(live)
    return { runId }
  }

  /** Starts sampling GPUs and workers for this run; the samples live on the result, events go out at 1 Hz. */
  private startTelemetry(live: LiveRun): TelemetrySession | null {
    if (this.options.telemetry === false) return null
    const session = new TelemetrySession({
      ...this.options.telemetry,
      pids: () => live.runner.pids,
      context: () => ({ ...live.context }),
      onSample: (sample, gpu) => {
        if (this.live === live) this.emit({ type: 'telemetry', runId: live.runId, gpu: { ...gpu }, samples: [sample] })
      },
    })
    live.result.telemetry = session.data
    session.start()
    return session
  }

  /** Resolves with the finished run (CLI and tests wait on it). */
  async waitForRun(runId: string): Promise<RunResult> {
    if (this.live?.runId === runId) return this.live.done
    return this.getRun({ runId })
  }

  private runnerHooks(live: LiveRun) {
    return {
      onEnvironment: (environment: Environment) => {
        live.result.environment = environment
      },
      onPhase: (phase: 'starting' | 'warming' | 'measuring', index: number, key: MeasurementKey) => {
        live.context = { index, strategy: key.strategy, workerCount: key.workers, phase }
        if (phase === 'measuring') {
          live.measurementStarted = performance.now()
          live.models = Array.from({ length: key.models }, () => ({ fraction: 0, loss: null, done: false }))
          live.lanes = []
          live.measurementIndex = index
        }
        this.emit({ type: 'phase', runId: live.runId, phase, index, key, message: phaseMessage(phase, key) })
      },
      // the runner announces 'measuring' (which resets lanes and cells) before it dispatches a job
      onDispatch: (_index: number, worker: number, job: { modelIndices: number[] }) => {
        live.lanes[worker] = { worker, modelIndices: job.modelIndices, progress: null }
        this.scheduleProgress(live)
      },
      onProgress: (_index: number, worker: number, { modelIndices, progress }: { modelIndices: number[]; progress: Progress }) => {
        live.lanes[worker] = { worker, modelIndices, progress }
        const fraction = progress.total > 0 ? progress.done / progress.total : 0
        for (const i of modelIndices) {
          const cell = live.models[i]
          if (cell && !cell.done) {
            cell.fraction = fraction
            cell.loss = progress.loss ?? null
          }
        }
        this.scheduleProgress(live)
      },
      onModelDone: (_index: number, m: { index: number; finalLoss: number | null }) => {
        const cell = live.models[m.index]
        if (cell) Object.assign(cell, { fraction: 1, loss: m.finalLoss, done: true })
        this.scheduleProgress(live)
      },
      onMeasurement: (index: number, measurement: Measurement) => {
        this.flushProgress(live, true)
        live.context = { ...live.context, phase: null }
        live.result.measurements.push(measurement)
        live.result.summary = summarize(live.result.measurements, familyOf(live.result.config.model))
        this.emit({ type: 'measurement', runId: live.runId, index, measurement })
        void this.persist(live)
      },
    }
  }

  /** Coalesces progress: at most one event per PROGRESS_MIN_INTERVAL_MS per run. */
  private scheduleProgress(live: LiveRun): void {
    if (live.progressTimer) return
    const wait = Math.max(0, live.lastProgressSent + PROGRESS_MIN_INTERVAL_MS - performance.now())
    live.progressTimer = setTimeout(() => this.flushProgress(live), wait)
  }

  /**
   * Sends the progress snapshot now. `ifDue`: only when the interval since the last one has passed
   * (before a measurement or the end of a run; those events mark the models done themselves).
   */
  private flushProgress(live: LiveRun, ifDue = false): void {
    if (live.progressTimer) clearTimeout(live.progressTimer)
    live.progressTimer = null
    if (ifDue && performance.now() - live.lastProgressSent < PROGRESS_MIN_INTERVAL_MS) return
    live.lastProgressSent = performance.now()
    const key = live.runner.plan[live.measurementIndex]
    if (!key) return
    const event: RunEvent = {
      type: 'progress',
      runId: live.runId,
      index: live.measurementIndex,
      key,
      elapsedMs: performance.now() - live.measurementStarted,
      modelsDone: live.models.filter((m) => m.done).length,
      lanes: live.lanes.filter(Boolean).map((l) => ({ ...l, modelIndices: [...l.modelIndices] })),
      models: live.models.map((m) => ({ ...m })),
    }
    live.lastProgress = event
    this.emit(event)
  }

  private async execute(live: LiveRun): Promise<RunResult> {
    let outcome
    try {
      outcome = await live.runner.run()
    } catch (err) {
      outcome = { status: 'failed' as const, measurements: live.result.measurements, environment: live.result.environment, error: String(err) }
    }
    this.flushProgress(live, true)
    if (live.progressTimer) clearTimeout(live.progressTimer)
    if (live.telemetry) {
      try {
        await live.telemetry.stop()
      } catch {
        /* telemetry never fails a run */
      }
    }
    const result = live.result
    result.environment = outcome.environment ?? result.environment
    result.summary = summarize(result.measurements, familyOf(result.config.model))
    result.verification = verify(result.config, result.measurements)
    result.status = outcome.status === 'ok' && !result.verification.sameWork ? 'failed' : outcome.status
    result.error = outcome.error ?? (result.status === 'failed' ? result.verification.problems.slice(0, 5).join('; ') : null)
    result.warnings = [...new Set([...result.warnings, ...result.summary.flatMap((s) => s.warnings.map((w) => `${s.strategy} W=${s.workers} at ${s.size} rows: ${w}`))])]
    result.finishedAt = new Date().toISOString()
    await this.persist(live)
    this.finished.set(result.runId, result)
    this.live = null
    this.emit({ type: 'run-finished', runId: result.runId, result })
    return result
  }

  private async persist(live: LiveRun): Promise<void> {
    if (!this.options.store) return
    try {
      // this process writes the live run: its writer lock keeps other processes on the same store
      // (app, CLI, serve) from marking it interrupted at their start-up
      await this.options.store.save(live.result, { writer: true })
    } catch (err) {
      const warning = `could not save the run to ${this.options.store.dir}: ${(err as Error).message} (results are kept in memory; export them before closing)`
      if (!live.result.warnings.includes(warning)) live.result.warnings.push(warning)
    }
  }

  async cancel({ runId }: ParsedRequest<'cancel'> = {}): Promise<{ cancelled: boolean }> {
    const live = this.live
    if (!live || (runId && runId !== live.runId)) return { cancelled: false }
    await live.runner.cancel()
    await live.done
    return { cancelled: true }
  }

  async listRuns(): Promise<RunListEntry[]> {
    const stored = this.options.store ? await this.options.store.list() : []
    const ids = new Set(stored.map((e) => e.runId))
    const memory = [...this.finished.values()].filter((r) => !ids.has(r.runId)).map(listEntry)
    const live = this.live && !ids.has(this.live.runId) ? [listEntry(this.live.result)] : []
    return [...live, ...memory, ...stored].sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? ''))
  }

  async getRun({ runId }: ParsedRequest<'getRun'>): Promise<RunResult> {
    if (this.live?.runId === runId) return structuredClone(this.live.result)
    const memory = this.finished.get(runId)
    if (memory) return memory
    if (this.options.store) return this.options.store.get(runId)
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }

  async currentRun(): Promise<{ runId: string; events: RunEvent[] } | null> {
    const live = this.live
    if (!live) return null
    const events = live.lastProgress ? [...live.events, live.lastProgress] : [...live.events]
    const t = live.telemetry?.data
    if (t?.samples.length) events.push({ type: 'telemetry', runId: live.runId, gpu: { ...t.gpu }, samples: [...t.samples] })
    return { runId: live.runId, events }
  }

  async renameRun({ runId, name }: ParsedRequest<'renameRun'>): Promise<RunListEntry> {
    const clean = cleanName(name)
    return this.update(runId, (run) => {
      if (clean) run.name = clean
      else delete run.name
    })
  }

  async tagRun({ runId, tags }: ParsedRequest<'tagRun'>): Promise<RunListEntry> {
    const clean = cleanTags(tags)
    return this.update(runId, (run) => {
      if (clean.length) run.tags = clean
      else delete run.tags
    })
  }

  /** Applies a change to a run wherever it lives (live, in memory, stored) and saves it. */
  private async update(runId: string, change: (run: RunResult) => void): Promise<RunListEntry> {
    if (this.live?.runId === runId) {
      change(this.live.result)
      await this.persist(this.live)
      return listEntry(this.live.result)
    }
    const memory = this.finished.get(runId)
    if (memory) {
      change(memory)
      if (this.options.store) await this.options.store.save(memory)
      return listEntry(memory)
    }
    if (!this.options.store) throw new TrainpoolError('not-found', `no run ${runId}`)
    const run = await this.options.store.get(runId)
    change(run)
    await this.options.store.save(run)
    return listEntry(run)
  }

  async deleteRun({ runId }: ParsedRequest<'deleteRun'>): Promise<{ deleted: true }> {
    if (this.live?.runId === runId) throw new TrainpoolError('busy', `run ${runId} is still running: cancel it before deleting it`)
    const inMemory = this.finished.delete(runId)
    if (this.options.store) {
      try {
        await this.options.store.delete(runId)
      } catch (err) {
        if (!(inMemory && err instanceof TrainpoolError && err.code === 'not-found')) throw err
      }
    } else if (!inMemory) throw new TrainpoolError('not-found', `no run ${runId}`)
    return { deleted: true }
  }

  async exportRun({ runId, format }: ParsedRequest<'exportRun'>): Promise<ExportedFile> {
    return exportRun(await this.getRun({ runId }), format)
  }

  async reportPdf({ runId }: ParsedRequest<'reportPdf'>): Promise<PdfReport> {
    const run = await this.getRun({ runId })
    const render = this.options.renderPdf ?? (async (r: RunResult) => (await import('../report/render-pdf')).renderReportPdf(r))
    const pdf = await render(run)
    return { fileName: exportFileName(run, 'pdf'), sizeBytes: pdf.length, base64: pdf.toString('base64') }
  }

  async shutdown(): Promise<void> {
    if (this.live) await this.cancel()
  }
}

function phaseMessage(phase: string, k: MeasurementKey): string {
  const what = `${k.strategy}${k.strategy === 'sequential' ? '' : ` W=${k.workers}`} · ${k.size} rows × ${k.models} models`
  switch (phase) {
    case 'starting':
      return `starting workers for ${what}`
    case 'warming':
      return `warming up (data + kernels) for ${what}`
    default:
      return `measuring ${what}, repeat ${k.repeat + 1}`
  }
}

/** Runs the backend probe in a short-lived worker process. */
export async function probeInWorker(launcher: WorkerLauncher): Promise<BackendCapability[]> {
  const handle = launcher.launch({ workerIndex: -1, serviceName: 'trainpool-probe', env: workerEnv() })
  let stderr = ''
  handle.onStderr((c) => {
    stderr = (stderr + c).slice(-1000)
  })
  try {
    return await new Promise<BackendCapability[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('backend probe timed out after 60 s')), 60_000)
      handle.onMessage((m) => {
        if (m.type === 'capabilities') {
          clearTimeout(timer)
          resolve(m.backends)
        }
      })
      handle.onExit((e) => {
        clearTimeout(timer)
        reject(new Error(`backend probe exited early (code ${e.code}, signal ${e.signal}): ${stderr}`))
      })
      handle.send({ type: 'probe' })
    })
  } finally {
    handle.send({ type: 'shutdown' })
    setTimeout(() => handle.kill('SIGKILL'), 2000).unref()
  }
}
