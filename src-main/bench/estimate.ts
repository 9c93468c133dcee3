// A conservative estimate of a run's peak memory, checked before anything starts.
import { type BenchConfig, splitRows } from '@shared/contract'
import { contiguousGroups } from './plan'

const PROCESS_BASE_BYTES = 150 * 1024 * 1024
const F32 = 4

/** Peak bytes of one worker training `n` fused models on `size` rows. */
export function workerPeakBytes(config: BenchConfig, size: number, n: number): number {
  const { train, test } = splitRows(size, config.testSplit)
  const F = config.features
  const widest = Math.max(...config.hidden)
  const params = n * (F * config.hidden[0] + config.hidden.reduce((s, h, i) => s + (i ? config.hidden[i - 1] * h : 0) + h, 0) + widest + 1)
  const data = size * (F + 1) * F32 * 2 // JS arrays + device copy
  const epochCopies = train * (2 * F + 1) * F32 // device placement: permuted X, X^T, y
  const rows = Math.min(config.batchSize, train)
  const activations = rows * n * widest * F32 * 10
  const evalChunk = Math.min(test, Math.ceil((8 * 1024 * 1024) / (n * widest))) * n * widest * F32 * 4
  return PROCESS_BASE_BYTES + data + epochCopies + params * F32 * 6 + activations + evalChunk
}

/** Peak bytes of the whole run: the largest (size, models, strategy, workers) pool. */
export function estimateRunPeakBytes(config: BenchConfig): number {
  let peak = 0
  for (const size of config.sizes) {
    for (const models of config.models) {
      for (const strategy of config.strategies) {
        for (const workers of strategy === 'sequential' ? [1] : config.workers) {
          const groups = strategy === 'batched' ? contiguousGroups(models, workers).map((g) => g.length) : new Array(workers).fill(1)
          const bytes = groups.reduce((sum, n) => sum + workerPeakBytes(config, size, n), 0)
          peak = Math.max(peak, bytes)
        }
      }
    }
  }
  return peak
}
