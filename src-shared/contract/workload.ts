// What a worker needs to train: the data (shape, seed, target, split) shared by every model of a
// measurement, and the model family's parameters. The pool and runner pass it through unread.
// Generated data is made from the seed alone; the user's data is named by its cached table file and
// column choice (`data`): the worker reads that file itself, so no matrix ever crosses IPC.
import type { BenchConfig, ModelParams, Target } from './config'
import type { ImputeMode } from './dataset'

/** The user's data set as a worker reads it (resolved and checked by the service before the run). */
export interface WorkloadData {
  /** the cached table file (src-main/data/table-file.ts) */
  table: string
  sha256: string
  /** positions among the table's numeric columns */
  targetColumn: number
  featureColumns: number[]
  /** missing feature values: left NaN for the family to handle ('none'), or the training rows' mean */
  impute: ImputeMode
  /** features scaled to mean 0, std 1 with the training rows' statistics (the MLP), else raw */
  standardise: boolean
}

export interface Workload<P extends { kind: string } = ModelParams> {
  size: number
  /** with `data`: the number of feature columns */
  features: number
  seed: number
  /** generated data only */
  target: Target
  testSplit: number
  model: P
  /** the user's data set; absent: generated data */
  data?: WorkloadData
}

export function workloadFor(config: BenchConfig, size: number, data?: WorkloadData): Workload {
  return {
    size,
    features: data ? data.featureColumns.length : config.features,
    seed: config.seed,
    target: config.target,
    testSplit: config.testSplit,
    model: structuredClone(config.model),
    ...(data ? { data: structuredClone(data) } : {}),
  }
}

/** Model i is initialised from seed + i + 1 (tfjs and our PRNG treat 0 as "no seed"; never use it). */
export function modelSeed(dataSeed: number, index: number): number {
  return dataSeed + index + 1
}
