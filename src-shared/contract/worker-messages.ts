// Messages between the pool (main side) and a worker process. Same shapes over Electron's
// parentPort and Node's child_process IPC channel.
import type { BackendName, ConcreteBackend } from './config'
import type { DeviceCounters } from './device-counters'
import type { ResumeState } from './halving'
import type { ModelArtifact } from './model-artifact'
import type { Progress } from '../vocabulary/progress'
import type { PerModel } from './result'
import type { Workload } from './workload'

export interface BackendCapability {
  name: ConcreteBackend
  available: boolean
  /**
   * Computes on GPU hardware: tensorflow on a CUDA device, webgpu on a hardware adapter (not a
   * software one such as lavapipe). false for wasm and cpu, and when not available. `auto` decides
   * from this field (engine/backends.ts autoAccepts), never from `detail`. Absent: false.
   */
  gpu?: boolean
  /** device when available (GPU/adapter name or CPU model), otherwise why not; for people to read */
  detail: string
}

export type ToWorker =
  | { type: 'init'; backend: BackendName; /** the model family whose runtime to start */ family: string; workerIndex: number }
  | { type: 'warmup'; workload: Workload; modelIndices: number[] }
  | {
      type: 'job'
      jobId: number
      workload: Workload
      modelIndices: number[]
      /** all models in one fused program (batched) */
      fused: boolean
      /** send each trained model back (model-done's artifact): the run keeps this measurement's models */
      keep?: boolean
      /**
       * sent ahead, behind the job this worker is running (its id): the worker starts it only if
       * that one ended job-done, and otherwise answers `cancelled` with `started: false`
       */
      after?: number
      /**
       * a successive-halving rung (contract/halving.ts): the trees so far of each model that trained in
       * an earlier rung, to continue from (a model absent starts from none); each model-done's
       * roundsTrained then counts the rounds this job grew
       */
      resume?: ResumeState[]
    }
  | { type: 'cancel'; jobId: number }
  | { type: 'memory' }
  | { type: 'probe' }
  | { type: 'shutdown' }

export type FromWorker =
  | {
      type: 'ready'
      backend: ConcreteBackend
      device: string
      flags: Record<string, string | number | boolean>
      versions: Record<string, string>
      initMs: number
      /** the worker's own CUDA_VISIBLE_DEVICES (null: not set), as its process sees it */
      visibleDevices?: string | null
    }
  | { type: 'init-failed'; backend: BackendName; reason: string }
  | { type: 'warm'; ms: number }
  | {
      type: 'progress'
      jobId: number
      /** models advancing in this step (one for sequential/pool, the whole group for batched) */
      modelIndices: number[]
      progress: Progress
    }
  | { type: 'model-done'; jobId: number; model: Omit<PerModel, 'worker'>; /** the trained model, when the job asked to keep it */ artifact?: ModelArtifact }
  | { type: 'job-done'; jobId: number; wallMs: number; rssBytes: number; /** a GPU engine's device work during the job */ device?: DeviceCounters }
  /** outOfMemory: the worker hit its memory cap (its heap is spent: the pool replaces it) */
  | { type: 'job-failed'; jobId: number; message: string; outOfMemory?: boolean }
  /** started false: the job never began (cancelled while queued, or queued behind a job that did not finish): nothing trained */
  | { type: 'cancelled'; jobId: number; started?: boolean }
  | { type: 'memory'; numTensors: number; numBytes: number; rssBytes: number }
  | { type: 'capabilities'; backends: BackendCapability[] }
  | { type: 'heartbeat' }
