// The worker halves of the model families, by kind: the one list the worker process consults, for
// training and for the probe (every family's backends, each name once).
import type { BackendCapability } from '@shared/contract'
import type { ModelParamsBase } from '@shared/families'
import { gbdtWorkerFamily } from './gbdt'
import { mlpWorkerFamily } from './mlp'
import { probeFamilies } from './seam'
import type { StartedRuntime, WorkerFamily } from '../backend/types'

/** Any family, as the worker loop sees it: parameters, started backend and data are the family's business. */
export type AnyWorkerFamily = WorkerFamily<ModelParamsBase, StartedRuntime, unknown>
export type WorkerFamilyLookup = (kind: string) => AnyWorkerFamily | undefined

const BUILT_IN = [mlpWorkerFamily, gbdtWorkerFamily]
const WORKER_FAMILIES = new Map<string, AnyWorkerFamily>(BUILT_IN.map((f) => [f.kind, f]))

export const builtInWorkerFamilies: WorkerFamilyLookup = (kind) => WORKER_FAMILIES.get(kind)

/** What this machine offers for every built-in family's backends, checked without training (in the probe's short-lived worker). */
export function probeBackends(): Promise<BackendCapability[]> {
  return probeFamilies(BUILT_IN)
}
