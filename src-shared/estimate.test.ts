import { describe, expect, it } from 'vitest'
import { type BenchConfig, type ConcreteBackend, presetConfig } from './contract/config'
import { type Workload, workloadFor } from './contract/workload'
import {
  estimateMeasurementMs,
  estimateMemory,
  estimateRun,
  estimateRunPeakBytes,
  flooredMeasurementMs,
  modelsPerWorker,
  RUN_OVERHEAD_MS,
  shortMeasurementsNote,
} from './estimate'
import { allFamilies, type BackendSpeed, type MlpParams, type ModelFamily, mlpFamily, registerFamily } from './families'
import { expandPlan, groupKey } from './plan'

/** The run of issue 16: 2 000 / 5 000 rows, 8 models, W 1 and 2, all three strategies, 3 repeats. */
const severalW = () => presetConfig('quick', { preset: 'custom', sizes: [2000, 5000], models: [8], workers: [1, 2], repeats: 3, model: { epochs: 3 } })

describe('the one estimator', () => {
  it('counts exactly the measurements of the real plan: sequential once per size, not once per W', () => {
    const c = severalW()
    // 2 sizes × (sequential + pool W1, W2 + batched W1, W2) × 3 repeats; counting sequential per W gave 36
    expect(expandPlan(c)).toHaveLength(30)
    expect(estimateRun(c, 'wasm').measurements).toBe(expandPlan(c).length)
    expect(estimateRun(c, null).measurements).toBe(30)
    expect(estimateRun(c, 'wasm').pools).toBe(10)
    for (const name of ['smoke', 'quick', 'article'] as const) {
      expect(estimateRun(presetConfig(name), 'cpu').measurements).toBe(expandPlan(presetConfig(name)).length)
    }
  })

  it('a sequential-only run costs the same whatever the worker list', () => {
    const seq = (workers: number[]) => presetConfig('quick', { strategies: ['sequential'], workers, models: [8] })
    const one = estimateRun(seq([1]), 'wasm', { cpuCount: 4 })
    const many = estimateRun(seq([1, 2, 4, 8]), 'wasm', { cpuCount: 4 })
    expect(many).toEqual(one)
  })

  it('shows the memory check the service makes (bench-service calls estimateRunPeakBytes): the same number', () => {
    for (const c of [severalW(), presetConfig('smoke'), presetConfig('quick'), presetConfig('article')]) {
      expect(estimateRun(c, 'wasm').peakTotalBytes).toBe(estimateRunPeakBytes(c))
      expect(estimateRun(c, null).peakTotalBytes).toBe(estimateRunPeakBytes(c))
    }
  })

  it("memory is the family's own model: each warmed pool once, all its workers together", () => {
    const c = severalW()
    let total = 0
    let worker = 0
    for (const key of expandPlan(c)) {
      const w = workloadFor(c, key.size)
      const per = modelsPerWorker(key.strategy, key.models, key.workers).map((n) => mlpFamily.workerPeakBytes(w as Workload<MlpParams>, n))
      total = Math.max(
        total,
        per.reduce((a, b) => a + b, 0),
      )
      worker = Math.max(worker, ...per)
    }
    expect(estimateMemory(c)).toEqual({ peakTotalBytes: total, peakWorkerBytes: worker })
    expect(modelsPerWorker('batched', 7, 2)).toEqual([4, 3])
    expect(modelsPerWorker('pool', 8, 2)).toEqual([1, 1])
    expect(modelsPerWorker('sequential', 8, 5)).toEqual([1])
  })

  it('has no time without a backend (capabilities not arrived), and a time once there is one', () => {
    const c = severalW()
    expect(estimateRun(c, null)).toMatchObject({ backend: null, totalMs: null })
    const wasm = estimateRun(c, 'wasm', { cpuCount: 2 })
    expect(wasm.backend).toBe('wasm')
    expect(wasm.totalMs).toBeGreaterThan(0)
    // work is the family's count over the plan, in its unit
    const work = expandPlan(c).reduce((sum, k) => sum + mlpFamily.workCount(workloadFor(c, k.size) as Workload<MlpParams>, k.models), 0)
    expect(wasm).toMatchObject({ work, workUnit: 'FLOP' })
    // a faster assumed backend is faster; the same plan does the same work
    const gpu = estimateRun(presetConfig('article'), 'tensorflow')
    const cpu = estimateRun(presetConfig('article'), 'cpu')
    expect(gpu.totalMs!).toBeLessThan(cpu.totalMs!)
    expect(gpu.work).toBe(cpu.work)
  })

  it("takes a job's steps from the family (progressTotal) and the fixed costs from the family's own backend entry", () => {
    // a family that does no work: only the fixed costs of its entry count, so the time is exact
    const s: BackendSpeed = { workPerSecond: 1e6, stepMs: 3, jobMs: 7, poolStartMs: 300, sharedDevice: false }
    const toy: ModelFamily = {
      ...(mlpFamily as unknown as ModelFamily),
      kind: 'estimate-toy',
      backends: [{ name: 'wasm', gpu: false, auto: true, batched: true, speed: s }],
      progressTotal: () => 10,
      work: { unit: 'leaf', rateLabel: 'kleaf/s', rateScale: 1e3 },
      workCount: () => 0,
      workerPeakBytes: () => 1,
    }
    const unregister = registerFamily(toy)
    try {
      const c = { ...presetConfig('smoke'), sizes: [2000], models: [4], workers: [2], strategies: ['sequential', 'pool', 'batched'], repeats: 2 } as BenchConfig
      c.model = { kind: 'estimate-toy' } as unknown as BenchConfig['model']
      const job = 10 * s.stepMs + s.jobMs
      // sequential: 4 jobs in turn; pool W2: 2 per lane; batched W2: 1 fused job per lane — per repeat,
      // each run again until it lasts the measurement floor (74 ms: 4 runs)
      const measurements = 2 * (flooredMeasurementMs(4 * job) + flooredMeasurementMs(2 * job) + flooredMeasurementMs(1 * job))
      expect(flooredMeasurementMs(2 * job)).toBe(4 * 2 * job)
      expect(estimateRun(c, 'wasm', { cpuCount: 2 }).shortMeasurements).toBe(6)
      const pools = s.poolStartMs * (1 + 1 + 1) // 2 workers start at once on 2 cores
      expect(estimateRun(c, 'wasm', { cpuCount: 2 }).totalMs).toBeCloseTo(RUN_OVERHEAD_MS + pools + measurements, 6)
      expect(estimateRun(c, 'wasm', { cpuCount: 2 }).work).toBe(0)
      // a backend the family does not have gets no time (the schema refuses such a config)
      expect(estimateRun(c, 'cpu', { cpuCount: 2 })).toMatchObject({ backend: null, totalMs: null })
      expect(new Set(expandPlan(c).map(groupKey)).size).toBe(3)
    } finally {
      unregister()
    }
  })

  it('lands near the times issue 16 measured on wasm (2 cores): smoke 1.5 s, quick ~7 s, the W 1,2 run 12–15 s', () => {
    const ms = (c: BenchConfig) => estimateRun(c, 'wasm', { cpuCount: 2 }).totalMs!
    expect(ms(presetConfig('smoke'))).toBeGreaterThan(1000)
    expect(ms(presetConfig('smoke'))).toBeLessThan(2500)
    expect(ms(presetConfig('quick'))).toBeGreaterThan(4500)
    expect(ms(presetConfig('quick'))).toBeLessThan(10_000)
    expect(ms(severalW())).toBeGreaterThan(9000)
    expect(ms(severalW())).toBeLessThan(20_000)
  })
})

describe('every backend of every family', () => {
  // trees on webgpu once had no histogram-update rate: their estimate counted fixed costs only
  it('counts compute: more features (more work, the same steps) take longer', () => {
    const pairs = allFamilies().flatMap((family) => family.backends.map(({ name: backend }) => ({ family, backend: backend as ConcreteBackend })))
    expect(pairs.map(({ family, backend }) => `${family.kind}/${backend}`)).toEqual([
      'mlp/tensorflow',
      'mlp/webgpu',
      'mlp/onnxruntime',
      'mlp/wasm',
      'mlp/cpu',
      'gbdt/cpu',
      'gbdt/webgpu',
      'gbdt/xgboost',
    ])
    for (const { family, backend } of pairs) {
      const workload = (features: number) => workloadFor(presetConfig('quick', { features, model: { kind: family.kind as 'mlp' | 'gbdt' } }), 5000)
      const key = { strategy: 'pool' as const, models: 8, workers: 2 }
      const narrow = estimateMeasurementMs(family, workload(10), key, backend)
      const wide = estimateMeasurementMs(family, workload(100), key, backend)
      expect(wide, `${family.kind} on ${backend}`).toBeGreaterThan(narrow)
    }
  })
})

describe('short measurements before a run (issue 25)', () => {
  it('a sweep whose measurements are estimated under the floor is told so, with what to change; one model count is not', () => {
    const sweep = { ...presetConfig('smoke'), models: [1, 2, 4, 8], workers: [1, 2] } as BenchConfig
    const e = estimateRun(sweep, 'onnxruntime', { cpuCount: 2 })
    expect(e.shortMeasurements).toBeGreaterThan(0)
    expect(shortMeasurementsNote(sweep, e)).toMatch(/^\d+ of \d+ measurements are estimated under 250 ms: each runs again .*more rows or more epochs\/rounds/)
    const one = presetConfig('smoke')
    expect(shortMeasurementsNote(one, estimateRun(one, 'onnxruntime', { cpuCount: 2 }))).toBeNull()
  })
})

describe('the estimate of a halving search', () => {
  // the grid: 3 eta × 3 depth × 3 subsample × 2 min-child-weight, 3 folds, 100 rounds
  const grid = (search?: BenchConfig['search']) =>
    presetConfig('smoke', {
      sizes: [10_000],
      models: [162],
      workers: [2],
      strategies: ['batched'],
      backend: 'cpu',
      set: { grid: { eta: [0.05, 0.1, 0.3], maxDepth: [3, 6, 8], subsample: [0.6, 0.8, 1], minChildWeight: [1, 5] }, seeds: 1, folds: 3 },
      model: { kind: 'gbdt', rounds: 100 } as never,
      ...(search ? { search } : {}),
    })

  it("counts the rounds its rungs train, not the grid's: 54×16 → 18×48 → 6×100 (the default) is 1 752 of 5 400 configuration-rounds", () => {
    const full = estimateRun(grid(), 'cpu', { cpuCount: 2 })
    const halving = estimateRun(grid({ method: 'halving', factor: 3 }), 'cpu', { cpuCount: 2 })
    expect(halving.work / full.work).toBeCloseTo((54 * 16 + 18 * 32 + 6 * 52) / 5400, 12)
    expect((halving.totalMs! - RUN_OVERHEAD_MS) / 1).toBeLessThan((full.totalMs! - RUN_OVERHEAD_MS) * 0.4)
    // a shorter first rung trains less: 3 → 9 → 27 → 81 → 100 is 505
    const sooner = estimateRun(grid({ method: 'halving', factor: 3, minRounds: 3 }), 'cpu', { cpuCount: 2 })
    expect(sooner.work / full.work).toBeCloseTo((54 * 3 + 18 * 6 + 6 * 18 + 2 * 54 + 1 * 19) / 5400, 12)
  })
})
