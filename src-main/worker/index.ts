// Worker process entry (Electron utility process and Node child_process alike): a message loop
// around engine/. One job at a time; progress throttled here so it costs nothing measurable.
import type { FromWorker, ToWorker, Workload } from '@shared/contract'
import { probeBackends, releaseWebgpu, selectBackend } from '../engine/backends'
import { CancelledError, dataKey, disposeData, trainModels, uploadData, warmUp, type DataTensors } from '../engine/trainer'
import { connectToParent } from './transport'

type Tf = typeof import('@tensorflow/tfjs-core')

const PROGRESS_INTERVAL_MS = 50

/**
 * Fault injection for the reliability tests only: TRAINPOOL_TEST_FAULT="hang-at-step:N" blocks the
 * event loop forever (no heartbeats, no messages) at training step N of a job; "exit-at-step:N"
 * exits with code 70 there; "hang-in-warmup" hangs at the start of the warm-up. Unset in normal use.
 */
const injectedFault = parseFault(process.env.TRAINPOOL_TEST_FAULT)

function parseFault(text: string | undefined): { kind: 'hang' | 'exit'; step: number } | null {
  // "hang-in-warmup" is step 0: the warm-up, before any job
  if (text === 'hang-in-warmup') return { kind: 'hang', step: 0 }
  const m = /^(hang|exit)-at-step:(\d+)$/.exec(text ?? '')
  return m ? { kind: m[1] as 'hang' | 'exit', step: Number(m[2]) } : null
}

function maybeInjectFault(step: number): void {
  if (!injectedFault || step !== injectedFault.step) return
  process.stderr.write(`trainpool worker: injected fault ${injectedFault.kind} at step ${step}\n`)
  if (injectedFault.kind === 'exit') process.exit(70)
  for (;;) {
    /* hang: a stuck native call, as far as the pool can tell */
  }
}
const HEARTBEAT_INTERVAL_MS = 1000

const parent = connectToParent()
const post = (m: FromWorker) => parent.post(m)

let tf: Tf | null = null
let data: DataTensors | null = null
let busy: Promise<void> = Promise.resolve()
/** jobs asked to stop (a cancel may overtake the job it names) */
const cancelledJobs = new Set<number>()
let currentJob: number | null = null

function exit(code: number): never {
  releaseWebgpu()
  process.exit(code)
}

parent.onParentGone(() => exit(0))
setInterval(() => post({ type: 'heartbeat' }), HEARTBEAT_INTERVAL_MS).unref()

parent.onMessage((message) => {
  // cancel and shutdown act now; everything else runs in order
  if (message.type === 'cancel') {
    cancelledJobs.add(message.jobId)
    return
  }
  if (message.type === 'shutdown') exit(0)
  busy = busy.then(() => handle(message)).catch((err) => {
    post({ type: 'job-failed', jobId: currentJob ?? -1, message: errorText(err) })
  })
})

async function handle(message: ToWorker): Promise<void> {
  switch (message.type) {
    case 'init': {
      const started = performance.now()
      try {
        const result = await selectBackend(message.backend)
        tf = result.tf
        const { backend, device, flags, versions } = result.selected
        post({ type: 'ready', backend, device, flags, versions, initMs: performance.now() - started })
      } catch (err) {
        post({ type: 'init-failed', backend: message.backend, reason: errorText(err) })
      }
      return
    }
    case 'probe':
      post({ type: 'capabilities', backends: await probeBackends() })
      return
    case 'memory': {
      const mem = tf?.memory()
      post({ type: 'memory', numTensors: mem?.numTensors ?? 0, numBytes: mem?.numBytes ?? 0, rssBytes: process.memoryUsage.rss() })
      return
    }
    case 'warmup': {
      maybeInjectFault(0)
      const started = performance.now()
      const engine = requireTf()
      const d = ensureData(engine, message.workload)
      await warmUp(engine, d, message.workload, message.modelIndices)
      post({ type: 'warm', ms: performance.now() - started })
      return
    }
    case 'job':
      await runJob(message)
      return
  }
}

async function runJob(job: Extract<ToWorker, { type: 'job' }>): Promise<void> {
  const engine = requireTf()
  currentJob = job.jobId
  const started = performance.now()
  let lastProgress = 0
  let steps = 0
  try {
    const d = ensureData(engine, job.workload)
    await trainModels(engine, d, job.workload, job.modelIndices, job.fused, {
      shouldStop: () => cancelledJobs.has(job.jobId),
      onProgress: (p) => {
        maybeInjectFault(++steps)
        const now = performance.now()
        const lastStep = p.batch === p.batchesPerEpoch && p.epoch === p.epochs - 1
        if (now - lastProgress < PROGRESS_INTERVAL_MS && !lastStep) return
        lastProgress = now
        post({ type: 'progress', jobId: job.jobId, ...p })
      },
      onModelDone: (model) => post({ type: 'model-done', jobId: job.jobId, model }),
    })
    // peak resident set size of this process so far (maxRSS is in KiB)
    post({ type: 'job-done', jobId: job.jobId, wallMs: performance.now() - started, rssBytes: process.resourceUsage().maxRSS * 1024 })
  } catch (err) {
    if (err instanceof CancelledError) post({ type: 'cancelled', jobId: job.jobId })
    else post({ type: 'job-failed', jobId: job.jobId, message: errorText(err) })
  } finally {
    currentJob = null
    cancelledJobs.delete(job.jobId)
  }
}

function requireTf(): Tf {
  if (!tf) throw new Error('worker not initialised: send init first')
  return tf
}

/** The data set is generated once per worker from the seed and kept while the shape stays. */
function ensureData(engine: Tf, workload: Workload): DataTensors {
  const key = dataKey(workload)
  if (data?.key === key) return data
  if (data) disposeData(data)
  data = uploadData(engine, workload)
  return data
}

const MEMORY_CAP_MB = process.env.TRAINPOOL_WORKER_MAX_MEMORY_MB
const WASM_MAX_BYTES = 4294901760

/** the wasm backend's heap (null on other backends) */
function wasmHeapBytes(engine: Tf | null): number | null {
  const heap = (engine?.backend() as unknown as { wasm?: { HEAPU8?: Uint8Array } } | undefined)?.wasm?.HEAPU8
  return heap ? heap.byteLength : null
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.message}` : String(err)
  const heap = wasmHeapBytes(tf)
  const limit = MEMORY_CAP_MB ? Number(MEMORY_CAP_MB) * 2 ** 20 : WASM_MAX_BYTES
  // a trap with the wasm heap close to its limit is an allocation that failed inside a kernel
  const oom =
    /out of memory|allocation failed|Invalid typed array length|Array buffer allocation|Maximum memory size/i.test(text) ||
    (/memory access out of bounds/.test(text) && heap !== null && heap > 0.75 * limit)
  if (!oom) return text
  const cap = MEMORY_CAP_MB ? `the worker memory cap is ${MEMORY_CAP_MB} MB (TRAINPOOL_WORKER_MAX_MEMORY_MB)` : 'the worker ran out of memory'
  return `${text.startsWith('out of memory') ? text : `out of memory: ${text}`}; ${cap}: use fewer rows or models per worker`
}
