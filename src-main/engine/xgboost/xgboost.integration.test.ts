// Real XGBoost through the FFI, in real worker processes (the library is never loaded in this test
// process). Skips only when no libxgboost is found (and says why); TRAINPOOL_REQUIRE=xgboost makes
// that a failure. The missing-library test needs no library and always runs. Classifiers train
// XGBoost's own binary:logistic and multi:softprob, and their recorded metrics are those of the
// probabilities XGBoost itself (Python's, from the kept model) predicts on the test rows.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  type BackendCapability,
  type ModelArtifact,
  type ModelSet,
  parseRunResult,
  type PerModel,
  presetConfig,
  resolveTask,
  setSize,
  type Target,
  workloadFor,
} from '@shared/contract'
import { scoreOutputs } from '@shared/metrics'
import { datasetFor } from '../datasets/generated'
import { pythonForXgboost, xgboostVersion } from '../gbdt/xgb-reference'
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

  it("a halving rung's job over the worker socket: each booster's JSON sent back continues to the booster trained straight, updating only the rounds left", async (ctx) => {
    need(ctx)
    const pool = new WorkerPool(launcher, { family: 'gbdt', size: 1, backend: 'xgboost' })
    pools.push(pool)
    await pool.start()
    // no sampling: XGBoost reseeds its RNG on a loaded booster (xgboost-train.ts resume)
    const at = (rounds: number) => gbdtWorkload({ rounds, maxDepth: 3, subsample: 1, colsampleBytree: 1 }, 800)
    const run = async (rounds: number, resume?: { index: number; rounds: number; artifact: ModelArtifact }[]) => {
      const artifacts = new Map<number, ModelArtifact>()
      const [outcome] = await pool.run([{ workload: at(rounds), modelIndices: [0, 1], fused: false, keep: true, ...(resume ? { resume } : {}) }], {
        onModelDone: (model, artifact) => artifact && artifacts.set(model.index, artifact),
      })
      expect(outcome.status, outcome.failure?.reason).toBe('done')
      return { models: [...outcome.models].sort((a, b) => a.index - b.index), artifacts }
    }
    const straight = await run(8)
    const first = await run(2, [])
    const continued = await run(
      8,
      [0, 1].map((index) => ({ index, rounds: 2, artifact: first.artifacts.get(index)! })),
    )
    expect(continued.models.map((m) => m.fingerprint)).toEqual(straight.models.map((m) => m.fingerprint))
    expect(continued.artifacts).toEqual(straight.artifacts)
    expect([first, continued].map((r) => r.models.map((m) => m.roundsTrained))).toEqual([
      [2, 2],
      [6, 6],
    ])
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

const PREDICT = `
import sys, json, numpy as np, xgboost as xgb
x = np.fromfile(sys.argv[1], dtype=np.float32).reshape(int(sys.argv[2]), int(sys.argv[3]))
out = {}
for path in sys.argv[4:]:
    b = xgb.Booster(); b.load_model(path)
    out[path] = [float(v) for v in b.predict(xgb.DMatrix(x, missing=np.nan)).reshape(-1)]
print(json.dumps(out))
`

describe('xgboost classifiers', () => {
  const need = (ctx: { skip: (note?: string) => never }) => {
    if (skipWithout('xgboost', xgboost?.available === true, `no libxgboost: ${xgboost?.detail ?? 'not probed'}`)) ctx.skip('no libxgboost')
  }

  /** generated classification data (make_classification's shape) for a small trees model set, the task resolved as the service does */
  function classifierWorkload(target: Extract<Target, 'binary' | 'multiclass'>, set: ModelSet) {
    const config = presetConfig('smoke', {
      model: { kind: 'gbdt', rounds: 15, maxDepth: 3, eta: 0.3 } as never,
      backend: 'xgboost',
      strategies: ['sequential'],
      target,
      features: 8,
      ...(target === 'multiclass' ? { classes: 3 } : {}),
      models: [setSize(set)],
      set,
    })
    const task = resolveTask(config)
    return { workload: workloadFor(config, 1200, undefined, task), task }
  }

  async function trainKept(workload: ReturnType<typeof classifierWorkload>['workload'], models: number) {
    const pool = new WorkerPool(launcher, { family: 'gbdt', size: 1, backend: 'xgboost' })
    pools.push(pool)
    await pool.start()
    const artifacts = new Map<number, ModelArtifact>()
    const [outcome] = await pool.run([{ workload, modelIndices: [...Array(models).keys()], fused: false, keep: true }], {
      onModelDone: (model, artifact) => artifact && artifacts.set(model.index, artifact),
    })
    expect(outcome.status, outcome.failure?.reason).toBe('done')
    return { models: [...outcome.models].sort((a, b) => a.index - b.index), artifacts }
  }

  /** XGBoost's (Python's) probabilities of the kept boosters on the workload's test rows, [rows·K] each */
  function xgboostProbabilities(workload: ReturnType<typeof classifierWorkload>['workload'], artifacts: Map<number, ModelArtifact>) {
    const data = datasetFor(workload)
    writeFileSync(join(dir, 'x-test.f32'), Buffer.from(data.xTest.buffer, data.xTest.byteOffset, data.xTest.byteLength))
    const paths = [...artifacts.entries()].map(([index, artifact]) => {
      const path = join(dir, `classifier-${index}.json`)
      writeFileSync(path, (artifact as Extract<ModelArtifact, { format: 'xgboost-json' }>).json)
      return path
    })
    const r = spawnSync(pythonForXgboost(), ['-c', PREDICT, join(dir, 'x-test.f32'), String(data.test), String(workload.features), ...paths], {
      encoding: 'utf8',
    })
    expect(r.status, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout) as Record<string, number[]>
    return { data, probabilities: paths.map((p) => out[p]) }
  }

  const closeTo = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))

  function expectScoresOf(model: PerModel, probabilities: number[], task: { objective: 'binary' | 'multiclass'; classes: number }, yTest: Float32Array) {
    const want = scoreOutputs(task, probabilities, yTest)
    expect(Object.keys(model.metrics!).sort(), `model ${model.index}`).toEqual(Object.keys(want).sort())
    for (const [metric, value] of Object.entries(want))
      expect(closeTo(model.metrics![metric as keyof typeof want]!, value), `model ${model.index} ${metric}`).toBe(true)
    expect(model.testMse).toBe(model.metrics!.mse)
  }

  it('binary: binary:logistic boosters, their log loss, accuracy, AUC and Brier MSE those of the probabilities XGBoost predicts', async (ctx) => {
    need(ctx)
    if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost`)) ctx.skip('python3 lacks xgboost')
    const { workload, task } = classifierWorkload('binary', { grid: { maxDepth: [2, 4] }, seeds: 1, folds: null })
    expect(workload.task).toEqual({ objective: 'binary', classes: 2 })
    const { models, artifacts } = await trainKept(workload, 2)
    expect(models).toHaveLength(2)
    for (const artifact of artifacts.values()) {
      expect(artifact.format).toBe('xgboost-json')
      const learner = JSON.parse((artifact as { json: string }).json).learner
      expect(learner.objective.name).toBe('binary:logistic')
      expect(learner.learner_model_param).toMatchObject({ num_class: '0', base_score: '5E-1' })
    }
    const { data, probabilities } = xgboostProbabilities(workload, artifacts)
    expect(probabilities[0]).toHaveLength(data.test)
    for (const [k, model] of models.entries()) {
      expectScoresOf(model, probabilities[k], { objective: 'binary', classes: task.classes.length }, data.yTest)
      // it learned: well under the log loss of a coin (ln 2 ≈ 0.693)
      expect(model.metrics!.logloss).toBeLessThan(0.5)
      expect(model.metrics!.auc).toBeGreaterThan(0.8)
    }
  }, 60_000)

  it('multiclass with folds: multi:softprob boosters of 3 classes (3 trees a round), test and held-out metrics from [rows·K] probabilities', async (ctx) => {
    need(ctx)
    if (skipWithout('xgboost', xgboostVersion() !== null, `${pythonForXgboost()} cannot import xgboost`)) ctx.skip('python3 lacks xgboost')
    const { workload, task } = classifierWorkload('multiclass', { grid: {}, seeds: 1, folds: 3 })
    expect(workload.task).toEqual({ objective: 'multiclass', classes: 3 })
    const { models, artifacts } = await trainKept(workload, 3)
    expect(models.map((m) => m.fold)).toEqual([0, 1, 2])
    for (const artifact of artifacts.values()) {
      const learner = JSON.parse((artifact as { json: string }).json).learner
      expect(learner.objective).toMatchObject({ name: 'multi:softprob', softmax_multiclass_param: { num_class: '3' } })
      expect(learner.learner_model_param.num_class).toBe('3')
      expect(learner.gradient_booster.model.tree_info).toEqual(Array.from({ length: 45 }, (_, t) => t % 3))
    }
    const { data, probabilities } = xgboostProbabilities(workload, artifacts)
    expect(probabilities[0]).toHaveLength(data.test * 3)
    for (const [k, model] of models.entries()) {
      expectScoresOf(model, probabilities[k], { objective: 'multiclass', classes: task.classes.length }, data.yTest)
      expect(model.metrics).not.toHaveProperty('auc')
      expect(model.metrics!.logloss).toBeLessThan(0.8 * Math.log(3))
      // the fold's held-out rows scored the same way; its MSE is theirs
      expect(Object.keys(model.validationMetrics!).sort()).toEqual(['accuracy', 'logloss', 'mse'])
      expect(model.validationMse).toBe(model.validationMetrics!.mse)
      expect(model.validationMetrics!.logloss).not.toBe(model.metrics!.logloss)
    }
  }, 60_000)
})
