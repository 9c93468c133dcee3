// A halving search's live view (issue 39): the service's progress cells carry each model's rounds
// so far (its rungs' rounds, summed), which the renderer's lanes read to show the models that left
// at each cut. Through the real worker loop (the in-process launcher), one small sequential run.
import { describe, expect, it } from 'vitest'
import { type ModelCell, type ModelSet, presetConfig, setSize } from '@shared/contract'
import { builtInWorkerFamilies } from '../engine/families'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

describe('live progress of a halving search', () => {
  it("gives each model's cell the rounds it had when its last rung ended", async () => {
    const service = new BenchService({
      launcher: new InProcessLauncher(builtInWorkerFamilies),
      store: null,
      shell: 'cli',
      telemetry: false,
      probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
    })
    const set: ModelSet = { grid: { maxDepth: [1, 2, 3] }, seeds: 1, folds: 2 }
    const config = presetConfig('smoke', {
      sizes: [300],
      workers: [1],
      backend: 'cpu',
      features: 4,
      strategies: ['sequential'],
      models: [setSize(set)],
      set,
      search: { method: 'halving', factor: 3, minRounds: 2 },
      model: { kind: 'gbdt', rounds: 6, maxDepth: 1 } as never,
    })
    let cells: ModelCell[] = []
    service.onEvent((e) => {
      if (e.type === 'progress') cells = e.models
    })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.status, run.error ?? undefined).toBe('ok')
    // rungs: 3 configurations × 2 rounds → 1 × 6 rounds; the cells agree with the result
    const perModel = run.measurements[0].perModel
    expect(perModel.map((p) => p.roundsTrained).sort()).toEqual([2, 2, 2, 2, 6, 6])
    expect(cells.map((c) => c.roundsTrained)).toEqual(perModel.map((p) => p.roundsTrained))
  })
})
