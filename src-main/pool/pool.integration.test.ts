// Real worker processes (Node launcher) on wasm and cpu at smoke sizes.
import { execFileSync } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { type BenchConfig, presetConfig, workloadFor } from '@shared/contract'
import { BenchRunner } from '../bench/runner'
import { verify } from '../bench/verify'
import { processAlive, waitUntil } from '../testing/capability'
import { NodeLauncher } from './node-launcher'
import { WorkerPool } from './worker-pool'

const launcher = new NodeLauncher()
const pools: WorkerPool[] = []
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.shutdown()))
})

for (const backend of ['wasm', 'cpu'] as const) {
  describe(`three strategies on ${backend}`, () => {
    it('each strategy trains exactly N models and per-model test MSE agree (pool W=2)', async () => {
      const config: BenchConfig = presetConfig('smoke', { backend, workers: [2] })
      const outcome = await new BenchRunner(launcher, config).run()
      expect(outcome.status).toBe('ok')
      expect(outcome.environment?.backend).toBe(backend)
      for (const strategy of ['sequential', 'pool', 'batched'] as const) {
        const m = outcome.measurements.find((x) => x.strategy === strategy)!
        expect(m.modelsTrained).toBe(4)
        expect(m.perModel.map((p) => p.index)).toEqual([0, 1, 2, 3])
      }
      const pool = outcome.measurements.find((x) => x.strategy === 'pool')!
      expect(new Set(pool.perModel.map((p) => p.worker))).toEqual(new Set([0, 1]))
      const v = verify(config, outcome.measurements)
      expect(v.problems).toEqual([])
      expect(v.sameWork).toBe(true)
      expect(v.maxRelMseDiff).toBeLessThan(1e-4)
    })
  })
}

describe('pool lifecycle', () => {
  const workload = workloadFor(presetConfig('smoke', { model: { epochs: 50 } }), 4000)

  it('starts every worker collecting garbage on its own thread (--single-threaded-gc)', async () => {
    const pool = new WorkerPool(launcher, { family: 'gbdt', size: 2, backend: 'cpu' })
    pools.push(pool)
    await pool.start()
    for (const pid of pool.pids) {
      const args = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' })
        .trim()
        .split(/\s+/)
      expect(args).toContain('--single-threaded-gc')
    }
  })

  it('cancel mid-measurement stops every worker, leaving no process alive', async () => {
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 2, backend: 'wasm', graceMs: 1000 })
    pools.push(pool)
    await pool.start()
    const pids = pool.pids
    expect(pids).toHaveLength(2)
    let progressed = 0
    const running = pool.run(
      [0, 1, 2, 3].map((i) => ({ workload, modelIndices: [i], fused: false })),
      { onProgress: () => progressed++ },
    )
    await waitUntil(() => progressed > 2, 30_000)
    const t0 = Date.now()
    await pool.cancel()
    const outcomes = await running
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(outcomes.some((o) => o.status === 'cancelled')).toBe(true)
    await pool.shutdown()
    expect(await waitUntil(() => pids.every((p) => !processAlive(p)), 3000)).toBe(true)
  })

  it('a worker killed with SIGKILL mid-job is reported, and models finished before are kept', async () => {
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 1, backend: 'wasm', failurePolicy: 'stop' })
    pools.push(pool)
    await pool.start()
    const [pid] = pool.pids
    const small = { ...workload, model: { ...workload.model, epochs: 2 } }
    let finished = 0
    const running = pool.run([{ workload: small, modelIndices: [0, 1, 2, 3, 4, 5, 6, 7], fused: false }], {
      onModelDone: () => {
        if (++finished === 2) process.kill(pid, 'SIGKILL')
      },
    })
    const [outcome] = await running
    expect(outcome.status).toBe('failed')
    expect(outcome.models.map((m) => m.index)).toEqual([0, 1])
    expect(outcome.failure).toMatchObject({ worker: 0, signal: 'SIGKILL', exitCode: null })
    expect(outcome.failure!.reason).toMatch(/killed by SIGKILL/)
    expect(outcome.failure!.modelIndices).toEqual([2, 3, 4, 5, 6, 7])
    expect(processAlive(pid)).toBe(false)
  })

  it('a run whose worker is killed ends failed with its finished measurements and the failure named', async () => {
    const config = presetConfig('smoke', { backend: 'wasm', sizes: [3000], strategies: ['sequential', 'pool'], model: { epochs: 6 } })
    let killed = false
    const runner: BenchRunner = new BenchRunner(launcher, config, {
      onModelDone: (index, model) => {
        if (runner.plan[index].strategy === 'pool' && !killed && model.index >= 0) {
          killed = true
          process.kill(runner.pids[1 - model.worker] ?? runner.pids[0], 'SIGKILL')
        }
      },
    })
    const outcome = await runner.run()
    expect(outcome.status).toBe('failed')
    const seq = outcome.measurements.find((m) => m.strategy === 'sequential')!
    expect(seq).toMatchObject({ status: 'ok', modelsTrained: 4 })
    const pool = outcome.measurements.find((m) => m.strategy === 'pool')!
    expect(pool.status).toBe('failed')
    expect(pool.failures[0].reason).toMatch(/SIGKILL/)
    expect(pool.perModel.length).toBeGreaterThanOrEqual(1)
    expect(runner.pids).toEqual([])
  })

  it('tf.memory().numTensors returns to baseline after each job', async () => {
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 1, backend: 'wasm' })
    pools.push(pool)
    await pool.start()
    const small = { ...workload, model: { ...workload.model, epochs: 1 } }
    await pool.warmup(small, [[0, 1]])
    const baseline = (await pool.memory()).numTensors
    for (const fused of [true, false]) {
      const [o] = await pool.run([{ workload: small, modelIndices: [0, 1, 2], fused }])
      expect(o.status).toBe('done')
      expect((await pool.memory()).numTensors).toBe(baseline)
    }
  })

  it('an unavailable backend fails at start with the reason, and leaves no process', async () => {
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 1, backend: 'tensorflow' })
    pools.push(pool)
    const started = pool.start().then(
      () => null,
      (e: Error) => e,
    )
    const err = await started
    if (err) {
      expect(err.message).toMatch(/^backend tensorflow is not available here: .*tfjs-node-gpu/)
      expect(await waitUntil(() => pool.pids.every((p) => !processAlive(p)), 3000)).toBe(true)
    }
  })
})

describe('node launcher', () => {
  it('a message sent to a worker that just died does not throw in the parent', async () => {
    const handle = launcher.launch({ workerIndex: 0, serviceName: 'trainpool-test', env: { ...process.env } as Record<string, string> })
    const exited = new Promise<void>((resolve) => handle.onExit(() => resolve()))
    const errors: unknown[] = []
    const onUncaught = (err: unknown) => errors.push(err)
    process.on('uncaughtException', onUncaught)
    try {
      await waitUntil(() => handle.pid !== undefined, 5000)
      handle.kill('SIGKILL')
      // keep sending while the channel goes down
      for (let i = 0; i < 50; i++) {
        handle.send({ type: 'memory' })
        await new Promise((r) => setImmediate(r))
      }
      await exited
      handle.send({ type: 'shutdown' })
      await new Promise((r) => setTimeout(r, 100))
    } finally {
      process.off('uncaughtException', onUncaught)
    }
    expect(errors).toEqual([])
  })
})

describe('a worker stuck before any job', () => {
  it('a worker that hangs in warm-up is killed by the heartbeat watchdog and the warm-up fails with that reason', async () => {
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 1, backend: 'wasm', prepareTimeoutMs: 1500, env: { TRAINPOOL_TEST_FAULT: 'hang-in-warmup' } })
    pools.push(pool)
    await pool.start()
    const [pid] = pool.pids
    const t0 = Date.now()
    const err = await pool.warmup(workloadFor(presetConfig('smoke'), 2000), [[0]]).then(
      () => null,
      (e: Error) => e,
    )
    expect(err?.message).toMatch(/no heartbeat for \d+ s \(timeout 1\.5 s\) during warmup: killed as hung/)
    expect(Date.now() - t0).toBeLessThan(6000)
    expect(await waitUntil(() => !processAlive(pid), 3000)).toBe(true)
  })
})

describe('a job that runs out of memory (worker memory cap)', () => {
  it('policy continue, W=1: the spent worker is replaced, and the next job trains on the new one', async () => {
    // 32 MB cap (JS and wasm heap): the warm-up (2 000 rows) fits, the first job's data (200 000
    // rows × 100 features, ~80 MB of floats) does not; the worker reports job-failed, out of memory
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 1, backend: 'wasm', failurePolicy: 'continue', env: { TRAINPOOL_WORKER_MAX_MEMORY_MB: '32' } })
    pools.push(pool)
    await pool.start()
    const [spentPid] = pool.pids
    const small = workloadFor(presetConfig('smoke', { model: { epochs: 1 } }), 2000)
    const big = workloadFor(presetConfig('smoke', { model: { epochs: 1 } }), 200_000)
    await pool.warmup(small, [[0]])
    const restarts: string[] = []
    const running = pool.run(
      [
        { workload: big, modelIndices: [0], fused: false },
        { workload: small, modelIndices: [1], fused: false },
        { workload: small, modelIndices: [2], fused: false },
      ],
      { onWorkerRestart: (_worker, reason) => restarts.push(reason) },
    )
    const outcomes = await Promise.race([running, new Promise<null>((r) => setTimeout(() => r(null), 60_000))])
    expect(outcomes, 'run() did not resolve').not.toBeNull()
    expect(outcomes!.map((o) => o.status)).toEqual(['failed', 'done', 'done'])
    expect(outcomes![0].failure!.reason).toMatch(/out of memory.*the worker memory cap is 32 MB/)
    expect(outcomes!.map((o) => o.worker)).toEqual([0, 0, 0])
    expect(restarts).toEqual([expect.stringMatching(/^worker 0 ran out of memory \(out of memory.*\) and was restarted before its next job$/)])
    expect(pool.pids).toHaveLength(1)
    expect(pool.pids[0]).not.toBe(spentPid)
    expect(await waitUntil(() => !processAlive(spentPid), 5000)).toBe(true)
  }, 90_000)
})
