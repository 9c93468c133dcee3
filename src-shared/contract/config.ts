// The run configuration: one schema for the CLI, IPC, WebSocket and the renderer's inline validation.
// Limits are product limits (what a desktop benchmark can sensibly run), stated once here.
import { z } from 'zod'
import { DataSourceSchema } from './dataset'
import {
  allBackendNames,
  type BackendName,
  backendKnown,
  type ConcreteBackend,
  backendSpec,
  familyKinds,
  findFamily,
  mlpFamily,
  type ModelFamily,
  type ModelParams,
  whyNoBatched,
  whyNoEarlyStopping,
  whyNoEarlyStoppingOnAuto,
} from '../families'
import { EARLY_STOPPING_LIMITS, validationRowCount } from './early-stopping'
import { halvingProblems, SearchSchema } from './halving'
import { GpuChoiceSchema } from './gpus'
import { findLauncher, LauncherSchema } from './launcher'
import { checkedSetSize, configurationCount, modelSetIssues, ModelSetSchema, type PathIssue as Problem } from './model-set'
import { splitRows } from '../vocabulary/split'
import { enumListField, intField, intListField, realField } from '../vocabulary/fields'
import { FAILURE_POLICIES, PRESET_NAMES, type PresetName, STRATEGIES, TARGETS } from '../vocabulary/names'
import { CLASS_LIMITS, METRIC_CHOICES, metricProblem, OBJECTIVE_CHOICES, type Objective } from '../vocabulary/task'

export * from '../vocabulary/names'
export type { BackendName, ConcreteBackend }

/**
 * The backend choices: `auto` and every registered family's backends (families/: the MLP's tfjs
 * backends and onnxruntime, the trees' own engines and xgboost), looked up when asked, so a backend a
 * test registers is accepted too.
 */
export function backendChoices(): string[] {
  return ['auto', ...allBackendNames()]
}

/** A concrete backend name (what a result records): one some family has. */
export const ConcreteBackendSchema = z
  .string()
  .refine(backendKnown, { error: () => `backend accepts ${allBackendNames().join(', ')}` })
  .transform((name) => name as ConcreteBackend)

/** A backend choice: `auto` or a concrete backend. */
export const BackendChoiceSchema = z
  .string({ error: () => `backend accepts ${backendChoices().join(', ')}` })
  .refine((name) => name === 'auto' || backendKnown(name), { error: () => `backend accepts ${backendChoices().join(', ')}` })
  .transform((name) => name as BackendName)

/**
 * Backends side by side (issue 25): a list of concrete backends, each measured with every strategy
 * and W of the plan in turn, compared within and across backends. `all` is resolved to the family's
 * available backends before a config is made (the CLI, the panel), so a result names them.
 */
const BackendListSchema = z
  .array(ConcreteBackendSchema, { error: () => `backend accepts auto, one backend, or several (${allBackendNames().join(', ')})` })
  .min(2, 'backend: a list names at least two backends (one backend is its name alone)')
  .max(8)
  .refine((xs) => new Set(xs).size === xs.length, 'backend lists a backend twice')

/** The backends a config runs on, in order: its one choice, or each of its list. */
export function backendsOf(config: Pick<BenchConfig, 'backend'>): BackendName[] {
  return Array.isArray(config.backend) ? config.backend : [config.backend]
}

/** The first backend a config runs on (the one a single-backend run reports). */
export function firstBackend(config: Pick<BenchConfig, 'backend'>): BackendName {
  return backendsOf(config)[0]
}

export const LIMITS = {
  size: { min: 2, max: 2_000_000 },
  sizesCount: { min: 1, max: 12 },
  models: { min: 1, max: 1000 },
  workers: { min: 1, max: 64 },
  listCount: { min: 1, max: 8 },
  /** model counts: room for a sweep (1, 2, 4, … up to 1000 is 11 counts; plan.ts modelSweep) */
  modelsCount: { min: 1, max: 16 },
  repeats: { min: 1, max: 100 },
  seed: { min: 0, max: 2_000_000_000 },
  features: { min: 1, max: 4096 },
  testSplit: { min: 0.05, max: 0.5 },
} as const

/**
 * The model to train: `kind` names the family (families/), whose own schema validates the rest.
 * Looked up at validation time, so a family registered later (a test's toy family) is accepted too.
 */
export const ModelSchema = z.unknown().transform((value, ctx): ModelParams => {
  const kind = (value as { kind?: unknown } | null)?.kind
  const family = typeof kind === 'string' ? findFamily(kind) : undefined
  if (!family) {
    ctx.issues.push({ code: 'custom', input: value, path: ['kind'], message: `model.kind accepts ${familyKinds().join(', ')}` })
    return z.NEVER
  }
  const parsed = family.paramsSchema.safeParse(value)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.issues.push({ ...issue, input: value } as never)
    return z.NEVER
  }
  return parsed.data as ModelParams
})

/** The full, explicit configuration of one run (what is stored with every result). */
const BenchConfigFields = z
  .object({
    preset: z.enum([...PRESET_NAMES, 'custom']).default('custom'),
    sizes: intListField('sizes', LIMITS.size, LIMITS.sizesCount),
    models: intListField('models', LIMITS.models, LIMITS.modelsCount),
    workers: intListField('workers', LIMITS.workers, LIMITS.listCount),
    strategies: enumListField('strategies', STRATEGIES),
    backend: z.union([BackendChoiceSchema, BackendListSchema], {
      error: () => `backend accepts ${backendChoices().join(', ')}, or a list of two or more backends to compare side by side`,
    }),
    repeats: intField('repeats', LIMITS.repeats),
    seed: intField('seed', LIMITS.seed),
    target: z.enum(TARGETS, { error: `target accepts ${TARGETS.join(', ')}` }),
    features: intField('features', LIMITS.features),
    /**
     * What the models learn: regression, binary, multiclass, or `auto` — read from the target (generated
     * data: teacher/noise → regression, binary, multiclass; the user's: two values → binary, text or
     * small integers → multiclass, else regression). Absent: auto (files from before classifiers: regression).
     */
    objective: z.enum(OBJECTIVE_CHOICES, { error: `objective accepts ${OBJECTIVE_CHOICES.join(', ')}` }).optional(),
    /** the primary metric: compared across strategies, ranked by, charted; auto = MSE (regression), log loss (classifiers) */
    metric: z.enum(METRIC_CHOICES, { error: `metric accepts ${METRIC_CHOICES.join(', ')}` }).optional(),
    /** generated multiclass data (target multiclass): the number of classes; absent: 5 */
    classes: intField('classes', CLASS_LIMITS).optional(),
    testSplit: realField('testSplit', LIMITS.testSplit),
    failurePolicy: z.enum(FAILURE_POLICIES, { error: `failurePolicy accepts ${FAILURE_POLICIES.join(', ')}` }),
    model: ModelSchema,
    /**
     * The user's data set (src-shared/contract/dataset.ts); absent: generated data. With it, `target`
     * (teacher | noise) does not apply and `features` is the number of feature columns the data's
     * column choice gives (the service sets it when it resolves the data, so estimates count them).
     */
    data: DataSourceSchema.optional(),
    /**
     * A model set (contract/model-set.ts): a grid over the family's varying fields, seeds per
     * configuration, K folds. Absent: N copies of `model` that differ by seed (today's run). With
     * it, `models` is the one count configurations × seeds × folds.
     */
    set: ModelSetSchema.optional(),
    /**
     * The NVIDIA GPUs the workers use (contract/gpus.ts): each worker pinned to one by its own
     * CUDA_VISIBLE_DEVICES, round-robin; none hides them all. Absent: no pinning (every worker sees every GPU).
     */
    gpus: GpuChoiceSchema.optional(),
    /** at most this many workers on each chosen GPU (absent: W spread round-robin, no limit) */
    workersPerGpu: intField('workersPerGpu', { min: 1, max: 64 }).optional(),
    /** where the workers run (contract/launcher.ts); absent: processes on this machine */
    launcher: LauncherSchema.optional(),
    /**
     * Early stopping (contract/early-stopping.ts): each model stops once its validation value of the
     * primary metric has not improved for this many rounds (trees) or epochs (MLP), and keeps its best
     * round's model. Needs held-out rows: folds, or `validation`. Absent: off.
     */
    earlyStopping: intField('earlyStopping', EARLY_STOPPING_LIMITS.rounds).optional(),
    /** without folds: the fraction of each size's training rows (the last ⌈fraction · train⌉) every model holds out as its validation rows */
    validation: realField('validation', EARLY_STOPPING_LIMITS.validation).optional(),
    /**
     * How a model set is searched (contract/halving.ts): halving trains every configuration a first
     * rung of rounds and continues the best 1/factor of them, rung by rung, to the full rounds. Absent: grid.
     */
    search: SearchSchema.optional(),
  })
  .strict()

type Fields = z.infer<typeof BenchConfigFields>

export const BenchConfigSchema = BenchConfigFields.superRefine((c, ctx) => {
  // cross-field checks only once the fields themselves are valid
  const valid = (xs: unknown, lim: { min: number; max: number }) =>
    Array.isArray(xs) && xs.length > 0 && xs.every((v) => Number.isInteger(v) && v >= lim.min && v <= lim.max)
  if (!valid(c.models, LIMITS.models) || !valid(c.workers, LIMITS.workers) || !valid(c.sizes, LIMITS.size)) return
  if (!(c.testSplit >= LIMITS.testSplit.min && c.testSplit <= LIMITS.testSplit.max)) return
  const family = c.model && findFamily(c.model.kind)
  const problems = [
    ...(family ? backendProblems(c, family) : []),
    ...(family && c.set ? setProblems(c, family, c.set) : []),
    ...launcherProblems(c),
    ...workerAndSizeProblems(c),
    ...objectiveProblems(c),
    ...earlyStoppingProblems(c, family),
    ...(family ? halvingProblems(c, family) : []),
  ]
  for (const { path, message } of problems) ctx.addIssue({ code: 'custom', path, message })
})

/** Each backend named is one the family has, and batched is asked only of a backend that fuses. */
function backendProblems(c: Fields, family: ModelFamily): Problem[] {
  const problems: Problem[] = []
  const side = Array.isArray(c.backend)
  for (const [i, backend] of (side ? (c.backend as string[]) : [c.backend as string]).entries()) {
    if (typeof backend !== 'string' || backend === 'auto' || !backendKnown(backend)) continue
    const why = whyNoBatched(family, backend)
    if (!backendSpec(family, backend)) {
      problems.push({
        path: side ? ['backend', i] : ['backend'],
        message: `backend ${backend} cannot train a ${family.label}; accepted: auto, ${family.backends.map((b) => b.name).join(', ')}`,
      })
    } else if (!side && c.strategies?.includes('batched') && why !== null) {
      // side by side, a backend without batched measures the other strategies (plan.ts)
      problems.push({ path: ['strategies'], message: `batched is not available for a ${family.label} on ${backend}: ${why}; accepted: sequential, pool` })
    }
  }
  return problems
}

/** A model set's own fields, its model count against --models, and its folds against each size's training rows. */
function setProblems(c: Fields, family: ModelFamily, set: NonNullable<Fields['set']>): Problem[] {
  const problems: Problem[] = modelSetIssues(family, set).map((issue) => ({ path: ['set', ...issue.path], message: issue.message }))
  // seeds or folds out of range: said on their own fields, not again as a wrong count
  const n = checkedSetSize(set)
  const made = `${configurationCount(set)} configuration${configurationCount(set) === 1 ? '' : 's'} × ${set.seeds} seed${set.seeds === 1 ? '' : 's'}${set.folds ? ` × ${set.folds} folds` : ''}`
  if (n !== null && n > LIMITS.models.max) {
    problems.push({ path: ['set'], message: `the model set makes ${n} models (${made}), more than the limit of ${LIMITS.models.max}` })
  } else if (n !== null && c.models.length > 1) {
    problems.push({ path: ['models'], message: `a model set and a model-count sweep do not combine: the set's ${made} is one count, ${n}` })
  } else if (n !== null && c.models[0] !== n) {
    problems.push({ path: ['models'], message: `models must be ${n} for this model set (${made}), got ${c.models[0]}` })
  }
  const folds = set.folds
  for (const size of c.sizes) {
    const { train } = splitRows(size, c.testSplit)
    if (folds !== null && folds > train) {
      problems.push({
        path: ['set', 'folds'],
        message: `folds ${folds} is more than the ${train} training rows of size ${size}: each fold needs a row (folds must be from 2 to ${Math.min(10, train)})`,
      })
    }
  }
  return problems
}

/** What a scheduler decides itself is not asked of the config: which GPU each task gets (its own fields' checks are its spec's). */
function launcherProblems(c: Fields): Problem[] {
  const spec = c.launcher && findLauncher(c.launcher.engine)
  if (!spec || c.gpus === undefined) return []
  return [{ path: ['gpus'], message: `gpus picks this machine's GPUs; with launcher ${spec.engine}, ${spec.assignsGpus}: leave gpus out` }]
}

/** Generated data fixes the objective (its target's): an objective or a metric that contradicts it is refused before anything starts. */
function objectiveProblems(c: Fields): Problem[] {
  const problems: Problem[] = []
  const generated = c.data === undefined ? generatedObjective(c.target) : null
  if (generated && c.objective && c.objective !== 'auto' && c.objective !== generated) {
    problems.push({
      path: ['objective'],
      message: `objective ${c.objective} does not fit generated target ${c.target}, a ${generated} target; accepted: auto, ${generated} (or --target ${GENERATED_TARGET_OF[c.objective]})`,
    })
  }
  if (c.classes !== undefined && c.data === undefined && c.target !== 'multiclass') {
    problems.push({ path: ['classes'], message: `classes sets generated multiclass data's class count: it needs target multiclass (got target ${c.target})` })
  }
  const objective = c.objective && c.objective !== 'auto' ? c.objective : generated
  const why = objective && c.metric ? metricProblem(c.metric, objective) : null
  if (why) problems.push({ path: ['metric'], message: why })
  return problems
}

/**
 * Early stopping watches held-out rows: folds', or a validation fraction's (never both), which must
 * leave every size training rows; and a backend that stops models early.
 */
function earlyStoppingProblems(c: Fields, family: ModelFamily | undefined): Problem[] {
  const problems: Problem[] = []
  const folds = c.set?.folds ?? null
  const { min, max } = EARLY_STOPPING_LIMITS.validation
  if (c.validation !== undefined && folds !== null) {
    problems.push({
      path: ['validation'],
      message: `validation ${c.validation} holds rows out only without folds: with ${folds} folds, each fold's held-out rows are its models' validation rows; accepted: folds or validation, not both`,
    })
  }
  if (c.earlyStopping !== undefined && folds === null && c.validation === undefined) {
    problems.push({
      path: ['earlyStopping'],
      message: `earlyStopping ${c.earlyStopping} watches each model's validation metric on held-out rows, and this run holds none out; accepted: with folds (2 to 10) or a validation fraction (${min} to ${max})`,
    })
  }
  if (c.validation !== undefined && folds === null) {
    for (const size of c.sizes) {
      const { train } = splitRows(size, c.testSplit)
      const held = validationRowCount(train, c.validation)
      if (train - held < 1) {
        problems.push({
          path: ['validation'],
          message: `validation ${c.validation} holds out ${held} of the ${train} training rows of size ${size}, leaving none to train on; accepted: a smaller fraction (from ${min}) or a larger size`,
        })
      }
    }
  }
  if (c.earlyStopping !== undefined && family) {
    const side = Array.isArray(c.backend)
    const named = side ? (c.backend as string[]) : [c.backend as string]
    for (const backend of named) {
      // auto picks among the family's auto backends with no regard for early stopping: refused unless all of them stop early
      const why = backend === 'auto' ? whyNoEarlyStoppingOnAuto(family) : backendKnown(backend) ? whyNoEarlyStopping(family, backend) : null
      if (why) problems.push({ path: ['earlyStopping'], message: `earlyStopping: ${why}` })
    }
  }
  return problems
}

/** The objective a generated target trains: teacher and noise are regression targets. */
export function generatedObjective(target: (typeof TARGETS)[number]): Objective {
  return target === 'binary' ? 'binary' : target === 'multiclass' ? 'multiclass' : 'regression'
}
const GENERATED_TARGET_OF: Record<Objective, (typeof TARGETS)[number]> = { regression: 'teacher', binary: 'binary', multiclass: 'multiclass' }

/** Generated multiclass data's class count when the config does not say. */
export const DEFAULT_GENERATED_CLASSES = 5

/** Every worker count has a model to train, and every size leaves a training and a test row. */
function workerAndSizeProblems(c: Fields): Problem[] {
  const problems: Problem[] = []
  // a W larger than some model counts is measured only where W ≤ N (plan.ts skips the rest, so a
  // sweep from N = 1 can still use W = 2); a W larger than every model count would never run
  const maxModels = Math.max(...c.models)
  for (const w of c.workers) {
    if (w > maxModels) {
      problems.push({
        path: ['workers'],
        message: `workers ${w} is more than models ${maxModels}: each worker needs at least one model (workers must be from 1 to ${maxModels})`,
      })
    }
  }
  for (const size of c.sizes) {
    const { train, test } = splitRows(size, c.testSplit)
    if (train < 1 || test < 1) {
      problems.push({
        path: ['sizes'],
        message: `sizes ${size} leaves ${train} training and ${test} test rows at testSplit ${c.testSplit}; it needs at least one of each`,
      })
    }
  }
  return problems
}

export type BenchConfig = z.infer<typeof BenchConfigSchema>
export type { ModelParams }

export { splitRows }

export const DEFAULT_CONFIG: BenchConfig = {
  preset: 'custom',
  sizes: [10_000],
  models: [50],
  workers: [2],
  strategies: ['sequential', 'pool', 'batched'],
  backend: 'auto',
  repeats: 3,
  seed: 42,
  target: 'teacher',
  features: 100,
  testSplit: 0.2,
  failurePolicy: 'stop',
  model: { ...mlpFamily.defaults, hidden: [...mlpFamily.defaults.hidden] },
}

/** The presets' data sizes, model and worker counts; each family adds its own tweak (families/). */
export const PRESETS: Record<PresetName, { label: string; description: string; config: Omit<Partial<BenchConfig>, 'model'> }> = {
  smoke: {
    label: 'Smoke',
    description: '2 000 rows × 4 models × 2 workers, 1 repeat: seconds, for tests',
    config: { sizes: [2000], models: [4], workers: [2], repeats: 1 },
  },
  quick: {
    label: 'Quick',
    description: '2 000 / 5 000 rows × 16 models × 2 workers, 2 repeats: a CPU-friendly look',
    config: { sizes: [2000, 5000], models: [16], workers: [2], repeats: 2 },
  },
  article: {
    label: 'Article: 10k/50k/100k/200k rows × 50 models × 5 workers',
    description: "The article's experiment (with batched added): 10 000–200 000 rows, 50 models, 5 workers",
    config: { sizes: [10_000, 50_000, 100_000, 200_000], models: [50], workers: [5], repeats: 3 },
  },
}

/** A preset's description for a family: the shared part and the family's own tweak. */
export function presetDescription(name: PresetName, kind: string = DEFAULT_CONFIG.model.kind): string {
  const note = findFamily(kind)?.presets[name]?.note
  return note ? `${PRESETS[name].description}; ${note}` : PRESETS[name].description
}

/** Overrides of a config; `model` merges into the preset's model (its `kind` picks the family). */
export type ConfigOverrides = Omit<Partial<BenchConfig>, 'model'> & { model?: Partial<ModelParams> }

/** A preset for a family (the overrides' model kind, else the default family); later overrides win. */
export function presetConfig(name: PresetName, overrides: ConfigOverrides = {}): BenchConfig {
  const { model, ...rest } = overrides
  const family = findFamily(model?.kind ?? DEFAULT_CONFIG.model.kind) ?? mlpFamily
  const params = { ...structuredClone(family.defaults), ...family.presets[name]?.params, ...model }
  return { ...DEFAULT_CONFIG, ...PRESETS[name].config, preset: name, ...rest, model: params as ModelParams }
}
