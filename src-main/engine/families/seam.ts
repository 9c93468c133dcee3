// A family's worker half assembled from its backend table: the WorkerFamily the worker loop calls.
// The table is keyed by the shared family's backend names, so a missing or extra entry does not
// compile. Decided here once for every family: which backend starts (by name or `auto`), the data
// set (built once, handed to the backend), the probe, and a model set's groups (by fold and by what
// the backend takes per model). Why, and the details: ../README.md, "A family's worker half".
import {
  type BackendCapability,
  type BackendName,
  classesMissingFrom,
  configurationParams,
  type HeldOutRows,
  heldOutRowsFor,
  setMember,
  setSize,
  type Workload,
} from '@shared/contract'
import {
  autoAccepts,
  autoSkipReason,
  type BackendSpec,
  findFamily,
  type ModelFamily,
  type ModelParamsBase,
  whyNoEarlyStopping,
  whyNoHalving,
} from '@shared/families'
import { capabilityOf } from '../backend/capability'
import { datasetFor } from '../datasets/generated'
import { type Dataset, heldOutDataset } from '../datasets/dataset'
import type { Backend, PreparedData, StartedBackend } from './define-backend'
import { BackendUnavailableError, type TrainHooks, type TrainOptions, type WorkerFamily } from '../backend/types'

/** A family's worker table: one sealed backend (defineBackend) per name N of its shared table, none missing, none extra. */
export type BackendTable<P extends ModelParamsBase, N extends string> = { readonly [K in N]: Backend<P> }

/** A family's worker half as its parts: the data key and the backend table. */
export interface FamilyBackends<P extends ModelParamsBase, N extends string> {
  /** identifies the data a workload needs: the worker keeps prepared data while the key stays */
  dataKey(workload: Workload<P>): string
  backends: BackendTable<P, N>
}

/** A built worker family keeps its table in the shared table's order (the probe and tests read it). */
export type TableWorkerFamily<P extends ModelParamsBase = ModelParamsBase> = WorkerFamily<P, StartedBackend<P>, SeamData<P>> & {
  backends: readonly Backend<P>[]
}

function reasonOf(err: unknown): string {
  return err instanceof BackendUnavailableError ? err.reason : err instanceof Error ? err.message : String(err)
}

/** The `auto` rule over a family's shared entries, applied while starting them (../README.md). */
async function startAuto<P extends ModelParamsBase>(kind: string, specs: readonly BackendSpec[], backends: readonly Backend<P>[]): Promise<StartedBackend<P>> {
  const reasons: string[] = []
  for (const spec of specs) {
    const backend = backends.find((b) => b.name === spec.name)
    if (!spec.auto || !backend) continue
    let started: StartedBackend<P>
    try {
      started = await backend.start()
    } catch (err) {
      reasons.push(autoSkipReason(spec, { name: spec.name, available: false, detail: reasonOf(err) }))
      continue
    }
    const capability = capabilityOf(started.runtime)
    if (!autoAccepts(spec, capability)) {
      reasons.push(autoSkipReason(spec, capability))
      continue
    }
    started.runtime.flags.autoSkipped = reasons.join('; ')
    return started
  }
  throw new BackendUnavailableError('auto', reasons.join('; ') || `no backend of the ${kind} family may be picked automatically`)
}

/** The family's data set and what the started backend prepared from it: one entry per (data key, fold) a job needed. */
export interface SeamData<P extends ModelParamsBase = ModelParamsBase> {
  dataset: Dataset
  prepared: Map<string, PreparedData<P>>
}

/**
 * A job's models as the backend trains them: a plain workload (its first model's configuration), each
 * model's own parameters, and the training rows its data set holds out as validation rows (a fold's,
 * or a validation fraction's tail: heldOutRowsFor).
 */
interface ModelGroup<P extends ModelParamsBase> {
  workload: Workload<P>
  /** each model's parameters by index (they differ only in the backend's perModel fields) */
  params: Map<number, P>
  /** the rows cut out of the training set as the validation rows; null: none, or held out by the backend itself (foldsHeldOut) */
  cut: HeldOutRows | null
  indices: number[]
}

/**
 * The job's models in groups of one held-out block (a fold, the validation rows) whose
 * configurations agree on every parameter but the backend's `perModel` ones (index order kept);
 * without a set, one group. With `foldsHeldOut`, held-out rows do not split groups (group.cut null:
 * the whole training set of `trainRows` rows).
 */
function modelGroups<P extends ModelParamsBase>(
  workload: Workload<P>,
  indices: readonly number[],
  trainRows: number,
  perModel: readonly string[] = [],
  foldsHeldOut = false,
): ModelGroup<P>[] {
  const set = workload.set
  const cutOf = (index: number) => (foldsHeldOut ? null : heldOutRowsFor(workload, trainRows, index))
  if (!set) return [{ workload, params: new Map(), cut: cutOf(0), indices: [...indices] }]
  const family = findFamily(workload.model.kind)
  if (!family) throw new Error(`no model family ${workload.model.kind}`)
  const groups = new Map<string, ModelGroup<P>>()
  for (const index of indices) {
    const member = setMember(set, index)
    const cut = cutOf(index)
    const params = configurationParams(family, workload.model, set, member.configuration)
    const shared = Object.fromEntries(Object.entries(params).filter(([k]) => !perModel.includes(k)))
    const key = `${JSON.stringify(shared)}/${cut ? `${cut.begin}:${cut.end}` : ''}`
    let group = groups.get(key)
    if (!group) {
      const { set: _set, ...plain } = workload
      group = { workload: { ...plain, model: params }, params: new Map(), cut, indices: [] }
      groups.set(key, group)
    }
    group.params.set(index, params)
    group.indices.push(index)
  }
  return [...groups.values()]
}

/**
 * The worker half of a shared family: its data key and its backend table, one defineBackend(entry)
 * per name of the shared family's table — the compiler checks the names (BackendTable), and this
 * checks them again when the module loads (a family whose names are plain strings, and each entry's
 * own name against its key). The built family lists its backends in the shared table's order.
 */
export function workerFamily<P extends ModelParamsBase, N extends string>(
  shared: ModelFamily<P, N>,
  half: FamilyBackends<P, NoInfer<N>>,
): TableWorkerFamily<P> {
  const table: Readonly<Record<string, Backend<P>>> = half.backends
  const names: string[] = shared.backends.map((s) => s.name)
  for (const [key, backend] of Object.entries(table)) {
    if (!names.includes(key)) throw new Error(`the ${shared.kind} family's worker table has a backend ${key} its shared table lacks (${names.join(', ')})`)
    if (backend.name !== key) throw new Error(`the ${shared.kind} family's worker table lists the backend ${backend.name} under ${key}`)
  }
  const missing = names.filter((name) => !(name in table))
  if (missing.length) throw new Error(`the ${shared.kind} family's worker table has no backend ${missing.join(', ')}`)
  return tableFamily(
    shared.kind,
    half.dataKey,
    names.map((name) => table[name]),
  )
}

/** A family over a list of sealed backends (workerFamily's table in order, or withBackends' longer one). */
function tableFamily<P extends ModelParamsBase>(
  kind: P['kind'],
  dataKey: (workload: Workload<P>) => string,
  backends: readonly Backend<P>[],
): TableWorkerFamily<P> {
  /** What the backend trains a group on: prepared once per worker from the group's data set (less its held-out rows, when it has them cut out). */
  const preparedFor = (started: StartedBackend<P>, data: SeamData<P>, group: ModelGroup<P>): PreparedData<P> => {
    const cut = group.cut
    const key = `${dataKey(group.workload)}|held out ${cut ? `${cut.begin}:${cut.end}` : 'none'}`
    let prepared = data.prepared.get(key)
    if (!prepared) {
      const dataset = cut ? heldOutDataset(data.dataset, cut) : data.dataset
      prepared = started.prepare(dataset, group.workload)
      data.prepared.set(key, prepared)
    }
    return prepared
  }
  return {
    kind,
    backends,
    async init(name: BackendName) {
      // the shared half is read when a worker starts, so a backend a test registers on both halves is found
      const shared = findFamily(kind)
      const specs = shared?.backends ?? []
      if (name === 'auto') return startAuto(kind, specs, backends)
      const backend = backends.find((b) => b.name === name)
      if (!backend || (shared && !specs.some((s) => s.name === name))) {
        throw new BackendUnavailableError(name, `it cannot train the ${shared?.label ?? kind} family; accepted: ${specs.map((s) => s.name).join(', ')}`)
      }
      return backend.start()
    },
    dataKey,
    prepare: (_started, workload) => ({ dataset: datasetFor(workload), prepared: new Map() }),
    disposeData(_started, data) {
      for (const prepared of data.prepared.values()) prepared.dispose()
    },
    async warmUp(started, data, workload, indices) {
      const { perModel, foldsHeldOut } = started.backend
      const train = data.dataset.train
      // every data set the set's jobs may need is prepared before the clock (a pool worker warms up
      // on one model but may be handed any); the warm-up step itself runs on the given models
      if (workload.set)
        for (const group of modelGroups(workload, [...Array(setSize(workload.set)).keys()], train, perModel, foldsHeldOut)) preparedFor(started, data, group)
      for (const group of modelGroups(workload, indices, train, perModel, foldsHeldOut))
        await preparedFor(started, data, group).warmUp(group.workload, group.indices)
    },
    async train(started, data, workload, indices, options, hooks) {
      const { perModel, foldsHeldOut } = started.backend
      refuseEarlyStopping(workload, started.backend, data.dataset)
      if (options.resumeOf && !started.backend.halving) {
        const family = findFamily(workload.model.kind)
        throw new Error(
          `search halving: ${(family && whyNoHalving(family, started.backend.name)) ?? `backend ${started.backend.name} cannot continue a model between rungs`}`,
        )
      }
      for (const group of modelGroups(workload, indices, data.dataset.train, perModel, foldsHeldOut)) {
        await preparedFor(started, data, group).train(
          group.workload,
          group.indices,
          groupOptions(workload, group, foldsHeldOut, options, data.dataset.train),
          setHooks(workload, group, options, hooks),
        )
      }
    },
  }
}

/**
 * What a backend is told of a group: in a set, each model's parameters; where the backend holds rows
 * out itself (foldsHeldOut), each model's held-out rows (its fold's, or the validation rows), as heldOutDataset would cut them.
 */
function groupOptions<P extends ModelParamsBase>(
  workload: Workload<P>,
  group: ModelGroup<P>,
  foldsHeldOut: boolean | undefined,
  options: TrainOptions,
  trainRows: number,
): TrainOptions {
  const set = workload.set
  const holdsOut = foldsHeldOut && ((set?.folds ?? null) !== null || workload.validation !== undefined)
  const heldOut = holdsOut ? { heldOutOf: (index: number) => heldOutRowsFor(workload, trainRows, index) } : {}
  if (!set) return { ...options, ...heldOut }
  const paramsOf = (index: number) => group.params.get(index) ?? group.workload.model
  return { ...options, paramsOf, ...heldOut }
}

/**
 * Before any training: early stopping on a backend that cannot (its shared entry's reason), and a
 * classifier's validation fraction whose rows leave out a class of the training rows (the run's
 * models could not be validated on it) are refused, naming the field.
 */
function refuseEarlyStopping<P extends ModelParamsBase>(workload: Workload<P>, backend: Backend<P>, dataset: Dataset): void {
  if (workload.earlyStopping && !backend.earlyStopping) {
    const family = findFamily(workload.model.kind)
    const why = family ? whyNoEarlyStopping(family, backend.name) : null
    throw new Error(`earlyStopping: ${why ?? `backend ${backend.name} cannot stop models early`}`)
  }
  const task = workload.task
  const fraction = workload.validation
  if (fraction === undefined || !task || task.objective === 'regression' || (workload.set?.folds ?? null) !== null) return
  const rows = heldOutRowsFor(workload, dataset.train, 0)!
  const missing = classesMissingFrom(dataset.yTrain.subarray(0, dataset.train), rows, task.classes)
  if (missing.length > 0) {
    throw new Error(
      `validation ${fraction} holds out the last ${rows.end - rows.begin} of the ${dataset.train} training rows, which hold no row of class${missing.length === 1 ? '' : 'es'} ${missing.join(', ')} (by class index): the models could not be validated on ${missing.length === 1 ? 'it' : 'them'}; accepted: a larger validation fraction (up to 0.5), a larger size, or folds`,
    )
  }
}

/** In a set, each trained model is reported with its configuration, its fold and, batched, its fused program (named by its first model). */
function setHooks<P extends ModelParamsBase>(workload: Workload<P>, group: ModelGroup<P>, options: TrainOptions, hooks: TrainHooks): TrainHooks {
  const set = workload.set
  if (!set) return hooks
  return {
    ...hooks,
    onModelDone: (model) => {
      const { configuration, fold } = setMember(set, model.index)
      const fused = options.fused ? { fusedGroup: group.indices[0] } : {}
      hooks.onModelDone({ ...model, configuration, ...(fold !== null ? { fold } : {}), ...fused })
    },
  }
}

/** The same family with more backends at the end of its table (a test's toy backend, defineBackend(entry); its shared entry: registerBackend). */
export function withBackends<P extends ModelParamsBase>(family: TableWorkerFamily<P>, extra: readonly Backend<P>[]): TableWorkerFamily<P> {
  return tableFamily(family.kind, family.dataKey, [...family.backends, ...extra])
}

/** What this machine offers: every family's backends, each name once (first family's probe), in registry order. */
export async function probeFamilies(
  families: readonly { backends: readonly Pick<Backend<ModelParamsBase>, 'name' | 'probe'>[] }[],
): Promise<BackendCapability[]> {
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
