// The registry of model families: the one place that lists them. The config's `model` field is
// validated by the family its `kind` names; tests may register a family of their own.
import { autoBackendFor, type BackendSpec, type ProbedBackend } from './backend'
import { backendNames, backendSpec, type ModelFamily, type ModelParamsBase } from './family'
import { type GbdtBackendName, type GbdtParams, gbdtFamily } from './gbdt'
import { type MlpBackendName, type MlpParams, mlpFamily } from './mlp'

export * from './backend'
export * from './family'
export { gbdtFamily, type GbdtBackendName, type GbdtParams } from './gbdt'
export { mlpFamily, type MlpBackendName, type MlpParams } from './mlp'

/** A backend of a built-in family, by name (a test's own backend is accepted at run time: backendKnown). */
export type ConcreteBackend = MlpBackendName | GbdtBackendName
/** A backend choice: one by name, or `auto` (each family's own preference order over what this machine has). */
export type BackendName = 'auto' | ConcreteBackend

/** The parameters of every built-in family, discriminated by `kind`. */
export type ModelParams = MlpParams | GbdtParams
export type ModelKind = ModelParams['kind']

const registry = new Map<string, ModelFamily>([
  [mlpFamily.kind, mlpFamily],
  [gbdtFamily.kind, gbdtFamily],
])

export function familyKinds(): string[] {
  return [...registry.keys()]
}

export function allFamilies(): ModelFamily[] {
  return [...registry.values()]
}

/** The family of a kind, or undefined for an unknown kind. */
export function findFamily(kind: string): ModelFamily | undefined {
  return registry.get(kind)
}

/** The registry's rule, checked: the family of a model's kind is the family of that model's parameters. */
function isFamilyOf<P extends ModelParamsBase>(family: ModelFamily, model: P): family is ModelFamily<P> {
  return family.kind === model.kind
}

/** The family of a (validated) model: every caller past validation may rely on it existing. */
export function familyOf<P extends ModelParamsBase>(model: P): ModelFamily<P> {
  const family = registry.get(model.kind)
  if (!family || !isFamilyOf(family, model)) throw new Error(`unknown model family ${JSON.stringify(model.kind)}; known: ${familyKinds().join(', ')}`)
  return family
}

/** Adds a family (tests register toy families; built-ins are listed above). */
export function registerFamily(family: ModelFamily): () => void {
  registry.set(family.kind, family)
  return () => registry.delete(family.kind)
}

/** Every registered family's backends, each name once, in registry order: the contract's backend list. */
export function allBackendNames(): string[] {
  return [...new Set(allFamilies().flatMap(backendNames))]
}

/** Whether some registered family has this backend (the contract's check of a backend name). */
export function backendKnown(name: string): boolean {
  return allFamilies().some((f) => f.backends.some((b) => b.name === name))
}

/**
 * Whether a backend trains on a GPU, as its entry in the family's table says (`gpu`); without a
 * family (or one this build does not know), whether any registered family's entry of that name does
 * (a name two families share, like webgpu, is one machine fact). The one answer to "is this a GPU
 * backend" (the telemetry panel, the calibration's machine key).
 */
export function isGpuBackend(name: string, kind?: string | null): boolean {
  const family = kind == null ? undefined : findFamily(kind)
  return (family ? [family] : allFamilies()).some((f) => backendSpec(f, name)?.gpu === true)
}

/** What `auto` picks for each family from the probe's results (null: nothing `auto` may take is available). */
export function autoBackendsFrom(probed: readonly ProbedBackend[]): Record<string, string | null> {
  return Object.fromEntries(allFamilies().map((f) => [f.kind, autoBackendFor(f.backends, probed)]))
}

/**
 * Adds a backend to a family (tests register a toy backend; built-ins are listed in each family's
 * table). The family is replaced in the registry by one whose table ends with the entry, so every
 * lookup (findFamily, familyOf, the contract's checks, the estimate) sees it; returns the undo.
 */
export function registerBackend(kind: string, spec: BackendSpec): () => void {
  const family = registry.get(kind)
  if (!family) throw new Error(`unknown model family ${JSON.stringify(kind)}; known: ${familyKinds().join(', ')}`)
  registry.set(kind, { ...family, backends: [...family.backends, spec] })
  return () => registry.set(kind, family)
}
