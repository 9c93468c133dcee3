// Events the service streams to a shell (IPC in Electron, WebSocket in browser mode, the CLI's
// progress bar). Progress is coalesced to at most 20 per second per run before it leaves the service.
import type { CalibrationState } from './calibration'
import type { GpuInfo } from './gpus'
import type { LauncherCapability } from './launcher-spec'
import type { BenchConfig } from './config'
import type { Progress } from '../vocabulary/progress'
import type { Measurement, MeasurementKey, RunResult } from './result'
import type { Task } from '../vocabulary/task'
import type { GpuTelemetryStatus, TelemetrySample } from './telemetry'
import type { BackendCapability } from './worker-messages'

export const PROGRESS_MIN_INTERVAL_MS = 50

export type RunPhase = 'probing' | 'calibrating' | 'starting' | 'warming' | 'measuring' | 'finishing'

export interface WorkerLane {
  worker: number
  /** model indices the worker is training right now (empty when idle) */
  modelIndices: number[]
  /** the job's progress; null until its first step */
  progress: Progress | null
  /** with a GPU choice: the GPU this worker is pinned to, as it reported it ("GPU 1 · NVIDIA H200", "no GPU") */
  gpu?: string
  /** a remote worker (a scheduler's task): the host it runs on, as it reported it */
  host?: string
}

export interface ModelCell {
  /** 0..1 of this model's training steps done in the current measurement */
  fraction: number
  loss: number | null
  done: boolean
  /**
   * with early stopping or search halving: the rounds (epochs) the model has trained, from its last
   * model-done (under halving, summed over the rungs it finished); absent otherwise
   */
  roundsTrained?: number
}

export type RunEvent =
  /** task: what the models learn, resolved before the start (absent from a service from before classifiers) */
  | { type: 'run-started'; runId: string; config: BenchConfig; plan: MeasurementKey[]; startedAt: string; task?: Task }
  | { type: 'phase'; runId: string; phase: RunPhase; index: number | null; key: MeasurementKey | null; message: string }
  | {
      type: 'progress'
      runId: string
      index: number
      key: MeasurementKey
      elapsedMs: number
      modelsDone: number
      lanes: WorkerLane[]
      models: ModelCell[]
    }
  | { type: 'measurement'; runId: string; index: number; measurement: Measurement }
  /** a job was submitted to the run's scheduler (Slurm): every job id so far, as the run record keeps them */
  | { type: 'scheduler'; runId: string; scheduler: NonNullable<RunResult['scheduler']> }
  | { type: 'run-finished'; runId: string; result: RunResult }
  /**
   * Telemetry, at most one event per second while a run is live: the new samples (on re-attach,
   * all of them so far) and the GPU reader's status.
   */
  | { type: 'telemetry'; runId: string; gpu: GpuTelemetryStatus; samples: TelemetrySample[] }

export interface Capabilities {
  backends: BackendCapability[]
  /**
   * per model family (its kind): the backend `auto` resolves to here — the calibration's pick where
   * the family is calibrated, else the table's first available (a guess until the first run with
   * `auto` calibrates); null when none it may pick is available
   */
  autoBackends: Record<string, string | null>
  /** how `auto` picks, and each family's calibration on this machine (the Calibrate button redoes one) */
  calibration: CalibrationState
  cpu: string
  cpuCount: number
  memoryBytes: number
  freeMemoryBytes: number
  os: string
  versions: Record<string, string>
  shell: 'electron' | 'browser' | 'cli'
  /** the NVIDIA GPUs nvidia-smi lists here (what config.gpus chooses from); [] without */
  gpus: GpuInfo[]
  /** where else the workers can run (config.launcher), by each registered launcher's engine: whether it can submit from here (its version), else why not */
  launchers: Record<string, LauncherCapability>
}
