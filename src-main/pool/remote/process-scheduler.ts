// The simplest scheduler: each worker a process on this machine that dials back over the worker
// socket, as a remote one would. It runs the remote path end to end (tokens, validation, data by
// sha256) without a scheduler, for the tests. Slurm is the scheduler for other machines (slurm-scheduler.ts).
import { type ChildProcess, spawn } from 'node:child_process'
import type { WorkerExit } from '../launcher'
import type { Scheduler, SchedulerTask, TaskState } from './scheduler'

const LOG_TAIL_CHARS = 2000

export class ProcessScheduler implements Scheduler {
  readonly name: string = 'the local process scheduler'
  private readonly tasks = new Map<string, { child: ChildProcess; exit: WorkerExit | null; log: string }>()
  readonly jobIds: string[] = []

  constructor(private readonly extraEnv: (task: SchedulerTask) => Record<string, string> = () => ({})) {}

  async submit(tasks: SchedulerTask[], command: string[], env: Record<string, string>): Promise<void> {
    for (const task of tasks) {
      const child = spawn(command[0], command.slice(1), {
        env: { ...env, TRAINPOOL_WORKER_INDEX: String(task.worker), ...this.extraEnv(task) },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const entry = { child, exit: null as WorkerExit | null, log: '' }
      const keep = (chunk: Buffer) => (entry.log = (entry.log + chunk.toString()).slice(-LOG_TAIL_CHARS))
      child.stdout?.on('data', keep)
      child.stderr?.on('data', keep)
      child.on('error', (err) => (entry.exit ??= { code: null, signal: null, description: `could not start: ${err.message}` }))
      child.once(
        'exit',
        (code, signal) =>
          (entry.exit = { code, signal, description: signal ? `the worker process was killed by ${signal}` : `the worker process exited with code ${code}` }),
      )
      this.tasks.set(key(task), entry)
      this.jobIds.push(`pid ${child.pid}`)
    }
  }

  async state(task: SchedulerTask): Promise<TaskState> {
    const entry = this.tasks.get(key(task))
    if (!entry) return { phase: 'unknown' }
    return entry.exit ? { phase: 'ended', exit: entry.exit } : { phase: 'running' }
  }

  async cancel(task: SchedulerTask): Promise<void> {
    const entry = this.tasks.get(key(task))
    if (entry && !entry.exit) entry.child.kill('SIGTERM')
  }

  async logTail(task: SchedulerTask): Promise<string> {
    return this.tasks.get(key(task))?.log ?? ''
  }

  /** pids of the processes still running (tests check none is left) */
  get livePids(): number[] {
    return [...this.tasks.values()].filter((t) => !t.exit && t.child.pid !== undefined).map((t) => t.child.pid!)
  }
}

function key(task: SchedulerTask): string {
  return `${task.worker}.${task.submission}`
}
