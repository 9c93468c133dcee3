// The contract between a family's worker half and its backends, below both: what a backend
// implements (WorkerBackend, WorkerRuntime), what training reports (TrainedModel, TrainHooks), the
// errors a backend throws, and the WorkerFamily the worker's message loop (worker/loop.ts) calls — it
// looks a family up by `workload.model.kind` and never reads a family's parameters. Every engine
// folder imports this; the families' registry (../families/: define-backend.ts seals an entry, seam.ts
// assembles a table, mlp.ts and gbdt.ts list the backends) imports the engines, never the reverse.
import type {
  BackendCapability,
  BackendName,
  DeviceCounters,
  HeldOutRows,
  Metrics,
  ModelArtifact,
  ModelParams,
  Progress,
  ResumeState,
  Workload,
} from '@shared/contract'
import { BackendUnavailableError, type ModelParamsBase } from '@shared/families'
import type { Dataset } from '../datasets/dataset'

/** The backend a worker trains on, started once per process by the family's init(). */
export interface WorkerRuntime {
  /** the backend's name (its entry in the family's table) */
  backend: string
  /** on GPU hardware (what the `auto` rule reads; false for every CPU backend, lavapipe and tfjs-node-gpu's CPU fallback) */
  hardware: boolean
  /** GPU/adapter name or CPU model: recorded with every result */
  device: string
  flags: Record<string, string | number | boolean>
  versions: Record<string, string>
  /** live tensors/buffers and their bytes (leak checks); zeros when the family keeps none */
  memory(): { numTensors: number; numBytes: number }
  /** a GPU engine's device work so far (cumulative; the worker loop sends each job's share) */
  deviceCounters?(): DeviceCounters
  /** bytes of a heap the family's backend manages itself (tfjs-wasm), for out-of-memory messages */
  heapBytes(): number | null
  /** frees native resources before the process exits */
  release(): void
}

export interface TrainedModel {
  index: number
  seed: number
  /** this model's own training time; null when it was trained fused with others (batched) */
  trainMs: number | null
  /** batched: the training time of the fused group this model was part of; null otherwise */
  groupTrainMs: number | null
  /** MSE on the test rows: of the predictions, or a classifier's probabilities against the one-hot label (the Brier score) */
  testMse: number
  /** every metric of the workload's objective on the test rows (@shared/metrics scoreOutputs) */
  metrics?: Metrics
  finalLoss: number | null
  /** a digest of the trained model where training is exact (trees), for the same-work check */
  fingerprint?: string
  /** MSE on the data set's validation rows, when it has them (a fold's held-out rows) */
  validationMse?: number
  /** every metric of the objective on the validation rows */
  validationMetrics?: Metrics
  /** set by the family seam in a model set: the model's configuration and fold */
  configuration?: number
  fold?: number
  /** the trained model itself, when the job asked to keep it (TrainOptions.keep) */
  artifact?: ModelArtifact
  /** set by the family seam in a model set's fused job: the first model index of its fused program */
  fusedGroup?: number
  /** with early stopping (workload.earlyStopping): the rounds (epochs) it trained and the 1-based round it kept (@shared/contract StoppedRounds) */
  roundsTrained?: number
  bestRound?: number
}

/** How a job trains: `fused` = all its models in one program (batched); `keep` = each model's artifact is sent back. */
export interface TrainOptions {
  fused: boolean
  keep?: boolean
  /**
   * A model set's job fused across configurations (the backend's `perModel` fields differ): each
   * model's own parameters by index; absent, every model is the workload's `model`.
   */
  paramsOf?: (index: number) => ModelParamsBase
  /**
   * A model set's folds fused (a backend with `foldsHeldOut`): the training rows model `index`
   * never trains on — its fold's, scored as its validation rows — or null (no folds).
   */
  heldOutOf?: (index: number) => HeldOutRows | null
  /**
   * A successive-halving rung (a backend with `halving`): model `index`'s model from the earlier
   * rungs to continue (null: it starts from none); each model done then reports in roundsTrained the
   * rounds this job grew. Absent: not a rung.
   */
  resumeOf?: (index: number) => ResumeState | null
}

export interface TrainHooks {
  /** called after every step; the worker loop rate-limits what it forwards */
  onProgress(modelIndices: readonly number[], progress: Progress): void
  onModelDone(model: TrainedModel): void
  /** checked every step; true stops training with a CancelledError */
  shouldStop(): boolean
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled')
    this.name = 'CancelledError'
  }
}

/** A backend cannot start here (the shared families' one error for it). */
export { BackendUnavailableError }

/**
 * One backend of a family, as a worker trains on it. Its name's shared entry (src-shared/families/
 * backend.ts BackendSpec) says whether it is a GPU backend, whether it batches and how fast it is
 * assumed to be; this one starts it and trains. It gets the data set the family built, never the
 * means to make its own, so it trains on exactly the data the result records.
 */
export interface WorkerBackend<P extends ModelParamsBase = ModelParamsBase, R extends WorkerRuntime = WorkerRuntime, D = unknown> {
  name: string
  /** What this machine offers, checked without training (in the probe's short-lived worker). */
  probe(): Promise<BackendCapability>
  /** Starts it in this process; throws BackendUnavailableError with the reason when it cannot. */
  start(): Promise<R>
  /** Places the family's data set where training reads it (host or device), once per worker and data key. */
  prepare(runtime: R, dataset: Dataset, workload: Workload<P>): D
  dispose(runtime: R, data: D): void
  /** One step on the real shapes before the clock, so kernels and shaders are compiled. */
  warmUp(runtime: R, data: D, workload: Workload<P>, modelIndices: readonly number[]): Promise<void>
  /**
   * The parameters that may differ between the models of one fused program (the MLP's lr: a
   * per-model vector); a model set's configurations that differ only there are trained together,
   * each model's own read from options.paramsOf. Absent: every configuration is a group of its own.
   */
  perModel?: readonly string[]
  /**
   * It trains a model set's fold as rows held out of the whole training set (options.heldOutOf), so
   * the set's folds share one prepared data set and fuse like its configurations. Absent: each fold
   * gets its own data set (the training rows outside it) and its own group.
   */
  foldsHeldOut?: boolean
  /**
   * It stops each model early when the workload asks (workload.earlyStopping, on the rows
   * options.heldOutOf or the data set's validation rows give), recording roundsTrained and bestRound
   * and keeping the best round's model. Absent: the seam refuses such a workload. Its shared entry says the same.
   */
  earlyStopping?: true
  /** It continues each model from an earlier rung's (options.resumeOf), growing only the rounds left. Absent: the seam refuses a rung's job. Its shared entry says the same. */
  halving?: true
  /** Trains the models: `fused` = all in one program (batched; only where the shared entry says it batches), else one after another. */
  train(runtime: R, data: D, workload: Workload<P>, modelIndices: readonly number[], options: TrainOptions, hooks: TrainHooks): Promise<void>
}

/** What a family's init() started: the backend's runtime (what the worker loop reads), with whatever the family keeps beside it. */
export interface StartedRuntime {
  readonly runtime: WorkerRuntime
}

/**
 * A family as the worker loop calls it. The loop hands each method back only what this family's
 * own init() and prepare() gave it (S and D), so a family's S and D are its own business.
 */
export interface WorkerFamily<P extends ModelParamsBase = ModelParams, S extends StartedRuntime = StartedRuntime, D = unknown> {
  kind: P['kind']
  /** Starts the backend (resolving `auto`); throws with the reason when it is not available. */
  init(backend: BackendName): Promise<S>
  /** Identifies the data a workload needs: the worker keeps prepared data while the key stays. */
  dataKey(workload: Workload<P>): string
  /** Generates/loads the data set and places it where training reads it (host or device). */
  prepare(started: S, workload: Workload<P>): D
  disposeData(started: S, data: D): void
  /** One step on the real shapes before the clock, so kernels and shaders are compiled. */
  warmUp(started: S, data: D, workload: Workload<P>, modelIndices: readonly number[]): Promise<void>
  /** Trains the models: `fused` = all in one program (batched), else one after another. */
  train(started: S, data: D, workload: Workload<P>, modelIndices: readonly number[], options: TrainOptions, hooks: TrainHooks): Promise<void>
}
