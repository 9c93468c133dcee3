// A scheduler starts Trainpool's remote workers (Slurm today; Ray Jobs would be a second): it
// submits tasks that each run `trainpool worker --connect URL`, says each task's state, cancels.
// Each one is a SchedulerEntry in one file plus one line in the registry (../schedulers.ts): its
// launcher spec (the shared half: fields, flags, words; src-shared/contract/launcher-spec.ts) and
// its check of whether it can submit from here. The service asks schedulerFor(config.launcher) and
// checks every registered one for the capabilities; a restart asks the run's own scheduler to cancel its jobs.
import { type LauncherCapability, type LauncherChoice, type LauncherSpec, registerLauncher, type RunResult } from '@shared/contract'
import type { WorkerExit } from '../launcher'

/** One worker as a scheduler runs it: its index in the pool, and the submission that started it (a gateway numbers them; a replacement worker comes in a new one). */
export interface SchedulerTask {
  worker: number
  submission: number
}

export type TaskState =
  | { phase: 'pending'; reason: string | null }
  | { phase: 'running' }
  | { phase: 'ended'; exit: WorkerExit }
  /** the scheduler no longer knows the task (e.g. it left the queue's memory) */
  | { phase: 'unknown' }

/** One run's scheduler: each task runs `command` with `env` (the run's secret only in `env`, never on the command line). */
export interface Scheduler {
  /** for messages: "Slurm" */
  readonly name: string
  submit(tasks: SchedulerTask[], command: string[], env: Record<string, string>): Promise<void>
  state(task: SchedulerTask): Promise<TaskState>
  cancel(task: SchedulerTask): Promise<void>
  /** the scheduler's ids of everything submitted (the run record keeps them: no job outlives its run) */
  readonly jobIds: readonly string[]
  /** hears each job id as it is submitted (the live run saves it into the run record) */
  onSubmitted?(listener: (jobId: string) => void): void
  /** cancels everything it submitted (the end of a run) */
  cancelAll?(): Promise<void>
  /** the end of a task's output, for a failure's report, where the scheduler can read it */
  logTail?(task: SchedulerTask): Promise<string>
}

/** A kind of scheduler: the launcher it is, whether it can submit from here, how to make one for a run, and how to cancel a dead run's jobs. */
export interface SchedulerEntry {
  /** its shared half: config.launcher.engine (and the run record's scheduler.engine), its fields, flags and words */
  spec: LauncherSpec
  /** whether it can submit from here (the capabilities' launchers.<engine>); asked once per service */
  check(): Promise<LauncherCapability>
  create(choice: LauncherChoice, where: { logDir: string; cwd: string }): Scheduler
  /** cancels jobs a run recorded (its coordinator is gone: its workers must go too) */
  cancelRecorded(jobIds: readonly string[]): Promise<void>
}

const registry = new Map<string, SchedulerEntry>()

/** Adds a kind of scheduler (built-in ones in ../schedulers.ts; a test's toy one), and its launcher to the contract's registry. */
export function registerScheduler(entry: SchedulerEntry): void {
  registry.set(entry.spec.engine, entry)
  registerLauncher(entry.spec)
}

/** Every registered scheduler (the capabilities check each). */
export function allSchedulers(): SchedulerEntry[] {
  return [...registry.values()]
}

export function schedulerFor(choice: { engine: string }): SchedulerEntry {
  const entry = registry.get(choice.engine)
  if (!entry) throw new Error(`no scheduler ${JSON.stringify(choice.engine)}: accepted ${[...registry.keys()].join(', ') || 'none'}`)
  return entry
}

/** Cancels the jobs a run recorded with its own scheduler (a run marked interrupted at start-up). */
export async function cancelJobsOfRun(run: Pick<RunResult, 'scheduler'>): Promise<void> {
  if (!run.scheduler?.jobIds.length) return
  await schedulerFor(run.scheduler).cancelRecorded(run.scheduler.jobIds)
}
