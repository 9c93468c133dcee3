// The same data on every backend: a user's CSV and generated data, trained on every backend each
// family has here — MLP: wasm, cpu, onnxruntime, webgpu; trees: cpu, webgpu, xgboost — in real worker
// processes through the service, as `trainpool bench` runs them. Per model, the backends agree: the
// MLP within the cross-backend tolerance (1e-3 relative), trees on cpu and webgpu bit for bit (tree
// hashes), xgboost within its documented parity (test MSE within 1e-4 relative with ≤ 256 distinct
// values per feature and no sampling: engine/gbdt/xgboost.test.ts). A backend that trained other
// data than the result records (onnxruntime once generated data while the result named the file)
// fails here. CI requires webgpu, onnxruntime and xgboost (TRAINPOOL_REQUIRE), so none skips there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BackendCapability, type BenchConfig, type ConcreteBackend, type DataSetInfo, presetConfig, type RunResult } from '@shared/contract'
import { loadDataFile } from '../../data'
import { NodeLauncher } from '../../pool/node-launcher'
import { probeInWorker } from '../../service/backend-probe'
import { BenchService } from '../../service/bench-service'
import { RunStore } from '../../store/run-store'
import { skipWithout } from '../../testing/capability'
import { Rng } from '../random'

const MLP_TOLERANCE = 1e-3
const XGBOOST_PARITY = 1e-4
const ROWS = 400

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-same-data-'))
const launcher = new NodeLauncher()
let caps: BackendCapability[] = []
let info: DataSetInfo
let service: BenchService

/** Integer features 0–50 (≤ 256 distinct values: XGBoost's bins are exact) and a target they explain, with noise. */
function userCsv(): string {
  const rng = new Rng(2026, 3)
  const lines = ['a,b,c,d,y']
  for (let r = 0; r < ROWS; r++) {
    const x = [0, 1, 2, 3].map(() => Math.floor(rng.uniform() * 51))
    const y = 0.05 * x[0] - 0.03 * x[1] + (x[2] > 25 ? 1 : 0) + 0.01 * x[0] * (x[3] > 10 ? 1 : -1) + 0.1 * rng.uniform()
    lines.push(`${x.join(',')},${y.toFixed(6)}`)
  }
  return lines.join('\n')
}

/** The same features with a yes/no label they explain (a classifier's data: the label is text). */
function labelledCsv(): string {
  const rng = new Rng(2026, 4)
  const lines = ['a,b,c,d,churned']
  for (let r = 0; r < ROWS; r++) {
    const x = [0, 1, 2, 3].map(() => Math.floor(rng.uniform() * 51))
    const score = 0.08 * x[0] - 0.06 * x[1] + (x[2] > 25 ? 1.5 : -1.5) + (rng.uniform() - 0.5) * 2
    lines.push(`${x.join(',')},${score > 0 ? 'yes' : 'no'}`)
  }
  return lines.join('\n')
}
let labelled: DataSetInfo

beforeAll(async () => {
  writeFileSync(join(dir, 'rows.csv'), userCsv())
  writeFileSync(join(dir, 'churn.csv'), labelledCsv())
  info = await loadDataFile(join(dir, 'rows.csv'), join(dir, 'store'))
  labelled = await loadDataFile(join(dir, 'churn.csv'), join(dir, 'store'))
  caps = await probeInWorker(launcher)
  service = new BenchService({ launcher, store: new RunStore(join(dir, 'store')), shell: 'cli', telemetry: false, probe: async () => caps })
}, 120_000)
afterAll(async () => {
  await service?.shutdown()
  rmSync(dir, { recursive: true, force: true })
})

const MODELS = {
  mlp: { kind: 'mlp', epochs: 2, batchSize: 64, hidden: [8], lr: 0.01 },
  // no sampling: XGBoost's RNG is not ours
  gbdt: { kind: 'gbdt', rounds: 8, maxDepth: 4, subsample: 1, colsampleBytree: 1 },
} as const

async function trainOn(kind: keyof typeof MODELS, backend: ConcreteBackend, ownData: boolean): Promise<RunResult> {
  const config: BenchConfig = presetConfig('smoke', {
    sizes: [ROWS],
    models: [3],
    workers: [1],
    strategies: ['sequential'],
    repeats: 1,
    features: 4,
    backend,
    model: MODELS[kind] as never,
    ...(ownData ? { data: { sha256: info.sha256, name: info.name, target: 'y', features: null, exclude: [], impute: 'none' as const } } : {}),
  })
  const { runId } = await service.start({ config })
  const run = await service.waitForRun(runId)
  expect(run.status, `${kind} on ${backend}: ${run.error ?? ''}`).toBe('ok')
  expect(run.environment?.backend).toBe(backend)
  // the result names the data it trained: the file (by its hash) or none (generated)
  if (ownData) expect(run.dataset).toMatchObject({ sha256: info.sha256, name: 'rows.csv', target: 'y', features: ['a', 'b', 'c', 'd'] })
  else expect(run.dataset).toBeUndefined()
  return run
}

const perModel = (run: RunResult) => [...run.measurements[0].perModel].sort((a, b) => a.index - b.index)

/** The backends of a family this machine runs; one it lacks skips with the reason (or fails where CI requires it). */
function available(names: ConcreteBackend[]): ConcreteBackend[] {
  return names.filter((name) => {
    const cap = caps.find((c) => c.name === name)
    return !skipWithout(name, cap?.available ?? false, cap?.detail ?? 'not reported by the probe')
  })
}

describe.each([true, false])('the same data on every backend (own data: %s)', (ownData) => {
  it('MLP: wasm, cpu, onnxruntime and webgpu agree per model within the cross-backend tolerance', async () => {
    const runs = new Map<ConcreteBackend, RunResult>()
    for (const backend of available(['wasm', 'cpu', 'onnxruntime', 'webgpu'])) runs.set(backend, await trainOn('mlp', backend, ownData))
    const reference = perModel(runs.get('wasm')!)
    expect(reference).toHaveLength(3)
    for (const [backend, run] of runs) {
      perModel(run).forEach((p, i) => {
        expect(Math.abs(p.testMse - reference[i].testMse) / reference[i].testMse, `model ${i} on ${backend}`).toBeLessThan(MLP_TOLERANCE)
      })
    }
  }, 180_000)

  it('trees: cpu and webgpu grow the same trees; xgboost lands within its parity', async () => {
    const runs = new Map<ConcreteBackend, RunResult>()
    for (const backend of available(['cpu', 'webgpu', 'xgboost'])) runs.set(backend, await trainOn('gbdt', backend, ownData))
    const reference = perModel(runs.get('cpu')!)
    const webgpu = runs.get('webgpu')
    if (webgpu) expect(perModel(webgpu).map((p) => [p.fingerprint, p.testMse])).toEqual(reference.map((p) => [p.fingerprint, p.testMse]))
    const xgboost = runs.get('xgboost')
    if (xgboost) {
      perModel(xgboost).forEach((p, i) => {
        expect(Math.abs(p.testMse - reference[i].testMse) / reference[i].testMse, `xgboost model ${i}`).toBeLessThan(XGBOOST_PARITY)
      })
    }
  }, 180_000)
})

describe('own data is not generated data', () => {
  it("a model's test MSE on the file differs from the same model on generated data (the check above could tell them apart)", async () => {
    const [file, generated] = [await trainOn('gbdt', 'cpu', true), await trainOn('gbdt', 'cpu', false)]
    expect(perModel(file)[0].testMse).not.toBe(perModel(generated)[0].testMse)
    expect(perModel(file)[0].fingerprint).not.toBe(perModel(generated)[0].fingerprint)
  }, 60_000)
})

describe('a classifier on every backend: the result says what was trained', () => {
  async function classify(kind: keyof typeof MODELS, backend: ConcreteBackend): Promise<RunResult> {
    const config: BenchConfig = presetConfig('smoke', {
      sizes: [ROWS],
      models: [3],
      workers: [1],
      strategies: ['sequential'],
      repeats: 1,
      backend,
      model: MODELS[kind] as never,
      data: { sha256: labelled.sha256, name: labelled.name, target: 'churned', features: null, exclude: [], impute: 'none' as const },
    })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    expect(run.status, `${kind} on ${backend}: ${run.error ?? ''}`).toBe('ok')
    expect(run.environment?.backend).toBe(backend)
    // the task read from the yes/no column, its classes in output order, and every model scored in its metrics
    expect(run.task).toEqual({ objective: 'binary', classes: ['no', 'yes'], metric: 'logloss', auto: true })
    expect(run.dataset).toMatchObject({ sha256: labelled.sha256, target: 'churned', targetLevels: ['no', 'yes'] })
    for (const p of perModel(run)) {
      expect(p.metrics, `${kind} on ${backend}`).toMatchObject({ logloss: expect.any(Number), accuracy: expect.any(Number), auc: expect.any(Number) })
      expect(p.metrics!.accuracy, `${kind} on ${backend} learned (chance is about 0.5)`).toBeGreaterThan(0.6)
    }
    return run
  }
  const logloss = (run: RunResult) => perModel(run).map((p) => p.metrics!.logloss!)

  it('MLP: wasm, cpu, onnxruntime and webgpu train the same binary classifiers (log loss within the cross-backend tolerance)', async () => {
    const runs = new Map<ConcreteBackend, RunResult>()
    for (const backend of available(['wasm', 'cpu', 'onnxruntime', 'webgpu'])) runs.set(backend, await classify('mlp', backend))
    const reference = logloss(runs.get('wasm')!)
    for (const [backend, run] of runs)
      logloss(run).forEach((l, i) => expect(Math.abs(l - reference[i]) / reference[i], `model ${i} on ${backend}`).toBeLessThan(MLP_TOLERANCE))
  }, 180_000)

  it("trees: cpu and xgboost train binary:logistic within XGBoost's parity; webgpu grows cpu's trees (the same log loss, bit for bit)", async () => {
    const runs = new Map<ConcreteBackend, RunResult>()
    for (const backend of available(['cpu', 'webgpu', 'xgboost'])) runs.set(backend, await classify('gbdt', backend))
    const reference = logloss(runs.get('cpu')!)
    const xgboost = runs.get('xgboost')
    if (xgboost) logloss(xgboost).forEach((l, i) => expect(Math.abs(l - reference[i]) / reference[i], `xgboost model ${i}`).toBeLessThan(XGBOOST_PARITY))
    const webgpu = runs.get('webgpu')
    if (webgpu) expect(perModel(webgpu).map((p) => [p.fingerprint, p.metrics])).toEqual(perModel(runs.get('cpu')!).map((p) => [p.fingerprint, p.metrics]))
  }, 180_000)
})
