import { describe, expect, it } from 'vitest'
import { BenchConfigSchema, DEFAULT_CONFIG } from './config'
import { resolveTask, type TargetValues } from './task'
import { TrainpoolError } from '../vocabulary/errors'

const userData = { sha256: 'a'.repeat(64), name: 'churn.csv', target: 'churned', features: null, exclude: [], impute: 'none' as const }
const numeric = (distinct: string[] | null, integers = true): TargetValues => ({ column: 'churned', type: 'numeric', distinct, integers })
const text = (distinct: string[] | null): TargetValues => ({ column: 'churned', type: 'text', distinct, integers: false })

/** the field and message of a refusal */
function refusal(f: () => unknown): { field: string; message: string } {
  try {
    f()
  } catch (err) {
    expect(err).toBeInstanceOf(TrainpoolError)
    const e = err as TrainpoolError
    expect(e.code).toBe('invalid-input')
    return e.issues![0]
  }
  throw new Error('not refused')
}

describe('resolveTask: auto reads the target', () => {
  it('generated data: the target decides, with class names 0 … K−1', () => {
    expect(resolveTask({ target: 'teacher' })).toEqual({ objective: 'regression', classes: [], metric: 'mse', auto: true })
    expect(resolveTask({ target: 'binary' })).toEqual({ objective: 'binary', classes: ['0', '1'], metric: 'logloss', auto: true })
    expect(resolveTask({ target: 'multiclass', classes: 4, metric: 'accuracy' })).toEqual({
      objective: 'multiclass',
      classes: ['0', '1', '2', '3'],
      metric: 'accuracy',
      auto: true,
    })
  })

  it("the user's data: two values → binary, sorted; text or small integers → multiclass; other numbers → regression", () => {
    expect(resolveTask({ target: 'teacher', data: userData }, text(['yes', 'no']))).toMatchObject({ objective: 'binary', classes: ['no', 'yes'] })
    expect(resolveTask({ target: 'teacher', data: userData }, numeric(['1', '0']))).toMatchObject({ objective: 'binary', classes: ['0', '1'] })
    expect(resolveTask({ target: 'teacher', data: userData }, numeric(['2', '10', '1']))).toMatchObject({ objective: 'multiclass', classes: ['1', '2', '10'] })
    expect(resolveTask({ target: 'teacher', data: userData }, text(['b', 'c', 'a']))).toMatchObject({ objective: 'multiclass', classes: ['a', 'b', 'c'] })
    expect(resolveTask({ target: 'teacher', data: userData }, numeric(null, false))).toMatchObject({ objective: 'regression', metric: 'mse' })
    expect(resolveTask({ target: 'teacher', data: userData }, numeric(['0.5', '1.5', '2.5'], false))).toMatchObject({ objective: 'regression' })
    // years are integers, but not labels: auto keeps them a regression target
    expect(resolveTask({ target: 'teacher', data: userData }, numeric(['1999', '2004', '2010']))).toMatchObject({ objective: 'regression' })
    // 0/1 asked as regression stays regression
    expect(resolveTask({ target: 'teacher', data: userData, objective: 'regression' }, numeric(['0', '1']))).toMatchObject({
      objective: 'regression',
      auto: false,
    })
  })
})

describe('resolveTask: bad input names the field, the value and what is accepted', () => {
  it('a target with one class', () => {
    const r = refusal(() => resolveTask({ target: 'teacher', data: userData }, text(['yes'])))
    expect(r.field).toBe('data.target')
    expect(r.message).toMatch(/one class only \(yes\).*2 or more classes/)
  })
  it('binary asked of three classes', () => {
    const r = refusal(() => resolveTask({ target: 'teacher', data: userData, objective: 'binary' }, text(['a', 'b', 'c'])))
    expect(r.field).toBe('objective')
    expect(r.message).toMatch(/binary needs exactly 2 classes; churned has 3 \(a, b, c\).*accepted: auto, multiclass/)
  })
  it('more classes than the limit', () => {
    const r = refusal(() => resolveTask({ target: 'teacher', data: userData }, text(null)))
    expect(r.field).toBe('data.target')
    expect(r.message).toMatch(/more than 32 distinct values/)
  })
  it('a regression target forced to multiclass', () => {
    const r = refusal(() => resolveTask({ target: 'teacher', data: userData, objective: 'multiclass' }, numeric(null, false)))
    expect(r.message).toMatch(/more than 32 distinct values.*objective regression/)
    const floats = refusal(() => resolveTask({ target: 'teacher', data: userData, objective: 'multiclass' }, numeric(['0.5', '1.5', '2.5'], false)))
    expect(floats.message).toMatch(/non-integer numbers/)
  })
  it('auc on a multiclass or regression run', () => {
    expect(refusal(() => resolveTask({ target: 'teacher', data: userData, metric: 'auc' }, text(['a', 'b', 'c']))).field).toBe('metric')
    expect(refusal(() => resolveTask({ target: 'teacher', metric: 'auc' })).message).toMatch(
      /metric auc does not apply to a regression run; accepted: auto, mse/,
    )
  })
  it('regression asked of a text target', () => {
    expect(refusal(() => resolveTask({ target: 'teacher', data: userData, objective: 'regression' }, text(['no', 'yes']))).message).toMatch(
      /needs a numeric target/,
    )
  })
})

describe('the config refuses what generated data contradicts', () => {
  const issues = (over: object) => {
    const parsed = BenchConfigSchema.safeParse({ ...DEFAULT_CONFIG, ...over })
    return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
  }
  it('an objective the target is not, a metric the objective lacks, classes without multiclass, a class count past the limit', () => {
    expect(issues({ target: 'binary', objective: 'auto' })).toEqual([])
    expect(issues({ target: 'teacher', objective: 'binary' })[0]).toMatch(/^objective: objective binary does not fit generated target teacher.*--target binary/)
    expect(issues({ target: 'multiclass', metric: 'auc' })[0]).toMatch(/^metric: metric auc does not apply to a multiclass run/)
    expect(issues({ target: 'binary', classes: 4 })[0]).toMatch(/^classes: .*needs target multiclass/)
    expect(issues({ target: 'multiclass', classes: 33 })[0]).toMatch(/^classes: classes must be an integer from 3 to 32/)
    expect(issues({ objective: 'logistic' })[0]).toMatch(/^objective: objective accepts auto, regression, binary, multiclass/)
  })
})
