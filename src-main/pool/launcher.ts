// How a worker process is started. The pool knows only this interface; the Node launcher
// (child_process.fork: CLI, tests, browser mode) and the Electron launcher (utilityProcess.fork:
// the desktop app) implement it. Both run the same worker entry (src-main/worker/index.ts).
import type { FromWorker, ToWorker } from '@shared/contract'

export interface WorkerExit {
  code: number | null
  signal: string | null
  /** how it ended in the words of whatever ran it, when that is more than a code (Slurm: "task 12_1 CANCELLED, exit 0:15") */
  description?: string
}

export interface WorkerHandle {
  /** OS process id once spawned (undefined before spawn and after exit under Electron) */
  readonly pid: number | undefined
  send(message: ToWorker): void
  onMessage(listener: (message: FromWorker) => void): void
  onStderr(listener: (chunk: string) => void): void
  onExit(listener: (exit: WorkerExit) => void): void
  kill(signal: 'SIGTERM' | 'SIGKILL'): void
  /** a remote worker: where it runs, and how long it waited in its scheduler's queue before it dialled back */
  readonly remote?: { host: string; queuedMs: number }
}

export interface LaunchOptions {
  workerIndex: number
  /** shown in Electron's app metrics and crash events, e.g. "trainpool-worker-2" */
  serviceName: string
  env: Record<string, string>
}

export interface WorkerLauncher {
  readonly kind: 'node' | 'electron' | 'remote'
  launch(options: LaunchOptions): WorkerHandle
}

/** Environment every worker gets: one GPU context per process, grown on demand (without it the first process takes all GPU memory). */
export function workerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  return { ...env, TF_FORCE_GPU_ALLOW_GROWTH: 'true', TF_CPP_MIN_LOG_LEVEL: env.TF_CPP_MIN_LOG_LEVEL ?? '2', ...extra }
}
