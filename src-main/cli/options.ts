// Flag parsing for `trainpool bench`: flags → a config, and its errors → messages naming the flag,
// the value and what is accepted. A family's flags come from its field specs (no change here for a
// new family). With --data FILE, --target and --features name the file's columns; without it, they
// keep their generated-data meaning (teacher | noise, and a count).
import {
  backendChoices,
  type BenchConfig,
  BenchConfigSchema,
  type DataSetInfo,
  type DataSource,
  DataSourceSchema,
  DEFAULT_CONFIG,
  IMPUTE_MODES,
  LIMITS,
  PRESET_NAMES,
  type PresetName,
  presetConfig,
  STRATEGIES,
  TARGETS,
  fieldIssues,
  type GridValue,
  SET_LIMITS,
  checkedSetSize,
  setSize,
  varyingFields,
  itemProblem,
  numberOf,
  type NumberKind,
  readNumber,
  CLASS_LIMITS,
  DEFAULT_GENERATED_CLASSES,
  METRIC_CHOICES,
  OBJECTIVE_CHOICES,
  EARLY_STOPPING_LIMITS,
  DEFAULT_HALVING_FACTOR,
  HALVING_LIMITS,
  SEARCH_METHODS,
  allLaunchers,
  findLauncher,
  launcherFlags,
  LOCAL_LAUNCHER,
} from '@shared/contract'
import {
  acceptedText,
  allFamilies,
  autoOrder,
  backendsWith,
  type DeclaredCapability,
  familyKinds,
  findFamily,
  type ModelFamily,
  type ParamField,
  whyNoBatched,
} from '@shared/families'
import { modelSweep } from '@shared/plan'

export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/** config field → the flag that sets it (the model's fields come from its family) */
export const FLAG_FOR_FIELD: Record<string, string> = {
  sizes: '--sizes',
  models: '--models',
  workers: '--workers',
  strategies: '--strategies',
  backend: '--backend',
  repeats: '--repeats',
  seed: '--seed',
  target: '--target',
  objective: '--objective',
  metric: '--metric',
  classes: '--classes',
  preset: '--preset',
  features: '--features',
  testSplit: '--test-split',
  earlyStopping: '--early-stopping',
  validation: '--validation',
  search: '--search',
  failurePolicy: '--on-failure',
  model: '--model',
  set: '--seeds/--folds',
  gpus: '--gpus',
  workersPerGpu: '--workers-per-gpu',
  launcher: '--launcher',
}

/** config.launcher's field ("launcher.partition") → its flag, from the launchers' field specs (contract/launcher.ts); undefined when none has it. */
export function flagForLauncherField(field: string): string | undefined {
  const key = field.split('.')[1]
  return launcherFlags().find(({ field: f }) => f.key === key)?.field.flag
}

/** --launcher's choices, and every launcher's own flags with the launchers they apply to (the CLI's options are made from these). */
export function launcherOptions(): { launcherHelp: string; flags: { option: string; help: string }[] } {
  return {
    launcherHelp: [LOCAL_LAUNCHER, ...allLaunchers()].map((l) => `${l.engine} (${l.help})`).join(' | '),
    flags: launcherFlags().map(({ field, launchers }) => ({
      option: `${field.flag} <${field.valueName}>`,
      help: `with ${launchers.map((l) => `--launcher ${l.engine}`).join(' or ')}: ${field.help}`,
    })),
  }
}

/** What makes a model set on the command line. */
const MODEL_SET_FLAGS = 'several values of a field, --seeds, --folds'

/** config.data's fields → their flags (with --data) */
export const FLAG_FOR_DATA_FIELD: Record<string, string> = {
  'data.target': '--target',
  'data.features': '--features',
  'data.exclude': '--exclude',
  'data.impute': '--impute',
  'data.sha256': '--data',
  data: '--data',
}

/** config.search's fields → their flags (the method's is --search itself) */
const FLAG_FOR_SEARCH_FIELD: Record<string, string> = {
  'search.factor': '--factor',
  'search.minRounds': '--min-rounds',
}

/** Parsed command-line options, keyed as commander names them (--batch-size → batchSize). */
export type BenchFlags = Record<string, string | boolean | undefined>

/** The flag that sets a config field ("sizes.1", "data.target", "backend"), or '' when none does. */
export function flagForField(field: string): string {
  const parts = field.split('.')
  const two = parts.slice(0, 2).join('.')
  return (
    FLAG_FOR_DATA_FIELD[two] ??
    FLAG_FOR_SEARCH_FIELD[two] ??
    (parts[0] === 'launcher' ? flagForLauncherField(two) : undefined) ??
    FLAG_FOR_FIELD[parts[0]] ??
    ''
  )
}

/**
 * A field's error as the CLI says it, naming the flag once: the message's leading field name
 * ("models must be…", "data: sizes 3000 is…") becomes the flag, else the flag leads ("--features: …").
 */
export function flagMessage(flag: string, field: string, message: string): string {
  const name =
    field
      .split('.')
      .filter((part) => !/^\d+$/.test(part))
      .pop() ?? ''
  // the service says "data: …" for the data section; the flag says where instead
  const text = message.replace(/^data: /, '')
  const leadingName = new RegExp(`^(model\\.|data\\.|launcher\\.)?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`)
  if (name !== '' && leadingName.test(text)) return text.replace(leadingName, flag)
  return text.startsWith(`${flag} `) || text.startsWith(`${flag}:`) ? text : `${flag}: ${text}`
}

/** commander's option key for a flag: "--batch-size" → "batchSize" */
export function optionKey(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
}

/** Comma-separated integers (--sizes, --models, --workers, --gpus; a list field's layers). */
function numberList(flag: string, text: string, range: { min: number; max: number }): number[] {
  return text.split(',').map((item, i) => {
    const problem = itemProblem(item, i, 'integer')
    if (problem !== null)
      throw new UsageError(`${flag} ${JSON.stringify(text)}: ${problem}; accepted: comma-separated integers from ${range.min} to ${range.max}`)
    return numberOf(item, 'integer')
  })
}

/** One number by the shared rule (readNumber): decimal only, an integer written as an integer. */
function numberValue(flag: string, text: string, kind: NumberKind, accepted: string): number {
  const read = readNumber(text, kind)
  if (read.problem !== undefined) throw new UsageError(`${flag} ${JSON.stringify(text)} ${read.problem}; accepted: ${accepted}`)
  return read.value
}

function integerValue(flag: string, text: string, range: { min: number; max: number }): number {
  return numberValue(flag, text, 'integer', `an integer from ${range.min} to ${range.max}`)
}

function fieldValue(f: ParamField, text: string): number | number[] {
  switch (f.type) {
    case 'int':
      return integerValue(f.flag, text, f.range)
    case 'real':
      return numberValue(f.flag, text, 'real', acceptedText(f))
    case 'intList':
      return numberList(f.flag, text, f.range)
  }
}

function text(flags: BenchFlags, key: string): string | undefined {
  const v = flags[key]
  return typeof v === 'string' ? v : undefined
}

/** The model family the flags ask for (--model), else the default one. */
function chosenFamily(flags: BenchFlags): ModelFamily {
  const kind = text(flags, 'model') ?? DEFAULT_CONFIG.model.kind
  const family = findFamily(kind)
  if (!family) throw new UsageError(`--model ${JSON.stringify(kind)} is not a model family; accepted: ${familyKinds().join(', ')}`)
  return family
}

/** Flags → the full config (the family's preset or defaults, then explicit flags), validated. Throws UsageError. */
export function configFromFlags(flags: BenchFlags): BenchConfig {
  const family = chosenFamily(flags)
  const draft = new ConfigDraft(flags, family)
  draft.runFlags()
  draft.dataFlags()
  draft.placementFlags()
  draft.refuseOtherFamilies()
  draft.setFlags(draft.modelFlags())
  return draft.validated()
}

/** A config being built from flags: the preset (or defaults) first, each explicit flag over it (which makes the preset 'custom'). */
class ConfigDraft {
  readonly raw: Record<string, unknown>
  private readonly preset: string | undefined

  constructor(
    private readonly flags: BenchFlags,
    private readonly family: ModelFamily,
  ) {
    this.preset = text(flags, 'preset')
    let base: BenchConfig = { ...structuredClone(DEFAULT_CONFIG), model: structuredClone(family.defaults) as BenchConfig['model'] }
    if (this.preset !== undefined) {
      if (!(PRESET_NAMES as readonly string[]).includes(this.preset))
        throw new UsageError(`--preset ${JSON.stringify(this.preset)} is not a preset; accepted: ${PRESET_NAMES.join(', ')}`)
      base = presetConfig(this.preset as PresetName, { model: { kind: family.kind } as Partial<BenchConfig['model']> })
    }
    this.raw = { ...base }
  }

  given(key: string): string | undefined {
    return text(this.flags, key)
  }

  private explicit(field: string, value: unknown): void {
    this.raw[field] = value
    this.customised()
  }

  private customised(): void {
    if (this.preset === undefined) this.raw.preset = 'custom'
  }

  /** sizes, models (or a sweep up to them), workers, strategies, backends, repeats, seed, test split, failure policy */
  runFlags(): void {
    const given = (key: string) => this.given(key)
    if (given('sizes') !== undefined) this.explicit('sizes', numberList('--sizes', given('sizes')!, LIMITS.size))
    if (given('models') !== undefined) this.explicit('models', numberList('--models', given('models')!, LIMITS.models))
    const sweep = given('sweep')
    if (sweep !== undefined) {
      if (sweep !== 'models') throw new UsageError(`--sweep ${JSON.stringify(sweep)} is not a sweep; accepted: models`)
      const counts = this.raw.models as number[]
      if (counts.length !== 1 || !Number.isInteger(counts[0]) || counts[0] < LIMITS.models.min || counts[0] > LIMITS.models.max) {
        throw new UsageError(
          `--sweep models needs one --models N to sweep up to (a whole number from ${LIMITS.models.min} to ${LIMITS.models.max}), got ${counts.join(',')}`,
        )
      }
      this.explicit('models', modelSweep(counts[0]))
    }
    if (given('workers') !== undefined) this.explicit('workers', numberList('--workers', given('workers')!, LIMITS.workers))
    if (given('strategies') !== undefined)
      this.explicit(
        'strategies',
        given('strategies')!
          .split(',')
          .map((s) => s.trim()),
      )
    this.backendFlag()
    if (given('onFailure') !== undefined) this.explicit('failurePolicy', given('onFailure'))
    if (given('repeats') !== undefined) this.explicit('repeats', integerValue('--repeats', given('repeats')!, LIMITS.repeats))
    if (given('seed') !== undefined) this.explicit('seed', integerValue('--seed', given('seed')!, LIMITS.seed))
    if (given('testSplit') !== undefined) {
      this.explicit('testSplit', numberValue('--test-split', given('testSplit')!, 'real', `a number from ${LIMITS.testSplit.min} to ${LIMITS.testSplit.max}`))
    }
    // with no held-out rows, with folds, or on a backend that cannot: refused by the schema (config.ts earlyStoppingProblems)
    if (given('earlyStopping') !== undefined)
      this.explicit('earlyStopping', integerValue('--early-stopping', given('earlyStopping')!, EARLY_STOPPING_LIMITS.rounds))
    if (given('validation') !== undefined) {
      const { min, max } = EARLY_STOPPING_LIMITS.validation
      this.explicit('validation', numberValue('--validation', given('validation')!, 'real', `a fraction from ${min} to ${max}`))
    }
    this.searchFlags()
  }

  /** --search grid|halving with halving's --factor and --min-rounds; what halving needs of the run: refused by the schema (contract/halving.ts halvingProblems) */
  private searchFlags(): void {
    const method = this.given('search')
    if (method !== undefined && !(SEARCH_METHODS as readonly string[]).includes(method))
      throw new UsageError(`--search ${JSON.stringify(method)} is not a search; accepted: ${SEARCH_METHODS.join(', ')}`)
    if (method !== 'halving') {
      for (const [key, flag] of [
        ['factor', '--factor'],
        ['minRounds', '--min-rounds'],
      ] as const) {
        if (this.given(key) !== undefined) throw new UsageError(`${flag} applies to --search halving only: add --search halving`)
      }
      if (method === 'grid') this.explicit('search', { method: 'grid' })
      return
    }
    const factor = this.given('factor')
    const minRounds = this.given('minRounds')
    this.explicit('search', {
      method: 'halving',
      factor: factor === undefined ? DEFAULT_HALVING_FACTOR : integerValue('--factor', factor, HALVING_LIMITS.factor),
      ...(minRounds !== undefined ? { minRounds: integerValue('--min-rounds', minRounds, HALVING_LIMITS.minRounds) } : {}),
    })
  }

  private backendFlag(): void {
    const backendFlag = this.given('backend')
    if (backendFlag !== undefined) {
      // several, or all of the family's (the command keeps those available here): backends side by side
      const list = backendFlag
        .split(',')
        .map((b) => b.trim())
        .filter((b) => b !== '')
      this.explicit('backend', backendFlag.trim() === 'all' ? this.family.backends.map((b) => b.name) : list.length > 1 ? list : backendFlag.trim())
    }
    // default strategies leave out one the backend lacks (xgboost: no batched); asked for, it is refused with the reason
    if (this.given('strategies') === undefined && typeof this.raw.backend === 'string' && whyNoBatched(this.family, this.raw.backend) !== null) {
      this.raw.strategies = (this.raw.strategies as string[]).filter((s) => s !== 'batched')
    }
  }

  /** generated data's target and features; --exclude/--impute only with --data, which needs --target */
  dataFlags(): void {
    const ownData = this.given('data') !== undefined
    if (!ownData) {
      for (const [key, flag] of [
        ['exclude', '--exclude'],
        ['impute', '--impute'],
      ] as const) {
        if (this.given(key) !== undefined) throw new UsageError(`${flag} applies to your own data only: add --data FILE (a CSV or Parquet file)`)
      }
      if (this.given('target') !== undefined) this.explicit('target', this.given('target'))
      if (this.given('features') !== undefined) this.explicit('features', integerValue('--features', this.given('features')!, LIMITS.features))
      if (this.given('classes') !== undefined) this.explicit('classes', integerValue('--classes', this.given('classes')!, CLASS_LIMITS))
    } else if (this.given('target') === undefined) {
      throw new UsageError('--data needs --target COLUMN: the column of the file to predict')
    } else if (this.given('classes') !== undefined) {
      throw new UsageError("--classes sets generated multiclass data's class count; with --data the classes are the target column's values")
    }
    // checked by the schema (config.ts objectiveProblems) and, on the user's data, when the target is read (contract/task.ts)
    if (this.given('objective') !== undefined) this.explicit('objective', this.given('objective'))
    if (this.given('metric') !== undefined) this.explicit('metric', this.given('metric'))
  }

  /** where the workers run: --gpus, --workers-per-gpu, --launcher and its sbatch flags */
  placementFlags(): void {
    const gpus = this.given('gpus')
    if (gpus !== undefined) {
      const t = gpus.trim()
      this.raw.gpus = t === 'all' || t === 'none' ? t : numberList('--gpus', t, { min: 0, max: 63 })
    }
    const launcher = launcherFromFlags((key) => this.given(key))
    if (launcher) this.raw.launcher = launcher
    if (this.given('workersPerGpu') !== undefined) this.raw.workersPerGpu = integerValue('--workers-per-gpu', this.given('workersPerGpu')!, { min: 1, max: 64 })
  }

  /** the family's own flags; another family's flag is a mistake worth naming */
  refuseOtherFamilies(): void {
    const own = new Set(this.family.fields.map((f) => f.flag))
    for (const other of allFamilies()) {
      for (const f of other.fields) {
        if (!own.has(f.flag) && this.given(optionKey(f.flag)) !== undefined) {
          throw new UsageError(`${f.flag} is a ${other.label} parameter; it does not apply to --model ${this.family.kind} (its flags: ${[...own].join(' ')})`)
        }
      }
    }
  }

  /** the family's fields into the model; a field given several values makes a grid (a list field's alternatives are separated by /). Returns the grid. */
  modelFlags(): Record<string, GridValue[]> {
    const model = { ...(this.raw.model as Record<string, unknown>) }
    const grid: Record<string, GridValue[]> = {}
    for (const f of this.family.fields) {
      const value = this.given(optionKey(f.flag))
      if (value === undefined) continue
      const alternatives = value.split(f.type === 'intList' ? '/' : ',').map((v) => v.trim())
      // an empty alternative ("0.1,,0.3") is a slip, never dropped: said by its place, as the panel says it
      const empty = alternatives.length > 1 ? alternatives.findIndex((v) => v === '') : -1
      if (empty >= 0)
        throw new UsageError(
          `${f.flag} ${JSON.stringify(value)}: ${itemProblem('', empty, 'real')}; accepted: ${acceptedText(f)}, or several separated by ${f.type === 'intList' ? '/' : 'commas'}`,
        )
      if (alternatives.length > 1) {
        if (f.vary !== true) {
          throw new UsageError(
            `${f.flag} takes one value: it cannot vary in a grid; the ${this.family.label}'s fields that can: ${varyingFields(this.family)
              .map((v) => v.flag)
              .join(' ')}`,
          )
        }
        grid[f.key] = alternatives.map((v) => fieldValue(f, v))
      } else model[f.key] = fieldValue(f, value)
      this.customised()
    }
    this.raw.model = model
    return grid
  }

  /** a grid, --seeds or --folds make a model set; its N is the run's model count */
  setFlags(grid: Record<string, GridValue[]>): void {
    const seeds = this.given('seeds')
    const folds = this.given('folds')
    if (Object.keys(grid).length === 0 && seeds === undefined && folds === undefined) return
    const set = {
      grid,
      seeds: seeds === undefined ? 1 : integerValue('--seeds', seeds, SET_LIMITS.seeds),
      folds: folds === undefined ? null : integerValue('--folds', folds, SET_LIMITS.folds),
    }
    this.raw.set = set
    if (this.given('sweep') !== undefined)
      throw new UsageError(`--sweep models does not combine with a model set (${MODEL_SET_FLAGS}): the set's N is one count, ${setSize(set)}`)
    // N is the set's: configurations × seeds × folds (a --models that disagrees is refused by the schema)
    // (a set beyond the model limit, or with seeds or folds out of range, keeps the preset's count:
    // the schema then names the set's own field, not --models or --workers)
    const n = checkedSetSize(set)
    if (this.given('models') === undefined && n !== null && n >= LIMITS.models.min && n <= LIMITS.models.max) this.raw.models = [n]
    this.customised()
  }

  /** The config checked against its schema; each problem said on the flag it came from. */
  validated(): BenchConfig {
    const parsed = BenchConfigSchema.safeParse(this.raw)
    if (parsed.success) return parsed.data
    const messages = fieldIssues(parsed.error, this.raw).map((issue) => this.onFlag(issue))
    throw new UsageError([...new Set(messages)].join('\n'))
  }

  private onFlag(issue: { field: string; message: string }): string {
    const parts = issue.field.split('.')
    const [top, sub] = parts
    // a model field's flag; in a set, the grid's field (set.grid.eta.1) or seeds/folds (set.seeds)
    const key = top === 'model' ? sub : top === 'set' && sub === 'grid' ? parts[2] : undefined
    const field = key ? this.family.fields.find((f) => f.key === key) : undefined
    const setFlag = top === 'set' && (sub === 'seeds' || sub === 'folds') ? `--${sub}` : undefined
    const launcherFlag = top === 'launcher' ? flagForLauncherField(`${top}.${sub}`) : undefined
    if (launcherFlag) return flagMessage(launcherFlag, sub, issue.message)
    const searchFlag = FLAG_FOR_SEARCH_FIELD[`${top}.${sub}`]
    if (searchFlag) return flagMessage(searchFlag, sub, issue.message)
    return flagMessage(field?.flag ?? setFlag ?? FLAG_FOR_FIELD[top] ?? top, field ? key! : setFlag ? sub : top, issue.message)
  }
}

function columnList(flag: string, text: string): string[] {
  const names = text.split(',').map((s) => s.trim())
  if (names.some((n) => n === '')) throw new UsageError(`${flag} ${JSON.stringify(text)}: a column name is empty; accepted: comma-separated column names`)
  return names
}

/** The data source of `--data FILE` once the file is loaded: --target, --features, --exclude, --impute. Throws UsageError. */
/**
 * --launcher ENGINE and its flags → config.launcher, each flag read by its field spec (values checked
 * by the contract; a number by the shared rule here, so its flag is named); a launcher's flag without
 * that launcher is a mistake worth naming.
 */
function launcherFromFlags(given: (key: string) => string | undefined): Record<string, unknown> | undefined {
  const engine = given('launcher')
  const spec = engine === undefined ? undefined : findLauncher(engine)
  if (engine !== undefined && engine !== LOCAL_LAUNCHER.engine && !spec) {
    const accepted = [`${LOCAL_LAUNCHER.engine} (worker processes on this machine)`, ...allLaunchers().map((l) => l.engine)].join(', ')
    throw new UsageError(`--launcher ${JSON.stringify(engine)} is not a launcher; accepted: ${accepted}`)
  }
  for (const { field, launchers } of launcherFlags()) {
    if (given(optionKey(field.flag)) === undefined || spec?.fields.some((f) => f.flag === field.flag)) continue
    const names = launchers.map((l) => l.name).join(' or ')
    throw new UsageError(`${field.flag} applies to ${names} workers only: add ${launchers.map((l) => `--launcher ${l.engine}`).join(' or ')}`)
  }
  if (!spec) return undefined
  const launcher: Record<string, unknown> = { engine: spec.engine }
  for (const field of spec.fields) {
    const value = given(optionKey(field.flag))
    if (value === undefined) continue
    const read = field.number ? numberValue(field.flag, value, field.number.kind, field.number.accepted) : field.read(value)
    if (read !== undefined) launcher[field.key] = read
  }
  return launcher
}

export function dataSourceFromFlags(flags: BenchFlags, loaded: Pick<DataSetInfo, 'sha256' | 'name'>): DataSource {
  const given = (key: string) => text(flags, key)
  const raw = {
    sha256: loaded.sha256,
    name: loaded.name,
    target: given('target') ?? '',
    features: given('features') === undefined ? null : columnList('--features', given('features')!),
    exclude: given('exclude') === undefined ? [] : columnList('--exclude', given('exclude')!),
    impute: given('impute') ?? 'none',
  }
  const parsed = DataSourceSchema.safeParse(raw)
  if (!parsed.success) {
    const messages = fieldIssues(parsed.error, raw).map((issue) => flagMessage(flagForField(`data.${issue.field}`) || '--data', issue.field, issue.message))
    throw new UsageError([...new Set(messages)].join('\n'))
  }
  return parsed.data
}

export const FLAG_HELP = {
  strategies: `comma-separated: ${STRATEGIES.join(', ')}`,
  // auto's rule is calibration (service/auto-calibration.ts, docs/guide-backends.md); the table order is only TRAINPOOL_AUTO=order's
  backend: `${backendChoices().join(' | ')} (auto: the backend a short calibration found fastest on this machine for the model family, among ${allFamilies()
    .map((f) => `${f.kind} ${autoOrder(f.backends).join(', ')}`)
    .join(
      '; ',
    )} — calibrated on the first run with auto and kept in the store, redone by trainpool calibrate; TRAINPOOL_AUTO=order takes the first available in that order instead; any other backend runs only when asked for by name); several, comma-separated, or all (every one available here) measure them side by side`,
  target: `generated data: ${TARGETS.join(' | ')}; with --data: the column to predict`,
  objective: `${OBJECTIVE_CHOICES.join(' | ')} (default auto: read from the target — two values → binary, text or small integers → multiclass up to ${CLASS_LIMITS.max} classes, other numbers → regression)`,
  metric: `the primary metric: ${METRIC_CHOICES.join(' | ')} (default auto: mse for regression, logloss for classifiers; auc for binary only) — compared across strategies, ranked by, charted`,
  classes: `generated --target multiclass: the number of classes (${CLASS_LIMITS.min} to ${CLASS_LIMITS.max}, default ${DEFAULT_GENERATED_CLASSES})`,
  earlyStopping: `stop each model once its validation value of the primary metric has not improved for R rounds or epochs (${EARLY_STOPPING_LIMITS.rounds.min} to ${EARLY_STOPPING_LIMITS.rounds.max}; ${declaredBackends('earlyStopping')}), keeping its best round's model (XGBoost's early_stopping_rounds); needs --folds or --validation; default off`,
  validation: `without --folds: hold out the last fraction of the training rows (${EARLY_STOPPING_LIMITS.validation.min} to ${EARLY_STOPPING_LIMITS.validation.max}; stratified by class for a classifier) as every model's validation rows`,
  search: `how a model set is searched: ${SEARCH_METHODS.join(' | ')} (default grid: every configuration to the full rounds; halving: successive halving — every configuration trains --min-rounds rounds, the best 1/--factor by mean validation metric continue to factor× the rounds, and so on to the full rounds, continuing rather than retraining; ${declaredBackends('halving')}; with --folds or --validation)`,
  factor: `with --search halving: η, how many configurations for each one that continues (${HALVING_LIMITS.factor.min} to ${HALVING_LIMITS.factor.max}, default ${DEFAULT_HALVING_FACTOR})`,
  minRounds: `with --search halving: the first rung's rounds r (1 to the model's rounds; rung i trains to min(rounds, r·η^i)); default the longest whose search trains at most 1/η of the grid's rounds (100 rounds, 54 configurations, η 3: 16, 32 %)`,
  features: 'generated data: how many input features; with --data: the feature columns, comma-separated (default: every other numeric column)',
  impute: `with --data, MLP only: missing feature values ${IMPUTE_MODES.join(' | ')} (none refuses them; mean fills in the training rows' mean)`,
}

/** The backends that declare a capability, by family ("gbdt: cpu, xgboost; mlp: tensorflow, wasm, cpu"), from their entries; a family with none is left out. */
function declaredBackends(capability: DeclaredCapability): string {
  return allFamilies()
    .flatMap((f) => {
      const names = backendsWith(f, capability)
      return names.length ? [`${f.kind}: ${names.join(', ')}`] : []
    })
    .join('; ')
}
