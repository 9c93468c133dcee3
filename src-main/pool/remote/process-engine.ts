// The simplest engine: each worker a process on this machine that dials back over the worker
// socket, as a remote one would. It runs the remote path end to end (tokens, validation, data by
// sha256) without a scheduler, for the tests. Slurm is the engine for other machines (slurm-engine.ts).
import { type ChildProcess, spawn } from 'node:child_process'
import type { WorkerExit } from '../launcher'
import type { EngineTask, TaskState, WorkerEngine } from './remote-launcher'

const LOG_TAIL_CHARS = 2000

export class ProcessEngine implements WorkerEngine {
  readonly name = 'the local process engine'
  private readonly tasks = new Map<string, { child: ChildProcess; exit: WorkerExit | null; log: string }>()
  readonly jobIds: string[] = []

  constructor(private readonly extraEnv: (task: EngineTask) => Record<string, string> = () => ({})) {}

  async submit(tasks: EngineTask[], command: string[], env: Record<string, string>): Promise<void> {
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
      child.once('exit', (code, signal) => (entry.exit = { code, signal, description: signal ? `the worker process was killed by ${signal}` : `the worker process exited with code ${code}` }))
      this.tasks.set(key(task), entry)
      this.jobIds.push(`pid ${child.pid}`)
    }
  }

  async state(task: EngineTask): Promise<TaskState> {
    const entry = this.tasks.get(key(task))
    if (!entry) return { phase: 'unknown' }
    return entry.exit ? { phase: 'ended', exit: entry.exit } : { phase: 'running' }
  }

  async cancel(task: EngineTask): Promise<void> {
    const entry = this.tasks.get(key(task))
    if (entry && !entry.exit) entry.child.kill('SIGTERM')
  }

  async logTail(task: EngineTask): Promise<string> {
    return this.tasks.get(key(task))?.log ?? ''
  }

  /** pids of the processes still running (tests check none is left) */
  get livePids(): number[] {
    return [...this.tasks.values()].filter((t) => !t.exit && t.child.pid !== undefined).map((t) => t.child.pid!)
  }
}

function key(task: EngineTask): string {
  return `${task.worker}.${task.submission}`
}
