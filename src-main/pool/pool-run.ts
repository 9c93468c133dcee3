// One run of a pool's jobs: the FIFO queue, the jobs in flight on each worker (its running one and
// one sent ahead), the failure policy, and the outcome of every job. The pool starts it and hands it
// its workers; it answers each worker message with a method, and resolves once nothing is in flight.
import type { FromWorker, PerModel, WorkerFailure } from '@shared/contract'
import type { WorkerExit } from './launcher'
import type { JobOutcome, JobSpec, PoolOptions, RunHooks } from './pool-types'
import { describeExit, failureOf, type Slot } from './worker-slot'

/** What a run needs of its pool: the workers, job ids, whether a cancel is under way, and replacing a spent worker. */
export interface PoolRunHost {
  readonly slots: readonly Slot[]
  readonly cancelling: boolean
  readonly heartbeatTimeoutMs: number
  nextJobId(): number
  /** a fresh process in the slot, started and warmed like the one it replaces; false when it cannot start */
  restart(slot: Slot): Promise<boolean>
}

type JobMessage = Extract<FromWorker, { jobId: number }>

export class PoolRun {
  readonly outcomes: JobOutcome[]
  /** jobs not sent yet, FIFO; a job taken back from a worker that never started it goes back to the front */
  private readonly queue: number[]
  /** jobs sent and not answered yet: the job's id → its outcome's index and its worker */
  private readonly sent = new Map<number, { k: number; slot: Slot }>()
  /** workers being replaced (out of memory): they take no job until the new process is warm */
  private readonly restarting = new Set<Slot>()
  private stopped = false
  private finished = false
  private readonly policy: NonNullable<PoolOptions['failurePolicy']>
  private readonly done: Promise<JobOutcome[]>
  private resolveDone: (outcomes: JobOutcome[]) => void = () => {}
  private watchdog: NodeJS.Timeout | null = null
  private readonly listeners: { slot: Slot; onMessage: (m: FromWorker) => void; onExit: (e: WorkerExit) => void }[]

  constructor(
    private readonly host: PoolRunHost,
    jobs: readonly JobSpec[],
    private readonly hooks: RunHooks,
    policy: PoolOptions['failurePolicy'],
  ) {
    this.policy = policy ?? 'stop'
    this.outcomes = jobs.map((job) => ({ job, status: 'not-run', worker: null, models: [], failure: null }))
    this.queue = jobs.map((_, k) => k)
    this.done = new Promise((resolve) => (this.resolveDone = resolve))
    this.listeners = host.slots.map((slot) => ({
      slot,
      onMessage: (m: FromWorker) => this.onMessage(slot, m),
      onExit: (e: WorkerExit) => this.onExit(slot, e),
    }))
  }

  /** Starts sending jobs; resolves with every job's outcome (never rejects). */
  start(): Promise<JobOutcome[]> {
    for (const { slot, onMessage, onExit } of this.listeners) {
      slot.listeners.add(onMessage)
      slot.exitListeners.add(onExit)
    }
    this.watchdog = setInterval(() => this.killSilentWorkers(), Math.min(1000, this.host.heartbeatTimeoutMs / 2))
    this.finishIfDone()
    return this.done
  }

  private goingOn(): boolean {
    return !this.stopped && !this.host.cancelling
  }

  /** Sends job k to a worker: it runs it at once when idle, else after its running job. */
  private send(slot: Slot, k: number): void {
    const outcome = this.outcomes[k]
    const jobId = this.host.nextJobId()
    const after = slot.jobs.at(-1)
    slot.jobs.push(jobId)
    this.sent.set(jobId, { k, slot })
    outcome.worker = slot.index
    this.hooks.onDispatch?.(slot.index, outcome.job)
    if (after === undefined) {
      slot.lastHeard = performance.now()
      this.hooks.onStart?.(slot.index, outcome.job)
    }
    slot.handle.send({ type: 'job', jobId, ...outcome.job, ...(after === undefined ? {} : { after }) })
  }

  /** Every live worker takes a job to run, then one to hold next, so the first W jobs start on W workers. */
  private fill(): void {
    for (const depth of [1, 2]) {
      for (const s of this.host.slots) {
        if (this.queue.length > 0 && this.goingOn() && s.alive && !this.restarting.has(s) && s.jobs.length < depth) this.send(s, this.queue.shift()!)
      }
    }
  }

  /** The job leaves its worker (answered, or it never will be); the one behind it is then running. */
  private release(jobId: number): number {
    const { k, slot } = this.sent.get(jobId)!
    this.sent.delete(jobId)
    const wasRunning = slot.jobs[0] === jobId
    slot.jobs = slot.jobs.filter((id) => id !== jobId)
    if (wasRunning && slot.jobs.length > 0 && slot.alive && this.goingOn()) this.hooks.onStart?.(slot.index, this.outcomes[this.sent.get(slot.jobs[0])!.k].job)
    return k
  }

  /**
   * The worker will not start the jobs it holds behind its running one (that one failed, or the
   * worker died): they never started, so they go back to the front of the queue, or stay
   * 'not-run' when the run stops.
   */
  private takeBackQueued(slot: Slot): void {
    for (const jobId of slot.jobs.slice(1).reverse()) {
      const k = this.release(jobId)
      this.outcomes[k].worker = null
      if (this.goingOn()) this.queue.unshift(k)
    }
  }

  /**
   * Resolves once nothing is in flight. If jobs are left and the run may go on, the live workers
   * take them first; when none can (all dead, stopped, cancelled), the run ends with the rest
   * 'not-run' instead of waiting forever.
   */
  private finishIfDone(): void {
    if (this.finished) return
    this.fill()
    if (this.sent.size > 0 || this.restarting.size > 0) return
    this.finished = true
    if (this.watchdog) clearInterval(this.watchdog)
    for (const { slot, onMessage, onExit } of this.listeners) {
      slot.listeners.delete(onMessage)
      slot.exitListeners.delete(onExit)
    }
    this.resolveDone(this.outcomes)
  }

  /** Cancels every job in flight, running and sent ahead (those answer at once, never started). */
  private stopAll(): void {
    this.stopped = true
    for (const s of this.host.slots) if (s.alive) for (const jobId of s.jobs) s.handle.send({ type: 'cancel', jobId })
  }

  /** Replaces a worker whose memory is spent; the run waits for it before it ends. */
  private replace(slot: Slot, outcome: JobOutcome): void {
    this.restarting.add(slot)
    void this.host.restart(slot).then((started) => {
      const reason = outcome.failure!.reason.replace(/^training failed: /, '')
      this.hooks.onWorkerRestart?.(
        slot.index,
        started
          ? `worker ${slot.index} ran out of memory (${reason}) and was restarted before its next job`
          : `worker ${slot.index} ran out of memory (${reason}); its replacement did not start`,
      )
      this.restarting.delete(slot)
      this.finishIfDone()
    })
  }

  /** A busy worker silent past the heartbeat timeout is hung: killed, and its exit fails its job. */
  private killSilentWorkers(): void {
    const now = performance.now()
    const limit = this.host.heartbeatTimeoutMs
    for (const s of this.host.slots) {
      if (s.alive && s.jobs.length > 0 && now - s.lastHeard > limit) {
        s.hung = `no heartbeat for ${Math.round((now - s.lastHeard) / 1000)} s (timeout ${limit / 1000} s): killed as hung`
        s.stderrTail += `\n[trainpool] ${s.hung}`
        s.handle.kill('SIGKILL')
      }
    }
  }

  private onMessage(slot: Slot, m: FromWorker): void {
    if (!('jobId' in m)) return
    const entry = this.sent.get(m.jobId)
    if (!entry || entry.slot !== slot) return
    this.answer(slot, entry.k, m)
  }

  /** A worker's message about job k, each kind its own answer. */
  private answer(slot: Slot, k: number, m: JobMessage): void {
    const outcome = this.outcomes[k]
    switch (m.type) {
      case 'progress':
        return this.hooks.onProgress?.(slot.index, m)
      case 'model-done': {
        const model: PerModel = { ...m.model, worker: slot.index }
        outcome.models.push(model)
        return this.hooks.onModelDone?.(model, m.artifact)
      }
      case 'job-done':
        slot.rssBytes = Math.max(slot.rssBytes, m.rssBytes)
        if (m.device) outcome.device = m.device
        this.release(m.jobId)
        outcome.status = 'done'
        return this.finishIfDone()
      case 'cancelled':
        this.release(m.jobId)
        if (m.started !== false) outcome.status = 'cancelled'
        else {
          // it never started: back to the front of the queue while the run goes on, else not-run
          outcome.worker = null
          if (this.goingOn()) this.queue.unshift(k)
        }
        return this.finishIfDone()
      case 'job-failed':
        return this.jobFailed(slot, outcome, m)
    }
  }

  private jobFailed(slot: Slot, outcome: JobOutcome, m: Extract<FromWorker, { type: 'job-failed' }>): void {
    this.fail(outcome, failureOf(slot, outcome, `training failed: ${m.message}`))
    if (this.policy === 'stop') this.stopped = true
    // the worker starts nothing it held behind a failed job (worker/loop.ts)
    this.takeBackQueued(slot)
    this.release(m.jobId)
    outcome.status = 'failed'
    // a worker alive after a failure takes the next job when the policy is 'continue'; one whose
    // memory is spent is replaced first
    if (m.outOfMemory === true && this.policy === 'continue' && this.goingOn()) this.replace(slot, outcome)
    if (this.policy === 'stop') this.stopAll()
    this.finishIfDone()
  }

  private onExit(slot: Slot, exit: WorkerExit): void {
    const running = slot.jobs[0]
    if (running !== undefined) {
      const outcome = this.outcomes[this.sent.get(running)!.k]
      this.fail(outcome, failureOf(slot, outcome, slot.hung ? `${slot.hung} (${describeExit(exit)})` : describeExit(exit), exit))
      const stopping = this.policy === 'stop' && !this.host.cancelling
      if (stopping) this.stopped = true
      this.takeBackQueued(slot)
      this.release(running)
      outcome.status = this.host.cancelling ? 'cancelled' : 'failed'
      if (stopping) this.stopAll()
    }
    this.finishIfDone()
  }

  private fail(outcome: JobOutcome, failure: WorkerFailure): void {
    outcome.failure = failure
    this.hooks.onFailure?.(failure)
  }
}
