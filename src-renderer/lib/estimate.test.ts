import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import {
  PROCESS_BASE_BYTES,
  estimateRun,
  modelsPerWorker,
  paramCount,
  trainFlopsPerModel,
  workerMemoryBytes,
} from './estimate'

describe('estimate', () => {
  it('counts MLP parameters (weights + biases)', () => {
    expect(paramCount(100, [64])).toBe(100 * 64 + 64 + 64 + 1)
    expect(paramCount(10, [8, 4])).toBe(10 * 8 + 8 + 8 * 4 + 4 + 4 + 1)
  })

  it('computes worker memory from data, params, activations and process base', () => {
    const c = { features: 100, hidden: [64], batchSize: 512 }
    const data = 10_000 * 101 * 4 * 3
    const params = 10 * paramCount(100, [64]) * 4 * 4
    const act = 512 * 10 * 65 * 4 * 6
    expect(workerMemoryBytes(c, 10_000, 10)).toBe(data + params + act + PROCESS_BASE_BYTES)
  })

  it('batched workers hold ceil(N/W) models, the others one', () => {
    expect(modelsPerWorker('batched', 50, 5)).toBe(10)
    expect(modelsPerWorker('batched', 50, 1)).toBe(50)
    expect(modelsPerWorker('batched', 7, 2)).toBe(4)
    expect(modelsPerWorker('pool', 50, 5)).toBe(1)
    expect(modelsPerWorker('sequential', 50, 5)).toBe(1)
  })

  it('counts 6 FLOPs per weight per training row per epoch', () => {
    const c = { features: 100, hidden: [64], epochs: 3, testSplit: 0.2 }
    expect(trainFlopsPerModel(c, 10_000)).toBe(6 * 8000 * paramCount(100, [64]) * 3)
  })

  it('scales with sizes, repeats and backend throughput', () => {
    const small = estimateRun(presetConfig('smoke'), 'cpu')
    const article = estimateRun(presetConfig('article'), 'cpu')
    expect(article.totalMs).toBeGreaterThan(small.totalMs * 10)
    expect(article.measurements).toBe(4 * 3 * 3)
    expect(article.peakWorkerBytes).toBeGreaterThan(small.peakWorkerBytes)
    // the pool needs W processes: the total is several workers' worth
    expect(article.peakTotalBytes).toBeGreaterThanOrEqual(5 * PROCESS_BASE_BYTES)
    const gpu = estimateRun(presetConfig('article'), 'tensorflow')
    expect(gpu.totalMs).toBeLessThan(article.totalMs)
    expect(gpu.totalFlops).toBe(article.totalFlops)
  })

  it('the 200k-row article size needs about 240 MB of data per worker', () => {
    const c = presetConfig('article')
    const mem = workerMemoryBytes(c, 200_000, 1)
    expect(mem - PROCESS_BASE_BYTES).toBeGreaterThan(200_000 * 101 * 12)
    expect(mem).toBeLessThan(500 * 1024 * 1024)
  })
})
