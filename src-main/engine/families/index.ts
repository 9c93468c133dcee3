// The worker halves of the model families, by kind: the one list the worker process consults.
import type { ModelParamsBase } from '@shared/families'
import { gbdtWorkerFamily } from './gbdt'
import { mlpWorkerFamily } from './mlp'
import type { WorkerFamily, WorkerRuntime } from './types'

/** Any family, as the worker loop sees it: parameters, runtime and data are the family's business. */
export type AnyWorkerFamily = WorkerFamily<ModelParamsBase, WorkerRuntime, unknown>
export type WorkerFamilyLookup = (kind: string) => AnyWorkerFamily | undefined

const WORKER_FAMILIES = new Map<string, AnyWorkerFamily>([
  [mlpWorkerFamily.kind, mlpWorkerFamily],
  [gbdtWorkerFamily.kind, gbdtWorkerFamily],
])

export const builtInWorkerFamilies: WorkerFamilyLookup = (kind) => WORKER_FAMILIES.get(kind)
