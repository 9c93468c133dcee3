// Leaks: ten consecutive smoke runs (all three job shapes: one-by-one, one model, fused group) in
// ONE worker process. tf.memory().numTensors must return to the baseline exactly after every run,
// and RSS may not keep growing: after the first run (allocator and kernel caches settle) it stays
// within RSS_BOUND_MB of that run's value, and is flat (≤ RSS_PLATEAU_MB) over the last five.
import { afterAll, describe, expect, it } from 'vitest'
import { presetConfig, workloadFor } from '@shared/contract'
import { jobsFor } from '../bench/runner'
import { NodeLauncher } from '../pool/node-launcher'
import { WorkerPool } from '../pool/worker-pool'

/** measured on wasm here: +11 MB after run 1 (caches settle), flat from run 4 on; bounds leave CI margin */
const RSS_BOUND_MB = 30
/** over the last five runs RSS must be flat: a per-run leak would show here */
const RSS_PLATEAU_MB = 8
const RUNS = 10

let pool: WorkerPool | null = null
afterAll(async () => {
  await pool?.shutdown()
})

describe('ten consecutive smoke runs in one worker', () => {
  it(`return numTensors to baseline exactly and keep RSS within ${RSS_BOUND_MB} MB of run 1`, async () => {
    const config = presetConfig('smoke', { backend: 'wasm', workers: [2] })
    const workload = workloadFor(config, config.sizes[0])
    pool = new WorkerPool(new NodeLauncher(), { family: 'mlp', size: 1, backend: 'wasm' })
    await pool.start()
    await pool.warmup(workload, [[0, 1, 2, 3]])
    const baseline = (await pool.memory()).numTensors
    const mb = (b: number) => b / 2 ** 20
    const rss: number[] = []
    const tensors: number[] = []
    for (let run = 0; run < RUNS; run++) {
      // one smoke run = the three strategies' jobs, all in this one worker
      for (const strategy of ['sequential', 'pool', 'batched'] as const) {
        const jobs = jobsFor({ size: config.sizes[0], models: 4, workers: 2, strategy, repeat: 0 }, workload)
        const outcomes = await pool.run(jobs)
        expect(outcomes.map((o) => o.status)).toEqual(jobs.map(() => 'done'))
      }
      const m = await pool.memory()
      tensors.push(m.numTensors)
      rss.push(mb(m.rssBytes))
    }
    const growth = Math.max(...rss.slice(1)) - rss[0]
    console.log(
      `[reliability] leaks: numTensors baseline ${baseline}, after each run ${JSON.stringify(tensors)}; RSS MB ${JSON.stringify(rss.map((r) => Math.round(r)))}; growth after run 1: ${growth.toFixed(1)} MB (bound ${RSS_BOUND_MB} MB)`,
    )
    expect(tensors).toEqual(new Array(RUNS).fill(baseline))
    expect(growth).toBeLessThanOrEqual(RSS_BOUND_MB)
    expect(rss[RUNS - 1] - rss[RUNS - 6]).toBeLessThanOrEqual(RSS_PLATEAU_MB)
  })
})
