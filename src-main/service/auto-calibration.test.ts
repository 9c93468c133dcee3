// `auto` picks what a calibration found fastest here (issue 32), shown with two toy MLP backends
// registered only in this test (the built-in ones reported unavailable, so nothing slow is timed):
// through the real pool and service (workers in-process), the first run with `auto` calibrates and
// runs on the faster toy with the reason recorded; the next run reuses the store's cache; `calibrate`
// redoes it (a toy made slower since loses); a damaged cache is ignored and rewritten; a fused run
// that outlasts what could still win is cut off; with nothing to pick, a run fails naming why.
// A calibration runs alone: a second one at the same time, or one while another process writes a
// live run, is refused naming the other; one a run started during is said and not kept; a run
// started during another process's calibration says so. The cache is trusted only as far as it is
// what a calibration here would have written (a pick of another family, one not available, one its
// timings do not give is ignored and redone), and the run says the backend its workers ran.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type BackendCapability, CalibrationFileSchema, modelSeed, type RunEvent, splitRows } from '@shared/contract'
import { type BackendSpec, findFamily, registerBackend } from '@shared/families'
import type { MlpParams } from '@shared/families/mlp'
import { configFromFlags } from '../cli/options'
import type { Dataset } from '../engine/datasets/generated'
import { builtInWorkerFamilies } from '../engine/families'
import { mlpWorkerFamily } from '../engine/families/mlp'
import { defineBackend } from '../engine/families/define-backend'
import { withBackends } from '../engine/families/seam'
import { CancelledError, type WorkerBackend } from '../engine/backend/types'
import { CALIBRATION_DIR } from '../store/calibration-cache'
import { RunStore } from '../store/run-store'
import { LOCK_FILE, writeLock } from '../store/writer-lock'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { fakeRun } from '../testing/run-fixtures'
import { AutoCalibration } from './auto-calibration'
import type { BackendProbe } from './backend-probe'
import { BenchService } from './bench-service'

/** ms each toy sleeps per training step (a test changes them to make the other one faster); toy-lumpy: only when fused */
const stepDelayMs: Record<string, number> = {}
const DELAYS = { 'toy-fast': 0, 'toy-slow': 10, 'toy-lumpy': 500, 'toy-liar': 0 }

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

/** toy-liar: reports itself as toy-slow once started (what its workers say it ran) */
const liar = toyBackend('toy-liar')
const toys = [
  ...['toy-fast', 'toy-slow', 'toy-lumpy'].map((name) => defineBackend(toyBackend(name))),
  defineBackend({ ...liar, start: async (...args) => ({ ...((await liar.start(...args)) as object), backend: 'toy-slow' }) as never }),
]
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

/** A run in the store written by another live process right now: its writer lock names this test's parent (alive, not this process). */
async function liveRunOfAnotherProcess(runId: string): Promise<number> {
  const store = new RunStore(dir)
  await store.save({ ...fakeRun({}, runId), status: 'running' })
  const now = Date.now()
  await writeLock(store.runDir(runId), { pid: process.ppid, host: os.hostname(), startedAt: now, heartbeatAt: now })
  return process.ppid
}

/** Resolves once the calibration has started timing its first backend. */
function firstBackendTimed(): { hooks: { onBackend(): void }; started: Promise<void> } {
  let started!: () => void
  return { hooks: { onBackend: () => started() }, started: new Promise<void>((resolve) => (started = resolve)) }
}

describe('a calibration runs alone', () => {
  it('two calibrations at once on the same store: the second is refused naming the first; the lock goes with the first', async () => {
    stepDelayMs['toy-slow'] = 30
    const first = makeService()
    const { hooks, started } = firstBackendTimed()
    const calibrating = first.service.calibrateFamilies('mlp', hooks)
    await started
    await expect(makeService().service.calibrate({ family: 'mlp' })).rejects.toMatchObject({
      code: 'busy',
      message: expect.stringMatching(
        new RegExp(`^another calibration of auto is timing the backends on .*: pid ${process.pid}, started .*; wait for it to finish`),
      ),
    })
    expect((await calibrating).notKept).toBeNull()
    expect(existsSync(join(dir, CALIBRATION_DIR, LOCK_FILE))).toBe(false)
    const [again] = await makeService().service.calibrate({ family: 'mlp' })
    expect(again.auto).toBe('toy-fast')
  })

  it('a calibration while another process writes a live run in the store is refused naming the run and its pid', async () => {
    const pid = await liveRunOfAnotherProcess('20250101-120000-aaaaaa')
    const { service, launcher } = makeService()
    await expect(service.calibrate({ family: 'mlp' })).rejects.toMatchObject({
      code: 'busy',
      message: expect.stringMatching(
        new RegExp(`^run 20250101-120000-aaaaaa \\(pid ${pid}, in .*\\) is training on this machine: a calibration now would time it too`),
      ),
    })
    expect(launcher.launched).toBe(0)
    expect(existsSync(join(dir, CALIBRATION_DIR, LOCK_FILE))).toBe(false)
  })

  it('a run that starts (and ends) while a calibration times is seen: what was measured is returned and said, not kept', async () => {
    stepDelayMs['toy-slow'] = 30
    const calibration = new AutoCalibration({
      launcher: new InProcessLauncher(families),
      storeDir: dir,
      appVersion: 'test',
      probe: { backends: probe } as unknown as BackendProbe,
      rule: 'calibrated',
      lock: { watchMs: 20 },
    })
    let competitor: Promise<void> | null = null
    const outcome = await calibration.calibrate([findMlp()], {
      onBackend: (_backend, i) => {
        // a run of another process: live for 200 ms during the first backend's timing, gone before the end
        if (i === 0)
          competitor = liveRunOfAnotherProcess('20250101-120000-bbbbbb').then(async () => {
            await new Promise((resolve) => setTimeout(resolve, 200))
            rmSync(join(dir, '20250101-120000-bbbbbb'), { recursive: true })
          })
      },
    })
    await competitor
    expect(outcome.families[0].auto).toBe('toy-fast')
    expect(outcome.notKept).toMatch(
      new RegExp(
        `^run 20250101-120000-bbbbbb \\(pid ${process.ppid}, in .*\\) trained on this machine during the calibration: its timings are not this machine's alone$`,
      ),
    )
    expect(cacheFiles()).toEqual([])
    expect((await calibration.state()).families).toEqual({})
  })

  it("a run started during another process's calibration says so in its warnings", async () => {
    const now = Date.now()
    const calibrationDir = join(dir, CALIBRATION_DIR)
    mkdirSync(calibrationDir, { mode: 0o700 })
    await writeLock(calibrationDir, { pid: process.ppid, host: os.hostname(), startedAt: now, heartbeatAt: now })
    const { service } = makeService()
    const { runId } = await service.start({ config: { ...smallRun(), backend: 'toy-fast' as never } })
    const run = await service.waitForRun(runId)
    expect(run.status, run.error ?? '').toBe('ok')
    expect(run.warnings).toContain(`a calibration of auto, pid ${process.ppid}, is timing the backends on this machine: these timings compete (in ${dir})`)
  })
})

describe('the cache is what a calibration here would have written, or it is redone', () => {
  const editCache = (edit: (file: ReturnType<typeof CalibrationFileSchema.parse>) => void) => {
    const path = join(dir, CALIBRATION_DIR, cacheFiles()[0])
    const file = CalibrationFileSchema.parse(JSON.parse(readFileSync(path, 'utf8')))
    edit(file)
    writeFileSync(path, JSON.stringify(file))
  }

  it.each([
    ['xgboost', /picks "xgboost", not a backend auto may pick here \(toy-fast, toy-slow\)/],
    ['tensorflow', /picks "tensorflow", not a backend auto may pick here/],
    ['../../bin/sh', /picks "..\/..\/bin\/sh", not a backend auto may pick here/],
    // a backend it may pick, but not the one its own timings give (the words still say toy-fast)
    ['toy-slow', /says auto → toy-slow where its own timings give toy-fast/],
  ])('a cache whose MLP auto is %j is ignored, said, and redone by the next run with auto, which runs on the real pick', async (auto, why) => {
    await makeService().service.calibrate({ family: 'mlp' })
    editCache((file) => void (file.families.mlp.auto = auto))
    const fresh = makeService()
    expect((await fresh.service.capabilities()).calibration.families).toEqual({})
    const run = await runAuto(fresh.service)
    expect(run.status, run.error ?? '').toBe('ok')
    expect(run.environment?.backend).toBe('toy-fast')
    expect(run.environment?.auto?.reason).toMatch(/^auto → toy-fast: /)
    const said = calibratingSaid(fresh.events).join('\n')
    expect(said).toMatch(/the calibration cache .*: its "mlp" entry /)
    expect(said).toMatch(why)
    expect(said).toMatch(/timing toy-fast/)
  })

  it("an entry of another family's table, of timings of a backend not available here, or of no family is ignored", async () => {
    await makeService().service.calibrate({ family: 'mlp' })
    editCache((file) => {
      file.families.gbdt = { ...file.families.mlp, kind: 'gbdt' }
      file.families.boosted = file.families.mlp
    })
    const said: string[] = []
    const kept = await new AutoCalibration({
      launcher: new InProcessLauncher(families),
      storeDir: dir,
      appVersion: 'test',
      probe: { backends: probe } as unknown as BackendProbe,
      rule: 'calibrated',
    }).cached((line) => said.push(line))
    expect(Object.keys(kept!.families)).toEqual(['mlp'])
    expect(said.join('\n')).toMatch(/its "gbdt" entry lists the backends tensorflow, .*, not those of the gradient-boosted trees \(cpu, webgpu, xgboost\)/)
    expect(said.join('\n')).toMatch(/its "boosted" entry is of no model family Trainpool has/)

    editCache((file) => {
      delete file.families.gbdt
      delete file.families.boosted
      file.families.mlp.backends.find((b) => b.backend === 'wasm')!.oneModelStepMs = 0.001
    })
    const fresh = makeService()
    expect((await fresh.service.capabilities()).calibration.families).toEqual({})
  })

  it('the run says the backend its workers ran, even where it is not the one auto picked', async () => {
    const undoLiar = registerBackend('mlp', { name: 'toy-liar', gpu: false, auto: true, batched: true, speed: { ...speed, stepMs: 0.1 } })
    try {
      stepDelayMs['toy-fast'] = 10
      const { service } = makeService(async () => [...(await probe()), { name: 'toy-liar' as never, available: true, gpu: false, detail: 'toy-liar' }])
      const [calibration] = await service.calibrate({ family: 'mlp' })
      expect(calibration.auto).toBe('toy-liar')
      const run = await runAuto(service)
      expect(run.status, run.error ?? '').toBe('ok')
      expect(run.environment?.backend).toBe('toy-slow')
      expect(run.environment?.auto?.backend).toBe('toy-slow')
      expect(run.environment?.auto?.reason).toMatch(/^auto → toy-slow: the workers ran toy-slow, not toy-liar that auto picked \(auto → toy-liar: /)
    } finally {
      undoLiar()
    }
  })
})

function findMlp() {
  return findFamily('mlp')!
}
