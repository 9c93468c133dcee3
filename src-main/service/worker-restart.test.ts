// A worker that runs out of memory is replaced, and the run's warnings say so: through the real
// service, runner and pool, with workers running the real message loop in-process over the toy
// family (testing/constant-family.ts), whose first worker's heap is spent by model 0 — every later
// job on it fails too, as a wasm worker's does once it reached its memory cap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract'
import { registerFamily } from '@shared/families'
import type { StartedBackend } from '../engine/families/define-backend'
import { type ConstantParams, constantFamily, constantWorkerFamily } from '../testing/constant-family'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

let unregister: () => void
beforeAll(() => {
  unregister = registerFamily(constantFamily as never)
})
afterAll(() => unregister())

type SpendableRuntime = StartedBackend<ConstantParams> & { heapSpent: boolean }

function spendingFamily() {
  let spentOnce = false
  return {
    ...constantWorkerFamily,
    async init(backend: string): Promise<SpendableRuntime> {
      return { ...(await constantWorkerFamily.init(backend as never)), heapSpent: false }
    },
    async train(rt: SpendableRuntime, ...rest: Parameters<typeof constantWorkerFamily.train> extends [unknown, ...infer R] ? R : never) {
      const [, , indices] = rest
      if (!spentOnce && indices.includes(0)) spentOnce = rt.heapSpent = true
      // the message a wasm worker's allocation failure gives (worker/loop.ts reads it as out of memory)
      if (rt.heapSpent) throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded')
      return constantWorkerFamily.train(rt, ...rest)
    },
  }
}

describe('a worker that runs out of memory', () => {
  it('is restarted before its next job, and the run says so in its warnings', async () => {
    const family = spendingFamily()
    const launcher = new InProcessLauncher((kind) => (kind === 'constant' ? (family as never) : undefined))
    const service = new BenchService({
      launcher,
      store: null,
      shell: 'cli',
      telemetry: false,
      probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
    })
    const config = {
      ...presetConfig('smoke'),
      model: { kind: 'constant', rounds: 2 },
      sizes: [300],
      models: [3],
      workers: [1],
      strategies: ['pool'],
      backend: 'cpu',
      failurePolicy: 'continue',
    }
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)

    const [m] = run.measurements
    expect(m.failures).toEqual([
      expect.objectContaining({
        worker: 0,
        modelIndices: [0],
        reason: expect.stringMatching(/^training failed: out of memory: .*Maximum memory size exceeded/),
      }),
    ])
    // models 1 and 2 trained on the replacement, not failed on the spent worker
    expect(m.perModel.map((p) => p.index)).toEqual([1, 2])
    expect(launcher.launched).toBe(2)
    expect(run.warnings).toContainEqual(
      expect.stringMatching(/^pool W=1 at 300 rows: worker 0 ran out of memory \(out of memory: .*\) and was restarted before its next job$/),
    )
  })
})
