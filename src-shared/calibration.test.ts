// The calibration's pure half: the MLP's workload is the article's batched shape, `auto` is the
// fastest batched step measured among the backends it may pick (one fused program, or a CPU
// backend's models spread over the cores; said with the numbers), and the estimate takes a
// calibrated backend's measured speed instead of the assumed one.
import { describe, expect, it } from 'vitest'
import {
  batchedStep,
  calibratedSpeed,
  calibrationTable,
  calibrationWorkload,
  familiesToCalibrate,
  CALIBRATION_JOB,
  familyCalibration,
  lengthenedWorkload,
  lengthening,
  spreadsOverCores,
  unmeasuredTiming,
} from './calibration'
import type { BackendTiming } from './contract/calibration'
import { presetConfig } from './contract/config'
import { estimateRun } from './estimate'
import { gbdtFamily, mlpFamily } from './families'

const timing = (
  backend: string,
  oneModelStepMs: number | null,
  fusedStepMs: number | null,
  spreadStepMs: number | null = null,
  note: string | null = null,
): BackendTiming => ({
  backend,
  device: `${backend} device`,
  oneModelStepMs,
  fusedStepMs,
  spreadStepMs,
  atLeastStepMs: null,
  note,
})

describe('the calibration workload', () => {
  it("is the article's batched MLP shape for a few steps, and a few rounds of the article's trees", () => {
    const mlp = calibrationWorkload(mlpFamily, 16)
    expect(mlp.workload).toMatchObject({ size: 2560, features: 100, model: { kind: 'mlp', batchSize: 512, hidden: [64], epochs: 1 } })
    expect(mlp.record).toMatchObject({ models: 50, workers: 16, steps: 4, step: 'step' })
    expect(mlp.record.fusedWork).toBeCloseTo(50 * mlp.record.oneModelWork, 0)
    expect(mlp.record.text).toBe('MLP 100→64→1, Adam lr 0.01, batch 512, 1 epoch on 2560 rows: one model alone and 50 fused')
    expect(calibrationWorkload(gbdtFamily, 2).record).toMatchObject({ size: 10_000, models: 10, workers: 2, steps: 4, step: 'round' })
  })

  it('refuses an unknown family on field family', () => {
    expect(familiesToCalibrate().map((f) => f.kind)).toEqual(['mlp', 'gbdt'])
    expect(() => familiesToCalibrate('trees')).toThrow(
      expect.objectContaining({ code: 'invalid-input', issues: [{ field: 'family', message: 'family accepts mlp, gbdt (got "trees")' }] }),
    )
  })
})

describe('what auto picks', () => {
  const { record } = calibrationWorkload(mlpFamily, 16)
  const skips = (probed: { name: string; available: boolean; detail: string }[]) =>
    mlpFamily.backends.flatMap((b) => unmeasuredTiming(mlpFamily, b.name, probed) ?? [])

  it("the fastest batched step: a CPU backend's 50 models spread over the 16 cores against a GPU's one program, every other backend said", () => {
    const cal = familyCalibration(
      mlpFamily,
      [
        timing('webgpu', 4.2, 4.6),
        timing('onnxruntime', 0.5, 12, 1.8),
        timing('wasm', 2, 60, 8),
        timing('cpu', 48, null, null, 'fused not measured'),
        ...skips([{ name: 'tensorflow', available: false, detail: 'not installed' }]),
      ],
      record,
      '2026-12-04T10:00:00.000Z',
    )
    expect(spreadsOverCores(mlpFamily, 'onnxruntime', record)).toBe(true)
    expect(spreadsOverCores(mlpFamily, 'webgpu', record)).toBe(false)
    expect(batchedStep(timing('onnxruntime', 0.5, 12, 1.8), record)).toEqual({ ms: 1.8, workers: 16 })
    expect(batchedStep(timing('webgpu', 4.2, 4.6), record)).toEqual({ ms: 4.6, workers: 1 })
    expect(cal.auto).toBe('onnxruntime')
    expect(cal.reason).toBe(
      'auto → onnxruntime: a batched step of 50 models in 1.8 ms (16 workers × 4), against webgpu 4.6 ms, wasm 8.0 ms, cpu over 48 ms (calibrated 2026-12-04)',
    )
    const table = calibrationTable(cal)
    expect(table.header).toEqual([
      'backend',
      'one model / step',
      '50 fused / step',
      '50 over 16 workers / step',
      'fastest batched',
      'device, or why not measured',
    ])
    expect(table.rows[2]).toEqual(['onnxruntime', '0.50 ms', '12 ms', '1.8 ms', '1.8 ms', 'onnxruntime device'])
    expect(table.rows[4]).toEqual(['cpu', '48 ms', '–', '–', 'over 48 ms', 'cpu device — fused not measured'])
    expect(cal.backends.map((b) => b.backend)).toEqual(['tensorflow', 'webgpu', 'onnxruntime', 'wasm', 'cpu'])
    expect(cal.backends[0].note).toBe('not available here: not installed')
  })

  it('a GPU whose fused step is cheaper wins, even against 16 cores; on one core a CPU backend is one fused program', () => {
    expect(familyCalibration(mlpFamily, [timing('webgpu', 0.3, 0.5), timing('onnxruntime', 0.5, 12, 1.8)], record, '2026-12-04T10:00:00.000Z').auto).toBe(
      'webgpu',
    )
    const oneCore = calibrationWorkload(mlpFamily, 1).record
    expect(spreadsOverCores(mlpFamily, 'onnxruntime', oneCore)).toBe(false)
    const cal = familyCalibration(mlpFamily, [timing('webgpu', 4.2, 4.6), timing('onnxruntime', 0.5, 12)], oneCore, '2026-12-04T10:00:00.000Z')
    expect(cal.auto).toBe('webgpu')
    expect(cal.reason).toMatch(/^auto → webgpu: a batched step of 50 models in 4\.6 ms \(one fused program\), against onnxruntime 12 ms /)
  })

  it('never a backend auto may not pick, and none when nothing was measured', () => {
    const trees = calibrationWorkload(gbdtFamily, 2).record
    const cal = familyCalibration(gbdtFamily, [timing('cpu', 20, 150, 78), timing('xgboost', 1, 2)], trees, '2026-12-04T10:00:00.000Z')
    expect(cal.auto).toBe('cpu')
    expect(cal.reason).toBe(
      'auto → cpu: a batched round of 10 models in 78 ms (2 workers × 5), the only backend auto could measure here (calibrated 2026-12-04)',
    )
    expect(unmeasuredTiming(gbdtFamily, 'xgboost', [{ name: 'xgboost', available: true, detail: 'XGBoost 1.7.4' }])?.note).toBe(
      'not a choice of auto: only when asked for by name',
    )
    const none = familyCalibration(mlpFamily, skips([]), record, '2026-12-04T10:00:00.000Z')
    expect(none.auto).toBeNull()
    expect(none.reason).toMatch(/^auto has no backend it may pick here \(tensorflow: not available here: not reported by the probe; webgpu: /)
  })
})

describe('a job too short to time its steps', () => {
  it('is timed again with its passes multiplied by the power of 2 that makes it long enough, at most 64', () => {
    expect(lengthening(CALIBRATION_JOB.longEnoughMs)).toBe(1)
    expect(lengthening(400)).toBe(1)
    // an H100's 4-step fused webgpu job: 17.6 ms → 16 × the epochs
    expect(lengthening(17.6)).toBe(16)
    expect(lengthening(76)).toBe(4)
    expect(lengthening(0.5)).toBe(CALIBRATION_JOB.maxLengthening)
  })

  it("multiplies the family's passes: the MLP's epochs, the trees' rounds", () => {
    const mlp = calibrationWorkload(mlpFamily, 2).workload
    expect(lengthenedWorkload(mlpFamily, mlp, 16)).toEqual({ ...mlp, model: { ...mlp.model, epochs: 16 } })
    const trees = calibrationWorkload(gbdtFamily, 2).workload
    expect(lengthenedWorkload(gbdtFamily, trees, 4)!.model).toEqual({ ...trees.model, rounds: 16 })
  })
})

describe('the estimate on calibrated speeds', () => {
  const { record } = calibrationWorkload(mlpFamily, 16)

  it('fits fixed cost and rate through the two measured steps; a fused step no slower than one model is all fixed cost', () => {
    const assumed = mlpFamily.backends.find((b) => b.name === 'onnxruntime')!.speed
    const cal = familyCalibration(mlpFamily, [timing('onnxruntime', 0.5, 10.5), timing('webgpu', 4, 4)], record, '2026-12-04T10:00:00.000Z')
    const onnx = calibratedSpeed(cal, 'onnxruntime', assumed)
    const perStep = (work: number) => onnx.stepMs + (work / onnx.workPerSecond) * 1000
    expect(perStep(record.oneModelWork)).toBeCloseTo(0.5, 9)
    expect(perStep(record.fusedWork)).toBeCloseTo(10.5, 9)
    expect(calibratedSpeed(cal, 'webgpu', assumed)).toMatchObject({ stepMs: 4, workPerSecond: Number.POSITIVE_INFINITY, jobMs: assumed.jobMs })
    expect(calibratedSpeed(cal, 'wasm', assumed)).toBe(assumed)
  })

  it('is used where the calibration has the backend, and says so', () => {
    const config = presetConfig('article', { sizes: [10_000] })
    const assumed = estimateRun(config, 'webgpu', { cpuCount: 16 })
    const slow = familyCalibration(mlpFamily, [timing('webgpu', 10, 10)], record, '2026-12-04T10:00:00.000Z')
    const calibrated = estimateRun(config, 'webgpu', { cpuCount: 16, calibration: { mlp: slow } })
    expect(assumed.speed).toBe('assumed')
    expect(calibrated.speed).toBe('calibrated')
    // 50 models × 48 steps at 10 ms one at a time, in the sequential measurement alone
    expect(calibrated.totalMs!).toBeGreaterThan(24_000)
    expect(assumed.totalMs!).toBeLessThan(calibrated.totalMs!)
    expect(estimateRun(config, 'onnxruntime', { cpuCount: 16, calibration: { mlp: slow } }).speed).toBe('assumed')
  })
})
