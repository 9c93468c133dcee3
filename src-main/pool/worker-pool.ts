// WorkerPool: W pre-started, warmed workers over a WorkerLauncher; one FIFO job queue. Each worker
// holds its running job and one more sent ahead (as ProcessPoolExecutor does), so it never idles
// for the round trip between one job's answer and the next job; its loop runs them in order and
// starts the one held next only if the running one ended done. A worker that dies mid-job fails
// that job (exit code/signal and the tail of its stderr) without losing the models it already
// finished; the job it held never started: it goes back to the front of the queue, or stays
// not-run when the run stops (policy). A worker that ran out of memory is replaced before it takes
// another job (its wasm heap cannot shrink: it would fail every later job), and its held job goes
// back to the queue. Cancel = a graceful message for both jobs, then SIGKILL after a grace period.
import type { BackendName, ConcreteBackend, DeviceCounters, FromWorker, ModelArtifact, PerModel, ToWorker, WorkerFailure, Workload } from '@shared/contract'
import { BackendUnavailableError } from '@shared/families'
import type { WorkerExit, WorkerHandle, WorkerLauncher } from './launcher'
import { workerEnv } from './launcher'

const STDERR_TAIL_CHARS = 2000
/** cancel during start-up or warm-up: nothing to keep, and a worker generating data cannot read messages */
const PREPARE_CANCEL_GRACE_MS = 250

export interface PoolOptions {
  size: number
  /** the model family whose runtime each worker starts (the pool never looks inside it) */
  family: string
  backend: BackendName
  /** ms between a graceful cancel/shutdown and SIGKILL */
  graceMs?: number
  /** a busy worker silent for this long is declared hung, killed and reported */
  heartbeatTimeoutMs?: number
  /**
   * the same during start-up and warm-up, where one native call may legitimately block for long
   * (CUDA's PTX JIT on a GPU newer than libtensorflow's kernels can take many minutes)
   */
  prepareTimeoutMs?: number
  failurePolicy?: 'stop' | 'continue'
  env?: Record<string, string>
  /** worker w's own variables on top of `env` (its GPU: CUDA_VISIBLE_DEVICES) */
  envFor?: (workerIndex: number) => Record<string, string>
}

export interface WorkerInfo {
  backend: ConcreteBackend
  device: string
  flags: Record<string, string | number | boolean>
  versions: Record<string, string>
  initMs: number
}

export interface JobSpec {
  workload: Workload
  modelIndices: number[]
  fused: boolean
  /** the workers send each trained model back (the measurement whose models the run keeps) */
  keep?: boolean
}

export interface JobOutcome {
  job: JobSpec
  status: 'done' | 'failed' | 'cancelled' | 'not-run'
  worker: number | null
  models: PerModel[]
  failure: WorkerFailure | null
  /** a GPU engine's device work for this job, as its worker counted it */
  device?: DeviceCounters
}

export type ProgressMessage = Extract<FromWorker, { type: 'progress' }>

export interface RunHooks {
  /**
   * a job was sent to a worker: it runs there now, or next, behind the worker's running job (a job
   * its worker never started, because the job before it failed or the worker died, is sent again)
   */
  onDispatch?: (worker: number, job: JobSpec) => void
  /** a job became the worker's running one (sent to an idle worker, or the job before it there finished) */
  onStart?: (worker: number, job: JobSpec) => void
  onProgress?: (worker: number, progress: ProgressMessage) => void
  onModelDone?: (model: PerModel, artifact?: ModelArtifact) => void
  onFailure?: (failure: WorkerFailure) => void
  /** a worker was replaced by a fresh one (it ran out of memory); `reason` is a sentence for the run's warnings */
  onWorkerRestart?: (worker: number, reason: string) => void
}

/** The pool's workers could not start their backend: the worker sends the reason alone, the shared error says the sentence. */
export class BackendInitError extends BackendUnavailableError {
  constructor(backend: BackendName, reason: string) {
    super(backend, reason)
    this.name = 'BackendInitError'
  }
}

interface Slot {
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

export class WorkerPool {
  private slots: Slot[] = []
  private info: WorkerInfo | null = null
  private cancelling = false
  /** start() or warmup() in progress: their requests are not jobs and do not answer a cancel */
  private preparing = 0
  private readonly graceMs: number
  private readonly heartbeatTimeoutMs: number
  private readonly prepareTimeoutMs: number
  private nextJobId = 1
  /** the last warm-up's shapes, so a replacement worker is warmed like the one it replaces */
  private warmedWith: { workload: Workload; modelIndicesPerWorker: number[][] } | null = null

  constructor(
    private readonly launcher: WorkerLauncher,
    private readonly options: PoolOptions,
  ) {
    this.graceMs = options.graceMs ?? 1500
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 120_000
    this.prepareTimeoutMs = options.prepareTimeoutMs ?? 30 * 60_000
  }

  get workerInfo(): WorkerInfo | null {
    return this.info
  }

  /** Each worker's CUDA_VISIBLE_DEVICES as it reported it (null: not set), by worker index. */
  get visibleDevices(): (string | null)[] {
    return this.slots.map((s) => s.visibleDevices)
  }

  /** Remote workers: where each runs and how long it queued before it dialled back (undefined: a local process). */
  get remotes(): ({ host: string; queuedMs: number } | undefined)[] {
    return this.slots.map((s) => s.handle.remote)
  }

  get pids(): number[] {
    return this.slots.map((s) => s.handle.pid).filter((p): p is number => typeof p === 'number')
  }

  get size(): number {
    return this.options.size
  }

  /** peak RSS each worker reported with its last finished job */
  get rssBytes(): number[] {
    return this.slots.map((s) => s.rssBytes)
  }

  /** Launches every worker and initialises its backend. Resolves with the start-up time. */
  async start(): Promise<number> {
    this.preparing++
    try {
      return await this.startWorkers()
    } finally {
      this.preparing--
    }
  }

  private async startWorkers(): Promise<number> {
    const started = performance.now()
    for (let i = 0; i < this.options.size; i++) {
      const slot: Slot = {
        index: i,
        handle: this.launch(i),
        alive: true,
        exit: null,
        stderrTail: '',
        hung: null,
        lastHeard: performance.now(),
        rssBytes: 0,
        visibleDevices: null,
        jobs: [],
        listeners: new Set(),
        exitListeners: new Set(),
      }
      this.listen(slot)
      this.slots.push(slot)
    }
    const ready = await Promise.all(this.slots.map((slot) => this.init(slot)))
    ready.forEach((m, i) => {
      if (m.type === 'ready') this.slots[i].visibleDevices = m.visibleDevices ?? null
    })
    const failed = ready.find((m) => m.type === 'init-failed')
    if (failed && failed.type === 'init-failed') {
      await this.shutdown()
      throw new BackendInitError(failed.backend, failed.reason)
    }
    const first = ready[0]
    if (first.type === 'ready') {
      this.info = { backend: first.backend, device: first.device, flags: first.flags, versions: first.versions, initMs: first.initMs }
    }
    return performance.now() - started
  }

  private launch(index: number): WorkerHandle {
    // W, for backends that size their threads by it (xgboost: nthread = cores ÷ W)
    const env = workerEnv({ TRAINPOOL_POOL_WORKERS: String(this.options.size), ...this.options.env, ...this.options.envFor?.(index) })
    return this.launcher.launch({ workerIndex: index, serviceName: `trainpool-worker-${index}`, env })
  }

  /** Hands the slot's process's messages, stderr and exit to the slot; a replaced process is no longer heard. */
  private listen(slot: Slot): void {
    const handle = slot.handle
    handle.onMessage((m) => {
      if (slot.handle !== handle) return
      slot.lastHeard = performance.now()
      for (const l of [...slot.listeners]) l(m)
    })
    handle.onStderr((chunk) => {
      if (slot.handle !== handle) return
      slot.stderrTail = (slot.stderrTail + chunk).slice(-STDERR_TAIL_CHARS)
    })
    handle.onExit((exit) => {
      if (slot.handle !== handle) return
      slot.alive = false
      slot.exit = exit
      for (const l of [...slot.exitListeners]) l(exit)
    })
  }

  private init(slot: Slot): Promise<Extract<FromWorker, { type: 'ready' | 'init-failed' }>> {
    return this.request(slot, { type: 'init', backend: this.options.backend, family: this.options.family, workerIndex: slot.index }, (m) =>
      m.type === 'ready' || m.type === 'init-failed' ? m : undefined,
    )
  }

  /**
   * Replaces a worker whose memory is spent with a fresh process, started and warmed like the
   * first. Resolves false (the slot left dead) when the new one cannot start.
   */
  private async restart(slot: Slot): Promise<boolean> {
    const spent = slot.handle
    Object.assign(slot, { handle: this.launch(slot.index), alive: true, exit: null, hung: null, lastHeard: performance.now() })
    this.listen(slot)
    // the spent process holds nothing worth a graceful stop
    spent.kill('SIGKILL')
    try {
      const ready = await this.init(slot)
      if (ready.type === 'init-failed') throw new Error(ready.reason)
      slot.visibleDevices = ready.visibleDevices ?? null
      const warm = this.warmedWith
      if (warm) {
        const m = await this.request(slot, { type: 'warmup', workload: warm.workload, modelIndices: warm.modelIndicesPerWorker[slot.index] ?? [0] }, (r) =>
          r.type === 'warm' || r.type === 'job-failed' ? r : undefined,
        )
        if (m.type === 'job-failed') throw new Error(m.message)
      }
      return true
    } catch (err) {
      slot.stderrTail += `\n[trainpool] the replacement worker did not start: ${(err as Error).message}`
      if (slot.alive) slot.handle.kill('SIGKILL')
      slot.alive = false
      return false
    }
  }

  /** Warms every worker on the real shapes (data generated + uploaded, kernels compiled). */
  async warmup(workload: Workload, modelIndicesPerWorker: number[][]): Promise<number> {
    const started = performance.now()
    this.warmedWith = { workload, modelIndicesPerWorker }
    this.preparing++
    try {
      await this.warmAll(workload, modelIndicesPerWorker)
    } finally {
      this.preparing--
    }
    return performance.now() - started
  }

  private async warmAll(workload: Workload, modelIndicesPerWorker: number[][]): Promise<void> {
    await Promise.all(
      this.slots.map((slot, i) =>
        this.request(slot, { type: 'warmup', workload, modelIndices: modelIndicesPerWorker[i] ?? [0] }, (m) =>
          m.type === 'warm' ? m : m.type === 'job-failed' ? m : undefined,
        ).then((m) => {
          if (m.type === 'job-failed') throw new Error(`warm-up failed on worker ${slot.index}: ${m.message}`)
        }),
      ),
    )
  }

  /**
   * Runs the jobs FIFO, each worker holding its running job and one sent ahead. Never rejects: each
   * job gets an outcome.
   */
  run(jobs: JobSpec[], hooks: RunHooks = {}): Promise<JobOutcome[]> {
    this.cancelling = false
    const outcomes: JobOutcome[] = jobs.map((job) => ({ job, status: 'not-run', worker: null, models: [], failure: null }))
    /** jobs not sent yet, FIFO; a job taken back from a worker that never started it goes back to the front */
    const queue = jobs.map((_, k) => k)
    /** jobs sent and not answered yet: the job's id → its outcome's index and its worker */
    const sent = new Map<number, { k: number; slot: Slot }>()
    /** workers being replaced (out of memory): they take no job until the new process is warm */
    const restarting = new Set<Slot>()
    let stopped = false
    const policy = this.options.failurePolicy ?? 'stop'
    const goingOn = () => !stopped && !this.cancelling

    return new Promise((resolve) => {
      let resolved = false

      /** Sends job k to a worker: it runs it at once when idle, else after its running job. */
      const send = (slot: Slot, k: number) => {
        const outcome = outcomes[k]
        const jobId = this.nextJobId++
        const after = slot.jobs.at(-1)
        slot.jobs.push(jobId)
        sent.set(jobId, { k, slot })
        outcome.worker = slot.index
        hooks.onDispatch?.(slot.index, outcome.job)
        if (after === undefined) {
          slot.lastHeard = performance.now()
          hooks.onStart?.(slot.index, outcome.job)
        }
        slot.handle.send({ type: 'job', jobId, ...outcome.job, ...(after === undefined ? {} : { after }) })
      }
      /** Every live worker takes a job to run, then one to hold next, so the first W jobs start on W workers. */
      const fill = () => {
        for (const depth of [1, 2]) {
          for (const s of this.slots) {
            if (queue.length > 0 && goingOn() && s.alive && !restarting.has(s) && s.jobs.length < depth) send(s, queue.shift()!)
          }
        }
      }
      /** The job leaves its worker (answered, or it never will be); the one behind it is then running. */
      const release = (jobId: number): number => {
        const { k, slot } = sent.get(jobId)!
        sent.delete(jobId)
        const wasRunning = slot.jobs[0] === jobId
        slot.jobs = slot.jobs.filter((id) => id !== jobId)
        if (wasRunning && slot.jobs.length > 0 && slot.alive && goingOn()) hooks.onStart?.(slot.index, outcomes[sent.get(slot.jobs[0])!.k].job)
        return k
      }
      /**
       * The worker will not start the jobs it holds behind its running one (that one failed, or the
       * worker died): they never started, so they go back to the front of the queue, or stay
       * 'not-run' when the run stops.
       */
      const takeBackQueued = (slot: Slot) => {
        for (const jobId of slot.jobs.slice(1).reverse()) {
          const k = release(jobId)
          outcomes[k].worker = null
          if (goingOn()) queue.unshift(k)
        }
      }
      /**
       * Resolves once nothing is in flight. If jobs are left and the run may go on, the live workers
       * take them first; when none can (all dead, stopped, cancelled), the run ends with the rest
       * 'not-run' instead of waiting forever.
       */
      const finishIfDone = () => {
        if (resolved) return
        fill()
        if (sent.size > 0 || restarting.size > 0) return
        resolved = true
        clearInterval(watchdog)
        for (const { slot, onMessage, onExit } of listeners) {
          slot.listeners.delete(onMessage)
          slot.exitListeners.delete(onExit)
        }
        resolve(outcomes)
      }
      /** Cancels every job in flight, running and sent ahead (those answer at once, never started). */
      const stopAll = () => {
        stopped = true
        for (const s of this.slots) if (s.alive) for (const jobId of s.jobs) s.handle.send({ type: 'cancel', jobId })
      }
      /** Replaces a worker whose memory is spent; the run waits for it before it ends. */
      const replace = (slot: Slot, outcome: JobOutcome) => {
        restarting.add(slot)
        void this.restart(slot).then((started) => {
          const reason = outcome.failure!.reason.replace(/^training failed: /, '')
          hooks.onWorkerRestart?.(
            slot.index,
            started
              ? `worker ${slot.index} ran out of memory (${reason}) and was restarted before its next job`
              : `worker ${slot.index} ran out of memory (${reason}); its replacement did not start`,
          )
          restarting.delete(slot)
          finishIfDone()
        })
      }
      const watchdog = setInterval(() => {
        const now = performance.now()
        for (const s of this.slots) {
          if (s.alive && s.jobs.length > 0 && now - s.lastHeard > this.heartbeatTimeoutMs) {
            s.hung = `no heartbeat for ${Math.round((now - s.lastHeard) / 1000)} s (timeout ${this.heartbeatTimeoutMs / 1000} s): killed as hung`
            s.stderrTail += `\n[trainpool] ${s.hung}`
            s.handle.kill('SIGKILL')
          }
        }
      }, Math.min(1000, this.heartbeatTimeoutMs / 2))

      const onMessage = (slot: Slot, m: FromWorker) => {
        if (!('jobId' in m)) return
        const entry = sent.get(m.jobId)
        if (!entry || entry.slot !== slot) return
        const outcome = outcomes[entry.k]
        switch (m.type) {
          case 'progress':
            hooks.onProgress?.(slot.index, m)
            break
          case 'model-done': {
            const model: PerModel = { ...m.model, worker: slot.index }
            outcome.models.push(model)
            hooks.onModelDone?.(model, m.artifact)
            break
          }
          case 'job-done':
            slot.rssBytes = Math.max(slot.rssBytes, m.rssBytes)
            if (m.device) outcome.device = m.device
            release(m.jobId)
            outcome.status = 'done'
            finishIfDone()
            break
          case 'cancelled':
            release(m.jobId)
            if (m.started !== false) outcome.status = 'cancelled'
            else {
              // it never started: back to the front of the queue while the run goes on, else not-run
              outcome.worker = null
              if (goingOn()) queue.unshift(entry.k)
            }
            finishIfDone()
            break
          case 'job-failed':
            outcome.failure = this.failure(slot, outcome, `training failed: ${m.message}`)
            hooks.onFailure?.(outcome.failure)
            if (policy === 'stop') stopped = true
            // the worker starts nothing it held behind a failed job (worker/loop.ts)
            takeBackQueued(slot)
            release(m.jobId)
            outcome.status = 'failed'
            // a worker alive after a failure takes the next job when the policy is 'continue'; one
            // whose memory is spent is replaced first
            if (m.outOfMemory === true && policy === 'continue' && goingOn()) replace(slot, outcome)
            if (policy === 'stop') stopAll()
            finishIfDone()
            break
        }
      }
      const onExit = (slot: Slot, exit: WorkerExit) => {
        const running = slot.jobs[0]
        if (running !== undefined) {
          const outcome = outcomes[sent.get(running)!.k]
          outcome.failure = this.failure(slot, outcome, slot.hung ? `${slot.hung} (${describeExit(exit)})` : describeExit(exit), exit)
          hooks.onFailure?.(outcome.failure)
          if (policy === 'stop' && !this.cancelling) stopped = true
          takeBackQueued(slot)
          release(running)
          outcome.status = this.cancelling ? 'cancelled' : 'failed'
          if (policy === 'stop' && !this.cancelling) stopAll()
        }
        finishIfDone()
      }
      const listeners = this.slots.map((slot) => ({ slot, onMessage: (m: FromWorker) => onMessage(slot, m), onExit: (e: WorkerExit) => onExit(slot, e) }))
      for (const { slot, onMessage, onExit } of listeners) {
        slot.listeners.add(onMessage)
        slot.exitListeners.add(onExit)
      }
      finishIfDone()
    })
  }

  private failure(slot: Slot, outcome: JobOutcome, reason: string, exit?: WorkerExit): WorkerFailure {
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

  /** Asks the jobs in flight to stop; workers that do not answer within the grace period are killed. */
  async cancel(): Promise<void> {
    this.cancelling = true
    // starting or warming up: no result to keep, and a worker busy generating data cannot read a
    // message, so stop the workers now (start()/warmup() then reject and the runner reports cancelled)
    if (this.preparing > 0) return this.shutdown(PREPARE_CANCEL_GRACE_MS)
    const busy = this.slots.filter((s) => s.alive && s.jobs.length > 0)
    await Promise.all(
      busy.map((s) => {
        // the running job and the one sent ahead: both answer (the second at once, never started)
        const ids = [...s.jobs]
        const ended = Promise.all(
          ids.map((jobId) =>
            this.waitFor(s, (m) => ((m.type === 'cancelled' || m.type === 'job-done' || m.type === 'job-failed') && m.jobId === jobId ? m : undefined), this.graceMs),
          ),
        )
        for (const jobId of ids) s.handle.send({ type: 'cancel', jobId })
        return ended.catch(() => s.handle.kill('SIGKILL'))
      }),
    )
  }

  /** Graceful shutdown; SIGKILL for any worker still alive after the grace period. Idempotent. */
  async shutdown(graceMs = this.graceMs): Promise<void> {
    await Promise.all(
      this.slots.map(async (s) => {
        if (!s.alive) return
        const exited = new Promise<void>((resolve) => s.exitListeners.add(() => resolve()))
        s.handle.send({ type: 'shutdown' })
        const timer = setTimeout(() => s.handle.kill('SIGKILL'), graceMs)
        await exited
        clearTimeout(timer)
      }),
    )
  }

  /** Tensor count and RSS of one worker (tests and leak checks). */
  memory(worker = 0): Promise<Extract<FromWorker, { type: 'memory' }>> {
    return this.request(this.slots[worker], { type: 'memory' }, (m) => (m.type === 'memory' ? m : undefined))
  }

  /**
   * Sends a request and waits for its answer. A worker that falls silent meanwhile (no heartbeat
   * or other message for prepareTimeoutMs, e.g. stuck in start-up or warm-up) is killed and the
   * request fails with that reason, so a run never waits forever.
   */
  private request<T>(slot: Slot, message: ToWorker, pick: (m: FromWorker) => T | undefined): Promise<T> {
    const limitMs = this.prepareTimeoutMs
    const reply = this.waitFor(slot, pick)
    slot.lastHeard = performance.now()
    slot.handle.send(message)
    const watchdog = setInterval(() => {
      const silentMs = performance.now() - slot.lastHeard
      if (slot.alive && silentMs > limitMs) {
        slot.hung = `no heartbeat for ${Math.round(silentMs / 1000)} s (timeout ${limitMs / 1000} s) during ${message.type}: killed as hung`
        slot.stderrTail += `\n[trainpool] ${slot.hung}`
        slot.handle.kill('SIGKILL')
      }
    }, Math.min(1000, limitMs / 2))
    return reply.finally(() => clearInterval(watchdog))
  }

  private waitFor<T>(slot: Slot, pick: (m: FromWorker) => T | undefined, timeoutMs?: number): Promise<T> {
    return new Promise((resolve, reject) => {
      if (!slot.alive) {
        reject(new Error(`worker ${slot.index} is not running (${describeExit(slot.exit)}): ${slot.stderrTail.slice(-500)}`))
        return
      }
      let timer: NodeJS.Timeout | undefined
      const cleanup = () => {
        slot.listeners.delete(onMessage)
        slot.exitListeners.delete(onExit)
        if (timer) clearTimeout(timer)
      }
      const onMessage = (m: FromWorker) => {
        const v = pick(m)
        if (v !== undefined) {
          cleanup()
          resolve(v)
        }
      }
      const onExit = (exit: WorkerExit) => {
        cleanup()
        const why = slot.hung ? `${slot.hung} (${describeExit(exit)})` : describeExit(exit)
        reject(new Error(`worker ${slot.index} exited (${why}): ${slot.stderrTail.slice(-500)}`))
      }
      slot.listeners.add(onMessage)
      slot.exitListeners.add(onExit)
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          cleanup()
          reject(new Error(`worker ${slot.index} did not answer within ${timeoutMs} ms`))
        }, timeoutMs)
      }
    })
  }
}

export function describeExit(exit: WorkerExit | null): string {
  if (!exit) return 'still running'
  if (exit.description) return exit.description
  if (exit.signal) return `worker process killed by ${exit.signal}`
  return `worker process exited with code ${exit.code}`
}
