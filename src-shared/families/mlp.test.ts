// The MLP's work and memory models count the output layer the workload's task asks for: K units for
// a multiclass classifier, one for a regressor and a binary classifier (its logit), whose numbers
// are the regressor's.
import { describe, expect, it } from 'vitest'
import type { Workload } from './family'
import { mlpFamily, type MlpParams, paramCount, stepFlops } from './mlp'

const regression: Workload<MlpParams> = {
  size: 10_000,
  features: 100,
  seed: 1,
  target: 'teacher',
  testSplit: 0.2,
  model: { kind: 'mlp', epochs: 3, batchSize: 512, hidden: [64, 32], lr: 0.01 },
}
const binary = { ...regression, task: { objective: 'binary' as const, classes: 2 } }
const multiclass = { ...regression, task: { objective: 'multiclass' as const, classes: 5 } }

describe('the MLP output layer in the work and memory models', () => {
  it('parameters: 100→64→32→K, weights and biases', () => {
    expect(paramCount(100, [64, 32])).toBe(100 * 64 + 64 + 64 * 32 + 32 + 32 + 1)
    expect(paramCount(100, [64, 32], 5)).toBe(100 * 64 + 64 + 64 * 32 + 32 + 32 * 5 + 5)
  })

  it('a step: the output layer costs 6·rows·n·HL·K FLOPs (forward, its gradient, the gradient it passes back)', () => {
    expect(stepFlops(512, 50, 100, [64, 32], 5) - stepFlops(512, 50, 100, [64, 32])).toBe(6 * 512 * 50 * 32 * 4)
  })

  it('a binary classifier is counted as a regressor (one logit); a multiclass one with its K outputs, in work and in memory', () => {
    expect(mlpFamily.workCount(binary, 50)).toBe(mlpFamily.workCount(regression, 50))
    expect(mlpFamily.workerPeakBytes(binary, 50)).toBe(mlpFamily.workerPeakBytes(regression, 50))
    // 8 000 training rows: 15 full batches of 512 and one of 320, 3 epochs
    const extraPerEpoch = 15 * 6 * 512 * 50 * 32 * 4 + 6 * 320 * 50 * 32 * 4
    expect(mlpFamily.workCount(multiclass, 50) - mlpFamily.workCount(regression, 50)).toBe(3 * extraPerEpoch)
    // parameters with gradients and Adam state (6 copies of 50 models' 4·(32+1) more values)
    expect(mlpFamily.workerPeakBytes(multiclass, 50) - mlpFamily.workerPeakBytes(regression, 50)).toBe(50 * 4 * 33 * 4 * 6)
  })
})
