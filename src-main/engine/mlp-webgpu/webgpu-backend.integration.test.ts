// The MLP's webgpu backend (the WGSL engine) through real worker processes, on Dawn: without a GPU,
// Mesa's lavapipe (CI installs it and sets TRAINPOOL_REQUIRE=webgpu, so this cannot skip there).
import { beforeAll, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract'
import { BenchRunner } from '../../bench/runner'
import { verify } from '../../bench/verify'
import { NodeLauncher } from '../../pool/node-launcher'
import { probeInWorker } from '../../service/bench-service'
import { skipWithout } from '../../testing/capability'

const launcher = new NodeLauncher()
let webgpu = { available: false, detail: 'not probed' }

beforeAll(async () => {
  const caps = await probeInWorker(launcher)
  webgpu = caps.find((c) => c.name === 'webgpu') ?? webgpu
})

/** Cross-backend agreement (measured before any code: backends agree to ~1e-6; 1e-3 leaves room). */
const CROSS_BACKEND_TOLERANCE = 1e-3

describe('webgpu backend', () => {
  it('the smoke run on webgpu matches cpu per model, every strategy training all models', async (ctx) => {
    if (skipWithout('webgpu', webgpu.available, `no WebGPU adapter: ${webgpu.detail}`)) return ctx.skip()
    const gpu = await new BenchRunner(launcher, presetConfig('smoke', { backend: 'webgpu' })).run()
    const cpu = await new BenchRunner(launcher, presetConfig('smoke', { backend: 'cpu', strategies: ['sequential'] })).run()
    expect(gpu.status).toBe('ok')
    expect(gpu.environment).toMatchObject({ backend: 'webgpu' })
    expect(gpu.environment!.device.length).toBeGreaterThan(0)
    expect(String(gpu.environment!.backendFlags.engine)).toMatch(/WGSL/)
    expect(verify(presetConfig('smoke'), gpu.measurements).sameWork).toBe(true)
    const reference = cpu.measurements[0].perModel
    const epochs = (presetConfig('smoke').model as { epochs: number }).epochs
    for (const m of gpu.measurements) {
      expect(m.modelsTrained).toBe(4)
      // the device's own account: per fused program, one readback an epoch and one for the test MSE
      const programs = m.strategy === 'batched' ? m.workers : 4
      expect(m.device).toMatchObject({ readbacks: programs * (epochs + 1) })
      expect(m.device!.submits).toBeGreaterThan(0)
      for (const p of m.perModel) {
        const ref = reference.find((r) => r.index === p.index)!
        expect(Math.abs(p.testMse - ref.testMse) / ref.testMse).toBeLessThan(CROSS_BACKEND_TOLERANCE)
      }
    }
  })
})
