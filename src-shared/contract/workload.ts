// What a worker needs to train: the data (shape, seed, target, split) shared by every model of a
// measurement, and the model family's parameters. The pool and runner pass it through unread.
import type { BenchConfig, ModelParams, Target } from './config'

export interface Workload<P extends { kind: string } = ModelParams> {
  size: number
  features: number
  seed: number
  target: Target
  testSplit: number
  model: P
}

export function workloadFor(config: BenchConfig, size: number): Workload {
  return {
    size,
    features: config.features,
    seed: config.seed,
    target: config.target,
    testSplit: config.testSplit,
    model: structuredClone(config.model),
  }
}

/** Model i is initialised from seed + i + 1 (tfjs and our PRNG treat 0 as "no seed"; never use it). */
export function modelSeed(dataSeed: number, index: number): number {
  return dataSeed + index + 1
}
