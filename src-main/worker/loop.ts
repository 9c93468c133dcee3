// A worker's message loop, independent of how the process was started: one job at a time, the model
// family looked up by the workload's kind (it never reads a family's parameters), progress
// rate-limited before it crosses the process boundary (a step can take microseconds; the service
// coalesces what arrives from all workers again for the screen), heartbeats, cancel, faults.
// Messages run in order, so a job the pool sends ahead waits behind the running one; it starts
// only if that one ended done (after a failure or a cancel the pool decides again), and one
// cancelled while it waited never starts: both answer `cancelled`, started false, at once.
import { type ConcreteBackend, type FromWorker, PROGRESS_MIN_INTERVAL_MS, subtractDeviceCounters, type ToWorker, type Workload } from '@shared/contract'
import type { AnyWorkerFamily, WorkerFamilyLookup } from '../engine/families'
import { BackendUnavailableError, CancelledError, type WorkerRuntime } from '../engine/families/types'

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

export function serveWorker(channel: WorkerChannel, options: WorkerLoopOptions): void {
  const post = (m: FromWorker) => channel.post(m)
  const fault = parseFault(options.fault)
  let family: AnyWorkerFamily | null = null
  let runtime: WorkerRuntime | null = null
  let data: { key: string; value: unknown } | null = null
  let busy: Promise<void> = Promise.resolve()
  /** jobs asked to stop (a cancel may overtake the job it names) */
  const cancelledJobs = new Set<number>()
  let currentJob: number | null = null
  /** the last job this worker took and whether it ended job-done (a job sent behind it starts only then) */
  let lastJob: { jobId: number; done: boolean } | null = null

  const heartbeat = setInterval(() => post({ type: 'heartbeat' }), options.heartbeatMs ?? 1000)
  heartbeat.unref?.()

  const exit = (code: number) => {
    clearInterval(heartbeat)
    runtime?.release()
    channel.exit(code)
  }
  channel.onParentGone(() => exit(0))

  channel.onMessage((message) => {
    // cancel and shutdown act now; everything else runs in order
    if (message.type === 'cancel') {
      cancelledJobs.add(message.jobId)
      return
    }
    if (message.type === 'shutdown') return exit(0)
    busy = busy.then(() => handle(message)).catch((err) => {
      post({ type: 'job-failed', jobId: currentJob ?? -1, ...failureOf(err) })
    })
  })

  function maybeInjectFault(step: number): void {
    if (!fault || step !== fault.step) return
    process.stderr.write(`trainpool worker: injected fault ${fault.kind} at step ${step}\n`)
    if (fault.kind === 'exit') exit(70)
    for (;;) {
      /* hang: a stuck native call, as far as the pool can tell */
    }
  }

  async function handle(message: ToWorker): Promise<void> {
    switch (message.type) {
      case 'init': {
        const started = performance.now()
        try {
          family = options.families(message.family) ?? null
          if (!family) throw new Error(`this worker has no model family ${JSON.stringify(message.family)}`)
          runtime = await family.init(message.backend)
          const { device, flags, versions } = runtime
          // a name from the family's table (main checks it against the registry when the message arrives)
          const visibleDevices = process.env.CUDA_VISIBLE_DEVICES ?? null
          post({ type: 'ready', backend: runtime.backend as ConcreteBackend, device, flags, versions, initMs: performance.now() - started, visibleDevices })
        } catch (err) {
          post({ type: 'init-failed', backend: message.backend, reason: err instanceof BackendUnavailableError ? err.reason : failureOf(err).message })
        }
        return
      }
      case 'probe':
        post({ type: 'capabilities', backends: await options.probe() })
        return
      case 'memory': {
        const mem = runtime?.memory() ?? { numTensors: 0, numBytes: 0 }
        post({ type: 'memory', ...mem, rssBytes: process.memoryUsage.rss() })
        return
      }
      case 'warmup': {
        maybeInjectFault(0)
        const started = performance.now()
        const { fam, rt } = ready()
        await fam.warmUp(rt, ensureData(fam, rt, message.workload), message.workload, message.modelIndices)
        post({ type: 'warm', ms: performance.now() - started })
        return
      }
      case 'job':
        await runJob(message)
        return
    }
  }

  async function runJob(job: Extract<ToWorker, { type: 'job' }>): Promise<void> {
    const behindDone = job.after === undefined || (lastJob?.jobId === job.after && lastJob.done)
    if (cancelledJobs.has(job.jobId) || !behindDone) {
      cancelledJobs.delete(job.jobId)
      lastJob = { jobId: job.jobId, done: false }
      post({ type: 'cancelled', jobId: job.jobId, started: false })
      return
    }
    const taken = { jobId: job.jobId, done: false }
    lastJob = taken
    currentJob = job.jobId
    const started = performance.now()
    let lastProgress = 0
    let steps = 0
    try {
      const { fam, rt } = ready()
      const d = ensureData(fam, rt, job.workload)
      const deviceBefore = rt.deviceCounters?.()
      await fam.train(rt, d, job.workload, job.modelIndices, { fused: job.fused, keep: job.keep === true }, {
        shouldStop: () => cancelledJobs.has(job.jobId),
        onProgress: (modelIndices, progress) => {
          maybeInjectFault(++steps)
          const now = performance.now()
          if (now - lastProgress < PROGRESS_MIN_INTERVAL_MS && progress.done < progress.total) return
          lastProgress = now
          post({ type: 'progress', jobId: job.jobId, modelIndices: [...modelIndices], progress })
        },
        onModelDone: ({ artifact, ...model }) => post({ type: 'model-done', jobId: job.jobId, model, ...(artifact ? { artifact } : {}) }),
      })
      taken.done = true
      // peak resident set size of this process so far (maxRSS is in KiB)
      const device = deviceBefore && rt.deviceCounters ? { device: subtractDeviceCounters(rt.deviceCounters(), deviceBefore) } : {}
      post({ type: 'job-done', jobId: job.jobId, wallMs: performance.now() - started, rssBytes: process.resourceUsage().maxRSS * 1024, ...device })
    } catch (err) {
      if (err instanceof CancelledError) post({ type: 'cancelled', jobId: job.jobId, started: true })
      else post({ type: 'job-failed', jobId: job.jobId, ...failureOf(err) })
    } finally {
      currentJob = null
      cancelledJobs.delete(job.jobId)
    }
  }

  function ready(): { fam: AnyWorkerFamily; rt: WorkerRuntime } {
    if (!family || !runtime) throw new Error('worker not initialised: send init first')
    return { fam: family, rt: runtime }
  }

  /** Prepared data is kept while the workload's data key stays (a pool reuses it across repeats). */
  function ensureData(fam: AnyWorkerFamily, rt: WorkerRuntime, workload: Workload): unknown {
    const key = fam.dataKey(workload)
    if (data?.key === key) return data.value
    if (data) fam.disposeData(rt, data.value)
    data = null
    data = { key, value: fam.prepare(rt, workload) }
    return data.value
  }

  /** The error's text, and whether it was the memory cap (said so, with what to do about it). */
  function failureOf(err: unknown): { message: string; outOfMemory: boolean } {
    const text = err instanceof Error ? `${err.message}` : String(err)
    const heap = runtime?.heapBytes() ?? null
    const cap = options.memoryCapMb
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
