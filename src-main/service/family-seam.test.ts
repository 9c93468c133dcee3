// The model-family seam, proven with a family that exists only in this test (testing/
// constant-family.ts): registered on both halves, it is parsed from CLI flags, validated, planned,
// run by the real pool, runner and service (workers run the real message loop in-process), shows
// its own progress unit, and is verified exactly — with no change to any of those modules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunEvent } from '@shared/contract'
import { findFamily, registerFamily } from '@shared/families'
import { configFromFlags } from '../cli/options'
import { builtInWorkerFamilies } from '../engine/families'
import { constantFamily, constantWorkerFamily } from '../testing/constant-family'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

let unregister: () => void
beforeAll(() => {
  unregister = registerFamily(constantFamily as never)
})
afterAll(() => unregister())

const workers = (kind: string) => (kind === 'constant' ? (constantWorkerFamily as never) : builtInWorkerFamilies(kind))

describe('a model family registered only in a test', () => {
  it('is parsed from the command line with its own flags, and its flags are refused for another family', () => {
    const config = configFromFlags({ model: 'constant', passes: '4', sizes: '300', models: '3', workers: '1,2', backend: 'cpu', repeats: '1' })
    expect(config.model).toEqual({ kind: 'constant', rounds: 4 })
    expect(() => configFromFlags({ model: 'constant', passes: '0' })).toThrow(/^--passes must be an integer from 1 to 50 \(got 0\)$/)
    expect(() => configFromFlags({ model: 'constant', epochs: '3' })).toThrow(
      /--epochs is a neural network \(MLP\) parameter; it does not apply to --model constant/,
    )
    expect(() => configFromFlags({ passes: '3' })).toThrow(/--passes is a constant predictor parameter; it does not apply to --model mlp/)
    expect(() => configFromFlags({ model: 'constant', backend: 'wasm' })).toThrow(/^--backend wasm cannot train a constant predictor; accepted: auto, cpu/)
  })

  it('trains in all three strategies through the service, with its own progress unit, verified exactly', async () => {
    const launcher = new InProcessLauncher(workers)
    const service = new BenchService({
      launcher,
      store: null,
      shell: 'cli',
      telemetry: false,
      probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
    })
    const events: RunEvent[] = []
    service.onEvent((e) => events.push(e))
    const config = configFromFlags({ model: 'constant', passes: '12', sizes: '400', models: '5', workers: '2', backend: 'cpu', repeats: '1' })
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)

    expect(run.status).toBe('ok')
    expect(run.environment?.backend).toBe('cpu')
    expect(run.measurements.map((m) => m.strategy)).toEqual(['sequential', 'pool', 'batched'])
    expect(run.verification).toMatchObject({ sameWork: true, tolerance: 0, maxRelMseDiff: 0 })
    for (const m of run.measurements) {
      expect(m.modelsTrained).toBe(5)
      expect(m.work).toBe(320 * 12 * 5)
      expect(m.perModel.every((p) => typeof p.fingerprint === 'string')).toBe(true)
    }
    // the fused group's time is named apart from a model's own time
    expect(run.measurements[2].perModel.every((p) => p.trainMs === null && p.groupTrainMs! >= 0)).toBe(true)
    expect(run.measurements[1].perModel.every((p) => p.trainMs! >= 0 && p.groupTrainMs === null)).toBe(true)
    expect(run.summary[0].workRate).toBeGreaterThan(0)
    const lanes = events.flatMap((e) => (e.type === 'progress' ? e.lanes : []))
    expect(lanes.some((l) => l.progress?.unit === 'pass' && l.progress.total === 12)).toBe(true)
    expect(findFamily('constant')!.describeProgress({ done: 2, total: 3, unit: 'pass' }, null as never)).toBe('pass 2/3')
    expect(launcher.launched).toBe(1 + 2 + 2)
  })

  it('a worker without the family says so instead of training something else', async () => {
    const service = new BenchService({
      launcher: new InProcessLauncher(builtInWorkerFamilies),
      store: null,
      shell: 'cli',
      telemetry: false,
      probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
    })
    const { runId } = await service.start({
      config: configFromFlags({ model: 'constant', sizes: '300', models: '2', workers: '1', backend: 'cpu', repeats: '1' }),
    })
    const run = await service.waitForRun(runId)
    expect(run.status).toBe('failed')
    expect(run.error).toMatch(/this worker has no model family "constant"/)
  })
})
