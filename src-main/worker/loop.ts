// A worker's message loop, independent of how the process was started: one job at a time, the model
// family looked up by the workload's kind (it never reads a family's parameters), progress rate-limited
// before it crosses the process boundary, heartbeats, cancel, faults. Messages run in order through a
// handler per kind; a job sent ahead starts only if the one before it ended done, never once cancelled.
import {
  type ConcreteBackend,
  type FromWorker,
  PROGRESS_MIN_INTERVAL_MS,
  type ResumeState,
  subtractDeviceCounters,
  type ToWorker,
  type Workload,
} from '@shared/contract'
import type { AnyWorkerFamily, WorkerFamilyLookup } from '../engine/families'
import { BackendUnavailableError, CancelledError, type StartedRuntime } from '../engine/backend/types'

export interface WorkerChannel {
  post(message: FromWorker): void
  onMessage(listener: (message: ToWorker) => void): void
  /** fires when the parent goes away (Node: IPC disconnect), so an orphan exits on its own */
  onParentGone(listener: () => void): void
  /** ends the worker (the process, or an in-process stand-in's handle) */
  exit(code: number): void
}

export interface WorkerLoopOptions {
  families: WorkerFamilyLookup
  /** backend probe for the capabilities list */
  probe: () => Promise<Extract<FromWorker, { type: 'capabilities' }>['backends']>
  /** TRAINPOOL_TEST_FAULT (reliability tests only) */
  fault?: string
  /** TRAINPOOL_WORKER_MAX_MEMORY_MB, for out-of-memory messages */
  memoryCapMb?: string
  heartbeatMs?: number
}

const WASM_MAX_BYTES = 4294901760

type Queued = Exclude<ToWorker, { type: 'cancel' | 'shutdown' }>
type Handlers = { [K in Queued['type']]: (message: Extract<Queued, { type: K }>) => Promise<void> }
type JobMessage = Extract<ToWorker, { type: 'job' }>

export function serveWorker(channel: WorkerChannel, options: WorkerLoopOptions): void {
  new WorkerLoop(channel, options).listen()
}

/** The worker's state (its family, started backend, prepared data, jobs) and a handler per message kind. */
class WorkerLoop {
  private family: AnyWorkerFamily | null = null
  private backend: StartedRuntime | null = null
  private data: { key: string; value: unknown } | null = null
  private busy: Promise<void> = Promise.resolve()
  /** jobs asked to stop (a cancel may overtake the job it names) */
  private readonly cancelledJobs = new Set<number>()
  private currentJob: number | null = null
  /** the last job this worker took and whether it ended job-done (a job sent behind it starts only then) */
  private lastJob: { jobId: number; done: boolean } | null = null
  private readonly fault: ReturnType<typeof parseFault>
  private readonly heartbeat: NodeJS.Timeout

  private readonly handlers: Handlers = {
    init: (m) => this.init(m),
    probe: async () => this.post({ type: 'capabilities', backends: await this.options.probe() }),
    memory: async () =>
      this.post({ type: 'memory', ...(this.backend?.runtime.memory() ?? { numTensors: 0, numBytes: 0 }), rssBytes: process.memoryUsage.rss() }),
    warmup: (m) => this.warmUp(m),
    job: (m) => this.runJob(m),
  }

  constructor(
    private readonly channel: WorkerChannel,
    private readonly options: WorkerLoopOptions,
  ) {
    this.fault = parseFault(options.fault)
    this.heartbeat = setInterval(() => this.post({ type: 'heartbeat' }), options.heartbeatMs ?? 1000)
    this.heartbeat.unref?.()
  }

  listen(): void {
    this.channel.onParentGone(() => this.exit(0))
    this.channel.onMessage((message) => {
      // cancel and shutdown act now; everything else runs in order
      if (message.type === 'cancel') {
        this.cancelledJobs.add(message.jobId)
        return
      }
      if (message.type === 'shutdown') return this.exit(0)
      this.busy = this.busy
        .then(() => (this.handlers[message.type] as (m: Queued) => Promise<void>)(message))
        .catch((err) => this.post({ type: 'job-failed', jobId: this.currentJob ?? -1, ...this.failureOf(err) }))
    })
  }

  private post(message: FromWorker): void {
    this.channel.post(message)
  }

  private exit(code: number): void {
    clearInterval(this.heartbeat)
    this.backend?.runtime.release()
    this.channel.exit(code)
  }

  private maybeInjectFault(step: number): void {
    if (!this.fault || step !== this.fault.step) return
    process.stderr.write(`trainpool worker: injected fault ${this.fault.kind} at step ${step}\n`)
    if (this.fault.kind === 'exit') this.exit(70)
    for (;;) {
      /* hang: a stuck native call, as far as the pool can tell */
    }
  }

  private async init(message: Extract<ToWorker, { type: 'init' }>): Promise<void> {
    const started = performance.now()
    try {
      this.family = this.options.families(message.family) ?? null
      if (!this.family) throw new Error(`this worker has no model family ${JSON.stringify(message.family)}`)
      this.backend = await this.family.init(message.backend)
      const { backend, device, flags, versions } = this.backend.runtime
      // a name from the family's table (main checks it against the registry when the message arrives)
      const visibleDevices = process.env.CUDA_VISIBLE_DEVICES ?? null
      this.post({ type: 'ready', backend: backend as ConcreteBackend, device, flags, versions, initMs: performance.now() - started, visibleDevices })
    } catch (err) {
      this.post({ type: 'init-failed', backend: message.backend, reason: err instanceof BackendUnavailableError ? err.reason : this.failureOf(err).message })
    }
  }

  private async warmUp(message: Extract<ToWorker, { type: 'warmup' }>): Promise<void> {
    this.maybeInjectFault(0)
    const started = performance.now()
    const { fam, backend } = this.ready()
    await fam.warmUp(backend, this.ensureData(fam, backend, message.workload), message.workload, message.modelIndices)
    this.post({ type: 'warm', ms: performance.now() - started })
  }

  private async runJob(job: JobMessage): Promise<void> {
    const behindDone = job.after === undefined || (this.lastJob?.jobId === job.after && this.lastJob.done)
    if (this.cancelledJobs.has(job.jobId) || !behindDone) {
      this.cancelledJobs.delete(job.jobId)
      this.lastJob = { jobId: job.jobId, done: false }
      this.post({ type: 'cancelled', jobId: job.jobId, started: false })
      return
    }
    const taken = { jobId: job.jobId, done: false }
    this.lastJob = taken
    this.currentJob = job.jobId
    try {
      await this.train(job)
      taken.done = true
    } catch (err) {
      if (err instanceof CancelledError) this.post({ type: 'cancelled', jobId: job.jobId, started: true })
      else this.post({ type: 'job-failed', jobId: job.jobId, ...this.failureOf(err) })
    } finally {
      this.currentJob = null
      this.cancelledJobs.delete(job.jobId)
    }
  }

  /** Trains the job's models, forwarding progress (rate-limited) and each model, then job-done with the job's device work. */
  private async train(job: JobMessage): Promise<void> {
    const started = performance.now()
    const { fam, backend } = this.ready()
    const rt = backend.runtime
    const d = this.ensureData(fam, backend, job.workload)
    const deviceBefore = rt.deviceCounters?.()
    let lastProgress = 0
    let steps = 0
    await fam.train(
      backend,
      d,
      job.workload,
      job.modelIndices,
      { fused: job.fused, keep: job.keep === true, ...resumeOf(job) },
      {
        shouldStop: () => this.cancelledJobs.has(job.jobId),
        onProgress: (modelIndices, progress) => {
          this.maybeInjectFault(++steps)
          const now = performance.now()
          if (now - lastProgress < PROGRESS_MIN_INTERVAL_MS && progress.done < progress.total) return
          lastProgress = now
          this.post({ type: 'progress', jobId: job.jobId, modelIndices: [...modelIndices], progress })
        },
        onModelDone: ({ artifact, ...model }) => this.post({ type: 'model-done', jobId: job.jobId, model, ...(artifact ? { artifact } : {}) }),
      },
    )
    const device = deviceBefore && rt.deviceCounters ? { device: subtractDeviceCounters(rt.deviceCounters(), deviceBefore) } : {}
    // peak resident set size of this process so far (maxRSS is in KiB)
    this.post({ type: 'job-done', jobId: job.jobId, wallMs: performance.now() - started, rssBytes: process.resourceUsage().maxRSS * 1024, ...device })
  }

  private ready(): { fam: AnyWorkerFamily; backend: StartedRuntime } {
    if (!this.family || !this.backend) throw new Error('worker not initialised: send init first')
    return { fam: this.family, backend: this.backend }
  }

  /** Prepared data is kept while the workload's data key stays (a pool reuses it across repeats). */
  private ensureData(fam: AnyWorkerFamily, backend: StartedRuntime, workload: Workload): unknown {
    const key = fam.dataKey(workload)
    if (this.data?.key === key) return this.data.value
    if (this.data) fam.disposeData(backend, this.data.value)
    this.data = null
    this.data = { key, value: fam.prepare(backend, workload) }
    return this.data.value
  }

  /** The error's text, and whether it was the memory cap (said so, with what to do about it). */
  private failureOf(err: unknown): { message: string; outOfMemory: boolean } {
    const text = err instanceof Error ? `${err.message}` : String(err)
    const heap = this.backend?.runtime.heapBytes() ?? null
    const cap = this.options.memoryCapMb
    const limit = cap ? Number(cap) * 2 ** 20 : WASM_MAX_BYTES
    // a trap with the wasm heap close to its limit is an allocation that failed inside a kernel
    const oom =
      /out of memory|allocation failed|Invalid typed array length|Array buffer allocation|Maximum memory size/i.test(text) ||
      (/memory access out of bounds/.test(text) && heap !== null && heap > 0.75 * limit)
    if (!oom) return { message: text, outOfMemory: false }
    const why = cap ? `the worker memory cap is ${cap} MB (TRAINPOOL_WORKER_MAX_MEMORY_MB)` : 'the worker ran out of memory'
    return { message: `${text.startsWith('out of memory') ? text : `out of memory: ${text}`}; ${why}: use fewer rows or models per worker`, outOfMemory: true }
  }
}

/** A halving rung's job: each model's state from the earlier rungs by index (TrainOptions.resumeOf); nothing outside a rung. */
function resumeOf(job: JobMessage): { resumeOf?: (index: number) => ResumeState | null } {
  if (!job.resume) return {}
  const states = new Map(job.resume.map((r) => [r.index, r]))
  return { resumeOf: (index) => states.get(index) ?? null }
}

/**
 * Fault injection for the reliability tests only: "hang-at-step:N" blocks the event loop forever
 * (no heartbeats, no messages) at training step N of a job; "exit-at-step:N" exits with code 70
 * there; "hang-in-warmup" hangs at the start of the warm-up. Unset in normal use.
 */
function parseFault(text: string | undefined): { kind: 'hang' | 'exit'; step: number } | null {
  // "hang-in-warmup" is step 0: the warm-up, before any job
  if (text === 'hang-in-warmup') return { kind: 'hang', step: 0 }
  const m = /^(hang|exit)-at-step:(\d+)$/.exec(text ?? '')
  return m ? { kind: m[1] as 'hang' | 'exit', step: Number(m[2]) } : null
}
