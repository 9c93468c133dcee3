// RemoteLauncher: workers started by a scheduler (an engine: Slurm today; Ray Jobs could be a
// second) that dial back to the coordinator's worker socket. To the pool it is one more
// WorkerLauncher: launch() returns a handle at once, messages sent before the worker has dialled
// back wait in the handle, and the worker's death is an exit like a local one's, named in the
// engine's words (Slurm's state and exit code). Launches of one tick go to the engine as one
// submission (the W workers of a pool are one Slurm job array). The engine's job state is the
// authority on how a task ended; a closed socket only makes the launcher ask it. A task that has
// not dialled back within the queue timeout is cancelled and fails with the engine's pending
// reason, so a run never waits for a queue forever.
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { FromWorker, ToWorker } from '@shared/contract'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from '../launcher'
import { resolveWorkerEntry } from '../node-launcher'
import type { WorkerConnection, WorkerGateway } from './gateway'

/** One worker as an engine runs it: its index in the pool, and the submission that started it (a gateway numbers them; a replacement worker comes in a new one). */
export interface EngineTask {
  worker: number
  submission: number
}

export type TaskState =
  | { phase: 'pending'; reason: string | null }
  | { phase: 'running' }
  | { phase: 'ended'; exit: WorkerExit }
  /** the engine no longer knows the task (e.g. it left the queue's memory) */
  | { phase: 'unknown' }

/**
 * What a scheduler must offer to run Trainpool's workers: submit, state, cancel. Each task runs
 * `command` with `env`; the run's secret travels only in `env`, never on the command line. A second
 * engine (Ray Jobs: POST /api/jobs/ with this command as the entrypoint) implements the same.
 */
export interface WorkerEngine {
  /** for messages: "Slurm" */
  readonly name: string
  submit(tasks: EngineTask[], command: string[], env: Record<string, string>): Promise<void>
  state(task: EngineTask): Promise<TaskState>
  cancel(task: EngineTask): Promise<void>
  /** the scheduler's ids of everything submitted (the run record keeps them: no job outlives its run) */
  readonly jobIds: readonly string[]
  /** the end of a task's output, for a failure's report, where the engine can read it */
  logTail?(task: EngineTask): Promise<string>
}

export interface RemoteLauncherOptions {
  /** a task that has not dialled back by then is cancelled and fails with the engine's pending reason */
  queueTimeoutMs?: number
  /** how often the engine is asked about tasks that have not dialled back */
  pollMs?: number
  /** the command a task runs (default remoteWorkerCommand: the built CLI's `trainpool worker --connect`, else the worker source) */
  command?: (url: string) => string[]
}

/** The command a task runs: `trainpool worker --connect URL` from the built CLI; the worker source through tsx in tests from source. */
export function remoteWorkerCommand(url: string): string[] {
  const entry = resolveWorkerEntry()
  const cli = join(resolve(entry.path, '..'), 'cli.js')
  if (existsSync(cli) && entry.execArgv.length === 0) return [process.execPath, cli, 'worker', '--connect', url]
  return [process.execPath, ...entry.execArgv, entry.path]
}

export class RemoteLauncher implements WorkerLauncher {
  readonly kind = 'remote' as const
  private batch: { task: EngineTask; env: Record<string, string>; worker: RemoteWorker }[] = []
  private readonly queueTimeoutMs: number
  private readonly pollMs: number

  constructor(
    private readonly gateway: WorkerGateway,
    readonly engine: WorkerEngine,
    options: RemoteLauncherOptions = {},
  ) {
    this.queueTimeoutMs = options.queueTimeoutMs ?? 10 * 60_000
    this.pollMs = options.pollMs ?? 500
    this.command = options.command ?? remoteWorkerCommand
  }

  private readonly command: (url: string) => string[]

  launch(options: LaunchOptions): WorkerHandle {
    if (this.batch.length === 0) {
      this.submission = this.gateway.nextSubmission()
      queueMicrotask(() => this.submitBatch())
    }
    const task = { worker: options.workerIndex, submission: this.submission }
    const worker = new RemoteWorker(task, this.gateway, this.engine, this.queueTimeoutMs, this.pollMs)
    this.batch.push({ task, env: options.env, worker })
    return worker
  }

  private submission = 0

  /** The launches of one tick as one submission (a pool's W workers: one job array). */
  private submitBatch(): void {
    const part = this.batch
    this.batch = []
    const submission = part[0].task.submission
    const env = {
      ...part[0].env,
      TRAINPOOL_CONNECT: this.gateway.url,
      TRAINPOOL_RUN_SECRET: this.gateway.secret,
      TRAINPOOL_WORKER_SUBMISSION: String(submission),
    }
    const submittedAt = performance.now()
    this.engine.submit(
      part.map((b) => b.task),
      this.command(this.gateway.url),
      env,
    ).then(
      () => part.forEach((b) => b.worker.submitted(submittedAt)),
      (err: Error) => part.forEach((b) => b.worker.finish({ code: null, signal: null, description: `${this.engine.name} did not take the worker: ${err.message}` })),
    )
  }
}

class RemoteWorker implements WorkerHandle {
  readonly pid = undefined
  remote: { host: string; queuedMs: number } | undefined
  private connection: WorkerConnection | null = null
  private outbox: ToWorker[] = []
  private readonly messageListeners: ((m: FromWorker) => void)[] = []
  private readonly exitListeners: ((e: WorkerExit) => void)[] = []
  private readonly stderrListeners: ((chunk: string) => void)[] = []
  private exit: WorkerExit | null = null
  private cancelled = false
  private poller: NodeJS.Timeout | undefined
  private readonly stopWaiting: () => void

  constructor(
    private readonly task: EngineTask,
    gateway: WorkerGateway,
    private readonly engine: WorkerEngine,
    private readonly queueTimeoutMs: number,
    private readonly pollMs: number,
  ) {
    const { connected, stopWaiting } = gateway.expect(task.worker, task.submission)
    this.stopWaiting = stopWaiting
    void connected.then((c) => this.connected(c))
  }

  /** The engine took the task: watch it until it dials back (or ends, or waits too long). */
  submitted(at: number): void {
    if (this.exit) return
    this.submittedAt = at
    this.poller = setInterval(() => void this.pollQueue(), this.pollMs)
  }

  private submittedAt = 0
  private polling = false

  private async pollQueue(): Promise<void> {
    if (this.polling || this.connection || this.exit) return
    this.polling = true
    try {
      const state = await this.engine.state(this.task)
      if (this.connection || this.exit) return
      if (state.phase === 'ended') {
        await this.finishWithLog({ ...state.exit, description: `${state.exit.description ?? 'the task ended'} before the worker dialled back` })
      } else if (state.phase === 'pending' && performance.now() - this.submittedAt > this.queueTimeoutMs) {
        await this.engine.cancel(this.task).catch(() => {})
        this.finish({ code: null, signal: null, description: `the worker did not start within ${Math.round(this.queueTimeoutMs / 1000)} s: ${this.engine.name} keeps it pending (${state.reason ?? 'no reason given'}); it was cancelled` })
      }
    } catch (err) {
      this.stderr(`[trainpool] asking ${this.engine.name} about worker ${this.task.worker}: ${(err as Error).message}\n`)
    } finally {
      this.polling = false
    }
  }

  private connected(connection: WorkerConnection): void {
    if (this.exit) return connection.close()
    clearInterval(this.poller)
    this.connection = connection
    this.remote = { host: connection.hello.host, queuedMs: Math.max(0, performance.now() - this.submittedAt) }
    connection.onMessage((m) => this.messageListeners.forEach((l) => l(m)))
    connection.onClose((why) => void this.closed(why))
    for (const m of this.outbox.splice(0)) this.send(m)
  }

  /** The socket is gone: the engine says how the task ended (it may take a moment to know). */
  private async closed(why: string): Promise<void> {
    const deadline = performance.now() + 10_000
    while (!this.exit && performance.now() < deadline) {
      const state = await this.engine.state(this.task).catch(() => ({ phase: 'unknown' }) as const)
      if (state.phase === 'ended') return this.finishWithLog(state.exit)
      await new Promise((r) => setTimeout(r, 200))
    }
    this.finish({ code: null, signal: null, description: `the worker's connection was lost (${why}) and ${this.engine.name} did not report an end` })
  }

  private async finishWithLog(exit: WorkerExit): Promise<void> {
    const tail = await this.engine.logTail?.(this.task).catch(() => '')
    if (tail) this.stderr(tail)
    this.finish(exit)
  }

  /** Ends the handle once: the pool hears the exit. */
  finish(exit: WorkerExit): void {
    if (this.exit) return
    this.exit = exit
    clearInterval(this.poller)
    this.stopWaiting()
    this.connection?.close()
    for (const l of this.exitListeners) l(exit)
  }

  private stderr(chunk: string): void {
    for (const l of this.stderrListeners) l(chunk)
  }

  send(message: ToWorker): void {
    if (this.exit) return
    if (!this.connection) {
      this.outbox.push(message)
      return
    }
    if (message.type === 'warmup' || message.type === 'job') {
      if (message.workload.data) this.connection.shareTable(message.workload.data.sha256, message.workload.data.table)
    }
    this.connection.send(message)
  }

  onMessage(listener: (message: FromWorker) => void): void {
    this.messageListeners.push(listener)
  }

  onStderr(listener: (chunk: string) => void): void {
    this.stderrListeners.push(listener)
  }

  onExit(listener: (exit: WorkerExit) => void): void {
    if (this.exit) listener(this.exit)
    else this.exitListeners.push(listener)
  }

  /** Cancels the task with its engine (scancel); the exit follows from the engine's state. */
  kill(): void {
    if (this.exit || this.cancelled) return
    this.cancelled = true
    void this.engine.cancel(this.task).catch((err: Error) => this.stderr(`[trainpool] cancelling worker ${this.task.worker}: ${err.message}\n`))
    if (!this.connection) {
      this.finish({ code: null, signal: 'SIGKILL', description: `cancelled with ${this.engine.name} before it dialled back` })
      return
    }
    this.connection.close()
  }
}
