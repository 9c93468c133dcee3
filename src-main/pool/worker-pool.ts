// WorkerPool: W pre-started, warmed workers over a WorkerLauncher — start-up, warm-up, runs of
// jobs (pool-run.ts: the FIFO queue, each worker's running job and one sent ahead, the failure
// policy), a worker whose memory is spent replaced before its next job, cancel (a graceful message,
// then SIGKILL after a grace period) and shutdown.
import type { BackendName, FromWorker, ToWorker, Workload } from '@shared/contract'
import { BackendUnavailableError } from '@shared/families'
import type { WorkerExit, WorkerHandle, WorkerLauncher } from './launcher'
import { workerEnv } from './launcher'
import { PoolRun, type PoolRunHost } from './pool-run'
import type { JobOutcome, JobSpec, PoolOptions, RunHooks, WorkerInfo } from './pool-types'
import { describeExit, STDERR_TAIL_CHARS, type Slot } from './worker-slot'

export type { JobOutcome, JobSpec, PoolOptions, ProgressMessage, RunHooks, WorkerInfo } from './pool-types'
export { describeExit } from './worker-slot'

/** cancel during start-up or warm-up: nothing to keep, and a worker generating data cannot read messages */
const PREPARE_CANCEL_GRACE_MS = 250

/** The pool's workers could not start their backend: the worker sends the reason alone, the shared error says the sentence. */
export class BackendInitError extends BackendUnavailableError {
  constructor(backend: BackendName, reason: string) {
    super(backend, reason)
    this.name = 'BackendInitError'
  }
}

export class WorkerPool implements PoolRunHost {
  readonly slots: Slot[] = []
  private info: WorkerInfo | null = null
  cancelling = false
  /** start() or warmup() in progress: their requests are not jobs and do not answer a cancel */
  private preparing = 0
  private readonly graceMs: number
  readonly heartbeatTimeoutMs: number
  private readonly prepareTimeoutMs: number
  private lastJobId = 0
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
  async restart(slot: Slot): Promise<boolean> {
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
   * Runs the jobs FIFO, each worker holding its running job and one sent ahead (PoolRun). Never
   * rejects: each job gets an outcome.
   */
  run(jobs: JobSpec[], hooks: RunHooks = {}): Promise<JobOutcome[]> {
    this.cancelling = false
    return new PoolRun(this, jobs, hooks, this.options.failurePolicy).start()
  }

  nextJobId(): number {
    return ++this.lastJobId
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
            this.waitFor(
              s,
              (m) => ((m.type === 'cancelled' || m.type === 'job-done' || m.type === 'job-failed') && m.jobId === jobId ? m : undefined),
              this.graceMs,
            ),
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
    const watchdog = setInterval(
      () => {
        const silentMs = performance.now() - slot.lastHeard
        if (slot.alive && silentMs > limitMs) {
          slot.hung = `no heartbeat for ${Math.round(silentMs / 1000)} s (timeout ${limitMs / 1000} s) during ${message.type}: killed as hung`
          slot.stderrTail += `\n[trainpool] ${slot.hung}`
          slot.handle.kill('SIGKILL')
        }
      },
      Math.min(1000, limitMs / 2),
    )
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
