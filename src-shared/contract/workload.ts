// What a worker needs to train: the part of the config that defines the computation.
import type { BenchConfig, Target } from './config'

export interface Workload {
  size: number
  features: number
  seed: number
  target: Target
  testSplit: number
  epochs: number
  batchSize: number
  hidden: number[]
  lr: number
}

export function workloadFor(config: BenchConfig, size: number): Workload {
  return {
    size,
    features: config.features,
    seed: config.seed,
    target: config.target,
    testSplit: config.testSplit,
    epochs: config.epochs,
    batchSize: config.batchSize,
    hidden: [...config.hidden],
    lr: config.lr,
  }
}

/** Model i is initialised from seed + i + 1 (tfjs and our PRNG treat 0 as "no seed"; never use it). */
export function modelSeed(dataSeed: number, index: number): number {
  return dataSeed + index + 1
}
