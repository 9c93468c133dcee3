// What a worker needs to train: the data (shape, seed, target, split) shared by every model of a
// measurement, and the model family's parameters. The pool and runner pass it through unread.
// Generated data is made from the seed alone; the user's data is named by its cached table file and
// column choice (`data`): the worker reads that file itself, so no matrix ever crosses IPC.
import type { ModelParams } from '../families'
import type { BenchConfig } from './config'
import type { WorkloadData, WorkloadOf } from '../vocabulary/workload-shape'
import { defaultMetric, type Task } from '../vocabulary/task'
import { workloadTaskOf } from './task'

export type { WorkloadData }
export type { WorkloadEarlyStopping, WorkloadTask } from '../vocabulary/workload-shape'

/** What a worker trains on, for the parameters of one family (the built-in families' by default). */
export type Workload<P extends { kind: string } = ModelParams> = WorkloadOf<P>

/**
 * The workload of one size; `task` the run's resolved task (contract/task.ts), absent for regression.
 * Early stopping watches the task's primary metric (its objective's default when the task does not say).
 */
export function workloadFor(
  config: BenchConfig,
  size: number,
  data?: WorkloadData,
  task?: Pick<Task, 'objective' | 'classes'> & Partial<Pick<Task, 'metric'>>,
): Workload {
  const metric = task?.metric ?? defaultMetric(task?.objective ?? 'regression')
  return {
    size,
    features: data ? data.featureColumns.length : config.features,
    seed: config.seed,
    target: config.target,
    testSplit: config.testSplit,
    model: structuredClone(config.model),
    ...(data ? { data: structuredClone(data) } : {}),
    ...(config.set ? { set: structuredClone(config.set) } : {}),
    ...(task && workloadTaskOf(task) ? { task: workloadTaskOf(task) } : {}),
    ...(config.earlyStopping !== undefined ? { earlyStopping: { rounds: config.earlyStopping, metric } } : {}),
    ...(config.validation !== undefined ? { validation: config.validation } : {}),
  }
}

/** Model i is initialised from seed + i + 1 (tfjs and our PRNG treat 0 as "no seed"; never use it). */
export function modelSeed(dataSeed: number, index: number): number {
  return dataSeed + index + 1
}
