// RemoteLauncher: workers started by a scheduler (scheduler.ts: Slurm today) that dial back to the
// worker socket. To the pool it is one more WorkerLauncher: messages wait in the handle until the
// worker dials back; launches of one tick are one submission (one Slurm job array); the scheduler's
// state says how a task ended, and a task not dialled back within the queue timeout is cancelled.
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { FromWorker, ToWorker } from '@shared/contract'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from '../launcher'
import { resolveWorkerEntry, WORKER_V8_FLAGS } from '../node-launcher'
import type { WorkerConnection, WorkerGateway } from './gateway'
import type { Scheduler, SchedulerTask } from './scheduler'

export type { Scheduler, SchedulerTask, TaskState } from './scheduler'

export interface RemoteLauncherOptions {
  /** a task that has not dialled back by then is cancelled and fails with the scheduler's pending reason */
  queueTimeoutMs?: number
  /** how often the scheduler is asked about tasks that have not dialled back */
  pollMs?: number
  /** the command a task runs (default remoteWorkerCommand: the built CLI's `trainpool worker --connect`, else the worker source) */
  command?: (url: string) => string[]
}

/** The command a task runs: `trainpool worker --connect URL` from the built CLI; the worker source through tsx in tests from source. */
export function remoteWorkerCommand(url: string): string[] {
  const entry = resolveWorkerEntry()
  const cli = join(resolve(entry.path, '..'), 'cli.js')
  if (existsSync(cli) && entry.execArgv.length === 0) return [process.execPath, ...WORKER_V8_FLAGS, cli, 'worker', '--connect', url]
  return [process.execPath, ...WORKER_V8_FLAGS, ...entry.execArgv, entry.path]
}

export class RemoteLauncher implements WorkerLauncher {
  readonly kind = 'remote' as const
  private batch: { task: SchedulerTask; env: Record<string, string>; worker: RemoteWorker }[] = []
  private readonly queueTimeoutMs: number
  private readonly pollMs: number

  constructor(
    private readonly gateway: WorkerGateway,
    readonly scheduler: Scheduler,
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
    const worker = new RemoteWorker(task, this.gateway, this.scheduler, this.queueTimeoutMs, this.pollMs)
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
    this.scheduler
      .submit(
        part.map((b) => b.task),
        this.command(this.gateway.url),
        env,
      )
      .then(
        () => part.forEach((b) => b.worker.submitted(submittedAt)),
        (err: Error) =>
          part.forEach((b) => b.worker.finish({ code: null, signal: null, description: `${this.scheduler.name} did not take the worker: ${err.message}` })),
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
    private readonly task: SchedulerTask,
    gateway: WorkerGateway,
    private readonly scheduler: Scheduler,
    private readonly queueTimeoutMs: number,
    private readonly pollMs: number,
  ) {
    const { connected, stopWaiting } = gateway.expect(task.worker, task.submission)
    this.stopWaiting = stopWaiting
    void connected.then((c) => this.connected(c))
  }

  /** The scheduler took the task: watch it until it dials back (or ends, or waits too long). */
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
      const state = await this.scheduler.state(this.task)
      if (this.connection || this.exit) return
      if (state.phase === 'ended') {
        await this.finishWithLog({ ...state.exit, description: `${state.exit.description ?? 'the task ended'} before the worker dialled back` })
      } else if (state.phase === 'pending' && performance.now() - this.submittedAt > this.queueTimeoutMs) {
        await this.scheduler.cancel(this.task).catch(() => {})
        this.finish({
          code: null,
          signal: null,
          description: `the worker did not start within ${Math.round(this.queueTimeoutMs / 1000)} s: ${this.scheduler.name} keeps it pending (${state.reason ?? 'no reason given'}); it was cancelled`,
        })
      }
    } catch (err) {
      this.stderr(`[trainpool] asking ${this.scheduler.name} about worker ${this.task.worker}: ${(err as Error).message}\n`)
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

  /** The socket is gone: the scheduler says how the task ended (it may take a moment to know). */
  private async closed(why: string): Promise<void> {
    const deadline = performance.now() + 10_000
    while (!this.exit && performance.now() < deadline) {
      const state = await this.scheduler.state(this.task).catch(() => ({ phase: 'unknown' }) as const)
      if (state.phase === 'ended') return this.finishWithLog(state.exit)
      await new Promise((r) => setTimeout(r, 200))
    }
    this.finish({ code: null, signal: null, description: `the worker's connection was lost (${why}) and ${this.scheduler.name} did not report an end` })
  }

  private async finishWithLog(exit: WorkerExit): Promise<void> {
    const tail = await this.scheduler.logTail?.(this.task).catch(() => '')
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

  /** Cancels the task with its scheduler (scancel); the exit follows from its state. */
  kill(): void {
    if (this.exit || this.cancelled) return
    this.cancelled = true
    void this.scheduler.cancel(this.task).catch((err: Error) => this.stderr(`[trainpool] cancelling worker ${this.task.worker}: ${err.message}\n`))
    if (!this.connection) {
      this.finish({ code: null, signal: 'SIGKILL', description: `cancelled with ${this.scheduler.name} before it dialled back` })
      return
    }
    this.connection.close()
  }
}
