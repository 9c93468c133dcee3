import { describe, expect, it } from 'vitest'
import { AdviceTargetSchema, type Strategy, type SummaryEntry } from '@shared/contract'
import { presetConfig } from '@shared/contract'
import { setResult } from '../testing/model-set-fixtures'
import { seededRandom } from '../testing/random'
import { adviseFrom, checkAdvice, costModelsAt, formatRange, verificationConfig } from './advise'
import { fitLine, predictWithInterval, tQuantile975 } from './linear-fit'
import { fitWorkerScaling } from './worker-scaling'

const SIZE = 10_000

function entry(strategy: Strategy, workers: number, models: number, medianMs: number, size = SIZE): SummaryEntry {
  return {
    size,
    models,
    workers,
    strategy,
    repeats: 1,
    medianMs,
    minMs: medianMs,
    maxMs: medianMs,
    speedupVsSequential: null,
    efficiency: null,
    workRate: 1,
    warnings: [],
  }
}

/** A sweep whose times follow known lines: time = a + b·N per (strategy, W), times an optional noise factor. */
function sweepRun(
  lines: { strategy: Strategy; workers: number; a: number; b: number }[],
  counts = [1, 2, 4, 8, 16, 32, 50],
  noise: (i: number) => number = () => 1,
) {
  const summary = lines.flatMap((l, li) =>
    counts.filter((n) => n >= l.workers).map((n, i) => entry(l.strategy, l.workers, n, (l.a + l.b * n) * noise(li * 100 + i))),
  )
  return { runId: 'sweep-1', summary }
}

const TRUE_LINES = [
  { strategy: 'sequential' as const, workers: 1, a: 50, b: 80 },
  { strategy: 'pool' as const, workers: 2, a: 400, b: 45 },
  { strategy: 'batched' as const, workers: 1, a: 100, b: 30 },
  { strategy: 'batched' as const, workers: 2, a: 300, b: 18 },
]

describe('fitLine', () => {
  it('recovers an exact line, R² = 1, residuals 0, a zero-width interval', () => {
    const fit = fitLine([1, 2, 4, 8, 16].map((x) => ({ x, ms: 7 + 3 * x })))
    expect(fit.a).toBeCloseTo(7, 9)
    expect(fit.b).toBeCloseTo(3, 9)
    expect(fit.r2).toBeCloseTo(1, 12)
    expect(fit.sigma).toBeCloseTo(0, 9)
    const p = predictWithInterval(fit, 100)
    expect(p.predictedMs).toBeCloseTo(307, 6)
    expect(p.highMs - p.lowMs).toBeCloseTo(0, 6)
  })

  it('has no R² or σ with two points (two points always fit)', () => {
    const fit = fitLine([
      { x: 1, ms: 2 },
      { x: 2, ms: 5 },
    ])
    expect(fit.r2).toBeNull()
    expect(fit.sigma).toBeNull()
  })

  it('a noisy line: the 95 % prediction interval holds the true value about 95 % of the time, and widens away from the data', () => {
    const random = seededRandom(7)
    const truth = (x: number) => 200 + 40 * x
    let inside = 0
    const trials = 400
    for (let t = 0; t < trials; t++) {
      // additive noise ~ N(0, 25²) by Box–Muller
      const noisy = [1, 2, 4, 8, 16, 32, 50].map((x) => ({
        x,
        ms: truth(x) + 25 * Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random()),
      }))
      const fit = fitLine(noisy)
      const at = predictWithInterval(fit, 200)
      const truthAt = truth(200) + 25 * Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random())
      if (truthAt >= at.lowMs && truthAt <= at.highMs) inside++
    }
    expect(inside / trials).toBeGreaterThan(0.9)
    expect(inside / trials).toBeLessThan(0.99)
    const fit = fitLine([1, 2, 4, 8].map((x, i) => ({ x, ms: 10 * x + (i % 2 ? 3 : -3) })))
    const near = predictWithInterval(fit, 4)
    const far = predictWithInterval(fit, 400)
    expect(far.highMs - far.lowMs).toBeGreaterThan(near.highMs - near.lowMs)
  })

  it('t quantiles: the table, and the expansion beyond it close to the normal', () => {
    expect(tQuantile975(1)).toBeCloseTo(12.706, 3)
    expect(tQuantile975(5)).toBeCloseTo(2.571, 3)
    expect(tQuantile975(60)).toBeCloseTo(2.0003, 2)
    expect(tQuantile975(10_000)).toBeCloseTo(1.96, 2)
  })
})

describe('fitWorkerScaling', () => {
  it('recovers Amdahl’s serial fraction; fastest at the curve’s end, the knee where a worker gains < 10 %', () => {
    const t1 = 1000
    const sigma = 0.2
    const points = [1, 2, 4, 8].map((w) => ({ workers: w, ms: t1 * (sigma + (1 - sigma) / w) }))
    const s = fitWorkerScaling('pool', SIZE, 64, points)
    expect(s.law).toBe('amdahl')
    expect(s.sigma).toBeCloseTo(0.2, 2)
    expect(s.kappa).toBe(0)
    expect(s.r2).toBeCloseTo(1, 6)
    expect(s.curve.at(-1)!.workers).toBe(16)
    expect(s.fastestWorkers).toBe(16)
    // the knee by its definition: every step before it gains ≥ 10 %, the step after it less
    const c = s.curve
    const knee = s.kneeWorkers
    expect(c[knee].ms).toBeGreaterThan(0.9 * c[knee - 1].ms)
    for (let w = 1; w < knee; w++) expect(c[w].ms).toBeLessThanOrEqual(0.9 * c[w - 1].ms)
  })

  it('switches to the USL when time rises again and recovers σ and κ; the fastest W is inside', () => {
    const t1 = 2000
    const truth = (w: number) => (t1 * (1 + 0.05 * (w - 1) + 0.02 * w * (w - 1))) / w
    const points = [1, 2, 3, 4, 6, 8].map((w) => ({ workers: w, ms: truth(w) }))
    const s = fitWorkerScaling('batched', SIZE, 64, points)
    expect(s.law).toBe('usl')
    expect(s.sigma).toBeCloseTo(0.05, 2)
    expect(s.kappa).toBeCloseTo(0.02, 2)
    // minimum of the true curve: W* = sqrt((1 − σ)/κ) ≈ 6.9
    expect(s.fastestWorkers).toBe(7)
  })

  it("ends the curve at the machine's cores when known (past them workers only share cores), never before the largest W measured", () => {
    const points = [1, 2].map((w) => ({ workers: w, ms: 1000 * (0.2 + 0.8 / w) }))
    expect(fitWorkerScaling('pool', SIZE, 64, points).curve.at(-1)!.workers).toBe(4)
    const onTwoCores = fitWorkerScaling('pool', SIZE, 64, points, 2)
    expect(onTwoCores.curve.at(-1)!.workers).toBe(2)
    expect(onTwoCores.fastestWorkers).toBe(2)
    expect(fitWorkerScaling('pool', SIZE, 64, [...points, { workers: 4, ms: 450 }], 2).curve.at(-1)!.workers).toBe(4)
  })

  it('adviseFrom ends the worker curves at the cores of the machine the run was measured on', () => {
    const run = sweepRun(TRUE_LINES)
    const ends = (r: Parameters<typeof adviseFrom>[0]) =>
      adviseFrom(r, { models: 200, size: SIZE }).scaling.map((s) => `${s.strategy}@N=${s.models}:${s.curve.at(-1)!.workers}`)
    expect(ends(run)).toContain('batched@N=50:4')
    expect(ends({ ...run, environment: { cpuCount: 2 } as never })).toContain('batched@N=50:2')
  })

  it('needs two worker counts', () => {
    expect(() => fitWorkerScaling('pool', SIZE, 8, [{ workers: 2, ms: 5 }])).toThrow(/two worker counts/)
  })
})

describe('adviseFrom', () => {
  it('predicts every option from exact lines and ranks them; the text gives the pick, its interval and the runner-up', () => {
    const advice = adviseFrom(sweepRun(TRUE_LINES), { models: 200, size: SIZE })
    expect(advice.refusal).toBeNull()
    expect(advice.extrapolated).toBe(false)
    expect(advice.fittedSize).toBe(SIZE)
    const predicted = Object.fromEntries(advice.options.map((o) => [`${o.strategy}/${o.workers}`, o.predictedMs]))
    for (const l of TRUE_LINES) expect(predicted[`${l.strategy}/${l.workers}`]).toBeCloseTo(l.a + l.b * 200, 6)
    expect(advice.options.map((o) => `${o.strategy}/${o.workers}`)).toEqual(['batched/2', 'batched/1', 'pool/2', 'sequential/1'])
    expect(advice.text).toBe(`200 models at 10 000 rows: batched, W=2, ≈ 3.90 s (${formatRange(3900, 3900)}); batched W=1 ≈ 1.6× slower`)
    expect(advice.costModels.every((c) => c.refusal === null && c.fit.r2! > 0.999)).toBe(true)
    expect(advice.scaling.map((s) => `${s.strategy}/${s.models}`)).toContain('batched/50')
  })

  it('a noisy sweep: each interval contains the true time at the target', () => {
    const random = seededRandom(3)
    const run = sweepRun(TRUE_LINES, [1, 2, 4, 8, 16, 32, 50], () => 1 + (random() - 0.5) * 0.06)
    const advice = adviseFrom(run, { models: 200, size: SIZE })
    expect(advice.refusal).toBeNull()
    for (const o of advice.options) {
      const l = TRUE_LINES.find((t) => t.strategy === o.strategy && t.workers === o.workers)!
      const truth = l.a + l.b * 200
      expect(o.lowMs).toBeLessThanOrEqual(truth)
      expect(o.highMs).toBeGreaterThanOrEqual(truth)
      expect(o.highMs).toBeGreaterThan(o.lowMs)
    }
  })

  it('says when the runner-up’s interval overlaps the pick’s (as good as a tie)', () => {
    const random = seededRandom(11)
    const close = [
      { strategy: 'pool' as const, workers: 2, a: 300, b: 40 },
      { strategy: 'batched' as const, workers: 2, a: 300, b: 39 },
    ]
    const advice = adviseFrom(
      sweepRun(close, [1, 2, 4, 8, 16, 32, 50], () => 1 + (random() - 0.5) * 0.1),
      { models: 200, size: SIZE },
    )
    expect(advice.options[1].lowMs).toBeLessThanOrEqual(advice.options[0].highMs)
    expect(advice.text).toMatch(/≈ 1\.0× slower \(the intervals overlap: as good as a tie\)$/)
    expect(adviseFrom(sweepRun(TRUE_LINES), { models: 200, size: SIZE }).text).not.toMatch(/tie/)
  })

  it('labels a target beyond 4× the largest measured N as extrapolated', () => {
    const advice = adviseFrom(sweepRun(TRUE_LINES), { models: 500, size: SIZE })
    expect(advice.extrapolated).toBe(true)
    expect(advice.options).toHaveLength(4)
    expect(advice.text).toMatch(/extrapolated: 500 is 10× the largest measured N \(50\)/)
    expect(adviseFrom(sweepRun(TRUE_LINES), { models: 200, size: SIZE }).extrapolated).toBe(false)
  })

  it('refuses with fewer than 3 model counts', () => {
    const advice = adviseFrom(sweepRun(TRUE_LINES, [16, 50]), { models: 200, size: SIZE })
    expect(advice.options).toEqual([])
    expect(advice.refusal).toMatch(/only 2 model counts measured \(N = 16, 50\); at least 3/)
    expect(advice.text).toMatch(/^200 models at 10 000 rows: no advice — /)
  })

  it('refuses a poor fit (R² < 0.9) and leaves it out of the ranking', () => {
    const zigzag = [1, 2, 4, 8, 16, 32, 50].map((n, i) => entry('pool', 2, n, i % 2 ? 9000 : 6000)) // slower than sequential everywhere
    const good = sweepRun([TRUE_LINES[0]]).summary
    const advice = adviseFrom({ runId: 'r', summary: [...good, ...zigzag] }, { models: 200, size: SIZE })
    const pool = costModelsAt([...good, ...zigzag], SIZE).find((c) => c.strategy === 'pool')!
    expect(pool.refusal).toMatch(/R² 0\.\d\d < 0.9/)
    expect(advice.options.map((o) => o.strategy)).toEqual(['sequential'])
    expect(advice.text).toMatch(/not ranked: pool W=2 \(the line fits poorly/)
    const onlyBad = adviseFrom({ runId: 'r', summary: zigzag }, { models: 200, size: SIZE })
    expect(onlyBad.options).toEqual([])
    expect(onlyBad.refusal).toMatch(/no fit can be trusted — pool W=2: the line fits poorly/)
  })

  it('gives no advice when an option whose fit was refused measured faster than the pick', () => {
    const good = sweepRun([TRUE_LINES[0]]).summary // sequential: 50 + 80 N
    const fastButNoisy = [1, 2, 4, 8, 16, 32, 50].map((n, i) => entry('batched', 2, n, i % 2 ? 300 : 900))
    const advice = adviseFrom({ runId: 'r', summary: [...good, ...fastButNoisy] }, { models: 200, size: SIZE })
    expect(advice.options).toEqual([])
    expect(advice.refusal).toMatch(
      /^batched W=2 measured faster than sequential at N = 50 \(900 ms vs 4.05 s\) but its fit cannot be trusted \(the line fits poorly \(R² 0\.\d\d < 0.9\)\)/,
    )
  })

  it('formats an interval with one unit where it can', () => {
    expect(formatRange(36_000, 47_000)).toBe('36.0–47.0 s')
    expect(formatRange(950, 1200)).toBe('950 ms–1.20 s')
    expect(formatRange(25_200, 221_000)).toBe('25.2 s–3 min 41 s')
  })

  it('refuses a data size that was not measured, naming the measured ones', () => {
    const advice = adviseFrom(sweepRun(TRUE_LINES), { models: 200, size: 50_000 })
    expect(advice.options).toEqual([])
    expect(advice.refusal).toMatch(/50 000 rows was not measured \(measured: 10 000\)/)
  })

  it('leaves out an option whose W is more than the target N', () => {
    const advice = adviseFrom(sweepRun(TRUE_LINES), { models: 1, size: SIZE })
    expect(advice.options.every((o) => o.workers === 1)).toBe(true)
  })
})

describe('AdviceTargetSchema', () => {
  it.each([
    [{ models: 0, size: 10_000 }, /models must be a whole number from 1 to 1000000/],
    [{ models: -5, size: 10_000 }, /models must be/],
    [{ models: 1_000_001, size: 10_000 }, /models must be/],
    [{ models: 2.5, size: 10_000 }, /models must be/],
    [{ models: 10, size: 0 }, /size must be a whole number from 2 to 1000000/],
    [{ models: 10, size: 2_000_000 }, /size must be/],
  ])('rejects %o', (target, message) => {
    const parsed = AdviceTargetSchema.safeParse(target)
    expect(parsed.success).toBe(false)
    expect(parsed.error!.issues.map((i) => i.message).join('\n')).toMatch(message)
  })
})

describe('verificationConfig and checkAdvice', () => {
  const advice = adviseFrom(sweepRun(TRUE_LINES), { models: 200, size: SIZE })

  it('runs the recommended and runner-up options at the target, once', () => {
    const config = verificationConfig(presetConfig('quick', { models: [1, 2, 4, 8, 16, 32, 50], workers: [1, 2] }), advice)
    expect(config).toMatchObject({ sizes: [SIZE], models: [200], strategies: ['batched'], workers: [1, 2], repeats: 1 })
  })

  it('compares predicted with measured; pickRight when the recommended one was fastest', () => {
    const measured = { runId: 'verify-1', summary: [entry('batched', 2, 200, 4100), entry('batched', 1, 200, 6000)] }
    const check = checkAdvice(advice, measured, '2026-12-02T00:00:00.000Z')
    expect(check.rows.map((r) => [r.strategy, r.workers, r.measuredMs])).toEqual([
      ['batched', 2, 4100],
      ['batched', 1, 6000],
    ])
    expect(check.pickRight).toBe(true)
    const wrong = checkAdvice(advice, { runId: 'v', summary: [entry('batched', 2, 200, 7000), entry('batched', 1, 200, 6000)] })
    expect(wrong.pickRight).toBe(false)
    const failed = checkAdvice(advice, { runId: 'v', summary: [] })
    expect(failed.rows.map((r) => r.measuredMs)).toEqual([null, null])
    expect(failed.pickRight).toBeNull()
  })
})

describe('advice over backends side by side (issue 25)', () => {
  // wasm's lines and onnxruntime's (faster per model): the options are (backend, strategy, W)
  const sideBySide = () => {
    const counts = [1, 2, 4, 8, 16]
    const line = (backend: string, strategy: Strategy, workers: number, a: number, b: number) =>
      counts.filter((n) => n >= workers).map((n) => ({ ...entry(strategy, workers, n, a + b * n), backend: backend as SummaryEntry['backend'] }))
    return {
      runId: 'side-1',
      summary: [
        ...line('wasm', 'sequential', 1, 50, 80),
        ...line('wasm', 'batched', 2, 300, 18),
        ...line('onnxruntime', 'sequential', 1, 20, 12),
        ...line('onnxruntime', 'batched', 2, 200, 10),
      ],
    }
  }

  it("ranks every backend's options and names the backend of each; the check runs the two picks' backends", () => {
    const advice = adviseFrom(sideBySide(), { models: 50, size: SIZE })
    expect(advice.refusal).toBeNull()
    expect(advice.costModels.map((c) => `${c.backend} ${c.strategy} ${c.workers}`)).toEqual([
      'wasm sequential 1',
      'wasm batched 2',
      'onnxruntime sequential 1',
      'onnxruntime batched 2',
    ])
    expect(advice.options.slice(0, 2).map((o) => `${o.backend} ${o.strategy}`)).toEqual(['onnxruntime sequential', 'onnxruntime batched'])
    expect(advice.text).toMatch(/^50 models at 10 000 rows: onnxruntime sequential, ≈ /)
    const config = verificationConfig({ ...presetConfig('smoke'), backend: ['wasm', 'onnxruntime'] }, advice)
    // both picks on onnxruntime: a one-backend check
    expect(config.backend).toBe('onnxruntime')
    const verifyRun = {
      runId: 'check-1',
      environment: { backend: 'onnxruntime' } as never,
      summary: [entry('sequential', 1, 50, 600, SIZE), entry('batched', 2, 50, 650, SIZE)],
    }
    const check = checkAdvice(advice, verifyRun)
    expect(check.rows.map((r) => [r.backend, r.strategy, r.measuredMs])).toEqual([
      ['onnxruntime', 'sequential', 600],
      ['onnxruntime', 'batched', 650],
    ])
    expect(check.pickRight).toBe(true)
  })

  it('picks on two backends make a side-by-side check', () => {
    const run = sideBySide()
    // wasm batched becomes the runner-up: onnxruntime's batched line is left out
    run.summary = run.summary.filter((s) => !(s.backend === 'onnxruntime' && s.strategy === 'batched'))
    const advice = adviseFrom(run, { models: 50, size: SIZE })
    expect(advice.options.slice(0, 2).map((o) => o.backend)).toEqual(['onnxruntime', 'wasm'])
    const config = verificationConfig({ ...presetConfig('smoke'), backend: ['wasm', 'onnxruntime'] }, advice)
    expect(config.backend).toEqual(['onnxruntime', 'wasm'])
    expect(config.strategies).toEqual(['sequential', 'batched'])
  })
})

describe('advice at a measured N without a line (a model set)', () => {
  it('a model set is advised at its own N, ranked by what was measured, with its repeats as the interval', () => {
    const run = setResult()
    const n = run.config.models[0]
    const size = run.config.sizes[0]
    const advice = adviseFrom(run, { models: n, size })
    expect(advice.refusal).toBeNull()
    expect(advice.options.map((o) => [o.strategy, o.workers, o.measured])).toEqual([
      ['batched', 2, true],
      ['sequential', 1, true],
    ])
    const batched = run.summary.find((s) => s.strategy === 'batched')!
    expect(advice.options[0]).toMatchObject({ predictedMs: batched.medianMs, lowMs: batched.minMs, highMs: batched.maxMs })
    expect(advice.text).toMatch(/^8 models at 2 000 rows: batched, W=2, measured .+ \(repeats .+\); sequential 2\.0× slower$/)
  })

  it('at another N the set is refused, saying to ask at its own N (a set cannot be swept)', () => {
    const run = setResult()
    const advice = adviseFrom(run, { models: 20, size: run.config.sizes[0] })
    expect(advice.options).toEqual([])
    expect(advice.refusal).toMatch(/a model set is measured at its own N only: ask for advice at N = 8/)
    expect(advice.refusal).not.toMatch(/sweep/)
  })

  it('a plain run measured at one N: the same ranking at that N; elsewhere the refusal names the sweep and the measured N', () => {
    const run = { runId: 'one', summary: [entry('sequential', 1, 16, 900), entry('batched', 2, 16, 300), entry('pool', 2, 16, 500)] }
    const at = adviseFrom(run, { models: 16, size: SIZE })
    expect(at.options.map((o) => `${o.strategy}/${o.workers}`)).toEqual(['batched/2', 'pool/2', 'sequential/1'])
    expect(at.options.every((o) => o.measured)).toBe(true)
    const elsewhere = adviseFrom(run, { models: 32, size: SIZE })
    expect(elsewhere.refusal).toMatch(/run a model-count sweep.*or ask at a measured N/)
  })

  it('fitted lines and measured options rank together; a measured option that is faster is the pick, not a reason to refuse', () => {
    // sequential and batched swept (lines), pool measured at N = 16 only and fastest there
    const swept = sweepRun(
      TRUE_LINES.filter((l) => l.strategy !== 'pool'),
      [1, 2, 4, 8, 16],
    )
    const run = { runId: 'mixed', summary: [...swept.summary, entry('pool', 2, 16, 100)] }
    const advice = adviseFrom(run, { models: 16, size: SIZE })
    expect(advice.refusal).toBeNull()
    expect(advice.options[0]).toMatchObject({ strategy: 'pool', workers: 2, measured: true, predictedMs: 100 })
    expect(advice.options.slice(1).every((o) => !o.measured)).toBe(true)
    // at an N it did not measure, pool has no line: it is left unranked and beats nothing it was not measured against
    expect(adviseFrom(run, { models: 50, size: SIZE }).options.some((o) => o.strategy === 'pool')).toBe(false)
  })
})
