import { describe, expect, it } from 'vitest'
import type { RunResult, SummaryEntry } from './contract/result'
import { formatDuration } from './format'
import { verdictFor, verdictText } from './verdict'

function entry(size: number, strategy: SummaryEntry['strategy'], workers: number, medianMs: number, seqMs: number, warnings: string[] = []): SummaryEntry {
  const speedup = seqMs / medianMs
  return {
    size,
    models: 8,
    workers,
    strategy,
    repeats: 3,
    medianMs,
    minMs: medianMs * 0.95,
    maxMs: medianMs * 1.05,
    speedupVsSequential: speedup,
    efficiency: speedup / workers,
    workRate: 1,
    warnings,
  }
}

function runWith(summary: SummaryEntry[], extra: Partial<RunResult> = {}): RunResult {
  return {
    schemaVersion: 2,
    runId: 'r1',
    status: 'ok',
    startedAt: '2025-01-01T00:00:00Z',
    finishedAt: '2025-01-01T00:01:00Z',
    config: { repeats: 3 } as RunResult['config'],
    environment: null,
    measurements: [],
    summary,
    verification: { sameWork: true, maxRelMseDiff: 2e-7, tolerance: 1e-4, modelsTrained: { sequential: 8, pool: 8, batched: 8 }, problems: [] },
    warnings: [],
    error: null,
    ...extra,
  }
}

describe('verdictFor', () => {
  const summary = [
    entry(1000, 'sequential', 1, 800, 800),
    entry(1000, 'pool', 2, 500, 800),
    entry(1000, 'pool', 4, 450, 800, ['first repeat 2.0× slower than the rest: warm-up or caches may be incomplete']),
    entry(1000, 'batched', 1, 200, 800),
    entry(5000, 'sequential', 1, 4000, 4000),
    entry(5000, 'pool', 2, 2100, 4000),
    entry(5000, 'pool', 4, 1500, 4000),
    entry(5000, 'batched', 1, 1600, 4000),
  ]

  it('names the fastest strategy per data size, the best worker count, speedups and warnings', () => {
    const v = verdictFor(runWith(summary))
    expect(v.headline).toBe('The fastest strategy depends on the data size; the best speedup over sequential was 4.00× (batched (W=1) at 1,000 rows).')
    expect(v.perSize).toEqual([
      'At 1,000 rows, batched (W=1) was fastest: 200 ms (25 ms per model), 4.00× faster than sequential (800 ms, 100 ms per model); next was pool (W=4) at 450 ms.',
      'At 5,000 rows, pool (W=4) was fastest: 1.50 s (188 ms per model), 2.67× faster than sequential (4.00 s, 500 ms per model); next was batched (W=1) at 1.60 s.',
    ])
    expect(v.workers).toEqual(['Best worker count for pool: W=4 (1.50 s at 5,000 rows, tried W=2, 4); speedup 2.67×, efficiency 67%.'])
    expect(v.verification).toMatch(/^Same work verified: every strategy trained every model \(sequential 8, pool 8, batched 8\).*2\.0e-7/)
    expect(v.warnings).toEqual(['pool (W=4) at 1,000 rows: first repeat 2.0× slower than the rest: warm-up or caches may be incomplete.'])
    expect(verdictText(v).split('\n')).toHaveLength(1 + 2 + 1 + 1 + 1)
  })

  it('says so when sequential wins, when work differs, and when the run failed', () => {
    const slow = [entry(1000, 'sequential', 1, 100, 100), entry(1000, 'pool', 2, 150, 100)]
    expect(verdictFor(runWith(slow)).headline).toBe('No parallel strategy beat sequential: the best was pool (W=2) at 0.67×.')
    expect(verdictFor(runWith(slow)).perSize[0]).toMatch(/sequential was fastest: 100 ms \(\d+(\.\d)? ms per model\); no parallel strategy beat it/)
    const bad = verdictFor(
      runWith(slow, {
        status: 'failed',
        error: 'strategies disagree',
        verification: { sameWork: false, maxRelMseDiff: 0.3, tolerance: 1e-4, modelsTrained: {}, problems: ['pool W=2: model 1 differs'] },
      }),
    )
    expect(bad.headline).toBe('This run FAILED: strategies disagree. The numbers below cover what finished.')
    expect(bad.verification).toBe('Same work NOT verified: 1 problem — pool W=2: model 1 differs. Do not trust the speedups.')
    expect(verdictFor(runWith([])).headline).toBe('No measurement finished, so there is nothing to compare.')
    const cancelled = verdictFor(
      runWith(slow, {
        status: 'cancelled',
        verification: {
          sameWork: false,
          maxRelMseDiff: 0,
          tolerance: 1e-4,
          modelsTrained: { sequential: 8, pool: 1 },
          problems: ['pool trained 1 of 8 models'],
        },
      }),
    )
    expect(cancelled.verification).toBe(
      'Not verified: the run was cancelled before every strategy trained every model (models trained: sequential 8, pool 1); the numbers cover only the measurements that finished.',
    )
  })

  it('formats durations the way the report tables do', () => {
    expect([4.25, 40.4, 999.4, 999.6, 1234, 12_345, 66_000, 7_500_000].map(formatDuration)).toEqual([
      '4.3 ms',
      '40 ms',
      '999 ms',
      '1.00 s',
      '1.23 s',
      '12.3 s',
      '1 min 6 s',
      '2 h 5 min',
    ])
    expect([null, undefined, NaN, 0].map(formatDuration)).toEqual(['—', '—', '—', '0 ms'])
  })
})

describe("the verdict names the run's metric", () => {
  const summary = [entry(1000, 'sequential', 1, 800, 800), entry(1000, 'pool', 2, 500, 800)]

  it('a classifier: the same-work sentence compares its primary metric, and a sentence says the objective and its classes', () => {
    const task = { objective: 'binary', classes: ['no', 'yes'], metric: 'logloss', auto: true } as const
    const v = verdictFor(runWith(summary, { task: { ...task, classes: [...task.classes] } }))
    expect(v.verification).toMatch(/^Same work verified: .* each model's test log loss agrees across strategies to 2\.0e-7 relative/)
    expect(v.task).toBe('Objective: binary (2 classes: no, yes), read from the target; the models are ranked and compared by log loss.')
    expect(verdictText(v)).toContain(v.task)
    const asked = verdictFor(runWith(summary, { task: { objective: 'multiclass', classes: ['a', 'b', 'c'], metric: 'accuracy', auto: false } }))
    expect(asked.task).toBe('Objective: multiclass (3 classes: a, b, c); the models are ranked and compared by accuracy.')
    expect(asked.verification).toContain("each model's test accuracy agrees")
  })

  it('a run from before classifiers (no task) says test MSE and no objective, as before', () => {
    const v = verdictFor(runWith(summary))
    expect(v.verification).toContain("each model's test MSE agrees")
    expect(v.task).toBeNull()
    expect(verdictText(v)).not.toMatch(/Objective/)
  })
})
