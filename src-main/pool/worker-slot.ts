// One worker of a pool as the pool keeps it: its process handle, whether it lives, what it said
// last, the jobs it holds (running first, then the one sent ahead), and who listens to it.
import type { FromWorker, WorkerFailure } from '@shared/contract'
import type { JobOutcomeFailure } from './pool-types'
import type { WorkerExit, WorkerHandle } from './launcher'

export const STDERR_TAIL_CHARS = 2000

export interface Slot {
  index: number
  handle: WorkerHandle
  alive: boolean
  exit: WorkerExit | null
  stderrTail: string
  /** set when the watchdog killed this worker for missing heartbeats */
  hung: string | null
  lastHeard: number
  rssBytes: number
  /** CUDA_VISIBLE_DEVICES as the worker reported it when it started (null: not set) */
  visibleDevices: string | null
  /** the jobs sent to this worker and not answered yet, in the order sent: the running one, then the one held next */
  jobs: number[]
  listeners: Set<(m: FromWorker) => void>
  exitListeners: Set<(e: WorkerExit) => void>
}

/** What a worker's failure cost a job: the models it had not finished, why, and its last words. */
export function failureOf(slot: Slot, outcome: JobOutcomeFailure, reason: string, exit?: WorkerExit): WorkerFailure {
  const done = new Set(outcome.models.map((m) => m.index))
  return {
    worker: slot.index,
    modelIndices: outcome.job.modelIndices.filter((i) => !done.has(i)),
    reason,
    exitCode: exit?.code ?? null,
    signal: exit?.signal ?? null,
    stderrTail: slot.stderrTail.trim().slice(-STDERR_TAIL_CHARS),
  }
}

export function describeExit(exit: WorkerExit | null): string {
  if (!exit) return 'still running'
  if (exit.description) return exit.description
  if (exit.signal) return `worker process killed by ${exit.signal}`
  return `worker process exited with code ${exit.code}`
}
