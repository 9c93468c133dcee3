// The registry of model families: the one place that lists them. The config's `model` field is
// validated by the family its `kind` names; tests may register a family of their own.
import type { ModelFamily, ModelParamsBase } from './family'
import { type GbdtParams, gbdtFamily } from './gbdt'
import { type MlpParams, mlpFamily } from './mlp'

export * from './family'
export { gbdtFamily, type GbdtParams } from './gbdt'
export { mlpFamily, type MlpParams } from './mlp'

/** The parameters of every built-in family, discriminated by `kind`. */
export type ModelParams = MlpParams | GbdtParams
export type ModelKind = ModelParams['kind']

const registry = new Map<string, ModelFamily>([
  [mlpFamily.kind, mlpFamily as unknown as ModelFamily],
  [gbdtFamily.kind, gbdtFamily as unknown as ModelFamily],
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

/** The family of a (validated) model: every caller past validation may rely on it existing. */
export function familyOf<P extends ModelParamsBase>(model: P): ModelFamily<P> {
  const family = registry.get(model.kind)
  if (!family) throw new Error(`unknown model family ${JSON.stringify(model.kind)}; known: ${familyKinds().join(', ')}`)
  return family as unknown as ModelFamily<P>
}

/** Adds a family (tests register toy families; built-ins are listed above). */
export function registerFamily(family: ModelFamily): () => void {
  registry.set(family.kind, family)
  return () => registry.delete(family.kind)
}
