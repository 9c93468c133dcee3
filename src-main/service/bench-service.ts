// BenchService: the one façade the shells call, implementing the API table. It validates configs
// (schema, backend, memory), refuses a second concurrent run, and delegates: the run in flight to
// LiveRun (runner, progress projection, telemetry, saves), browsing and exporting to RunHistory,
// advice (advise, verifyAdvice: src-shared/advice/) on top of those, the backend probe to BackendProbe, the user's data sets to DataSets,
// `auto`'s calibration to AutoCalibration (a run with `auto` gets its backend from it before its pools start).
import os from 'node:os'
import { join } from 'node:path'
import { adviseFrom, checkAdvice, verificationConfig } from '@shared/advice'
import {
  type Advice,
  type AdviceCheck,
  type AutoRule,
  BenchConfigSchema,
  type BackendCapability,
  type BenchConfig,
  type Capabilities,
  type DataSetInfo,
  chosenGpus,
  type ExportedFile,
  type FamilyCalibration,
  type GpuInfo,
  backendsOf,
  type LauncherCapability,
  type LauncherChoice,
  invalidInput,
  refuseUnavailableLauncher,
  type ParsedRequest,
  type PdfReport,
  type RunEvent,
  type RunListEntry,
  type RunResult,
  type SavedModel,
  resolveTask,
  type Task,
  TrainpoolError,
  webgpuSpreadRefusal,
  workersPerGpuRefusal,
} from '@shared/contract'
import { familiesToCalibrate } from '@shared/calibration'
import { estimateRunPeakBytes } from '@shared/estimate'
import { familyOf, refuseUnavailableBackend, whyNoObjective } from '@shared/families'
import type { RunnerOptions } from '../bench/runner'
import type { WorkerLauncher } from '../pool/launcher'
import { type ListenAddress, WorkerGateway, workerSocketOption } from '../pool/remote/gateway'
import { RemoteLauncher } from '../pool/remote/remote-launcher'
import { newRunSecret } from '../pool/remote/token'
import { allSchedulers, schedulerFor } from '../pool/schedulers'
import type { Scheduler } from '../pool/remote/scheduler'
import type { RunStore } from '../store/run-store'
import type { TelemetrySessionOptions } from '../telemetry/session'
import { type AutoHooks, AutoCalibration, autoRuleFromEnv, type CalibrationOutcome } from './auto-calibration'
import { BackendProbe, probeInWorker } from './backend-probe'
import { DataSets } from './data-sets'
import { resolveDataSource, type ResolvedData } from '../data'
import { bestModelFile } from '../export/models'
import { discoverGpus } from '../gpus/discover'
import { LiveRun } from './live-run'
import { RunHistory } from './run-history'
import type { BenchServiceApi } from './types'

export { probeInWorker }

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
  /**
   * The desktop's open dialog for a data file (Electron only: app/data-file-dialog.ts): the chosen
   * path, null when cancelled. Without it chooseDataFile is refused (browser mode uploads instead).
   */
  pickDataFile?: () => Promise<string | null>
  /** where the data cache lives (<dir>/.datasets) when it is not the store's folder (the CLI's --no-save) */
  dataDir?: string
  /** lists the machine's NVIDIA GPUs for config.gpus (default: nvidia-smi, gpus/discover.ts) */
  discoverGpus?: () => Promise<GpuInfo[]>
  /** whether a launcher can submit from here, by its engine (default: each registered scheduler's own check, pool/schedulers.ts) */
  checkLaunchers?: Record<string, () => Promise<LauncherCapability>>
  /**
   * Where remote workers (config.launcher) dial back: the worker socket's address (--listen;
   * default 127.0.0.1 on a free port, which only tasks on this machine can reach) and where its
   * refusals are logged.
   */
  workerSocket?: { listen: ListenAddress; log: (line: string) => void }
  /** how `auto` picks (default: TRAINPOOL_AUTO, else calibrated: the fastest backend a calibration measured here) */
  autoRule?: AutoRule
}

export class BenchService implements BenchServiceApi {
  private listeners = new Set<(event: RunEvent) => void>()
  private live: LiveRun | null = null
  private readonly probe: BackendProbe
  private readonly history: RunHistory
  /** verification run id → its advice check, stored with the source run when the run ended */
  private readonly adviceChecks = new Map<string, Promise<AdviceCheck>>()
  private readonly data: DataSets
  private readonly auto: AutoCalibration

  constructor(private readonly options: BenchServiceOptions) {
    // each registered scheduler's own check (pool/schedulers.ts), unless the caller answers for it
    const launcherChecks = () => ({ ...Object.fromEntries(allSchedulers().map((s) => [s.spec.engine, s.check])), ...options.checkLaunchers })
    this.probe = new BackendProbe(options.probe ?? (() => probeInWorker(options.launcher)), options.discoverGpus ?? (() => discoverGpus()), launcherChecks)
    this.history = new RunHistory(options.store, () => this.live, options.renderPdf)
    this.data = new DataSets({ storeDir: options.store?.dir ?? null, shell: options.shell, pickFile: options.pickDataFile })
    // the cache lives where the data cache does: the store's folder, also under the CLI's --no-save
    this.auto = new AutoCalibration({
      launcher: options.launcher,
      storeDir: options.dataDir ?? options.store?.dir ?? null,
      appVersion: options.appVersion ?? 'dev',
      probe: this.probe,
      rule: options.autoRule ?? autoRuleFromEnv(),
    })
  }

  onEvent(listener: (event: RunEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private emit(event: RunEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(event)
      } catch {
        /* a broken listener must not break the run */
      }
    }
  }

  async capabilities(): Promise<Capabilities> {
    return this.auto.announce(await this.probe.capabilities(this.options.shell, this.options.appVersion))
  }

  /** Validates a raw config: field errors, availability of the backend, the user's data, memory. Nothing starts. */
  async validate(raw: unknown): Promise<BenchConfig> {
    return (await this.prepare(raw)).config
  }

  /** The validated config, with config.data the resolved data set (its feature count in the config), and with config.gpus the GPUs the workers are spread over. */
  private async prepare(raw: unknown): Promise<{ config: BenchConfig; data: ResolvedData | null; gpus: GpuInfo[] | undefined; task: Task }> {
    const parsed = BenchConfigSchema.safeParse(raw)
    if (!parsed.success) throw invalidInput(parsed.error, raw, 'config')
    let config = parsed.data
    if (config.backend !== 'auto') refuseUnavailableBackend(config.backend, await this.probe.backends())
    const gpus = config.gpus === undefined ? undefined : await this.placeOnGpus(config)
    if (config.launcher) refuseUnavailableLauncher(config.launcher, { [config.launcher.engine]: await this.probe.launcher(config.launcher.engine) })
    const data = config.data ? await resolveDataSource(this.options.dataDir ?? this.options.store?.dir ?? null, { ...config, data: config.data }) : null
    if (data) config = data.config
    // the user's data resolved its task with the target it read; generated data's comes from its target
    const task = data ? data.task : resolveTask(config)
    refuseBackendsWithoutObjective(config, task)
    const need = estimateRunPeakBytes(config)
    const free = os.freemem()
    // a scheduler's workers run on its nodes (their memory is its to grant): this machine's free memory says nothing
    if (!config.launcher && need > free) {
      const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`
      throw new TrainpoolError(
        'insufficient-memory',
        `this run needs about ${gib(need)} at its peak but only ${gib(free)} is free: use fewer rows, models or workers`,
        [{ field: 'sizes', message: `needs about ${gib(need)}, ${gib(free)} free` }],
      )
    }
    return { config, data, gpus, task }
  }

  /** config.gpus against the machine's GPUs: the chosen ones, or a refusal on field gpus (contract/gpus.ts). */
  private async placeOnGpus(config: BenchConfig): Promise<GpuInfo[]> {
    const refuse = (field: string, why: string) => {
      throw new TrainpoolError('invalid-input', why, [{ field, message: why }])
    }
    const found = chosenGpus(config.gpus!, await this.probe.gpus())
    if ('refusal' in found) return refuse('gpus', found.refusal)
    const backends = config.backend === 'auto' ? [(await this.capabilities()).autoBackends[config.model.kind]] : backendsOf(config)
    const webgpu = backends.includes('webgpu') ? webgpuSpreadRefusal(found.gpus) : null
    if (webgpu) return refuse('gpus', webgpu)
    const perGpu = config.workersPerGpu === undefined ? null : workersPerGpuRefusal(config.workers, config.workersPerGpu, found.gpus.length)
    if (perGpu) return refuse('workersPerGpu', perGpu)
    return found.gpus
  }

  async start({ config: raw }: ParsedRequest<'start'>): Promise<{ runId: string }> {
    return this.launch(raw)
  }

  /**
   * Validates and starts a run. A verification run names the run it `verifies` and an `afterRun`
   * step (storing the advice check) that runs before run-finished goes out, so a shell that reads
   * the source run on run-finished sees the check.
   */
  private async launch(raw: unknown, check?: { verifies: string; afterRun: (result: RunResult) => Promise<AdviceCheck> }): Promise<{ runId: string }> {
    this.refuseIfBusy()
    const { config, data, gpus, task } = await this.prepare(raw)
    this.refuseIfBusy()
    const remote = config.launcher ? await this.remoteWorkers(config.launcher) : null
    // a scheduler's workers run on its nodes: this machine's calibration says nothing about them
    const auto =
      config.backend !== 'auto'
        ? undefined
        : remote
          ? { byWorkers: "the family's table order, applied by each worker on its node (a calibration measures this machine only)" }
          : this.auto.forRun(config.model.kind)
    const live = new LiveRun(config, {
      ...(auto ? { auto } : {}),
      dataset: data ? { record: data.record, workload: data.workload } : undefined,
      task,
      ...(gpus ? { gpus } : {}),
      verifies: check?.verifies,
      launcher: remote?.launcher ?? this.options.launcher,
      ...(remote ? { scheduler: { kind: config.launcher!.engine, scheduler: remote.scheduler } } : {}),
      store: this.options.store,
      appVersion: this.options.appVersion,
      runner: this.options.runner,
      telemetry: this.options.telemetry,
      emit: (event) => this.emit(event),
      onFinished: (result) => {
        void remote?.gateway.close()
        this.history.remember(result)
        this.live = null
        const finished = () => this.emit({ type: 'run-finished', runId: result.runId, result })
        if (!check) return finished()
        const stored = check.afterRun(result)
        this.adviceChecks.set(result.runId, stored)
        stored.then(finished, finished)
      },
    })
    this.live = live
    await live.saved
    return { runId: live.runId }
  }

  /** A run's remote workers: a worker socket with the run's own secret, and the launcher's scheduler to start them (Slurm: one job array per pool). */
  private async remoteWorkers(choice: LauncherChoice): Promise<{ gateway: WorkerGateway; scheduler: Scheduler; launcher: RemoteLauncher }> {
    const socket = this.options.workerSocket ?? workerSocketOption(undefined, () => {})
    const gateway = await WorkerGateway.listen(socket.listen, newRunSecret(), socket.log).catch((err: Error) => {
      throw new TrainpoolError('invalid-input', `launcher: the worker socket cannot listen on ${socket.listen.host}:${socket.listen.port}: ${err.message}`, [
        { field: 'launcher', message: `cannot listen on ${socket.listen.host}:${socket.listen.port} (--listen HOST:PORT)` },
      ])
    })
    const scheduler = schedulerFor(choice).create(choice, { logDir: join(this.options.store?.dir ?? os.tmpdir(), '.worker-logs'), cwd: process.cwd() })
    return { gateway, scheduler, launcher: new RemoteLauncher(gateway, scheduler, { queueTimeoutMs: choice.queueTimeoutS * 1000 }) }
  }

  private refuseIfBusy(): void {
    if (this.live) throw new TrainpoolError('busy', `run ${this.live.runId} is still running: cancel it or wait for it to finish (one run at a time)`)
    if (this.auto.calibrating) throw new TrainpoolError('busy', 'a calibration of auto is timing the backends: wait a few seconds for it to finish')
  }

  /** Resolves with the finished run (CLI and tests wait on it). */
  async waitForRun(runId: string): Promise<RunResult> {
    if (this.live?.runId === runId) return this.live.done
    return this.history.get(runId)
  }

  /** Stops the live run and resolves once it has ended and been saved (also during its first save). */
  async cancel({ runId }: ParsedRequest<'cancel'> = {}): Promise<{ cancelled: boolean }> {
    const live = this.live
    if (!live || (runId && runId !== live.runId)) return { cancelled: false }
    await live.cancel()
    await live.done
    return { cancelled: true }
  }

  async currentRun(): Promise<{ runId: string; events: RunEvent[] } | null> {
    return this.live ? { runId: this.live.runId, events: this.live.replay() } : null
  }

  listRuns(): Promise<RunListEntry[]> {
    return this.history.list()
  }

  getRun({ runId }: ParsedRequest<'getRun'>): Promise<RunResult> {
    return this.history.get(runId)
  }

  renameRun({ runId, name }: ParsedRequest<'renameRun'>): Promise<RunListEntry> {
    return this.history.rename(runId, name)
  }

  tagRun({ runId, tags }: ParsedRequest<'tagRun'>): Promise<RunListEntry> {
    return this.history.tag(runId, tags)
  }

  deleteRun({ runId }: ParsedRequest<'deleteRun'>): Promise<{ deleted: true }> {
    return this.history.delete(runId)
  }

  exportRun({ runId, format }: ParsedRequest<'exportRun'>): Promise<ExportedFile> {
    return this.history.export(runId, format)
  }

  reportPdf({ runId }: ParsedRequest<'reportPdf'>): Promise<PdfReport> {
    return this.history.reportPdf(runId)
  }

  /** The run's best kept model as a file (export/models.ts): not-found when it kept none (or there is no store). */
  async bestModel({ runId }: ParsedRequest<'bestModel'>): Promise<SavedModel> {
    const run = await this.history.get(runId)
    if (!this.options.store)
      throw new TrainpoolError('not-found', `run ${runId} kept no trained models: models are kept with a run in the store, and this service has none`)
    const file = await this.options.store.withModels(runId, (kept) => bestModelFile(run, kept))
    const bytes = Buffer.from(file.content)
    return { fileName: file.fileName, mimeType: file.mimeType, sizeBytes: bytes.length, base64: bytes.toString('base64') }
  }

  dataSets(): Promise<DataSetInfo[]> {
    return this.data.list()
  }

  dataSetInfo({ sha256 }: ParsedRequest<'dataSetInfo'>): Promise<DataSetInfo> {
    return this.data.info(sha256)
  }

  async deleteDataSet({ sha256 }: ParsedRequest<'deleteDataSet'>): Promise<{ deleted: true }> {
    const live = this.live?.result
    if (live?.config.data?.sha256 === sha256) {
      throw new TrainpoolError('busy', `run ${live.runId} is training on ${live.config.data.name}: remove it from the data cache once that run has finished`)
    }
    return this.data.remove(sha256)
  }

  chooseDataFile(): Promise<DataSetInfo | null> {
    return this.data.choose()
  }

  /**
   * Loads a file already on this machine into the data cache (browser mode's upload, once streamed
   * to the store). Not in the API table: no page may name a path on the server's disk.
   */
  importDataFile(path: string): Promise<DataSetInfo> {
    return this.data.load(path)
  }

  /** where browser mode puts uploads while they arrive (null: no store, no uploads) */
  uploadDir(): string | null {
    return this.data.uploadDir()
  }

  async advise({ runId, models, size }: ParsedRequest<'advise'>): Promise<Advice> {
    return adviseFrom(await this.history.get(runId), { models, size })
  }

  /** Starts the run that checks the advice for the target (refused when the advice is); see API.verifyAdvice. */
  async verifyAdvice({ runId, models, size }: ParsedRequest<'verifyAdvice'>): Promise<{ runId: string }> {
    this.refuseIfBusy()
    const source = await this.history.get(runId)
    if (source.status === 'running') throw new TrainpoolError('busy', `run ${runId} is still running: its advice can be checked once it has finished`)
    const advice = adviseFrom(source, { models, size })
    if (advice.refusal !== null) {
      const why = `nothing to verify: ${advice.refusal}`
      throw new TrainpoolError('invalid-input', why, [{ field: 'models', message: why }])
    }
    return this.launch(verificationConfig(source.config, advice), {
      verifies: runId,
      afterRun: async (result) => {
        const check = checkAdvice(advice, result)
        // a run that measured none of the options (cancelled or failed early) checks nothing: none is stored
        if (!check.rows.some((r) => r.measuredMs !== null)) {
          throw new TrainpoolError(
            'not-found',
            `no check stored: the verification run ${result.runId} ended ${result.status} before it measured an option${result.error ? ` (${result.error})` : ''}`,
          )
        }
        await this.history.addAdviceCheck(runId, check)
        return check
      },
    })
  }

  /** The check a verification run stored with its source run (the CLI waits on it after the run). */
  async waitForAdviceCheck(verifyRunId: string): Promise<AdviceCheck> {
    await this.waitForRun(verifyRunId)
    const stored = this.adviceChecks.get(verifyRunId)
    if (!stored) throw new TrainpoolError('not-found', `run ${verifyRunId} is not a verification run started here`)
    return stored
  }

  async calibrate({ family }: ParsedRequest<'calibrate'>): Promise<FamilyCalibration[]> {
    return (await this.calibrateFamilies(family)).families
  }

  /** The calibration (see API.calibrate), its progress said to `hooks` (the CLI prints it). Not while a run is live: both would time each other. */
  async calibrateFamilies(kind?: string, hooks: AutoHooks = {}): Promise<CalibrationOutcome> {
    const families = familiesToCalibrate(kind)
    this.refuseIfBusy()
    return this.auto.calibrate(families, hooks)
  }

  async shutdown(): Promise<void> {
    if (this.live) await this.cancel()
  }
}

/** A named backend that cannot train the task's objective is refused on field backend before anything starts. */
function refuseBackendsWithoutObjective(config: BenchConfig, task: Task): void {
  const family = familyOf(config.model)
  for (const [i, backend] of backendsOf(config).entries()) {
    const why = backend === 'auto' ? null : whyNoObjective(family, backend, task.objective)
    if (why) throw new TrainpoolError('invalid-input', why, [{ field: Array.isArray(config.backend) ? `backend.${i}` : 'backend', message: why }])
  }
}
