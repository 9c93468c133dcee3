// WorkerPool.run() over a scripted fake launcher (no processes): which worker takes which job after
// a job fails while its worker stays alive, and that run() and cancel() always come back.
import { describe, expect, it } from 'vitest'
import type { FromWorker, ToWorker, Workload } from '@shared/contract'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from './launcher'
import { type JobOutcome, type JobSpec, WorkerPool } from './worker-pool'

type JobMessage = Extract<ToWorker, { type: 'job' }>
/**
 * what a fake worker does with a job: finish it, fail it (the worker stays alive), run out of
 * memory (it stays alive, its heap spent: every later job fails too, as a wasm worker's does), or
 * say nothing until cancelled
 */
type Behaviour = 'done' | 'fail' | 'oom' | 'hang'

/** A worker that answers over a fake IPC channel, asynchronously like the real one. */
class FakeWorker implements WorkerHandle {
  readonly pid: number
  readonly jobs: number[][] = []
  private messageListeners: Array<(m: FromWorker) => void> = []
  private exitListeners: Array<(e: WorkerExit) => void> = []
  private alive = true
  private hanging: number | null = null
  private heapSpent = false

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
      case 'job': {
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
        return this.post({ type: 'job-done', jobId: m.jobId, wallMs: 1, rssBytes: 1 })
      }
      case 'cancel':
        if (this.hanging === m.jobId) {
          this.hanging = null
          this.post({ type: 'cancelled', jobId: m.jobId })
        }
        return
      case 'shutdown':
        return this.exit({ code: 0, signal: null })
      default:
        return
    }
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
const FAKE_OOM = 'out of memory: Maximum memory size exceeded; the worker memory cap is 32 MB (TRAINPOOL_WORKER_MAX_MEMORY_MB): use fewer rows or models per worker'
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
  it("W=1, policy continue: the worker takes the next job and run() resolves", async () => {
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
    expect(launcher.workers.flatMap((w) => w.jobs).flat().sort()).toEqual([0, 1, 2, 3, 4, 5])
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
    expect(restarts).toEqual([{ worker: 0, reason: expect.stringMatching(/^worker 0 ran out of memory \(.*memory cap is 32 MB.*\) and was restarted before its next job$/) }])
    await pool.shutdown()
    expect(launcher.workers.every((w) => !w.isAlive)).toBe(true)
  })

  it('policy continue, W=2: only the spent worker is replaced; a later repeat runs on the new one', async () => {
    let once = true
    const { pool, launcher } = await startPool(2, 'continue', (job, worker) => (worker === 1 && job.modelIndices[0] === 1 && once ? ((once = false), 'oom') : 'done'))
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
