// The onnxruntime backend through real worker processes: the smoke run (`trainpool bench --backend
// onnxruntime --preset smoke`) trains every model in every strategy with the same work verified,
// agrees per model with the tfjs wasm backend within the cross-backend tolerance, and records the
// backend, its version and its threads. CI lists `onnxruntime` in TRAINPOOL_REQUIRE, so this cannot skip there.
import { beforeAll, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract'
import { BenchRunner } from '../../bench/runner'
import { verify } from '../../bench/verify'
import { NodeLauncher } from '../../pool/node-launcher'
import { probeInWorker } from '../../service/backend-probe'
import { skipWithout } from '../../testing/capability'

const launcher = new NodeLauncher()
let ort = { available: false, detail: 'not probed' }

beforeAll(async () => {
  const caps = await probeInWorker(launcher)
  ort = caps.find((c) => c.name === 'onnxruntime') ?? ort
})

/** Cross-backend agreement (DESIGN.md: backends agree to ~1e-6; 1e-3 leaves room). */
const CROSS_BACKEND_TOLERANCE = 1e-3

describe('onnxruntime backend', () => {
  it('the smoke run on onnxruntime verifies the same work and matches wasm per model', async (ctx) => {
    if (skipWithout('onnxruntime', ort.available, ort.detail)) return ctx.skip()
    const result = await new BenchRunner(launcher, presetConfig('smoke', { backend: 'onnxruntime' })).run()
    const wasm = await new BenchRunner(launcher, presetConfig('smoke', { backend: 'wasm', strategies: ['sequential'] })).run()
    expect(result.status).toBe('ok')
    expect(result.environment).toMatchObject({ backend: 'onnxruntime' })
    expect(result.environment!.versions['onnxruntime-node']).toMatch(/^\d+\.\d+\.\d+/)
    expect(result.environment!.backendFlags).toMatchObject({ intraOpThreads: 1, interOpThreads: 1, allowSpinning: false })
    const verification = verify(presetConfig('smoke'), result.measurements)
    expect(verification.problems).toEqual([])
    // one hidden layer: batched and one-model-at-a-time runs are bit-identical on the dev VM (0); room for other CPUs' kernels
    expect(verification.maxRelMseDiff).toBeLessThan(1e-6)
    const reference = wasm.measurements[0].perModel
    for (const m of result.measurements) {
      expect(m.modelsTrained).toBe(4)
      for (const p of m.perModel) {
        const ref = reference.find((r) => r.index === p.index)!
        expect(Math.abs(p.testMse - ref.testMse) / ref.testMse).toBeLessThan(CROSS_BACKEND_TOLERANCE)
      }
    }
  })
})
