// Runs a plan: for each (size, models, strategy, workers) group it starts and warms a pool (clock
// stopped), then times each measurement from dispatching the first job to receiving the last
// result, again on the same warm workers while it is shorter than the time floor.
import os from 'node:os'
import {
  MEASUREMENT_FLOOR,
  addDeviceCounters,
  firstBackend,
  type DeviceCounters,
  type BackendName,
  type BenchConfig,
  type ConcreteBackend,
  type Environment,
  type Measurement,
  type MeasurementKey,
  type GpuInfo,
  type KeptModels,
  type ModelArtifact,
  type PerModel,
  type ResumeState,
  type RungRecord,
  configurationMean,
  configurationModels,
  halvingOf,
  halvingWork,
  promote,
  rungsOf,
  type WorkerFailure,
  type Workload,
  type WorkloadData,
  visibleDevicesFor,
  workloadFor,
  workOf,
  modelWorks,
} from '@shared/contract'
import { familyOf } from '@shared/families'
import { REGRESSION_TASK, resolveTask, type Task } from '@shared/contract'
import type { WorkerLauncher } from '../pool/launcher'
import { type JobOutcome, type JobSpec, type ProgressMessage, type RunHooks, WorkerPool } from '../pool/worker-pool'
import { balancedGroups, expandPlan, groupKey } from '@shared/plan'
import { median, medianRun } from './stats'

/** Where a worker runs, in words for its live lane. */
export interface WorkerWhere {
  gpu?: string
  host?: string
}

export interface RunnerHooks {
  onPhase?: (phase: 'starting' | 'warming' | 'measuring', index: number, key: MeasurementKey) => void
  /**
   * a job became the worker's running one (a worker holds one more, sent ahead: that one is not
   * running yet); `where`: the worker's GPU in words as it reported it (with a GPU choice, or a
   * scheduler's task), and a remote worker's host
   */
  onStart?: (index: number, worker: number, job: JobSpec, where?: WorkerWhere) => void
  onProgress?: (index: number, worker: number, progress: ProgressMessage) => void
  onModelDone?: (index: number, model: PerModel) => void
  onFailure?: (index: number, failure: WorkerFailure) => void
  /** something the run's warnings should say (a worker replaced after running out of memory) */
  onWarning?: (index: number, warning: string) => void
  onMeasurement?: (index: number, measurement: Measurement) => void
  onEnvironment?: (environment: Environment) => void
}

export interface RunnerOutcome {
  status: 'ok' | 'failed' | 'cancelled'
  measurements: Measurement[]
  environment: Environment | null
  error: string | null
  /** the trained models of the first measurement at the largest size, where the backend sends them back; null otherwise */
  keptModels: KeptModels | null
}

export interface RunnerOptions {
  graceMs?: number
  heartbeatTimeoutMs?: number
  /** trainpool's own version, recorded in the environment */
  appVersion?: string
  /** extra environment variables for every worker (tests use them to inject faults) */
  workerEnv?: Record<string, string>
  /** the user's data set (config.data) as workers read it, resolved by the service; absent: generated data */
  data?: WorkloadData
  /** the run's task resolved by the service (contract/task.ts); absent: generated data's own (its target), regression on the user's */
  task?: Task
  /** config.gpus resolved by the service: worker w is pinned to gpus[w mod k] (CUDA_VISIBLE_DEVICES); [] hides every GPU */
  gpus?: GpuInfo[]
  /**
   * keep the trained models of the first measurement at the largest size (a run saved to a store):
   * sending them back is inside that measurement's clock, so a run with nowhere to keep them skips it
   */
  keepModels?: boolean
}

export class BenchRunner {
  readonly plan: MeasurementKey[]
  /** what the models learn, as the workers are told it */
  readonly task: Task
  private pool: WorkerPool | null = null
  private cancelled = false

  constructor(
    private readonly launcher: WorkerLauncher,
    private readonly config: BenchConfig,
    private readonly hooks: RunnerHooks = {},
    private readonly options: RunnerOptions = {},
  ) {
    this.plan = expandPlan(config)
    this.task = options.task ?? (config.data ? REGRESSION_TASK : resolveTask(config))
  }

  /** Live worker process ids (tests check none survive). */
  get pids(): number[] {
    return this.pool?.pids ?? []
  }

  async cancel(): Promise<void> {
    this.cancelled = true
    await this.pool?.cancel()
  }

  async run(): Promise<RunnerOutcome> {
    const state: RunState = { measurements: [], environment: null, backend: null, keptModels: null, artifacts: new Map() }
    const end = (status: RunnerOutcome['status'], error: string | null = null): RunnerOutcome => ({
      status,
      measurements: state.measurements,
      environment: state.environment,
      error,
      keptModels: state.keptModels,
    })
    try {
      for (const group of this.groups()) {
        if (this.cancelled) break
        const failed = await this.runGroup(group, state)
        if (failed !== null) return end('failed', failed)
      }
    } catch (err) {
      if (this.cancelled) return end('cancelled')
      return end('failed', err instanceof Error ? err.message : String(err))
    }
    if (this.cancelled) return end('cancelled')
    return end(state.measurements.some((m) => m.status !== 'ok') ? 'failed' : 'ok')
  }

  /** The plan's measurements in groups that share a pool (same backend, size, models, strategy, W), by plan index. */
  private groups(): number[][] {
    const out: number[][] = []
    for (let k = 0; k < this.plan.length; k++) {
      const last = out.at(-1)
      if (last && groupKey(this.plan[last[0]]) === groupKey(this.plan[k])) last.push(k)
      else out.push([k])
    }
    return out
  }

  /**
   * One pool for a group: started and warmed (the clock stopped), then each of its measurements.
   * Returns the error when a failed measurement stops the run (failure policy 'stop'), else null.
   */
  private async runGroup(group: number[], state: RunState): Promise<string | null> {
    const index = group[0]
    const first = this.plan[index]
    const workload = workloadFor(this.config, first.size, this.options.data, this.task)
    const jobs = jobsFor(first, workload)
    const poolSize = first.strategy === 'sequential' ? 1 : Math.min(first.workers, jobs.length)
    this.hooks.onPhase?.('starting', index, first)
    const pool = this.newPool(poolSize, first.backend ?? state.backend ?? firstBackend(this.config))
    this.pool = pool
    try {
      const clock = await this.startPool(pool, first, state)
      if (this.cancelled) return null
      this.hooks.onPhase?.('warming', index, first)
      const warmShapes = first.strategy === 'batched' ? jobs.map((j) => j.modelIndices) : jobs.slice(0, poolSize).map(() => [0])
      clock.warmupMs = await pool.warmup(workload, warmShapes)
      for (const k of group) {
        if (this.cancelled) break
        const measurement = await this.measure(pool, k, jobs, workload, clock, state)
        state.measurements.push(measurement)
        this.hooks.onMeasurement?.(k, measurement)
        if (measurement.status === 'failed' && this.config.failurePolicy === 'stop') return measurement.failures.map((f) => f.reason).join('; ')
        // start-up, queue and warm-up are paid once per pool: the group's first measurement carries them
        Object.assign(clock, { startupMs: 0, warmupMs: 0, queueMs: clock.queueMs === undefined ? undefined : 0 })
      }
      return null
    } finally {
      await pool.shutdown()
      this.pool = null
    }
  }

  private newPool(size: number, backend: BackendName): WorkerPool {
    const gpus = this.options.gpus
    return new WorkerPool(this.launcher, {
      size,
      family: this.config.model.kind,
      // side by side, each pool its key's backend; else the run's one backend (auto resolved by the first pool)
      backend,
      failurePolicy: this.config.failurePolicy,
      graceMs: this.options.graceMs,
      heartbeatTimeoutMs: this.options.heartbeatTimeoutMs,
      env: this.options.workerEnv,
      ...(gpus ? { envFor: (w: number) => ({ CUDA_VISIBLE_DEVICES: visibleDevicesFor(gpus, w) }) } : {}),
    })
  }

  /** Starts the pool's workers; records the environment they report. Returns the pool's clock (start-up, queue wait). */
  private async startPool(pool: WorkerPool, first: MeasurementKey, state: RunState): Promise<PoolClock> {
    let startupMs = await pool.start()
    // remote workers: the scheduler's queue is not start-up; it is reported on its own
    const remotes = pool.remotes.filter((r) => r !== undefined)
    const queueMs = remotes.length > 0 ? Math.max(...remotes.map((r) => r.queuedMs)) : undefined
    if (queueMs !== undefined) startupMs = Math.max(0, startupMs - queueMs)
    const info = pool.workerInfo!
    if (!first.backend) state.backend = info.backend
    if (!state.environment) {
      state.environment = { ...describeEnvironment(info, this.options.appVersion), ...(this.options.gpus ? { gpus: this.options.gpus } : {}) }
      this.hooks.onEnvironment?.(state.environment)
    }
    if (first.backend && !state.environment.backends?.some((b) => b.backend === info.backend)) {
      state.environment.backends = [
        ...(state.environment.backends ?? []),
        { backend: info.backend, device: info.device, versions: info.versions, backendFlags: info.flags },
      ]
    }
    return { startupMs, warmupMs: 0, queueMs, remote: remotes.length > 0 }
  }

  /** One measurement on warm workers: a timed run, repeated to the time floor when short, its median run reported. */
  private async measure(pool: WorkerPool, k: number, jobs: JobSpec[], workload: Workload, clock: PoolClock, state: RunState): Promise<Measurement> {
    const key = this.plan[k]
    this.hooks.onPhase?.('measuring', k, key)
    const keep = this.options.keepModels === true && k === this.keeper()
    const started = performance.now()
    const first = await this.runOnce(pool, key, jobs, workload, keep, this.runHooks(pool, k, keep ? state.artifacts : null))
    const timed: TimedRuns = { runsMs: [performance.now() - started], runs: [first], failures: first.outcomes.flatMap((o) => (o.failure ? [o.failure] : [])) }
    // jobs left unrun without a cancel mean the workers died: that is a failure
    let status: Measurement['status'] = this.cancelled ? 'cancelled' : first.outcomes.every((o) => o.status === 'done') ? 'ok' : 'failed'
    if (status === 'ok') status = await this.repeatToFloor(pool, k, jobs, workload, timed)
    const measurement = this.measurementOf(key, status, timed, workload, pool, clock)
    // kept only when every model of the measurement came back with its artifact
    if (keep && status === 'ok' && state.artifacts.size === key.models) {
      state.keptModels = {
        size: key.size,
        strategy: key.strategy,
        workers: key.workers,
        models: [...state.artifacts].sort((a, b) => a[0] - b[0]).map(([i, artifact]) => ({ index: i, artifact })),
      }
    }
    return measurement
  }

  /** The first measurement at the largest size keeps its models (every strategy trains the same ones). */
  private keeper(): number {
    const largest = Math.max(...this.plan.map((k) => k.size))
    return this.plan.findIndex((k) => k.size === largest)
  }

  private runHooks(pool: WorkerPool, k: number, artifacts: Map<number, ModelArtifact> | null): RunHooks {
    const gpus = this.options.gpus
    return {
      onStart: (w, job) => this.hooks.onStart?.(k, w, job, workerWhere(gpus, pool.visibleDevices[w], pool.remotes[w])),
      onProgress: (w, p) => this.hooks.onProgress?.(k, w, p),
      onModelDone: (m, artifact) => {
        if (artifacts && artifact) artifacts.set(m.index, artifact)
        this.hooks.onModelDone?.(k, m)
      },
      onFailure: (f) => this.hooks.onFailure?.(k, f),
      onWorkerRestart: (_worker, reason) => this.hooks.onWarning?.(k, reason),
    }
  }

  /**
   * Too short to trust alone (MEASUREMENT_FLOOR): again on the same warm workers until the runs last
   * the floor, keeping every run's outcomes (the models' times reported are those of the reported run).
   */
  private async repeatToFloor(pool: WorkerPool, k: number, jobs: JobSpec[], workload: Workload, timed: TimedRuns): Promise<Measurement['status']> {
    while (!this.cancelled && sum(timed.runsMs) < MEASUREMENT_FLOOR.minMs && timed.runsMs.length < MEASUREMENT_FLOOR.maxRuns) {
      const again = performance.now()
      const more = await this.runOnce(pool, this.plan[k], jobs, workload, false, {
        onFailure: (f) => this.hooks.onFailure?.(k, f),
        onWorkerRestart: (_worker, reason) => this.hooks.onWarning?.(k, reason),
      })
      if (this.cancelled || !more.outcomes.every((o) => o.status === 'done')) {
        timed.failures.push(...more.outcomes.flatMap((o) => (o.failure ? [o.failure] : [])))
        return this.cancelled ? 'cancelled' : 'failed'
      }
      timed.runsMs.push(performance.now() - again)
      timed.runs.push(more)
    }
    return 'ok'
  }

  private measurementOf(
    key: MeasurementKey,
    status: Measurement['status'],
    timed: TimedRuns,
    workload: Workload,
    pool: WorkerPool,
    clock: PoolClock,
  ): Measurement {
    const { runsMs, runs, failures } = timed
    const reported = medianRun(runsMs)
    const perModel = runs[reported].perModel
    return {
      ...key,
      status,
      wallMs: runsMs.length > 1 ? median(runsMs) : runsMs[0],
      ...(runsMs.length > 1 ? { runsMs, perModelRun: reported } : {}),
      startupMs: clock.startupMs,
      warmupMs: clock.warmupMs,
      modelsTrained: new Set(perModel.map((m) => m.index)).size,
      // a halving search: the rounds its models trained, not the grid's
      work: runs[reported].rungs ? halvingWork(familyOf(workload.model), workload, perModel) : workOf(familyOf(workload.model), workload, key.models),
      perModel,
      failures,
      peakRssBytes: pool.rssBytes,
      ...(this.options.gpus || clock.remote ? { workerGpus: pool.visibleDevices } : {}),
      ...(clock.queueMs !== undefined ? { queueMs: clock.queueMs, workerHosts: pool.remotes.map((r) => r?.host ?? 'local') } : {}),
      ...deviceWorkOf(runs[reported].outcomes),
      ...(runs[reported].rungs ? { rungs: runs[reported].rungs } : {}),
    }
  }

  /** One timed run of a measurement's jobs: the grid's jobs at once, or a halving search's rungs one after another. */
  private async runOnce(pool: WorkerPool, key: MeasurementKey, jobs: JobSpec[], workload: Workload, keep: boolean, hooks: RunHooks): Promise<OneRun> {
    const halving = halvingOf(this.config)
    if (halving) return this.halvingRun(pool, key, workload, hooks)
    const outcomes = await pool.run(keep ? jobs.map((j) => ({ ...j, keep: true })) : jobs, hooks)
    return { outcomes, perModel: outcomes.flatMap((o) => o.models).sort((a, b) => a.index - b.index) }
  }

  /**
   * A successive-halving search (contract/halving.ts) as one run: rung by rung, the live
   * configurations' models as the strategy's jobs (jobsFor on their indices) trained to the rung's
   * rounds, each continuing from the trees its previous rung sent back (every rung's jobs keep their
   * models: they are the next rung's starting point and, for a model's last rung, the kept model);
   * then the configurations ranked on the models' validation metric and the best ⌈n/η⌉ promoted.
   * A model's result is its last rung's, its roundsTrained the rounds its jobs grew, summed.
   */
  private async halvingRun(pool: WorkerPool, key: MeasurementKey, workload: Workload, hooks: RunHooks): Promise<OneRun> {
    const family = familyOf(workload.model)
    const set = workload.set!
    const plan = rungsOf(family, this.config)!
    const latest = new Map<number, PerModel>()
    const artifacts = new Map<number, ModelArtifact>()
    const outcomes: JobOutcome[] = []
    const rungs: RungRecord[] = []
    let at = 0
    const collect: RunHooks = {
      ...hooks,
      onModelDone: (m, artifact) => {
        if (artifact) artifacts.set(m.index, artifact)
        // roundsTrained: what this rung's job grew, added to what the model had
        const model = { ...m, rung: at, roundsTrained: (latest.get(m.index)?.roundsTrained ?? 0) + (m.roundsTrained ?? 0) }
        latest.set(m.index, model)
        hooks.onModelDone?.(model, artifact)
      },
    }
    let live = Array.from({ length: plan[0].configurations }, (_, c) => c)
    let before = 0
    for (const [i, rung] of plan.entries()) {
      at = i
      const models = live.flatMap((c) => configurationModels(set, c))
      const rungWorkload = { ...workload, model: family.withRounds!(workload.model, rung.rounds) }
      const resumeOf = (index: number): ResumeState[] => (before > 0 ? [{ index, rounds: before, artifact: artifacts.get(index)! }] : [])
      const jobs = jobsFor(key, rungWorkload, models).map((j) => ({ ...j, keep: true, resume: j.modelIndices.flatMap(resumeOf) }))
      const done = await pool.run(jobs, collect)
      outcomes.push(...done)
      const validation = live.map((c) => configurationMean(set, c, latest, this.task.metric))
      rungs.push({ rounds: rung.rounds, configurations: live, models: models.length, validation: validation.map((v) => (Number.isFinite(v) ? v : null)) })
      if (this.cancelled || !done.every((o) => o.status === 'done') || i === plan.length - 1) break
      live = promote(set, live, latest, this.task.metric, plan[i + 1].configurations)
      before = rung.rounds
    }
    return { outcomes, perModel: [...latest.values()].sort((a, b) => a.index - b.index), rungs }
  }
}

/** What a run builds up across its pools. */
interface RunState {
  measurements: Measurement[]
  environment: Environment | null
  /** the backend the first pool started (auto resolved), for the later pools of a one-backend run */
  backend: ConcreteBackend | null
  keptModels: KeptModels | null
  artifacts: Map<number, ModelArtifact>
}

/** A pool's one-off costs, carried by its first measurement. */
interface PoolClock {
  startupMs: number
  warmupMs: number
  /** remote workers: how long they waited in the scheduler's queue */
  queueMs: number | undefined
  remote: boolean
}

/** One run of a measurement: its jobs' outcomes (every rung's, with halving), each model's result, and a halving search's rungs. */
interface OneRun {
  outcomes: JobOutcome[]
  perModel: PerModel[]
  rungs?: RungRecord[]
}

/** A measurement's runs: each one's wall time and what it came to, and every failure. */
interface TimedRuns {
  runsMs: number[]
  runs: OneRun[]
  failures: WorkerFailure[]
}

/**
 * The jobs of one measurement: what makes the three strategies different. `models`: the indices to
 * train (a halving rung's live models, ascending); absent: all of them. Batched fuses contiguous
 * runs of them of near-equal work (each model's by its configuration: plan.ts balancedGroups), W
 * groups at most, so a rung's fused programs shrink with its live models.
 */
export function jobsFor(key: MeasurementKey, workload: ReturnType<typeof workloadFor>, models?: readonly number[]): JobSpec[] {
  const all = models ? [...models] : Array.from({ length: key.models }, (_, i) => i)
  switch (key.strategy) {
    case 'sequential':
      return [{ workload, modelIndices: all, fused: false }]
    case 'pool':
      return all.map((i) => ({ workload, modelIndices: [i], fused: false }))
    case 'batched':
      return balancedGroups(modelWorks(familyOf(workload.model), workload, all), key.workers).map((g) => ({
        workload,
        modelIndices: g.map((k) => all[k]),
        fused: true,
      }))
  }
}

export function describeEnvironment(
  info: { backend: ConcreteBackend; device: string; flags: Record<string, string | number | boolean>; versions: Record<string, string> },
  appVersion = 'dev',
): Environment {
  const cpus = os.cpus()
  const versions: Record<string, string> = { trainpool: appVersion, ...info.versions }
  if (process.versions.electron) versions.electron = process.versions.electron
  if (process.versions.chrome) versions.chrome = process.versions.chrome
  return {
    backend: info.backend,
    device: info.device,
    cpu: cpus[0]?.model?.trim() || os.arch(),
    cpuCount: cpus.length,
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.versions.node,
    versions,
    backendFlags: info.flags,
  }
}

/** A worker's GPU in words from the CUDA_VISIBLE_DEVICES it reported: "GPU 1 · NVIDIA H200", "no GPU". */
/** A worker's lane words: its GPU with a GPU choice or on a scheduler (the task's own CUDA_VISIBLE_DEVICES), a remote one's host. */
function workerWhere(gpus: readonly GpuInfo[] | undefined, visible: string | null | undefined, remote: { host: string } | undefined): WorkerWhere | undefined {
  if (remote) return { host: remote.host, ...(visible != null ? { gpu: visible ? `GPU ${visible}` : 'no GPU' } : {}) }
  return gpus ? { gpu: gpuLabel(gpus, visible) } : undefined
}

function gpuLabel(gpus: readonly GpuInfo[], visible: string | null | undefined): string {
  if (!visible) return 'no GPU'
  const g = gpus.find((x) => x.uuid === visible)
  return g ? `GPU ${g.index} · ${g.name}` : visible
}

/** The jobs' device counters summed (GPU engines only; absent when no job counted any). */
function deviceWorkOf(outcomes: readonly JobOutcome[]): { device?: DeviceCounters } {
  const counted = outcomes.flatMap((o) => (o.device ? [o.device] : []))
  return counted.length > 0 ? { device: counted.reduce(addDeviceCounters) } : {}
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0)
}
