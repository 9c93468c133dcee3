// WorkerPool.run() over a scripted fake launcher (no processes): which worker takes which job after
// a job fails while its worker stays alive, and that run() and cancel() always come back. Then the
// job each worker holds next (sent ahead), over the real worker loop in-process (InProcessLauncher)
// with a scripted family: it arrives while the worker's running job trains, FIFO, one outcome per
// job, and what becomes of it when the running job is cancelled, fails, runs out of memory or its
// worker dies.
import { afterEach, describe, expect, it } from 'vitest'
import type { FromWorker, ToWorker, Workload } from '@shared/contract'
import type { WorkerFamilyLookup } from '../engine/families'
import { CancelledError, type TrainHooks } from '../engine/backend/types'
import { waitUntil } from '../testing/capability'
import { InProcessLauncher } from '../testing/in-process-launcher'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from './launcher'
import { type JobOutcome, type JobSpec, WorkerPool } from './worker-pool'

type JobMessage = Extract<ToWorker, { type: 'job' }>
/**
 * what a fake worker does with a job: finish it, fail it (the worker stays alive), run out of
 * memory (it stays alive, its heap spent: every later job fails too, as a wasm worker's does), or
 * say nothing until cancelled
 */
type Behaviour = 'done' | 'fail' | 'oom' | 'hang'

/**
 * A worker that answers over a fake IPC channel, asynchronously like the real one, and like the real
 * loop (worker/loop.ts) takes its jobs one at a time in the order they came: a job sent ahead waits
 * behind the running one, starts only if that one ended done, and never starts once cancelled.
 */
class FakeWorker implements WorkerHandle {
  readonly pid: number
  /** the jobs this worker started (trained), in order */
  readonly jobs: number[][] = []
  private messageListeners: Array<(m: FromWorker) => void> = []
  private exitListeners: Array<(e: WorkerExit) => void> = []
  private alive = true
  private hanging: number | null = null
  private heapSpent = false
  private waiting: JobMessage[] = []
  private cancelled = new Set<number>()
  private last: { jobId: number; done: boolean } | null = null

  constructor(
    readonly index: number,
    private readonly behaviour: (job: JobMessage, worker: number) => Behaviour,
  ) {
    this.pid = 10_000 + index
  }

  send(message: ToWorker): void {
    if (!this.alive) return
    setImmediate(() => this.handle(message))
  }

  private handle(m: ToWorker): void {
    if (!this.alive) return
    switch (m.type) {
      case 'init':
        return this.post({ type: 'ready', backend: 'cpu', device: 'fake', flags: {}, versions: {}, initMs: 0 })
      case 'job':
        this.waiting.push(m)
        return this.next()
      case 'cancel':
        if (this.hanging === m.jobId) {
          this.hanging = null
          this.post({ type: 'cancelled', jobId: m.jobId, started: true })
          return this.next()
        }
        this.cancelled.add(m.jobId)
        return
      case 'shutdown':
        return this.exit({ code: 0, signal: null })
      default:
        return
    }
  }

  /** runs the waiting jobs in order until one hangs */
  private next(): void {
    while (this.alive && this.hanging === null && this.waiting.length > 0) this.run(this.waiting.shift()!)
  }

  private run(m: JobMessage): void {
    const behindDone = m.after === undefined || (this.last?.jobId === m.after && this.last.done)
    this.last = { jobId: m.jobId, done: false }
    if (this.cancelled.has(m.jobId) || !behindDone) return this.post({ type: 'cancelled', jobId: m.jobId, started: false })
    this.jobs.push(m.modelIndices)
    const what = this.heapSpent ? 'oom' : this.behaviour(m, this.index)
    if (what === 'hang') {
      this.hanging = m.jobId
      return
    }
    if (what === 'fail') return this.post({ type: 'job-failed', jobId: m.jobId, message: 'out of memory: fake; use fewer rows or models per worker' })
    if (what === 'oom') {
      this.heapSpent = true
      return this.post({ type: 'job-failed', jobId: m.jobId, message: FAKE_OOM, outOfMemory: true })
    }
    for (const index of m.modelIndices) {
      this.post({ type: 'model-done', jobId: m.jobId, model: { index, seed: index, trainMs: 1, testMse: 0.5, finalLoss: 0.5 } as never })
    }
    this.last.done = true
    this.post({ type: 'job-done', jobId: m.jobId, wallMs: 1, rssBytes: 1 })
  }

  private post(m: FromWorker): void {
    for (const l of [...this.messageListeners]) l(m)
  }

  get isAlive(): boolean {
    return this.alive
  }

  exit(e: WorkerExit): void {
    if (!this.alive) return
    this.alive = false
    for (const l of [...this.exitListeners]) l(e)
  }

  onMessage(listener: (message: FromWorker) => void): void {
    this.messageListeners.push(listener)
  }
  onStderr(): void {}
  onExit(listener: (exit: WorkerExit) => void): void {
    this.exitListeners.push(listener)
  }
  kill(signal: 'SIGTERM' | 'SIGKILL'): void {
    setImmediate(() => this.exit({ code: null, signal }))
  }
}

class FakeLauncher implements WorkerLauncher {
  readonly kind = 'node' as const
  readonly workers: FakeWorker[] = []
  constructor(private readonly behaviour: (job: JobMessage, worker: number) => Behaviour) {}
  launch(options: LaunchOptions): WorkerHandle {
    const w = new FakeWorker(options.workerIndex, this.behaviour)
    this.workers.push(w)
    return w
  }
}

const workload = { rows: 100 } as unknown as Workload
const FAKE_OOM =
  'out of memory: Maximum memory size exceeded; the worker memory cap is 32 MB (TRAINPOOL_WORKER_MAX_MEMORY_MB): use fewer rows or models per worker'
const jobsFor = (n: number): JobSpec[] => Array.from({ length: n }, (_, i) => ({ workload, modelIndices: [i], fused: false }))

/** rejects instead of hanging the test when the pool never answers */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms`)), ms))])
}

async function startPool(size: number, failurePolicy: 'stop' | 'continue', behaviour: (job: JobMessage, worker: number) => Behaviour) {
  const launcher = new FakeLauncher(behaviour)
  const pool = new WorkerPool(launcher, { family: 'mlp', size, backend: 'cpu', failurePolicy, graceMs: 100, heartbeatTimeoutMs: 60_000 })
  await pool.start()
  return { pool, launcher }
}

const statuses = (outcomes: JobOutcome[]) => outcomes.map((o) => o.status)
/** job k fails when its first model index is in `failing` */
const failFor =
  (...failing: number[]) =>
  (job: JobMessage): Behaviour =>
    failing.includes(job.modelIndices[0]) ? 'fail' : 'done'

describe('WorkerPool.run: a job fails and its worker stays alive', () => {
  it('W=1, policy continue: the worker takes the next job and run() resolves', async () => {
    const { pool, launcher } = await startPool(1, 'continue', failFor(0))
    const outcomes = await within(pool.run(jobsFor(3)), 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'done', 'done'])
    expect(outcomes[0].failure).toMatchObject({ worker: 0, modelIndices: [0], reason: expect.stringMatching(/training failed: out of memory/) })
    expect(outcomes.map((o) => o.worker)).toEqual([0, 0, 0])
    expect(launcher.workers[0].jobs).toEqual([[0], [1], [2]])
    expect(outcomes.flatMap((o) => o.models.map((m) => m.index))).toEqual([1, 2])
    await pool.shutdown()
  })

  it('W=2, policy continue: both workers fail their first job, both go on with the queue', async () => {
    const { pool, launcher } = await startPool(2, 'continue', failFor(0, 1))
    const outcomes = await within(pool.run(jobsFor(6)), 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'failed', 'done', 'done', 'done', 'done'])
    // each worker took more than the job it failed
    for (const w of launcher.workers) expect(w.jobs.length).toBeGreaterThan(1)
    expect(
      launcher.workers
        .flatMap((w) => w.jobs)
        .flat()
        .sort(),
    ).toEqual([0, 1, 2, 3, 4, 5])
    await pool.shutdown()
  })

  it('policy continue: every job failing still ends the run, each job failed once', async () => {
    const { pool, launcher } = await startPool(2, 'continue', () => 'fail')
    const outcomes = await within(pool.run(jobsFor(5)), 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed'])
    expect(outcomes.every((o) => o.failure !== null)).toBe(true)
    expect(launcher.workers.flatMap((w) => w.jobs)).toHaveLength(5)
    await pool.shutdown()
  })

  it('policy stop: no further job is dispatched, the rest is not-run, run() resolves', async () => {
    const { pool, launcher } = await startPool(1, 'stop', failFor(0))
    const outcomes = await within(pool.run(jobsFor(3)), 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'not-run', 'not-run'])
    expect(launcher.workers[0].jobs).toEqual([[0]])
    await pool.shutdown()
  })

  it('policy stop, W=2: the other worker is asked to stop and nothing new starts', async () => {
    const { pool, launcher } = await startPool(2, 'stop', (job, worker) => (worker === 0 ? 'fail' : job.modelIndices[0] === 1 ? 'hang' : 'done'))
    const outcomes = await within(pool.run(jobsFor(4)), 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'cancelled', 'not-run', 'not-run'])
    expect(launcher.workers.map((w) => w.jobs)).toEqual([[[0]], [[1]]])
    await pool.shutdown()
  })

  it('policy continue: cancel() after a failure returns, and so does run()', async () => {
    // job 0 fails, job 1 runs until cancelled
    const { pool } = await startPool(1, 'continue', (job) => (job.modelIndices[0] === 0 ? 'fail' : 'hang'))
    let failures = 0
    let result: JobOutcome[] | null = null
    const running = pool.run(jobsFor(3), { onFailure: () => failures++ })
    void running.then((o) => (result = o))
    await within(
      new Promise<void>((resolve) => {
        const poll = setInterval(() => failures > 0 && (clearInterval(poll), resolve()), 5)
      }),
      2000,
      'the first failure',
    )
    await new Promise((r) => setTimeout(r, 20))
    await within(pool.cancel(), 2000, 'cancel()')
    await within(running, 500, 'run() after cancel()')
    expect(result).not.toBeNull()
    expect(statuses(result!)).toEqual(['failed', 'cancelled', 'not-run'])
    await pool.shutdown()
  })

  it('policy continue: a worker that dies is not given more jobs; the survivor finishes the queue', async () => {
    const launcher = new FakeLauncher((job, worker) => (worker === 0 && job.modelIndices[0] === 0 ? 'hang' : 'done'))
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 2, backend: 'cpu', failurePolicy: 'continue', graceMs: 100 })
    await pool.start()
    const running = pool.run(jobsFor(4), {
      onDispatch: (worker, job) => {
        if (worker === 0 && job.modelIndices[0] === 0) setTimeout(() => launcher.workers[0].exit({ code: null, signal: 'SIGKILL' }), 5)
      },
    })
    const outcomes = await within(running, 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'done', 'done', 'done'])
    expect(outcomes[0].failure).toMatchObject({ signal: 'SIGKILL' })
    expect(outcomes.slice(1).map((o) => o.worker)).toEqual([1, 1, 1])
    await pool.shutdown()
  })
})

describe('WorkerPool.run: a worker runs out of memory', () => {
  const oomFor =
    (...failing: number[]) =>
    (job: JobMessage): Behaviour =>
      failing.includes(job.modelIndices[0]) ? 'oom' : 'done'

  it('policy continue, W=1: the spent worker is replaced before the next job, and the run is told', async () => {
    const { pool, launcher } = await startPool(1, 'continue', oomFor(0))
    const restarts: Array<{ worker: number; reason: string }> = []
    const outcomes = await within(pool.run(jobsFor(3), { onWorkerRestart: (worker, reason) => restarts.push({ worker, reason }) }), 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'done', 'done'])
    expect(outcomes[0].failure).toMatchObject({ worker: 0, modelIndices: [0], reason: expect.stringMatching(/training failed: out of memory/) })
    expect(launcher.workers).toHaveLength(2)
    expect(launcher.workers.map((w) => w.jobs)).toEqual([[[0]], [[1], [2]]])
    expect(outcomes.map((o) => o.worker)).toEqual([0, 0, 0])
    expect(restarts).toEqual([
      { worker: 0, reason: expect.stringMatching(/^worker 0 ran out of memory \(.*memory cap is 32 MB.*\) and was restarted before its next job$/) },
    ])
    await pool.shutdown()
    expect(launcher.workers.every((w) => !w.isAlive)).toBe(true)
  })

  it('policy continue, W=2: only the spent worker is replaced; a later repeat runs on the new one', async () => {
    let once = true
    const { pool, launcher } = await startPool(2, 'continue', (job, worker) =>
      worker === 1 && job.modelIndices[0] === 1 && once ? ((once = false), 'oom') : 'done',
    )
    const first = await within(pool.run(jobsFor(4)), 2000, 'run()')
    expect(statuses(first)).toEqual(['done', 'failed', 'done', 'done'])
    expect(launcher.workers.map((w) => w.index)).toEqual([0, 1, 1])
    const second = await within(pool.run(jobsFor(4)), 2000, 'the second run()')
    expect(statuses(second)).toEqual(['done', 'done', 'done', 'done'])
    await pool.shutdown()
  })

  it('a failure that is not out of memory keeps the worker', async () => {
    const { pool, launcher } = await startPool(1, 'continue', failFor(0))
    const restarts: number[] = []
    await within(pool.run(jobsFor(2), { onWorkerRestart: (w) => restarts.push(w) }), 2000, 'run()')
    expect(launcher.workers).toHaveLength(1)
    expect(restarts).toEqual([])
    await pool.shutdown()
  })

  it('policy stop: nothing is restarted (the run ends)', async () => {
    const { pool, launcher } = await startPool(1, 'stop', oomFor(0))
    const outcomes = await within(pool.run(jobsFor(2)), 2000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'not-run'])
    expect(launcher.workers).toHaveLength(1)
    await pool.shutdown()
  })
})

/** what happened, in order: a worker's loop received a job, a job began or ended training, the pool said a job started */
type Event =
  { what: 'received'; worker: number; index: number } | { what: 'train' | 'trained'; index: number } | { what: 'onStart'; worker: number; index: number }

/**
 * A family whose jobs (one model each, by index) train for `ms` (default 20), until cancelled
 * (`hangs`), or throw (`fails`: a plain error, or a wasm worker's out of memory, after which every job
 * on that worker fails the same way). Every job ends once `release()` is called (the end of a test:
 * a killed in-process worker's loop would otherwise go on waiting).
 */
function scripted(script: { ms?: (i: number) => number; hangs?: (i: number) => boolean; fails?: (i: number) => 'error' | 'oom' | null } = {}) {
  const events: Event[] = []
  let released = false
  const family = {
    kind: 'scripted',
    init: async () => ({
      runtime: {
        backend: 'cpu',
        hardware: false,
        device: 'test',
        flags: {},
        versions: {},
        memory: () => ({ numTensors: 0, numBytes: 0 }),
        heapBytes: () => null,
        release: () => {},
      },
      spent: false,
    }),
    dataKey: () => 'data',
    prepare: () => null,
    disposeData: () => {},
    warmUp: async () => {},
    async train(rt: { spent: boolean }, _data: unknown, _w: Workload, indices: readonly number[], _options: unknown, hooks: TrainHooks) {
      const index = indices[0]
      events.push({ what: 'train', index })
      try {
        const fails = rt.spent ? 'oom' : script.fails?.(index)
        if (fails === 'oom') {
          rt.spent = true
          throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded')
        }
        if (fails === 'error') throw new Error(`scripted failure of job ${index}`)
        const until = performance.now() + (script.ms?.(index) ?? 20)
        while (!released && (performance.now() < until || script.hangs?.(index))) {
          if (hooks.shouldStop()) throw new CancelledError()
          await new Promise((r) => setTimeout(r, 2))
        }
        hooks.onModelDone({ index, seed: index, trainMs: 1, groupTrainMs: null, testMse: 0.5, finalLoss: null })
      } finally {
        events.push({ what: 'trained', index })
      }
    },
  }
  const lookup: WorkerFamilyLookup = (kind) => (kind === 'scripted' ? (family as never) : undefined)
  const launcher = new InProcessLauncher(lookup, {
    onReceive: (worker, m) => {
      if (m.type === 'job') events.push({ what: 'received', worker, index: m.modelIndices[0] })
    },
  })
  return { events, launcher, release: () => (released = true) }
}

const scriptedWorkload = { size: 100, features: 2, seed: 1, target: 'linear', testSplit: 0.2, model: { kind: 'scripted' } } as unknown as Workload
const scriptedJobs = (n: number): JobSpec[] => Array.from({ length: n }, (_, i) => ({ workload: scriptedWorkload, modelIndices: [i], fused: false }))

describe('WorkerPool.run: each worker holds one job sent ahead (the real worker loop, in-process)', () => {
  const ends: Array<() => void> = []
  afterEach(async () => {
    for (const end of ends.splice(0)) end()
  })

  async function startScripted(size: number, failurePolicy: 'stop' | 'continue', script: Parameters<typeof scripted>[0] = {}, heartbeatTimeoutMs = 60_000) {
    const s = scripted(script)
    const pool = new WorkerPool(s.launcher, { family: 'scripted', size, backend: 'cpu', failurePolicy, graceMs: 500, heartbeatTimeoutMs })
    await pool.start()
    ends.push(() => {
      s.release()
      void pool.shutdown()
    })
    return { pool, ...s }
  }
  const trainedOnce = (events: Event[]) => {
    const counts = new Map<number, number>()
    for (const e of events) if (e.what === 'train') counts.set(e.index, (counts.get(e.index) ?? 0) + 1)
    return counts
  }
  /** the jobs training (begun, not ended) at position p of the events, by index */
  const trainingAt = (events: Event[], p: number) => {
    const open = new Set<number>()
    for (const e of events.slice(0, p)) {
      if (e.what === 'train') open.add(e.index)
      if (e.what === 'trained') open.delete(e.index)
    }
    return open
  }

  it('a worker receives its next job while its running job trains', async () => {
    const { pool, events } = await startScripted(2, 'stop')
    const outcomes = await within(pool.run(scriptedJobs(6)), 5000, 'run()')
    expect(statuses(outcomes)).toEqual(new Array(6).fill('done'))
    for (const worker of [0, 1]) {
      // a job of this worker's arrived while another job of this worker was training
      const early = events.flatMap((e, p) =>
        e.what === 'received' && e.worker === worker
          ? [...trainingAt(events, p)].filter((i) => i !== e.index && outcomes[i].worker === worker).map((i) => [e.index, i])
          : [],
      )
      expect(early.length, `worker ${worker}: ${JSON.stringify(events)}`).toBeGreaterThan(0)
    }
  })

  it('FIFO: jobs are sent in order, each trains once and gets one outcome; onStart names the job its worker runs', async () => {
    const { pool, events } = await startScripted(2, 'stop', { ms: (i) => 5 + ((i * 7) % 5) * 6 })
    const sent: number[] = []
    const modelsDone: number[] = []
    const outcomes = await within(
      pool.run(scriptedJobs(12), {
        onDispatch: (_w, job) => sent.push(job.modelIndices[0]),
        onStart: (worker, job) => events.push({ what: 'onStart', worker, index: job.modelIndices[0] }),
        onModelDone: (m) => modelsDone.push(m.index),
      }),
      5000,
      'run()',
    )
    const all = Array.from({ length: 12 }, (_, i) => i)
    expect(sent).toEqual(all)
    expect(statuses(outcomes)).toEqual(all.map(() => 'done'))
    expect(outcomes.map((o) => o.models.map((m) => m.index))).toEqual(all.map((i) => [i]))
    expect(outcomes.every((o) => o.models[0].worker === o.worker)).toBe(true)
    expect([...modelsDone].sort((a, b) => a - b)).toEqual(all)
    expect([...trainedOnce(events)].sort((a, b) => a[0] - b[0])).toEqual(all.map((i) => [i, 1]))
    // each worker trained its jobs in the order they were sent
    for (const worker of [0, 1]) {
      const order = events.flatMap((e) => (e.what === 'train' && outcomes[e.index].worker === worker ? [e.index] : []))
      expect(order).toEqual([...order].sort((a, b) => a - b))
    }
    // every job was announced as started once, on its worker, and never while another job of that worker trained
    const starts = events.flatMap((e, p) => (e.what === 'onStart' ? [{ ...e, p }] : []))
    expect(starts.map((e) => e.index).sort((a, b) => a - b)).toEqual(all)
    for (const e of starts) {
      expect(e.worker).toBe(outcomes[e.index].worker)
      const others = [...trainingAt(events, e.p)].filter((i) => i !== e.index && outcomes[i].worker === e.worker)
      expect(others, `onStart(${e.worker}, job ${e.index})`).toEqual([])
    }
  })

  it('cancel with a job sent ahead on each worker: both answer, the held ones never train, nothing is left running', async () => {
    // jobs 0–5 train until cancelled; 10 and 11 (the next run's) do not
    const { pool, events } = await startScripted(2, 'continue', { hangs: (i) => i < 10 })
    const running = pool.run(scriptedJobs(6))
    // each worker trains one job and holds the next
    expect(await waitUntil(() => events.filter((e) => e.what === 'received').length === 4 && events.filter((e) => e.what === 'train').length === 2, 3000)).toBe(
      true,
    )
    await within(pool.cancel(), 2000, 'cancel()')
    const outcomes = await within(running, 1000, 'run() after cancel()')
    expect(statuses(outcomes)).toEqual(['cancelled', 'cancelled', 'not-run', 'not-run', 'not-run', 'not-run'])
    expect(outcomes.map((o) => o.worker)).toEqual([0, 1, null, null, null, null])
    expect(outcomes.every((o) => o.failure === null)).toBe(true)
    expect([...trainedOnce(events).keys()].sort()).toEqual([0, 1])
    expect(trainingAt(events, events.length)).toEqual(new Set())
    // the workers were not killed (they answered) and hold nothing: the next run uses them at once
    const again = await within(pool.run(scriptedJobs(2).map((j) => ({ ...j, modelIndices: [10 + j.modelIndices[0]] }))), 2000, 'the next run()')
    expect(statuses(again)).toEqual(['done', 'done'])
    expect(again.map((o) => o.models.map((m) => m.index))).toEqual([[10], [11]])
  })

  /** kills worker 0 once it trains job 0 and holds job 2 */
  async function killWorker0(pool: WorkerPool, launcher: InProcessLauncher, events: Event[]) {
    void launcher
    expect(
      await waitUntil(
        () => events.some((e) => e.what === 'train' && e.index === 0) && events.some((e) => e.what === 'received' && e.worker === 0 && e.index === 2),
        3000,
      ),
    ).toBe(true)
    killed.get(pool)!('SIGKILL')
  }
  const killed = new WeakMap<WorkerPool, (signal: 'SIGKILL') => void>()
  async function startKillable(failurePolicy: 'stop' | 'continue', script: Parameters<typeof scripted>[0]) {
    const s = scripted(script)
    // the handle of worker 0's process, so the test can kill it as an OS would
    const handles: WorkerHandle[] = []
    const launcher: WorkerLauncher = {
      kind: 'node',
      launch: (o) => {
        const h = s.launcher.launch(o)
        handles[o.workerIndex] = h
        return h
      },
    }
    const pool = new WorkerPool(launcher, { family: 'scripted', size: 2, backend: 'cpu', failurePolicy, graceMs: 500, heartbeatTimeoutMs: 60_000 })
    await pool.start()
    killed.set(pool, (signal) => handles[0].kill(signal))
    ends.push(() => {
      s.release()
      void pool.shutdown()
    })
    return { pool, ...s }
  }

  it('a worker dies mid-job holding the next, policy continue: that job trains on the other worker', async () => {
    const { pool, launcher, events } = await startKillable('continue', { hangs: (i) => i === 0 })
    const failures: unknown[] = []
    const running = pool.run(scriptedJobs(6), { onFailure: (f) => failures.push(f) })
    await killWorker0(pool, launcher, events)
    const outcomes = await within(running, 3000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'done', 'done', 'done', 'done', 'done'])
    expect(outcomes[0].failure).toMatchObject({ worker: 0, modelIndices: [0], signal: 'SIGKILL' })
    // the job held by the dead worker never started there: no failure of its own, trained once, on worker 1
    expect(failures).toHaveLength(1)
    expect(outcomes[2]).toMatchObject({ status: 'done', worker: 1, failure: null })
    expect(outcomes[2].models.map((m) => [m.index, m.worker])).toEqual([[2, 1]])
    expect(trainedOnce(events).get(2)).toBe(1)
    expect(outcomes.slice(1).map((o) => o.worker)).toEqual([1, 1, 1, 1, 1])
  })

  it('a worker dies mid-job holding the next, policy stop: that job is not-run, never started', async () => {
    const { pool, launcher, events } = await startKillable('stop', { hangs: () => true })
    const running = pool.run(scriptedJobs(4))
    expect(await waitUntil(() => events.some((e) => e.what === 'received' && e.worker === 1 && e.index === 3), 3000)).toBe(true)
    await killWorker0(pool, launcher, events)
    const outcomes = await within(running, 3000, 'run()')
    // job 1 (worker 1's running job) is cancelled; jobs 2 and 3 were held, never started
    expect(statuses(outcomes)).toEqual(['failed', 'cancelled', 'not-run', 'not-run'])
    expect(outcomes[0].failure).toMatchObject({ worker: 0, modelIndices: [0], signal: 'SIGKILL', reason: 'worker process killed by SIGKILL' })
    expect(outcomes.slice(2)).toEqual(
      scriptedJobs(4)
        .slice(2)
        .map((job) => ({ job, status: 'not-run', worker: null, models: [], failure: null })),
    )
    expect([...trainedOnce(events).keys()].sort()).toEqual([0, 1])
  })

  it('a job fails, policy continue: the job held behind it does not start there until sent again, and trains once', async () => {
    const { pool, events } = await startScripted(1, 'continue', { fails: (i) => (i === 0 ? 'error' : null) })
    const outcomes = await within(pool.run(scriptedJobs(4)), 3000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'done', 'done', 'done'])
    expect(outcomes[0].failure).toMatchObject({ modelIndices: [0], reason: 'training failed: scripted failure of job 0' })
    expect(events.filter((e) => e.what === 'train').map((e) => e.index)).toEqual([0, 1, 2, 3])
  })

  it('out of memory with a job held behind, policy continue: the worker is replaced and no job is lost', async () => {
    const { pool, launcher, events } = await startScripted(2, 'continue', { fails: (i) => (i === 0 ? 'oom' : null), ms: () => 10 })
    const restarts: string[] = []
    const outcomes = await within(pool.run(scriptedJobs(8), { onWorkerRestart: (_w, reason) => restarts.push(reason) }), 3000, 'run()')
    expect(statuses(outcomes)).toEqual(['failed', 'done', 'done', 'done', 'done', 'done', 'done', 'done'])
    expect(outcomes[0].failure).toMatchObject({ worker: 0, modelIndices: [0], reason: expect.stringMatching(/^training failed: out of memory/) })
    expect(restarts).toEqual([expect.stringMatching(/^worker 0 ran out of memory .* and was restarted before its next job$/)])
    expect(launcher.launched).toBe(3)
    // job 2, held by the spent worker, never trained there: every other job trained exactly once
    expect([...trainedOnce(events)].sort((a, b) => a[0] - b[0])).toEqual(Array.from({ length: 8 }, (_, i) => [i, 1]))
    expect(outcomes.slice(1).map((o) => o.models.map((m) => m.index))).toEqual([[1], [2], [3], [4], [5], [6], [7]])
  })

  it('heartbeats go on while a job waits behind a long one that reports nothing', async () => {
    // no progress or other message for 1.2 s, against a 0.6 s heartbeat timeout (the in-process worker beats every 0.2 s)
    const { pool } = await startScripted(1, 'stop', { ms: (i) => (i === 0 ? 1200 : 5) }, 600)
    const outcomes = await within(pool.run(scriptedJobs(3)), 5000, 'run()')
    expect(statuses(outcomes)).toEqual(['done', 'done', 'done'])
  })
})
