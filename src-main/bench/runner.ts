// Runs a plan: for each (size, models, strategy, workers) group it starts and warms a pool (clock
// stopped), then times each repeat from dispatching the first job to receiving the last result.
import os from 'node:os'
import {
  MEASUREMENT_FLOOR,
  addDeviceCounters,
  firstBackend,
  type DeviceCounters,
  type BenchConfig,
  type ConcreteBackend,
  type Environment,
  type Measurement,
  type MeasurementKey,
  type GpuInfo,
  type KeptModels,
  type ModelArtifact,
  type PerModel,
  type WorkerFailure,
  type WorkloadData,
  visibleDevicesFor,
  workloadFor,
  workOf,
} from '@shared/contract'
import { familyOf } from '@shared/families'
import type { WorkerLauncher } from '../pool/launcher'
import { type JobOutcome, type JobSpec, type ProgressMessage, WorkerPool } from '../pool/worker-pool'
import { contiguousGroups, expandPlan, groupKey } from '@shared/plan'
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
  private pool: WorkerPool | null = null
  private cancelled = false

  constructor(
    private readonly launcher: WorkerLauncher,
    private readonly config: BenchConfig,
    private readonly hooks: RunnerHooks = {},
    private readonly options: RunnerOptions = {},
  ) {
    this.plan = expandPlan(config)
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
    const measurements: Measurement[] = []
    let environment: Environment | null = null
    let backend: ConcreteBackend | null = null
    let index = 0
    // every strategy trains the same models: the first measurement at the largest size keeps its own
    const largest = Math.max(...this.plan.map((k) => k.size))
    const keeper = this.plan.findIndex((k) => k.size === largest)
    const artifacts = new Map<number, ModelArtifact>()
    let keptModels: KeptModels | null = null
    const gpus = this.options.gpus
    try {
      while (index < this.plan.length && !this.cancelled) {
        const first = this.plan[index]
        const group: number[] = []
        for (let k = index; k < this.plan.length && groupKey(this.plan[k]) === groupKey(first); k++) group.push(k)
        const workload = workloadFor(this.config, first.size, this.options.data)
        const jobs = jobsFor(first, workload)
        const poolSize = first.strategy === 'sequential' ? 1 : Math.min(first.workers, jobs.length)
        this.hooks.onPhase?.('starting', index, first)
        const pool: WorkerPool = new WorkerPool(this.launcher, {
          size: poolSize,
          family: this.config.model.kind,
          // side by side, each pool its key's backend; else the run's one backend (auto resolved by the first pool)
          backend: first.backend ?? backend ?? firstBackend(this.config),
          failurePolicy: this.config.failurePolicy,
          graceMs: this.options.graceMs,
          heartbeatTimeoutMs: this.options.heartbeatTimeoutMs,
          env: this.options.workerEnv,
          ...(gpus ? { envFor: (w: number) => ({ CUDA_VISIBLE_DEVICES: visibleDevicesFor(gpus, w) }) } : {}),
        })
        this.pool = pool
        try {
          let startupMs = await pool.start()
          // remote workers: the scheduler's queue is not start-up; it is reported on its own
          const remotes = pool.remotes.filter((r) => r !== undefined)
          let queueMs = remotes.length > 0 ? Math.max(...remotes.map((r) => r.queuedMs)) : undefined
          if (queueMs !== undefined) startupMs = Math.max(0, startupMs - queueMs)
          const info: NonNullable<WorkerPool["workerInfo"]> = pool.workerInfo!
          if (!first.backend) backend = info.backend
          if (!environment) {
            environment = { ...describeEnvironment(info, this.options.appVersion), ...(gpus ? { gpus } : {}) }
            this.hooks.onEnvironment?.(environment)
          }
          if (first.backend && !environment.backends?.some((b) => b.backend === info.backend)) {
            environment.backends = [...(environment.backends ?? []), { backend: info.backend, device: info.device, versions: info.versions, backendFlags: info.flags }]
          }
          if (this.cancelled) break
          this.hooks.onPhase?.('warming', index, first)
          const warmShapes = first.strategy === 'batched' ? jobs.map((j) => j.modelIndices) : jobs.slice(0, poolSize).map(() => [0])
          let warmupMs = await pool.warmup(workload, warmShapes)
          for (const k of group) {
            if (this.cancelled) break
            const key = this.plan[k]
            this.hooks.onPhase?.('measuring', k, key)
            const started = performance.now()
            const keep = this.options.keepModels === true && k === keeper
            const outcomes = await pool.run(keep ? jobs.map((j) => ({ ...j, keep: true })) : jobs, {
              onStart: (w, job) => this.hooks.onStart?.(k, w, job, workerWhere(gpus, pool.visibleDevices[w], pool.remotes[w])),
              onProgress: (w, p) => this.hooks.onProgress?.(k, w, p),
              onModelDone: (m, artifact) => {
                if (keep && artifact) artifacts.set(m.index, artifact)
                this.hooks.onModelDone?.(k, m)
              },
              onFailure: (f) => this.hooks.onFailure?.(k, f),
              onWorkerRestart: (_worker, reason) => this.hooks.onWarning?.(k, reason),
            })
            const runsMs = [performance.now() - started]
            // every run's outcomes: the models' own times reported are those of the run whose time is reported
            const runs = [outcomes]
            const failures = outcomes.flatMap((o) => (o.failure ? [o.failure] : []))
            // jobs left unrun without a cancel mean the workers died: that is a failure
            let status: Measurement['status'] = this.cancelled
              ? 'cancelled'
              : outcomes.every((o) => o.status === 'done')
                ? 'ok'
                : 'failed'
            // too short to trust alone: again on the same warm workers until the runs last the floor (MEASUREMENT_FLOOR)
            while (status === 'ok' && !this.cancelled && sum(runsMs) < MEASUREMENT_FLOOR.minMs && runsMs.length < MEASUREMENT_FLOOR.maxRuns) {
              const again = performance.now()
              const more = await pool.run(jobs, { onFailure: (f) => this.hooks.onFailure?.(k, f), onWorkerRestart: (_worker, reason) => this.hooks.onWarning?.(k, reason) })
              if (this.cancelled || !more.every((o) => o.status === 'done')) {
                failures.push(...more.flatMap((o) => (o.failure ? [o.failure] : [])))
                status = this.cancelled ? 'cancelled' : 'failed'
                break
              }
              runsMs.push(performance.now() - again)
              runs.push(more)
            }
            const reported = medianRun(runsMs)
            const perModel = runs[reported].flatMap((o) => o.models).sort((a, b) => a.index - b.index)
            const measurement: Measurement = {
              ...key,
              status,
              wallMs: runsMs.length > 1 ? median(runsMs) : runsMs[0],
              ...(runsMs.length > 1 ? { runsMs, perModelRun: reported } : {}),
              startupMs,
              warmupMs,
              modelsTrained: new Set(perModel.map((m) => m.index)).size,
              work: workOf(familyOf(workload.model), workload, key.models),
              perModel,
              failures,
              peakRssBytes: pool.rssBytes,
              ...(gpus || remotes.length > 0 ? { workerGpus: pool.visibleDevices } : {}),
              ...(queueMs !== undefined ? { queueMs, workerHosts: pool.remotes.map((r) => r?.host ?? 'local') } : {}),
              ...deviceWorkOf(runs[reported]),
            }
            startupMs = 0
            if (queueMs !== undefined) queueMs = 0
            warmupMs = 0
            measurements.push(measurement)
            // kept only when every model of the measurement came back with its artifact
            if (keep && status === 'ok' && artifacts.size === key.models) {
              keptModels = { size: key.size, strategy: key.strategy, workers: key.workers, models: [...artifacts].sort((a, b) => a[0] - b[0]).map(([i, artifact]) => ({ index: i, artifact })) }
            }
            this.hooks.onMeasurement?.(k, measurement)
            if (status === 'failed' && this.config.failurePolicy === 'stop') {
              return { status: 'failed', measurements, environment, error: failures.map((f) => f.reason).join('; '), keptModels }
            }
          }
        } finally {
          await pool.shutdown()
          this.pool = null
        }
        index = group[group.length - 1] + 1
      }
    } catch (err) {
      if (this.cancelled) return { status: 'cancelled', measurements, environment, error: null, keptModels }
      return { status: 'failed', measurements, environment, error: err instanceof Error ? err.message : String(err), keptModels }
    }
    if (this.cancelled) return { status: 'cancelled', measurements, environment, error: null, keptModels }
    const failed = measurements.some((m) => m.status !== 'ok')
    return { status: failed ? 'failed' : 'ok', measurements, environment, error: null, keptModels }
  }
}

/** The jobs of one measurement: what makes the three strategies different. */
export function jobsFor(key: MeasurementKey, workload: ReturnType<typeof workloadFor>): JobSpec[] {
  const all = Array.from({ length: key.models }, (_, i) => i)
  switch (key.strategy) {
    case 'sequential':
      return [{ workload, modelIndices: all, fused: false }]
    case 'pool':
      return all.map((i) => ({ workload, modelIndices: [i], fused: false }))
    case 'batched':
      return contiguousGroups(key.models, key.workers).map((g) => ({ workload, modelIndices: g, fused: true }))
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
