// Backends side by side (issue 25), through the service with real worker processes, as `trainpool
// bench --backend wasm,onnxruntime` runs them: every strategy and W on each backend, each measurement
// naming its backend, the same work within each backend and across them (MLP within 1e-3; trees cpu
// ≡ webgpu bit for bit, xgboost within its parity without sampling, said in the notes with it), and
// the verdict names the fastest (backend, strategy, W) against the other backends' best. A pair that
// disagrees fails the run, naming the pair. CI requires onnxruntime, webgpu and xgboost, so none skips there.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type BenchConfig, type Measurement, presetConfig } from '@shared/contract'
import { verdictFor } from '@shared/verdict'
import { summarize } from '../bench/stats'
import { verify } from '../bench/verify'
import { familyOf } from '@shared/families'
import { NodeLauncher } from '../pool/node-launcher'
import { probeInWorker } from './backend-probe'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { BenchService } from './bench-service'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-side-by-side-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const launcher = new NodeLauncher()
const caps = await probeInWorker(launcher)
const has = (b: string) => caps.some((c) => c.name === b && c.available)
const why = (b: string) => caps.find((c) => c.name === b)?.detail ?? 'not probed'
const noOnnx = skipWithout('onnxruntime', has('onnxruntime'), `onnxruntime: ${why('onnxruntime')}`)
const noTrees = skipWithout('webgpu', has('webgpu'), `webgpu: ${why('webgpu')}`) || skipWithout('xgboost', has('xgboost'), `xgboost: ${why('xgboost')}`)

async function run(config: BenchConfig) {
  const service = new BenchService({ launcher, store: new RunStore(join(dir, 'store')), shell: 'cli', telemetry: false, probe: async () => caps })
  const { runId } = await service.start({ config })
  return service.waitForRun(runId)
}

describe('backends side by side', () => {
  it.skipIf(noOnnx)(
    'MLP on wasm and onnxruntime: every strategy on each, the same models within and across backends, the verdict names the fastest (backend, strategy, W)',
    async () => {
      const config = { ...presetConfig('smoke', { workers: [2] }), backend: ['wasm', 'onnxruntime'] } as BenchConfig
      const result = await run(config)
      expect(result.error).toBeNull()
      expect(result.status).toBe('ok')
      expect(result.verification.problems).toEqual([])
      for (const backend of ['wasm', 'onnxruntime']) {
        expect(
          result.measurements
            .filter((m) => m.backend === backend)
            .map((m) => m.strategy)
            .sort(),
        ).toEqual(['batched', 'pool', 'sequential'])
        expect(result.summary.filter((s) => s.backend === backend)).toHaveLength(3)
      }
      expect(result.environment?.backends?.map((b) => b.backend)).toEqual(['wasm', 'onnxruntime'])
      const v = verdictFor(result)
      const fastest = [...result.summary].sort((a, b) => a.medianMs - b.medianMs)[0]
      expect(v.headline).toMatch(new RegExp(`^On this machine, for 4 models at 2,000 rows: ${fastest.backend} ${fastest.strategy}`))
      expect(v.headline).toMatch(/faster than (wasm|onnxruntime)'s best/)
    },
    240_000,
  )

  it.skipIf(noTrees)(
    'trees on cpu, xgboost and webgpu: batched where a backend has it; cpu ≡ webgpu tree for tree, xgboost within its parity without sampling',
    async () => {
      const base = presetConfig('smoke', { workers: [2], model: { kind: 'gbdt' } })
      const config = { ...base, sizes: [600], model: { ...base.model, subsample: 1, colsampleBytree: 1 }, backend: ['cpu', 'xgboost', 'webgpu'] } as BenchConfig
      const result = await run(config)
      expect(result.error).toBeNull()
      expect(result.status).toBe('ok')
      expect(result.verification.problems).toEqual([])
      expect(result.verification.notes).toBeUndefined()
      expect(
        result.measurements
          .filter((m) => m.backend === 'xgboost')
          .map((m) => m.strategy)
          .sort(),
      ).toEqual(['pool', 'sequential'])
      const fingerprints = (b: string) => result.measurements.find((m) => m.backend === b && m.strategy === 'sequential')!.perModel.map((p) => p.fingerprint)
      expect(fingerprints('webgpu')).toEqual(fingerprints('cpu'))
      // with sampling, xgboost's models are other models: said, not failed
      const sampled = await run({ ...config, model: base.model, backend: ['cpu', 'xgboost'] } as BenchConfig)
      expect(sampled.status).toBe('ok')
      expect(sampled.verification.notes?.[0]).toMatch(/cpu vs xgboost at 600 rows × 4 models: not compared model by model: xgboost samples rows and columns/)
    },
    240_000,
  )

  it('a pair of backends that disagree fails the same-work check, naming the pair', () => {
    const config = {
      ...presetConfig('smoke', { workers: [1], models: [1], model: { kind: 'gbdt' } }),
      strategies: ['sequential'],
      backend: ['cpu', 'webgpu'],
    } as BenchConfig
    const m = (backend: 'cpu' | 'webgpu', fingerprint: string): Measurement => ({
      size: config.sizes[0],
      models: 1,
      workers: 1,
      strategy: 'sequential',
      repeat: 0,
      backend,
      status: 'ok',
      wallMs: 10,
      startupMs: 0,
      warmupMs: 0,
      modelsTrained: 1,
      work: 1,
      perModel: [{ index: 0, seed: 1, trainMs: 1, groupTrainMs: null, testMse: 1, finalLoss: null, worker: 0, fingerprint }],
      failures: [],
      peakRssBytes: [0],
    })
    const v = verify(config, [m('cpu', 'aaaa'), m('webgpu', 'bbbb')])
    expect(v.sameWork).toBe(false)
    expect(v.problems).toEqual([
      `cpu vs webgpu at ${config.sizes[0]} rows × 1 models: model 0 differs (fingerprint bbbb vs aaaa): these backends must train the same model`,
    ])
    expect(summarize([m('cpu', 'a'), m('webgpu', 'a')], familyOf(config.model)).map((s) => s.backend)).toEqual(['cpu', 'webgpu'])
  })
})
