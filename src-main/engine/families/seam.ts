// A family's worker half assembled from its backend table: the WorkerFamily the worker loop calls.
// Three things are decided here once, for every family and backend:
//  - which backend starts: by name (its entry), or `auto` — the shared family's entries in order,
//    each started and kept if autoAccepts() it (the rule the capabilities announce per family, so
//    the backend a run gets is the one announced); what was passed over goes in flags.autoSkipped;
//  - the data: built once from the workload (datasetFor: generated from the seed, or the user's
//    cached table) and handed to the backend, so no backend can train on other data than the result
//    records;
//  - the probe: every family's entries, each name once (a name two families share, like cpu or
//    webgpu, is one machine fact).
// A started candidate that `auto` passes over stays as it is, not released: dropping Dawn's
// navigator.gpu while its device lives crashed the worker (SIGSEGV) in about 1 start in 5; the
// worker ends with process.exit, so the instance cannot keep it alive.
import type { BackendCapability, BackendName, Workload } from '@shared/contract'
import { autoAccepts, autoSkipReason, type BackendSpec, findFamily, type ModelParamsBase } from '@shared/families'
import { datasetFor } from '../data'
import { BackendUnavailableError, type WorkerBackend, type WorkerFamily, type WorkerRuntime } from './types'

/** A family's worker half as its parts: the data key and the backend table (names as in the shared family's entries). */
export interface FamilyBackends<P extends ModelParamsBase> {
  kind: P['kind']
  /** identifies the data a workload needs: the worker keeps prepared data while the key stays */
  dataKey(workload: Workload<P>): string
  backends: readonly WorkerBackend<P, WorkerRuntime, unknown>[]
}

/** A built worker family keeps its table (the probe and tests read it). */
export type TableWorkerFamily<P extends ModelParamsBase = ModelParamsBase> = WorkerFamily<P, WorkerRuntime, unknown> & {
  backends: readonly WorkerBackend<P, WorkerRuntime, unknown>[]
}

/** An entry typed with its own runtime and data, stored in a table of any (the seam pairs each runtime with the entry that started it). */
export function backendEntry<P extends ModelParamsBase, R extends WorkerRuntime, D>(entry: WorkerBackend<P, R, D>): WorkerBackend<P, WorkerRuntime, unknown> {
  return entry as unknown as WorkerBackend<P, WorkerRuntime, unknown>
}

/** The capability of a started backend: what `auto` judges (structured fields, never the detail text). */
export function capabilityOf(runtime: WorkerRuntime): BackendCapability {
  return { name: runtime.backend as BackendCapability['name'], available: true, gpu: runtime.hardware, detail: runtime.device }
}

function reasonOf(err: unknown): string {
  return err instanceof BackendUnavailableError ? err.reason : err instanceof Error ? err.message : String(err)
}

/** The `auto` rule over a family's shared entries, applied while starting them (see the header). */
async function startAuto<P extends ModelParamsBase>(specs: readonly BackendSpec[], table: FamilyBackends<P>): Promise<WorkerRuntime> {
  const reasons: string[] = []
  for (const spec of specs) {
    const entry = table.backends.find((b) => b.name === spec.name)
    if (!spec.auto || !entry) continue
    let started: WorkerRuntime
    try {
      started = await entry.start()
    } catch (err) {
      reasons.push(autoSkipReason(spec, { name: spec.name, available: false, detail: reasonOf(err) }))
      continue
    }
    const capability = capabilityOf(started)
    if (!autoAccepts(spec, capability)) {
      reasons.push(autoSkipReason(spec, capability))
      continue
    }
    started.flags.autoSkipped = reasons.join('; ')
    return started
  }
  throw new BackendUnavailableError('auto', reasons.join('; ') || `no backend of the ${table.kind} family may be picked automatically`)
}

export function workerFamily<P extends ModelParamsBase>(table: FamilyBackends<P>): TableWorkerFamily<P> {
  const entryOf = (runtime: WorkerRuntime): WorkerBackend<P, WorkerRuntime, unknown> => {
    const entry = table.backends.find((b) => b.name === runtime.backend)
    if (!entry) throw new Error(`the ${table.kind} family has no backend ${runtime.backend}`)
    return entry
  }
  return {
    kind: table.kind,
    backends: table.backends,
    async init(name: BackendName) {
      // the shared half is read when a worker starts, so a backend a test registers on both halves is found
      const shared = findFamily(table.kind)
      const specs = shared?.backends ?? []
      if (name === 'auto') return startAuto(specs, table)
      const entry = table.backends.find((b) => b.name === name)
      if (!entry || (shared && !specs.some((s) => s.name === name))) {
        throw new BackendUnavailableError(name, `it cannot train the ${shared?.label ?? table.kind} family; accepted: ${specs.map((s) => s.name).join(', ')}`)
      }
      return entry.start()
    },
    dataKey: table.dataKey,
    prepare: (runtime, workload) => entryOf(runtime).prepare(runtime, datasetFor(workload as unknown as Workload), workload),
    disposeData: (runtime, data) => entryOf(runtime).dispose(runtime, data),
    warmUp: (runtime, data, workload, indices) => entryOf(runtime).warmUp(runtime, data, workload, indices),
    train: (runtime, data, workload, indices, options, hooks) => entryOf(runtime).train(runtime, data, workload, indices, options, hooks),
  }
}

/** The same family with more backends at the end of its table (a test's toy backend; its shared entry: registerBackend). */
export function withBackends<P extends ModelParamsBase>(family: TableWorkerFamily<P>, extra: readonly WorkerBackend<P, WorkerRuntime, unknown>[]): TableWorkerFamily<P> {
  return workerFamily<P>({ kind: family.kind, dataKey: family.dataKey, backends: [...family.backends, ...extra] })
}

/** What this machine offers: every family's backends, each name once (first family's probe), in registry order. */
export async function probeFamilies(families: readonly { backends: readonly WorkerBackend<never, WorkerRuntime, unknown>[] }[]): Promise<BackendCapability[]> {
  const out: BackendCapability[] = []
  for (const family of families) {
    for (const entry of family.backends) {
      if (out.some((c) => c.name === entry.name)) continue
      try {
        out.push(await entry.probe())
      } catch (err) {
        out.push({ name: entry.name as BackendCapability['name'], available: false, gpu: false, detail: reasonOf(err) })
      }
    }
  }
  return out
}
