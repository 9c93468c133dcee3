// Slurm as the scheduler behind RemoteLauncher: the workers of one pool start are one job array,
// one task per worker with its GPU by --gres; tasks dial back to the worker socket, their states
// come from slurm-cli.ts and are said in Slurm's words. Every job id is announced as submitted (the
// run record keeps them) and cancelled when the run ends, so no job outlives its run.
import { constants } from 'node:os'
import { readFile } from 'node:fs/promises'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type SlurmChoice, slurmLauncher } from '@shared/contract'
import type { WorkerExit } from '../launcher'
import type { Scheduler, SchedulerEntry, SchedulerTask, TaskState } from '../remote/scheduler'
import { type ArrayTaskStatus, cancel, isFinished, queryArray, sbatchAvailable, submitArray } from './slurm-cli'

const LOG_TAIL_CHARS = 2000
/** the W handles of a pool ask about the same array: one query answers them for this long */
const QUERY_REUSE_MS = 300
const WAITING_STATES = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD', 'SUSPENDED', 'STOPPED'])

export interface SlurmSchedulerOptions {
  choice: SlurmChoice
  /** where each task writes its output (trainpool-<job>_<task>.out): a folder the nodes can write and this machine read */
  logDir: string
  /** the tasks' working directory */
  cwd: string
}

export class SlurmScheduler implements Scheduler {
  readonly name = 'Slurm'
  readonly jobIds: string[] = []
  private readonly jobOf = new Map<number, { jobId: string; indices: number[] }>()
  private readonly queries = new Map<string, { at: number; statuses: Promise<ArrayTaskStatus[]> }>()
  private readonly submittedListeners: ((jobId: string) => void)[] = []

  constructor(private readonly options: SlurmSchedulerOptions) {}

  /** Hears each job id as it is submitted (the live run saves it into the run record). */
  onSubmitted(listener: (jobId: string) => void): void {
    this.submittedListeners.push(listener)
  }

  async submit(tasks: SchedulerTask[], command: string[], env: Record<string, string>): Promise<void> {
    const choice = this.options.choice
    const indices = tasks.map((t) => t.worker)
    // the index comes from SLURM_ARRAY_TASK_ID in each task, not from the coordinator's own environment
    const taskEnv = { ...env }
    delete taskEnv.TRAINPOOL_WORKER_INDEX
    mkdirSync(this.options.logDir, { recursive: true })
    const { jobId } = await submitArray({
      indices,
      partition: choice.partition,
      gres: choice.gres,
      time: choice.time,
      account: choice.account,
      extraArgs: choice.sbatchArgs,
      jobName: 'trainpool-worker',
      output: join(this.options.logDir, 'trainpool-%A_%a.out'),
      command,
      env: taskEnv,
      cwd: this.options.cwd,
    })
    this.jobOf.set(tasks[0].submission, { jobId, indices })
    this.jobIds.push(jobId)
    for (const l of this.submittedListeners) l(jobId)
  }

  async state(task: SchedulerTask): Promise<TaskState> {
    const job = this.jobOf.get(task.submission)
    if (!job) return { phase: 'unknown' }
    const status = (await this.query(job.jobId, job.indices)).find((s) => s.index === task.worker)
    if (!status || status.state === 'UNKNOWN') return { phase: 'unknown' }
    if (isFinished(status.state)) return { phase: 'ended', exit: exitOf(job.jobId, status) }
    if (WAITING_STATES.has(status.state)) return { phase: 'pending', reason: status.reason }
    return { phase: 'running' }
  }

  async cancel(task: SchedulerTask): Promise<void> {
    const job = this.jobOf.get(task.submission)
    if (job) await cancel(job.jobId, task.worker)
  }

  /** Cancels every job this scheduler submitted (the end of a run: nothing may outlive it; scancel of a finished job is harmless). */
  cancelAll(): Promise<void> {
    return cancelRecordedJobs(this.jobIds)
  }

  async logTail(task: SchedulerTask): Promise<string> {
    const job = this.jobOf.get(task.submission)
    if (!job) return ''
    const text = await readFile(join(this.options.logDir, `trainpool-${job.jobId}_${task.worker}.out`), 'utf8').catch(() => '')
    return text.slice(-LOG_TAIL_CHARS)
  }

  private query(jobId: string, indices: number[]): Promise<ArrayTaskStatus[]> {
    const cached = this.queries.get(jobId)
    if (cached && performance.now() - cached.at < QUERY_REUSE_MS) return cached.statuses
    const statuses = queryArray(jobId, { indices })
    this.queries.set(jobId, { at: performance.now(), statuses })
    statuses.catch(() => this.queries.delete(jobId))
    return statuses
  }
}

/** How a task ended, in Slurm's words: "Slurm task 12_1 CANCELLED (exit 0, signal 15 SIGTERM) on node-3". */
function exitOf(jobId: string, status: ArrayTaskStatus): WorkerExit {
  const signal = status.signal ? (Object.entries(constants.signals).find(([, n]) => n === status.signal)?.[0] ?? `signal ${status.signal}`) : null
  const parts = [status.exitCode !== null ? `exit ${status.exitCode}` : null, signal ? `signal ${status.signal} ${signal}` : null].filter(Boolean)
  const where = status.node ? ` on ${status.node}` : ''
  const reason = status.reason && status.reason !== 'None' ? `, reason ${status.reason}` : ''
  return {
    code: status.exitCode,
    signal,
    description: `Slurm task ${jobId}_${status.index} ${status.state}${parts.length ? ` (${parts.join(', ')})` : ''}${where}${reason}`,
  }
}

async function cancelRecordedJobs(jobIds: readonly string[]): Promise<void> {
  await Promise.all(jobIds.map((id) => cancel(id).catch(() => {})))
}

/** Slurm in the scheduler registry (../schedulers.ts). */
export const slurmScheduler: SchedulerEntry = {
  spec: slurmLauncher,
  check: () => sbatchAvailable(),
  // config.launcher was checked against slurmLauncher's schema (the registry picks it by engine)
  create: (choice, where) => new SlurmScheduler({ choice: choice as SlurmChoice, ...where }),
  // a stored run is read back from disk: only what is a Slurm job id reaches scancel
  cancelRecorded: (jobIds) => cancelRecordedJobs(jobIds.filter((id) => /^\d+$/.test(id))),
}
