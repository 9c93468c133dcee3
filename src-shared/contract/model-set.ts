// A model set: the N models of a run as N *different* models — a grid over the fields the family
// lets vary, seeds per configuration, optionally K folds over each size's training rows — in one
// fixed order: model i = (configuration c, replica s, fold f), i = (c · seeds + s) · folds + f, the
// grid's last field varying fastest. Model i keeps its seed (modelSeed(seed, i)); fold f of K holds
// out the training rows [⌊f·n/K⌋, ⌊(f+1)·n/K⌋) (foldRows). More: ../README.md, "contract/".
import type { ModelFamily, ParamField } from '../families/family'
import { type GridValue, type ModelSet, SET_LIMITS } from '../vocabulary/model-set-shape'
import type { WorkloadOf } from '../vocabulary/workload-shape'

export { type GridValue, type ModelSet, ModelSetSchema, SET_LIMITS } from '../vocabulary/model-set-shape'

/** The fields a family lets vary in a grid. */
export function varyingFields(family: Pick<ModelFamily, 'fields'>): ParamField[] {
  return family.fields.filter((f) => f.vary === true)
}

/** The grid's fields in the family's field order (the documented enumeration order). */
function gridFields(family: Pick<ModelFamily, 'fields'>, set: ModelSet): ParamField[] {
  return family.fields.filter((f) => set.grid[f.key] !== undefined)
}

/** How many configurations the grid makes (1 without a grid). */
export function configurationCount(set: ModelSet): number {
  return Object.values(set.grid).reduce((n, values) => n * values.length, 1)
}

/** N: configurations × seeds × folds. */
export function setSize(set: ModelSet): number {
  return configurationCount(set) * set.seeds * (set.folds ?? 1)
}

/**
 * N of a set whose seeds and folds are whole numbers in range (SET_LIMITS), else null: a wrong
 * seeds or folds is said once, on its own field, never again as a wrong model or worker count.
 */
export function checkedSetSize(set: ModelSet): number | null {
  const inRange = (v: unknown, lim: { min: number; max: number }) => Number.isInteger(v) && (v as number) >= lim.min && (v as number) <= lim.max
  if (!inRange(set.seeds, SET_LIMITS.seeds) || (set.folds !== null && !inRange(set.folds, SET_LIMITS.folds))) return null
  return setSize(set)
}

/** Configuration c's parameters: the base model with the grid's values for c. */
export function configurationParams<P extends { kind: string }>(family: Pick<ModelFamily, 'fields'>, base: P, set: ModelSet, c: number): P {
  const params = structuredClone(base) as Record<string, unknown>
  let rest = c
  const fields = gridFields(family, set)
  for (let k = fields.length - 1; k >= 0; k--) {
    const values = set.grid[fields[k].key]
    params[fields[k].key] = structuredClone(values[rest % values.length])
    rest = Math.floor(rest / values.length)
  }
  return params as P
}

/** Which configuration, replica and fold model i is. */
export interface SetMember {
  configuration: number
  replica: number
  /** null without folds */
  fold: number | null
}

export function setMember(set: ModelSet, index: number): SetMember {
  const folds = set.folds ?? 1
  const fold = index % folds
  const rest = Math.floor(index / folds)
  return { configuration: Math.floor(rest / set.seeds), replica: rest % set.seeds, fold: set.folds === null ? null : fold }
}

/** Training rows [begin, end): a fold's, which its models never train on and are scored on. */
export interface HeldOutRows {
  begin: number
  end: number
}

/** Fold f of K over n training rows: the rows [begin, end) it holds out. */
export function foldRows(n: number, folds: number, f: number): HeldOutRows {
  return { begin: Math.floor((f * n) / folds), end: Math.floor(((f + 1) * n) / folds) }
}

/** A configuration's varied values in words, with the fields' flags: "eta 0.1 · max-depth 6". */
export function describeConfiguration(family: Pick<ModelFamily, 'fields'>, set: ModelSet, params: object): string {
  const values = params as Record<string, unknown>
  return gridFields(family, set)
    .filter((f) => set.grid[f.key].length > 1)
    .map((f) => `${f.flag.replace(/^--/, '')} ${gridValueText(values[f.key] as GridValue)}`)
    .join(' · ')
}

/** Model i of a run: its parameters (its configuration's, in a set) and its varied values in words ('' outside a set). */
export function modelConfiguration<P extends { kind: string }>(
  family: Pick<ModelFamily, 'fields'>,
  base: P,
  set: ModelSet | undefined,
  index: number,
): { params: P; label: string } {
  if (!set) return { params: base, label: '' }
  const params = configurationParams(family, base, set, setMember(set, index).configuration)
  return { params, label: describeConfiguration(family, set, params) }
}

/** The set in one line, with the fields' flags: "max-depth 3,5 × eta 0.1,0.3 · 2 seeds · 3 folds → 8 models". */
export function describeSet(family: Pick<ModelFamily, 'fields'>, set: ModelSet): string {
  const grid = gridFields(family, set).map((f) => `${f.flag.replace(/^--/, '')} ${set.grid[f.key].map(gridValueText).join(f.type === 'intList' ? '/' : ',')}`)
  const parts = [grid.join(' × '), `${set.seeds} seed${set.seeds === 1 ? '' : 's'}`, ...(set.folds !== null ? [`${set.folds} folds`] : [])].filter(
    (p) => p !== '',
  )
  return `${parts.join(' · ')} → ${setSize(set)} models`
}

/**
 * Models of a set in words, for a worker's lane: their configuration when they share one, and the
 * seed replica and fold of a single model: "max-depth 5 · eta 0.3 · seed 2 · fold 3"; models of
 * several configurations (a batched lane) by how many and the values each varied field takes among
 * them: "2 configurations: max-depth 4 · eta 0.1,0.3" ('' when none applies).
 */
export function describeMembers(family: Pick<ModelFamily, 'fields'>, set: ModelSet, base: object, indices: readonly number[]): string {
  if (indices.length === 0) return ''
  const members = indices.map((i) => setMember(set, i))
  const configurations = [...new Set(members.map((m) => m.configuration))]
  if (configurations.length > 1) {
    const params = configurations.map((c) => configurationParams(family, base as { kind: string }, set, c) as Record<string, unknown>)
    const values = gridFields(family, set)
      .filter((f) => set.grid[f.key].length > 1)
      .map(
        (f) => `${f.flag.replace(/^--/, '')} ${[...new Set(params.map((p) => gridValueText(p[f.key] as GridValue)))].join(f.type === 'intList' ? '/' : ',')}`,
      )
    return `${configurations.length} configurations: ${values.join(' · ')}`
  }
  const configuration = configurations[0]
  const parts = [describeConfiguration(family, set, configurationParams(family, base as { kind: string }, set, configuration))]
  if (members.length === 1) {
    if (set.seeds > 1) parts.push(`seed ${members[0].replica + 1}`)
    if (members[0].fold !== null) parts.push(`fold ${members[0].fold + 1}`)
  }
  return parts.filter((p) => p !== '').join(' · ')
}

/** A grid value as typed: 0.1, or a list field's layers as 64,32. */
export function gridValueText(v: GridValue): string {
  return Array.isArray(v) ? v.join(',') : String(v)
}

/** A cross-field problem in a config: the field's path (as Zod's issues have it) and what is wrong, with what is accepted. */
export type PathIssue = { path: (string | number)[]; message: string }

/**
 * What is wrong with a set for a family (fields that cannot vary, values out of range, empty or
 * repeated values), as field issues on `set.grid.<key>`; the sizes' checks are the config's.
 */
export function modelSetIssues(family: ModelFamily, set: ModelSet): PathIssue[] {
  const issues: PathIssue[] = []
  const canVary = varyingFields(family).map((f) => f.key)
  for (const [key, values] of Object.entries(set.grid)) {
    const field = family.fields.find((f) => f.key === key)
    const path = ['grid', key]
    if (!field || field.vary !== true) {
      issues.push({ path, message: `${key} cannot vary in a ${family.label} grid; accepted: ${canVary.join(', ')}` })
      continue
    }
    if (values.length < SET_LIMITS.values.min || values.length > SET_LIMITS.values.max) {
      issues.push({ path, message: `${key} takes ${SET_LIMITS.values.min} to ${SET_LIMITS.values.max} values in a grid (got ${values.length})` })
      continue
    }
    const seen = new Set<string>()
    values.forEach((value, i) => {
      const parsed = family.paramsSchema.safeParse({ ...family.defaults, [key]: value })
      const own = parsed.success ? undefined : parsed.error.issues.find((issue) => issue.path[0] === key)
      if (own) issues.push({ path: [...path, i], message: own.message })
      const text = gridValueText(value)
      if (seen.has(text))
        issues.push({ path: [...path, i], message: `${key} lists ${text} twice; accepted: different values, each once (up to ${SET_LIMITS.values.max})` })
      seen.add(text)
    })
  }
  return issues
}

// ---- a set's cost, per configuration (the estimate and the result's work count) ----------------

type CostFamily = Pick<ModelFamily, 'fields' | 'workCount' | 'workerPeakBytes' | 'progressTotal'>

/** Each configuration's workload and how many of models 0..models−1 it holds; without a set, the workload itself. */
export function configurationWorkloads<W extends WorkloadOf<{ kind: string }>>(
  family: Pick<ModelFamily, 'fields'>,
  w: W,
  models: number,
): { workload: W; models: number }[] {
  const set = w.set
  if (!set) return [{ workload: w, models }]
  const counts = new Map<number, number>()
  for (let i = 0; i < models; i++) {
    const c = setMember(set, i).configuration
    counts.set(c, (counts.get(c) ?? 0) + 1)
  }
  return [...counts].map(([c, n]) => ({ workload: { ...w, set: undefined, model: configurationParams(family, w.model, set, c) }, models: n }))
}

/** The share of the training rows each model of a set trains on: a fold's model (K−1)/K, holding its fold out; 1 without folds. */
export function foldRowShare(set: ModelSet | undefined): number {
  const folds = set?.folds ?? null
  return folds === null ? 1 : (folds - 1) / folds
}

/** The work of each of the models `indices` (its configuration's, one model): what a batched run balances its fused programs by. */
export function modelWorks(family: Pick<CostFamily, 'fields' | 'workCount'>, w: WorkloadOf<{ kind: string }>, indices: readonly number[]): number[] {
  const set = w.set
  if (!set) return indices.map(() => 1)
  const byConfiguration = new Map<number, number>()
  return indices.map((i) => {
    const c = setMember(set, i).configuration
    let work = byConfiguration.get(c)
    if (work === undefined) {
      work = family.workCount({ ...w, set: undefined, model: configurationParams(family, w.model, set, c) } as never, 1, foldRowShare(set))
      byConfiguration.set(c, work)
    }
    return work
  })
}

/** The work of models 0..models−1: each configuration's own (a fold's model trains on (K−1)/K of the rows). */
export function workOf(family: CostFamily, w: WorkloadOf<{ kind: string }>, models: number): number {
  const share = foldRowShare(w.set)
  return configurationWorkloads(family, w, models).reduce((sum, c) => sum + family.workCount(c.workload as never, c.models, share), 0)
}

/** Peak bytes of a worker holding `modelsInWorker` models: its largest configuration's. */
export function peakBytesOf(family: CostFamily, w: WorkloadOf<{ kind: string }>, modelsInWorker: number): number {
  return Math.max(...configurationWorkloads(family, w, w.set ? setSize(w.set) : 1).map((c) => family.workerPeakBytes(c.workload as never, modelsInWorker)))
}

/** Steps one job reports: its longest configuration's. */
export function stepsOf(family: CostFamily, w: WorkloadOf<{ kind: string }>): number {
  return Math.max(...configurationWorkloads(family, w, w.set ? setSize(w.set) : 1).map((c) => family.progressTotal(c.workload as never)))
}
