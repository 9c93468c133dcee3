// `auto` picks what a calibration found fastest here (issue 32), shown with two toy MLP backends
// registered only in this test (the built-in ones reported unavailable, so nothing slow is timed):
// through the real pool and service (workers in-process), the first run with `auto` calibrates and
// runs on the faster toy with the reason recorded; the next run reuses the store's cache; `calibrate`
// redoes it (a toy made slower since loses); a damaged cache is ignored and rewritten; a fused run
// that outlasts what could still win is cut off; with nothing to pick, a run fails naming why.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type BackendCapability, CalibrationFileSchema, modelSeed, type RunEvent, splitRows } from '@shared/contract'
import { type BackendSpec, registerBackend } from '@shared/families'
import type { MlpParams } from '@shared/families/mlp'
import { configFromFlags } from '../cli/options'
import type { Dataset } from '../engine/datasets/generated'
import { builtInWorkerFamilies } from '../engine/families'
import { mlpWorkerFamily } from '../engine/families/mlp'
import { defineBackend } from '../engine/families/define-backend'
import { withBackends } from '../engine/families/seam'
import { CancelledError, type WorkerBackend } from '../engine/families/types'
import { CALIBRATION_DIR } from '../store/calibration-cache'
import { RunStore } from '../store/run-store'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

/** ms each toy sleeps per training step (a test changes them to make the other one faster); toy-lumpy: only when fused */
const stepDelayMs: Record<string, number> = {}
const DELAYS = { 'toy-fast': 0, 'toy-slow': 10, 'toy-lumpy': 500 }

const speed = { workPerSecond: 2e8, stepMs: 0.2, jobMs: 1, poolStartMs: 50, sharedDevice: false }
const specs: BackendSpec[] = [
  { name: 'toy-fast', gpu: false, auto: true, batched: true, speed },
  { name: 'toy-slow', gpu: false, auto: true, batched: true, speed: { ...speed, stepMs: 2 } },
]

/** A toy that predicts the training mean, after sleeping its delay per step. */
function toyBackend(name: string): WorkerBackend<MlpParams, never, Dataset> {
  return {
    name,
    probe: async () => ({ name: name as never, available: true, gpu: false, detail: `${name}, in the test process` }),
    start: async () =>
      ({
        backend: name,
        hardware: false,
        device: `${name} device`,
        flags: {},
        versions: {},
        memory: () => ({ numTensors: 0, numBytes: 0 }),
        heapBytes: () => null,
        release: () => {},
      }) as never,
    prepare: (_rt, dataset) => dataset,
    dispose: () => {},
    warmUp: async () => {},
    async train(_rt, data, w, indices, { fused }, hooks) {
      const steps = Math.ceil(splitRows(w.size, w.testSplit).train / w.model.batchSize) * w.model.epochs
      let mean = 0
      for (let r = 0; r < data.train; r++) mean += data.yTrain[r] / data.train
      for (const group of fused ? [indices] : indices.map((i) => [i])) {
        for (let s = 1; s <= steps; s++) {
          if (hooks.shouldStop()) throw new CancelledError()
          await new Promise((resolve) => setTimeout(resolve, name === 'toy-lumpy' && !fused ? 0 : stepDelayMs[name]))
          hooks.onProgress(group, { done: s, total: steps, unit: 'batch' })
        }
        for (const index of group)
          hooks.onModelDone({
            index,
            seed: modelSeed(w.seed, index),
            trainMs: fused ? null : 1,
            groupTrainMs: fused ? 1 : null,
            testMse: mean * mean,
            finalLoss: null,
          })
      }
    },
  }
}

const toys = ['toy-fast', 'toy-slow', 'toy-lumpy'].map((name) => defineBackend(toyBackend(name)))
const families = (kind: string) => (kind === 'mlp' ? withBackends(mlpWorkerFamily, toys) : builtInWorkerFamilies(kind))

/** The built-in backends unavailable (nothing real is timed), the toys available. */
const probe = async (): Promise<BackendCapability[]> => [
  ...(['tensorflow', 'webgpu', 'onnxruntime', 'wasm', 'cpu'] as const).map((name) => ({ name, available: false, gpu: false, detail: 'not in this test' })),
  ...specs.map((s) => ({ name: s.name as never, available: true, gpu: false, detail: `${s.name}, in the test process` })),
]

const smallRun = () => configFromFlags({ sizes: '400', models: '4', workers: '2', repeats: '1', epochs: '1', 'batch-size': '64' })

let undo: (() => void)[] = []
beforeAll(() => {
  undo = specs.map((s) => registerBackend('mlp', s))
})
afterAll(() => undo.reverse().forEach((u) => u()))

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trainpool-auto-'))
  Object.assign(stepDelayMs, DELAYS)
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function makeService(probed = probe) {
  const launcher = new InProcessLauncher(families)
  const service = new BenchService({
    launcher,
    store: new RunStore(dir),
    shell: 'cli',
    telemetry: false,
    probe: probed,
    appVersion: 'test',
    autoRule: 'calibrated',
  })
  const events: RunEvent[] = []
  service.onEvent((e) => events.push(e))
  return { service, launcher, events }
}

async function runAuto(service: BenchService) {
  const { runId } = await service.start({ config: smallRun() })
  return service.waitForRun(runId)
}

const cacheFiles = () => readdirSync(join(dir, CALIBRATION_DIR)).filter((n) => n.endsWith('.json'))
const calibratingSaid = (events: RunEvent[]) =>
  events.filter((e) => e.type === 'phase' && e.phase === 'calibrating').map((e) => (e as { message: string }).message)

describe('auto by calibration', () => {
  it('calibrates on first use, runs on the faster toy with the reason recorded, and the next run reuses the cache', async () => {
    const { service, launcher, events } = makeService()
    const first = await runAuto(service)
    expect(first.status, first.error ?? '').toBe('ok')
    expect(first.config.backend).toBe('auto')
    expect(first.environment?.backend).toBe('toy-fast')
    expect(first.environment?.auto).toMatchObject({ backend: 'toy-fast', calibratedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
    expect(first.environment?.auto?.reason).toMatch(
      /^auto → toy-fast: a batched step of 50 models in .+, against toy-slow (over )?\d.* \(calibrated \d{4}-\d\d-\d\d\)$/,
    )
    expect(calibratingSaid(events).join('\n')).toMatch(/first run with auto on this machine[\s\S]*timing toy-fast \(1 of 2\)[\s\S]*timing toy-slow \(2 of 2\)/)
    // kept in the store, valid, and announced
    expect(cacheFiles()).toHaveLength(1)
    const file = CalibrationFileSchema.parse(JSON.parse(readFileSync(join(dir, CALIBRATION_DIR, cacheFiles()[0]), 'utf8')))
    expect(file.families.mlp.auto).toBe('toy-fast')
    expect(file.families.mlp.backends.find((b) => b.backend === 'wasm')?.note).toMatch(/^not available here: not in this test/)
    const caps = await service.capabilities()
    expect(caps.autoBackends.mlp).toBe('toy-fast')
    expect(caps.calibration.families.mlp.reason).toBe(first.environment?.auto?.reason)

    // the next run, from a new service on the same store: no calibration, only the run's own workers
    const again = makeService()
    const second = await runAuto(again.service)
    expect(second.status, second.error ?? '').toBe('ok')
    expect(calibratingSaid(again.events)).toEqual([])
    expect(again.launcher.launched).toBe(1 + 2 + 2)
    expect(second.environment?.auto).toEqual(first.environment?.auto)
    expect(launcher.launched).toBeGreaterThan(1 + 2 + 2)
  })

  it('calibrate redoes it: the toy that is faster now becomes auto, and the cache is rewritten', async () => {
    const { service } = makeService()
    const [before] = await service.calibrate({ family: 'mlp' })
    expect(before.auto).toBe('toy-fast')
    stepDelayMs['toy-fast'] = 10
    stepDelayMs['toy-slow'] = 0
    const [after] = await service.calibrate({ family: 'mlp' })
    expect(after.auto).toBe('toy-slow')
    expect(after.reason).toMatch(/^auto → toy-slow: .* against toy-fast /)
    expect(after.calibratedAt >= before.calibratedAt).toBe(true)
    expect(cacheFiles()).toHaveLength(1)
    expect((await service.capabilities()).autoBackends.mlp).toBe('toy-slow')
    const run = await runAuto(service)
    expect(run.environment?.backend).toBe('toy-slow')
    await expect(service.calibrate({ family: 'trees' })).rejects.toMatchObject({ code: 'invalid-input', issues: [{ field: 'family' }] })
  })

  it('a damaged cache is ignored and rewritten by the calibration it causes', async () => {
    const { service } = makeService()
    await service.calibrate({ family: 'mlp' })
    const path = join(dir, CALIBRATION_DIR, cacheFiles()[0])
    // JSON of the wrong shape is as unusable as no JSON
    writeFileSync(path, JSON.stringify({ version: 1, trainpool: 'test', machine: {}, families: {} }))
    expect((await makeService().service.capabilities()).calibration.families).toEqual({})
    writeFileSync(path, '{ not json')
    const fresh = makeService()
    expect((await fresh.service.capabilities()).calibration.families).toEqual({})
    const run = await runAuto(fresh.service)
    expect(run.status, run.error ?? '').toBe('ok')
    expect(run.environment?.auto?.backend).toBe('toy-fast')
    expect(calibratingSaid(fresh.events).join('\n')).toMatch(/calibration cache .* is not JSON .*: ignored \(a calibration rewrites it\)/)
    expect(CalibrationFileSchema.parse(JSON.parse(readFileSync(path, 'utf8'))).families.mlp.auto).toBe('toy-fast')
  })

  it("a fused run that outlasts twice the best backend's whole run is cut off, and said so", async () => {
    // toy-lumpy: fast alone, seconds fused, and assumed slow: timed after toy-fast, whose batched
    // step (20 ms) it beats alone but not fused; toy-slow, timed between, is cut off by its one model
    stepDelayMs['toy-fast'] = 20
    stepDelayMs['toy-slow'] = 50
    const lumpy = registerBackend('mlp', { name: 'toy-lumpy', gpu: false, auto: true, batched: true, speed: { ...speed, stepMs: 50 } })
    try {
      const { service } = makeService(async () => [...(await probe()), { name: 'toy-lumpy' as never, available: true, gpu: false, detail: 'toy-lumpy' }])
      const [calibration] = await service.calibrate({ family: 'mlp' })
      expect(calibration.auto).toBe('toy-fast')
      const cut = calibration.backends.find((b) => b.backend === 'toy-lumpy')!
      expect(cut).toMatchObject({ fusedStepMs: null, spreadStepMs: null })
      expect(cut.oneModelStepMs).toBeLessThan(50)
      // cut off after a second or so: a fused step of at least a quarter of that
      expect(cut.atLeastStepMs).toBeGreaterThan(200)
      expect(cut.note).toMatch(/^fused run cut off after \d.* s: slower than toy-fast's batched step$/)
      expect(calibration.reason).toMatch(/toy-lumpy over \d/)
    } finally {
      lumpy()
    }
  })

  it('with no backend auto may pick, a run with auto fails naming each backend and why', async () => {
    const { service, launcher } = makeService(async () => (await probe()).map((b) => ({ ...b, available: false, detail: 'switched off' })))
    const run = await runAuto(service)
    expect(run.status).toBe('failed')
    expect(run.error).toMatch(
      /^backend auto is not available here: auto has no backend it may pick here \(tensorflow: not available here: switched off; .*toy-slow: not available here: switched off\)/,
    )
    expect(launcher.launched).toBe(0)
  })
})
