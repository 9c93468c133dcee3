// One run in flight, built whole in its constructor: the result being filled in, the runner, the
// live progress projection, telemetry, the events a re-attaching tab replays, and two promises:
// `saved` (the first save, which start() waits for) and `done` (the run finished, saved and handed
// back — what cancel() and waitForRun() wait for, whenever they are called). A run with `auto`
// resolved by calibration starts its runner once the backend is known (phase `calibrating` first).
import {
  type AutoChoice,
  type BenchConfig,
  type DataSetRecord,
  type Environment,
  type GpuInfo,
  type Measurement,
  type MeasurementKey,
  type RunEvent,
  type RunResult,
  SCHEMA_VERSION,
  type Task,
  type WorkloadData,
} from '@shared/contract'
import { familyOf } from '@shared/families'
import { expandPlan } from '@shared/plan'
import { CalibrationStopped } from '../bench/calibrate'
import { BenchRunner, type RunnerHooks, type RunnerOptions } from '../bench/runner'
import { summarize } from '../bench/stats'
import { verify } from '../bench/verify'
import type { WorkerLauncher } from '../pool/launcher'
import type { Scheduler } from '../pool/remote/scheduler'
import { calibrationDir } from '../store/calibration-cache'
import { liveCalibrationLock } from '../store/calibration-lock'
import { newRunId, type RunStore } from '../store/run-store'
import { type TelemetryContext, TelemetrySession, type TelemetrySessionOptions } from '../telemetry/session'
import type { AutoResolution } from './auto-calibration'
import { LiveProgress } from './live-progress'
import type { LiveRunAccess } from './run-history'

export interface LiveRunDeps {
  launcher: WorkerLauncher
  store: RunStore | null
  appVersion?: string
  runner?: RunnerOptions
  telemetry?: false | Omit<TelemetrySessionOptions, 'pids' | 'context' | 'onSample'>
  emit(event: RunEvent): void
  /** a verification run: the run whose advice it checks (recorded as the result's `verifies`) */
  verifies?: string
  /** a run on the user's data: what the result records and what workers read (resolved by the service) */
  dataset?: { record: DataSetRecord; workload: WorkloadData }
  /** what the models learn (contract/task.ts), resolved by the service; recorded in the result */
  task: Task
  /** config.gpus resolved (the service's placement): worker w pinned to gpus[w mod k] */
  gpus?: GpuInfo[]
  /** a run on a scheduler: its kind (the record's name for it) and the run's scheduler (the run records each job it submits and cancels them all when it ends) */
  scheduler?: { kind: string; scheduler: Scheduler }
  /** config.backend auto: how it becomes a backend (service/auto-calibration.ts); absent for a named backend */
  auto?: AutoResolution
  /** called once the run is finished and saved, before `done` resolves */
  onFinished(result: RunResult): void
}

export class LiveRun implements LiveRunAccess {
  readonly runId = newRunId()
  readonly result: RunResult
  readonly plan: MeasurementKey[]
  /** null until `auto` is resolved (a calibration may come first) */
  private runner: BenchRunner | null = null
  private cancelled = false
  /** a run with `auto`: the backend it resolved to and why */
  private autoChoice: AutoChoice | null = null
  readonly progress: LiveProgress
  readonly telemetry: TelemetrySession | null
  /** events a tab that (re)attaches replays (progress and telemetry are sent as snapshots instead) */
  readonly events: RunEvent[] = []
  readonly saved: Promise<void>
  readonly done: Promise<RunResult>
  /** what the run is doing right now, stamped on each telemetry sample */
  private context: TelemetryContext = { index: null, strategy: null, workerCount: null, phase: null }

  constructor(
    config: BenchConfig,
    private readonly deps: LiveRunDeps,
  ) {
    const startedAt = new Date().toISOString()
    this.result = {
      schemaVersion: SCHEMA_VERSION,
      runId: this.runId,
      status: 'running',
      startedAt,
      finishedAt: null,
      config,
      environment: null,
      measurements: [],
      summary: [],
      verification: { sameWork: false, maxRelMseDiff: 0, tolerance: familyOf(config.model).sameWorkTolerance, modelsTrained: {}, problems: ['not finished'] },
      warnings: [],
      error: null,
      ...(deps.verifies ? { verifies: deps.verifies } : {}),
      ...(deps.dataset ? { dataset: deps.dataset.record } : {}),
      task: deps.task,
    }
    const scheduler = deps.scheduler
    if (scheduler) {
      const jobs = { engine: scheduler.kind, jobIds: [] as string[] }
      this.result.scheduler = jobs
      scheduler.scheduler.onSubmitted?.((jobId) => {
        jobs.jobIds.push(jobId)
        // shown while the jobs wait in the queue (squeue -j …), not only once the run ends
        this.emit({ type: 'scheduler', runId: this.runId, scheduler: { ...jobs, jobIds: [...jobs.jobIds] } })
        void this.save()
      })
    }
    this.progress = new LiveProgress(this.runId, (e) => this.emit(e))
    // the runner's plan: a single backend, named or resolved, plans the same measurements
    this.plan = expandPlan(config)
    if (!deps.auto || 'byWorkers' in deps.auto) this.runner = this.newRunner(config)
    this.telemetry = this.startTelemetry()
    this.emit({ type: 'run-started', runId: this.runId, config, plan: this.plan, startedAt, task: deps.task })
    this.saved = this.save()
    this.done = this.saved.then(() => this.execute())
  }

  private newRunner(config: BenchConfig): BenchRunner {
    return new BenchRunner(this.deps.launcher, config, this.runnerHooks(), {
      appVersion: this.deps.appVersion,
      ...this.deps.runner,
      data: this.deps.dataset?.workload,
      task: this.deps.task,
      ...(this.deps.gpus ? { gpus: this.deps.gpus } : {}),
      keepModels: this.deps.store !== null,
    })
  }

  /** Stops the run: the calibration before its next timed run, or the runner. */
  async cancel(): Promise<void> {
    this.cancelled = true
    await this.runner?.cancel()
  }

  /**
   * The runner, once `auto` is a backend: the kept calibration's pick, or a calibration now (said as
   * phase `calibrating`); every pool then starts that backend. null when cancelled meanwhile.
   */
  private async readyRunner(): Promise<BenchRunner | null> {
    const auto = this.deps.auto
    if (this.runner || !auto || 'byWorkers' in auto) return this.runner
    const say = (message: string) => this.emit({ type: 'phase', runId: this.runId, phase: 'calibrating', index: null, key: null, message })
    const choice = await auto.resolve({ say, shouldStop: () => this.cancelled })
    this.autoChoice = choice
    if (this.cancelled) return null
    this.runner = this.newRunner({ ...this.result.config, backend: choice.backend })
    return this.runner
  }

  /**
   * The environment with how `auto` became its backend (a run with `auto` only). What ran is what is
   * said: the backend the workers reported, even where it is not the one `auto` picked.
   */
  private withAuto(environment: Environment | null): Environment | null {
    const auto = this.deps.auto
    if (!environment || !auto) return environment
    const ran = environment.backend
    const picked = this.autoChoice
    if (picked && picked.backend !== ran)
      return {
        ...environment,
        auto: { ...picked, backend: ran, reason: `auto → ${ran}: the workers ran ${ran}, not ${picked.backend} that auto picked (${picked.reason})` },
      }
    const choice = picked ?? ('byWorkers' in auto ? { backend: ran, reason: `auto → ${ran}: ${auto.byWorkers}`, calibratedAt: null } : null)
    return choice ? { ...environment, auto: choice } : environment
  }

  /** Snapshot events for a tab that attaches now. */
  replay(): RunEvent[] {
    const events = this.progress.last ? [...this.events, this.progress.last] : [...this.events]
    const t = this.telemetry?.data
    if (t?.samples.length) events.push({ type: 'telemetry', runId: this.runId, gpu: { ...t.gpu }, samples: [...t.samples] })
    return events
  }

  /** Saves the run as its writer: the store's writer lock tells other processes it is live. */
  async save(): Promise<void> {
    const store = this.deps.store
    if (!store) return
    await this.noteCompetingRuns(store)
    try {
      await store.save(this.result, { writer: true })
    } catch (err) {
      const warning = `could not save the run to ${store.dir}: ${(err as Error).message} (results are kept in memory; export them before closing)`
      if (!this.result.warnings.includes(warning)) this.result.warnings.push(warning)
    }
  }

  /**
   * Another run written by a live process on this machine (its writer lock: `trainpool bench`, the
   * app, `serve` on the same store), or another process's calibration of `auto` (its lock), uses the
   * same cores and GPU while this one is measured: said in the warnings, checked at every save (the
   * start and after each measurement).
   */
  private async noteCompetingRuns(store: RunStore): Promise<void> {
    const writers = await store.otherLiveWriters(this.runId).catch(() => [])
    const warnings = writers.map((w) => `another run, pid ${w.pid}, is training on this machine: these timings compete (run ${w.runId} in ${store.dir})`)
    const calibrating = await liveCalibrationLock(calibrationDir(store.dir)).catch(() => null)
    if (calibrating)
      warnings.push(`a calibration of auto, pid ${calibrating.pid}, is timing the backends on this machine: these timings compete (in ${store.dir})`)
    for (const warning of warnings) if (!this.result.warnings.includes(warning)) this.result.warnings.push(warning)
  }

  private emit(event: RunEvent): void {
    if (event.type !== 'progress' && event.type !== 'telemetry') this.events.push(event)
    this.deps.emit(event)
  }

  private runnerHooks(): RunnerHooks {
    return {
      onEnvironment: (environment) => {
        this.result.environment = this.withAuto(environment)
      },
      onPhase: (phase, index, key) => {
        this.context = { index, strategy: key.strategy, workerCount: key.workers, phase }
        // the runner announces 'measuring' before it dispatches the measurement's first job
        if (phase === 'measuring') this.progress.measuring(index, key)
        this.emit({ type: 'phase', runId: this.runId, phase, index, key, message: phaseMessage(phase, key) })
      },
      onStart: (_index, worker, job, where) => this.progress.running(worker, job.modelIndices, where),
      onProgress: (_index, worker, { modelIndices, progress }) => this.progress.progressed(worker, modelIndices, progress),
      onModelDone: (_index, m) => this.progress.modelDone(m.index, m.finalLoss, m.roundsTrained),
      onWarning: (index, text) => {
        const k = this.plan[index]
        const warning = `${k.strategy} W=${k.workers} at ${k.size} rows: ${text}`
        if (!this.result.warnings.includes(warning)) this.result.warnings.push(warning)
      },
      onMeasurement: (index: number, measurement: Measurement) => {
        this.progress.flush(true)
        this.context = { ...this.context, phase: null }
        this.result.measurements.push(measurement)
        this.result.summary = summarize(this.result.measurements, familyOf(this.result.config.model))
        this.emit({ type: 'measurement', runId: this.runId, index, measurement })
        void this.save()
      },
    }
  }

  /** Samples GPUs and workers while the run is live; the samples live on the result, events go out at 1 Hz. */
  private startTelemetry(): TelemetrySession | null {
    if (this.deps.telemetry === false) return null
    const session = new TelemetrySession({
      ...this.deps.telemetry,
      pids: () => this.runner?.pids ?? [],
      context: () => ({ ...this.context }),
      onSample: (sample, gpu) => {
        if (this.result.status === 'running') this.emit({ type: 'telemetry', runId: this.runId, gpu: { ...gpu }, samples: [sample] })
      },
    })
    this.result.telemetry = session.data
    session.start()
    return session
  }

  private async execute(): Promise<RunResult> {
    let outcome
    try {
      const runner = await this.readyRunner()
      outcome = runner ? await runner.run() : { status: 'cancelled' as const, measurements: [], environment: null, error: null }
    } catch (err) {
      const stopped = err instanceof CalibrationStopped
      outcome = {
        status: stopped ? ('cancelled' as const) : ('failed' as const),
        measurements: this.result.measurements,
        environment: this.result.environment,
        error: stopped ? null : err instanceof Error ? err.message : String(err),
      }
    }
    this.progress.flush(true)
    this.progress.stop()
    // no job outlives its run (a task that missed its shutdown, one still queued)
    await this.deps.scheduler?.scheduler.cancelAll?.().catch(() => {})
    try {
      await this.telemetry?.stop()
    } catch {
      /* telemetry never fails a run */
    }
    const result = this.result
    result.environment = this.withAuto(outcome.environment ?? result.environment)
    result.summary = summarize(result.measurements, familyOf(result.config.model))
    result.verification = verify(result.config, result.measurements, result.task)
    result.status = outcome.status === 'ok' && !result.verification.sameWork ? 'failed' : outcome.status
    result.error = outcome.error ?? (result.status === 'failed' ? result.verification.problems.slice(0, 5).join('; ') : null)
    result.warnings = [
      ...new Set([...result.warnings, ...result.summary.flatMap((s) => s.warnings.map((w) => `${s.strategy} W=${s.workers} at ${s.size} rows: ${w}`))]),
    ]
    result.finishedAt = new Date().toISOString()
    const kept = 'keptModels' in outcome ? outcome.keptModels : null
    if (kept && this.deps.store && result.status !== 'cancelled') {
      try {
        await this.deps.store.saveModels(result.runId, kept)
        result.keptModels = {
          size: kept.size,
          strategy: kept.strategy,
          workers: kept.workers,
          count: kept.models.length,
          format: kept.models[0]?.artifact.format ?? 'none',
        }
      } catch (err) {
        result.warnings.push(`could not keep the trained models: ${(err as Error).message}`)
      }
    }
    await this.save()
    this.deps.onFinished(result)
    return result
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
