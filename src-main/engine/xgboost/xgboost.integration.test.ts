// Real XGBoost through the FFI, in real worker processes (the library is never loaded in this test
// process). Skips only when no libxgboost is found (and says why); TRAINPOOL_REQUIRE=xgboost makes
// that a failure. The missing-library test needs no library and always runs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type BackendCapability, parseRunResult, presetConfig, workloadFor } from '@shared/contract'
import { NodeLauncher } from '../../pool/node-launcher'
import { WorkerPool } from '../../pool/worker-pool'
import { probeInWorker } from '../../service/backend-probe'
import { skipWithout, waitUntil } from '../../testing/capability'
import { killAll, spawnCli } from '../../testing/cli-process'

const launcher = new NodeLauncher()
const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-xgboost-'))
const pools: WorkerPool[] = []
let xgboost: BackendCapability | undefined

beforeAll(async () => {
  xgboost = (await probeInWorker(launcher)).find((b) => b.name === 'xgboost')
})
afterEach(async () => {
  killAll()
  await Promise.all(pools.splice(0).map((p) => p.shutdown()))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs `body` with environment variables set (the probe and the CLI pass them on to workers). */
/** runs body with process.env's vars set (undefined: removed), then restores them */
async function withEnv<T>(vars: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const old = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  try {
    return await body()
  } finally {
    for (const [k, v] of Object.entries(old)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

const gbdtWorkload = (model: Record<string, number> = {}, size = 2000) =>
  workloadFor(presetConfig('smoke', { model: { kind: 'gbdt', ...model }, backend: 'xgboost', strategies: ['sequential'] }), size)

describe('xgboost missing', () => {
  it('TRAINPOOL_XGBOOST_LIB at a non-library file: listed unavailable with the reason, and bench refuses it with that reason', async () => {
    const notALibrary = join(dir, 'libxgboost.so')
    writeFileSync(notALibrary, 'this is not a shared library\n')
    const cap = await withEnv({ TRAINPOOL_XGBOOST_LIB: notALibrary }, async () => (await probeInWorker(launcher)).find((b) => b.name === 'xgboost'))
    expect(cap).toMatchObject({ name: 'xgboost', available: false, gpu: false })
    expect(cap!.detail).toContain(`TRAINPOOL_XGBOOST_LIB=${notALibrary} is not a loadable XGBoost library: `)
    const cli = await withEnv({ TRAINPOOL_XGBOOST_LIB: notALibrary }, async () =>
      spawnCli('bench', ['--model', 'gbdt', '--backend', 'xgboost', '--preset', 'smoke', '--no-save']),
    )
    const { code } = await cli.exited
    expect(code).toBe(2) // the CLI's code for a refused config: nothing started (as for any unavailable backend)
    expect(cli.out.stderr).toContain(
      `trainpool bench: --backend xgboost is not available here: TRAINPOOL_XGBOOST_LIB=${notALibrary} is not a loadable XGBoost library`,
    )
    expect(cli.out.stdout).toBe('')
  })
})

describe('xgboost through the FFI', () => {
  const need = (ctx: { skip: (note?: string) => never }) => {
    if (skipWithout('xgboost', xgboost?.available === true, `no libxgboost: ${xgboost?.detail ?? 'not probed'}`)) ctx.skip('no libxgboost')
  }

  it('the probe lists it with the library path, version and build', (ctx) => {
    need(ctx)
    expect(xgboost!.detail).toMatch(/XGBoost \d+\.\d+\.\d+ \((CPU|CUDA) build\) from \//)
  })

  it('bench --model gbdt --backend xgboost --preset smoke: sequential and pool train the same boosters (fingerprints and MSE exact)', async (ctx) => {
    need(ctx)
    const json = join(dir, 'run.json')
    // sequential runs nthread = every core, the pool ⌊cores ÷ 2⌋: with no policy set, the workers load
    // XGBoost's OpenMP with PASSIVE (no spin-waiting on a busy machine) and say so
    const cli = await withEnv({ OMP_WAIT_POLICY: undefined }, async () =>
      spawnCli('bench', ['--model', 'gbdt', '--backend', 'xgboost', '--preset', 'smoke', '--no-save', '--json', json]),
    )
    const { code } = await cli.exited
    expect(cli.out.stderr).not.toMatch(/error/i)
    expect(code).toBe(0)
    expect(cli.out.stdout).toMatch(/same work: sequential 4\/4, pool 4\/4 models; per-model test MSE agree \(max rel\. Δ 0\.0e\+0, tolerance 0\)/)
    const run = parseRunResult(JSON.parse(readFileSync(json, 'utf8')))
    expect(run.config.strategies).toEqual(['sequential', 'pool'])
    expect(run.verification.sameWork).toBe(true)
    // the environment is the first pool's (sequential, W = 1): every core
    const cores = os.availableParallelism()
    expect(run.environment).toMatchObject({
      backend: 'xgboost',
      backendFlags: { nthread: cores, nthreadRule: `cores ÷ W = ${cores} ÷ 1`, OMP_WAIT_POLICY: 'PASSIVE' },
    })
    expect(run.environment!.versions.xgboost).toMatch(/^\d+\.\d+\.\d+$/)
    const prints = run.measurements.map((m) => m.perModel.map((p) => p.fingerprint))
    expect(prints[0].every((h) => /^[0-9a-f]{16}$/.test(h!))).toBe(true)
    expect(new Set(prints[0]).size).toBe(4) // subsample/colsample 0.8 with seeds 43..46: four different boosters
    for (const p of prints) expect(p).toEqual(prints[0])
    const pool = run.measurements.find((m) => m.strategy === 'pool')!
    expect(new Set(pool.perModel.map((p) => p.worker))).toEqual(new Set([0, 1]))
    for (const m of run.measurements) for (const p of m.perModel) expect(p.trainMs).toBeGreaterThan(0)
  })

  it('a bad parameter fails the job with XGBoost’s own message (XGBGetLastError)', async (ctx) => {
    need(ctx)
    const pool = new WorkerPool(launcher, { family: 'gbdt', size: 1, backend: 'xgboost' })
    pools.push(pool)
    await pool.start()
    // past the config's validation: what XGBoost itself says about a value it refuses
    const [outcome] = await pool.run([{ workload: gbdtWorkload({ maxDepth: -1 }), modelIndices: [0], fused: false }])
    expect(outcome.status).toBe('failed')
    expect(outcome.failure!.reason).toMatch(/XGBoost XGBoosterUpdateOneIter failed: value -1 for Parameter max_depth should be greater equal to 0/)
  })

  it('cancel stops a booster between rounds', async (ctx) => {
    need(ctx)
    const pool = new WorkerPool(launcher, { family: 'gbdt', size: 1, backend: 'xgboost', graceMs: 5000 })
    pools.push(pool)
    await pool.start()
    let rounds = 0
    const running = pool.run([{ workload: gbdtWorkload({ rounds: 5000 }), modelIndices: [0], fused: false }], {
      onProgress: (_w, p) => (rounds = p.progress.done),
    })
    expect(await waitUntil(() => rounds >= 3, 60_000)).toBe(true)
    const t0 = Date.now()
    await pool.cancel()
    const [outcome] = await running
    expect(outcome.status).toBe('cancelled')
    expect(Date.now() - t0).toBeLessThan(4000) // stopped at a round boundary, not killed after the grace period
  })

  it('cuda on a CPU build: the worker refuses to start and says why', async (ctx) => {
    need(ctx)
    if (!/\(CPU build\)/.test(xgboost!.detail)) ctx.skip('this libxgboost has CUDA')
    const pool = new WorkerPool(launcher, { family: 'gbdt', size: 1, backend: 'xgboost', env: { TRAINPOOL_XGBOOST_DEVICE: 'cuda' } })
    pools.push(pool)
    await expect(pool.start()).rejects.toThrow(
      /^backend xgboost is not available here: TRAINPOOL_XGBOOST_DEVICE=cuda asks for CUDA, but .* was built without CUDA/,
    )
  })
})
