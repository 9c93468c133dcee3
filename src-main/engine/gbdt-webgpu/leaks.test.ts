// No GPU buffer leaks: 10 trainings in one process (one worker's runtime, as a pool reuses it
// across repeats), every buffer created through the tracker; after each training only the data
// set's buffers are live, and after disposeData none. A cancelled training frees its buffers too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Workload } from '@shared/contract'
import { GBDT_DEFAULTS, type GbdtParams } from '@shared/families/gbdt'
import { CancelledError, type TrainedModel, type TrainHooks } from '../backend/types'
import { skipWithout } from '../../testing/capability'
import { datasetFor } from '../datasets/generated'
import { disposeWebgpu, prepareWebgpu, startWebgpuGbdtRuntime, trainWebgpu, type WebgpuGbdtRuntime } from './webgpu-trees-runtime'

let rt: WebgpuGbdtRuntime | null = null
let why = ''
beforeAll(async () => {
  try {
    rt = await startWebgpuGbdtRuntime()
  } catch (err) {
    why = (err as Error).message
  }
})
afterAll(() => rt?.release())

const workload: Workload<GbdtParams> = {
  size: 500,
  features: 8,
  seed: 42,
  target: 'teacher',
  testSplit: 0.2,
  model: { ...GBDT_DEFAULTS, rounds: 3, maxDepth: 4 },
}

function hooks(done: TrainedModel[], stopAfter = Infinity): TrainHooks {
  let steps = 0
  return { onProgress: () => void steps++, onModelDone: (m) => done.push(m), shouldStop: () => steps >= stopAfter }
}

describe('webgpu trees: GPU buffers', () => {
  it('10 trainings (sequential and batched) in one runtime leave only the data set live; dispose frees it', async (ctx) => {
    if (skipWithout('webgpu', rt !== null, `no WebGPU adapter: ${why}`)) return ctx.skip()
    const r = rt!
    const base = r.memory()
    const d = prepareWebgpu(r, datasetFor(workload), workload)
    const withData = r.memory()
    expect(withData.numTensors - base.numTensors).toBe(3)
    const prints = new Set<string>()
    for (let i = 0; i < 10; i++) {
      const done: TrainedModel[] = []
      await trainWebgpu(r, d, workload, [0, 1, 2], { fused: i % 2 === 1 }, hooks(done))
      expect(done.map((m) => m.index).sort()).toEqual([0, 1, 2])
      for (const m of done) prints.add(`${m.index}:${m.fingerprint}`)
      expect(r.memory()).toEqual(withData)
    }
    expect(prints.size).toBe(3)
    const stats = r.gbdtGpu.bufferStats()
    expect(stats.created - stats.destroyed).toBe(stats.live)
    expect(stats.created).toBeGreaterThan(10 * 10)
    disposeWebgpu(r, d)
    expect(r.memory()).toEqual(base)
  })

  it('a cancelled training throws CancelledError and frees its buffers', async (ctx) => {
    if (skipWithout('webgpu', rt !== null, `no WebGPU adapter: ${why}`)) return ctx.skip()
    const r = rt!
    const base = r.memory()
    const d = prepareWebgpu(r, datasetFor(workload), workload)
    const withData = r.memory()
    const done: TrainedModel[] = []
    await expect(trainWebgpu(r, d, workload, [0, 1], { fused: true }, hooks(done, 1))).rejects.toBeInstanceOf(CancelledError)
    expect(done).toEqual([])
    expect(r.memory()).toEqual(withData)
    disposeWebgpu(r, d)
    expect(r.memory()).toEqual(base)
  })
})
