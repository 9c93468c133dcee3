// A backend as a family's worker table holds it: defineBackend(entry) seals a WorkerBackend entry
// (../backend/types.ts) with its own runtime type and data type (tfjs tensors, a WGSL device's buffers, an ONNX
// session, an XGBoost booster) inside closures instead of erasing them, so an entry is only ever
// handed its own runtime and its own data, and the compiler checks every entry against its types.
import type { BackendCapability, Workload } from '@shared/contract'
import type { ModelParamsBase } from '@shared/families'
import type { Dataset } from '../datasets/dataset'
import type { StartedRuntime, TrainHooks, TrainOptions, WorkerBackend, WorkerRuntime } from '../backend/types'

/** One backend of a family, its runtime and data types sealed in (defineBackend): what a family's worker table holds. */
export interface Backend<P extends ModelParamsBase> {
  /** the entry's name: its key in the family's table, and its shared entry's name */
  readonly name: string
  /** the entry's `perModel` (WorkerBackend): the parameters the models of one fused program may differ in */
  readonly perModel: readonly string[] | undefined
  /** the entry's `foldsHeldOut` (WorkerBackend): a set's folds held out of one data set */
  readonly foldsHeldOut: boolean | undefined
  /** the entry's `earlyStopping` (WorkerBackend): it stops models early */
  readonly earlyStopping: true | undefined
  /** the entry's `halving` (WorkerBackend): it continues models between halving rungs */
  readonly halving: true | undefined
  /** What this machine offers, checked without training. */
  probe(): Promise<BackendCapability>
  /** Starts it in this process; throws BackendUnavailableError with the reason when it cannot. */
  start(): Promise<StartedBackend<P>>
}

/** A started backend: its runtime (what the worker loop reads), and its entry's prepare bound to that runtime. */
export interface StartedBackend<P extends ModelParamsBase> extends StartedRuntime {
  readonly backend: Backend<P>
  /** Places the family's data set where this runtime trains on it (the entry's prepare). */
  prepare(dataset: Dataset, workload: Workload<P>): PreparedData<P>
}

/** A data set placed by a started backend: the entry's warm-up, training and dispose, bound to its runtime and this data. */
export interface PreparedData<P extends ModelParamsBase> {
  warmUp(workload: Workload<P>, modelIndices: readonly number[]): Promise<void>
  train(workload: Workload<P>, modelIndices: readonly number[], options: TrainOptions, hooks: TrainHooks): Promise<void>
  dispose(): void
}

/** Seals a WorkerBackend entry for a family's table: its runtime and data stay its own (see the header). */
export function defineBackend<P extends ModelParamsBase, R extends WorkerRuntime, D>(entry: WorkerBackend<P, R, D>): Backend<P> {
  const backend: Backend<P> = {
    name: entry.name,
    perModel: entry.perModel,
    foldsHeldOut: entry.foldsHeldOut,
    earlyStopping: entry.earlyStopping,
    halving: entry.halving,
    probe: () => entry.probe(),
    async start() {
      const runtime = await entry.start()
      return {
        backend,
        runtime,
        prepare(dataset, workload) {
          const data = entry.prepare(runtime, dataset, workload)
          return {
            warmUp: (w, indices) => entry.warmUp(runtime, data, w, indices),
            train: (w, indices, options, hooks) => entry.train(runtime, data, w, indices, options, hooks),
            dispose: () => entry.dispose(runtime, data),
          }
        },
      }
    },
  }
  return backend
}
