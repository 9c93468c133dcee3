// The pool's vocabulary: what a pool is asked to be (PoolOptions), the jobs it runs and what each
// job came to (JobSpec, JobOutcome), and the hooks a run reports through. worker-pool.ts re-exports it.
import type { BackendName, ConcreteBackend, DeviceCounters, FromWorker, ModelArtifact, PerModel, ResumeState, WorkerFailure, Workload } from '@shared/contract'

export interface PoolOptions {
  size: number
  /** the model family whose runtime each worker starts (the pool never looks inside it) */
  family: string
  backend: BackendName
  /** ms between a graceful cancel/shutdown and SIGKILL */
  graceMs?: number
  /** a busy worker silent for this long is declared hung, killed and reported */
  heartbeatTimeoutMs?: number
  /**
   * the same during start-up and warm-up, where one native call may legitimately block for long
   * (CUDA's PTX JIT on a GPU newer than libtensorflow's kernels can take many minutes)
   */
  prepareTimeoutMs?: number
  failurePolicy?: 'stop' | 'continue'
  env?: Record<string, string>
  /** worker w's own variables on top of `env` (its GPU: CUDA_VISIBLE_DEVICES) */
  envFor?: (workerIndex: number) => Record<string, string>
}

export interface WorkerInfo {
  backend: ConcreteBackend
  device: string
  flags: Record<string, string | number | boolean>
  versions: Record<string, string>
  initMs: number
}

export interface JobSpec {
  workload: Workload
  modelIndices: number[]
  fused: boolean
  /** the workers send each trained model back (the measurement whose models the run keeps) */
  keep?: boolean
  /** a successive-halving rung: the models' states from the earlier rungs, to continue (worker-messages.ts) */
  resume?: ResumeState[]
}

export interface JobOutcome {
  job: JobSpec
  status: 'done' | 'failed' | 'cancelled' | 'not-run'
  worker: number | null
  models: PerModel[]
  failure: WorkerFailure | null
  /** a GPU engine's device work for this job, as its worker counted it */
  device?: DeviceCounters
}

export type ProgressMessage = Extract<FromWorker, { type: 'progress' }>

export interface RunHooks {
  /**
   * a job was sent to a worker: it runs there now, or next, behind the worker's running job (a job
   * its worker never started, because the job before it failed or the worker died, is sent again)
   */
  onDispatch?: (worker: number, job: JobSpec) => void
  /** a job became the worker's running one (sent to an idle worker, or the job before it there finished) */
  onStart?: (worker: number, job: JobSpec) => void
  onProgress?: (worker: number, progress: ProgressMessage) => void
  onModelDone?: (model: PerModel, artifact?: ModelArtifact) => void
  onFailure?: (failure: WorkerFailure) => void
  /** a worker was replaced by a fresh one (it ran out of memory); `reason` is a sentence for the run's warnings */
  onWorkerRestart?: (worker: number, reason: string) => void
}

/** The part of an outcome a failure reads: the job and the models it already finished. */
export type JobOutcomeFailure = Pick<JobOutcome, 'job' | 'models'>
