// A rough, pure estimate of a run's memory and duration, shown before the user presses Run.
// Deliberately simple: it is labelled "rough estimate" in the UI and never blocks a run by itself.
import type { BenchConfig, ConcreteBackend, Strategy } from '@shared/contract/config'
import { splitRows } from '@shared/contract/config'

export const PROCESS_BASE_BYTES = 150 * 1024 * 1024

/** Assumed effective training throughput (FLOP/s) and fixed cost per optimizer step (ms). */
export const ASSUMED: Record<ConcreteBackend, { flops: number; stepMs: number }> = {
  tensorflow: { flops: 2e11, stepMs: 0.6 },
  webgpu: { flops: 5e10, stepMs: 1.5 },
  wasm: { flops: 8e9, stepMs: 0.15 },
  cpu: { flops: 1e9, stepMs: 0.2 },
}
/** process start + warm-up paid per worker and measurement, roughly */
export const WORKER_STARTUP_MS = 1500

export interface Estimate {
  /** largest memory any single worker needs, bytes */
  peakWorkerBytes: number
  /** largest memory all workers of one measurement need together, bytes */
  peakTotalBytes: number
  /** training FLOPs over the whole plan (all measurements and repeats) */
  totalFlops: number
  /** estimated wall time of the whole run, ms */
  totalMs: number
  measurements: number
  backend: ConcreteBackend
}

/** Parameters of one MLP: features → hidden… → 1 (weights + biases). */
export function paramCount(features: number, hidden: readonly number[]): number {
  let prev = features
  let n = 0
  for (const h of [...hidden, 1]) {
    n += prev * h + h
    prev = h
  }
  return n
}

/** Sum of the layer widths: activations kept per row and model. */
function activationWidth(hidden: readonly number[]): number {
  return hidden.reduce((a, h) => a + h, 0) + 1
}

/** Models one worker holds at once for a strategy with W workers and N models. */
export function modelsPerWorker(strategy: Strategy, models: number, workers: number): number {
  if (strategy === 'batched') return Math.ceil(models / Math.max(1, workers))
  return 1
}

/** Worker processes a measurement runs. */
export function workersUsed(strategy: Strategy, models: number, workers: number): number {
  if (strategy === 'sequential') return 1
  return Math.min(workers, models)
}

/**
 * Memory of one worker: the data set (X and y, float32, ×3 for generation/upload copies), the
 * parameters of the models it holds (×4: weights, gradients, Adam m and v), activations of one batch
 * (×6: forward, backward and temporaries), plus a process base.
 */
export function workerMemoryBytes(
  c: Pick<BenchConfig, 'features' | 'hidden' | 'batchSize'>,
  size: number,
  modelsHeld: number,
): number {
  const data = size * (c.features + 1) * 4 * 3
  const params = modelsHeld * paramCount(c.features, c.hidden) * 4 * 4
  const activations = Math.min(c.batchSize, size) * modelsHeld * activationWidth(c.hidden) * 4 * 6
  return data + params + activations + PROCESS_BASE_BYTES
}

/** Forward + backward ≈ 6 FLOPs per weight per training row, per epoch. */
export function trainFlopsPerModel(c: Pick<BenchConfig, 'features' | 'hidden' | 'epochs' | 'testSplit'>, size: number): number {
  const { train } = splitRows(size, c.testSplit)
  return 6 * train * paramCount(c.features, c.hidden) * c.epochs
}

export function estimateRun(c: BenchConfig, backend: ConcreteBackend = 'cpu'): Estimate {
  const a = ASSUMED[backend]
  let peakWorkerBytes = 0
  let peakTotalBytes = 0
  let totalFlops = 0
  let totalMs = 0
  let measurements = 0
  for (const size of c.sizes) {
    const { train } = splitRows(size, c.testSplit)
    const batches = Math.max(1, Math.ceil(train / c.batchSize)) * c.epochs
    const perModel = trainFlopsPerModel(c, size)
    for (const n of c.models) {
      for (const w of c.workers) {
        for (const s of c.strategies) {
          const used = workersUsed(s, n, w)
          const held = modelsPerWorker(s, n, w)
          const mem = workerMemoryBytes(c, size, held)
          peakWorkerBytes = Math.max(peakWorkerBytes, mem)
          peakTotalBytes = Math.max(peakTotalBytes, mem * used)
          const flops = perModel * n
          // Sequential: every model's steps one after another. Pool: the same, spread over W
          // workers (sharing one device, so compute does not shrink, only step overhead overlaps).
          // Batched: one step advances a whole group, so the step overhead is paid per group.
          const steps = s === 'batched' ? batches * used : batches * n
          const overlap = s === 'sequential' ? 1 : used
          const ms = (flops / a.flops) * 1000 + (steps * a.stepMs) / overlap + WORKER_STARTUP_MS
          totalFlops += flops * c.repeats
          totalMs += ms * c.repeats
          measurements += c.repeats
        }
      }
    }
  }
  return { peakWorkerBytes, peakTotalBytes, totalFlops, totalMs, measurements, backend }
}
