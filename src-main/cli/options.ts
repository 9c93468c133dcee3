// Flag parsing for `trainpool bench`: flags → a raw config, and config errors → messages that name
// the flag, the value and the accepted range. A model family's flags come from its field specs
// (families/), so a new family needs no change here. With --data FILE (the user's own data),
// --target names the column to predict and --features lists the feature columns; without it they
// keep their generated-data meaning (teacher | noise, and a count): the data set has its own target
// and its own features, so the two meanings never apply to the same run.
import {
  backendChoices, type BenchConfig, BenchConfigSchema, type DataSetInfo, type DataSource, DataSourceSchema, DEFAULT_CONFIG,
  IMPUTE_MODES, LIMITS, PRESET_NAMES, type PresetName, presetConfig, STRATEGIES, TARGETS, fieldIssues,
  type GridValue, SET_LIMITS, checkedSetSize, setSize, varyingFields, itemProblem, numberOf, type NumberKind, readNumber,
} from '@shared/contract'
import { acceptedText, allFamilies, autoOrder, familyKinds, findFamily, type ModelFamily, type ParamField, whyNoBatched } from '@shared/families'
import { modelSweep } from '@shared/plan'

export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/** config field → the flag that sets it (the model's fields come from its family) */
export const FLAG_FOR_FIELD: Record<string, string> = {
  sizes: '--sizes', models: '--models', workers: '--workers', strategies: '--strategies', backend: '--backend',
  repeats: '--repeats', seed: '--seed', target: '--target', preset: '--preset', features: '--features',
  testSplit: '--test-split', failurePolicy: '--on-failure', model: '--model', set: '--seeds/--folds',
  gpus: '--gpus', workersPerGpu: '--workers-per-gpu', launcher: '--launcher',
}

/** config.launcher's fields → their flags (with --launcher slurm) */
export const FLAG_FOR_LAUNCHER_FIELD: Record<string, string> = {
  'launcher.partition': '--partition', 'launcher.gres': '--gres', 'launcher.time': '--time', 'launcher.account': '--account',
  'launcher.sbatchArgs': '--sbatch-args', 'launcher.queueTimeoutS': '--queue-timeout',
}

/** What makes a model set on the command line. */
const MODEL_SET_FLAGS = 'several values of a field, --seeds, --folds'

/** config.data's fields → their flags (with --data) */
export const FLAG_FOR_DATA_FIELD: Record<string, string> = {
  'data.target': '--target', 'data.features': '--features', 'data.exclude': '--exclude', 'data.impute': '--impute', 'data.sha256': '--data', data: '--data',
}

/** Parsed command-line options, keyed as commander names them (--batch-size → batchSize). */
export type BenchFlags = Record<string, string | boolean | undefined>

/** The flag that sets a config field ("sizes.1", "data.target", "backend"), or '' when none does. */
export function flagForField(field: string): string {
  const parts = field.split('.')
  const two = parts.slice(0, 2).join('.')
  return FLAG_FOR_DATA_FIELD[two] ?? FLAG_FOR_LAUNCHER_FIELD[two] ?? FLAG_FOR_FIELD[parts[0]] ?? ''
}

/**
 * A field's error as the CLI says it, naming the flag once: the message's leading field name
 * ("models must be…", "data: sizes 3000 is…") becomes the flag, else the flag leads ("--features: …").
 */
export function flagMessage(flag: string, field: string, message: string): string {
  const name = field.split('.').filter((part) => !/^\d+$/.test(part)).pop() ?? ''
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
    if (problem !== null) throw new UsageError(`${flag} ${JSON.stringify(text)}: ${problem}; accepted: comma-separated integers from ${range.min} to ${range.max}`)
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
  const preset = text(flags, 'preset')
  let base: BenchConfig = { ...structuredClone(DEFAULT_CONFIG), model: structuredClone(family.defaults) as BenchConfig['model'] }
  if (preset !== undefined) {
    if (!(PRESET_NAMES as readonly string[]).includes(preset)) {
      throw new UsageError(`--preset ${JSON.stringify(preset)} is not a preset; accepted: ${PRESET_NAMES.join(', ')}`)
    }
    base = presetConfig(preset as PresetName, { model: { kind: family.kind } as Partial<BenchConfig['model']> })
  }
  const raw: Record<string, unknown> = { ...base }
  const explicit = (field: string, value: unknown) => {
    raw[field] = value
    if (preset === undefined) raw.preset = 'custom'
  }
  const given = (key: string) => text(flags, key)
  if (given('sizes') !== undefined) explicit('sizes', numberList('--sizes', given('sizes')!, LIMITS.size))
  if (given('models') !== undefined) explicit('models', numberList('--models', given('models')!, LIMITS.models))
  const sweep = given('sweep')
  if (sweep !== undefined) {
    if (sweep !== 'models') throw new UsageError(`--sweep ${JSON.stringify(sweep)} is not a sweep; accepted: models`)
    const counts = raw.models as number[]
    if (counts.length !== 1 || !Number.isInteger(counts[0]) || counts[0] < LIMITS.models.min || counts[0] > LIMITS.models.max) {
      throw new UsageError(`--sweep models needs one --models N to sweep up to (a whole number from ${LIMITS.models.min} to ${LIMITS.models.max}), got ${counts.join(',')}`)
    }
    explicit('models', modelSweep(counts[0]))
  }
  if (given('workers') !== undefined) explicit('workers', numberList('--workers', given('workers')!, LIMITS.workers))
  if (given('strategies') !== undefined) explicit('strategies', given('strategies')!.split(',').map((s) => s.trim()))
  const backendFlag = given('backend')
  if (backendFlag !== undefined) {
    // several, or all of the family's (the command keeps those available here): backends side by side
    const list = backendFlag.split(',').map((b) => b.trim()).filter((b) => b !== '')
    explicit('backend', backendFlag.trim() === 'all' ? family.backends.map((b) => b.name) : list.length > 1 ? list : backendFlag.trim())
  }
  // default strategies leave out one the backend lacks (xgboost: no batched); asked for, it is refused with the reason
  if (given('strategies') === undefined && typeof raw.backend === 'string' && whyNoBatched(family, raw.backend) !== null) {
    raw.strategies = (raw.strategies as string[]).filter((s) => s !== 'batched')
  }
  const ownData = given('data') !== undefined
  if (!ownData) {
    for (const [key, flag] of [['exclude', '--exclude'], ['impute', '--impute']] as const) {
      if (given(key) !== undefined) throw new UsageError(`${flag} applies to your own data only: add --data FILE (a CSV or Parquet file)`)
    }
  } else if (given('target') === undefined) {
    throw new UsageError('--data needs --target COLUMN: the column of the file to predict')
  }
  if (!ownData && given('target') !== undefined) explicit('target', given('target'))
  if (given('onFailure') !== undefined) explicit('failurePolicy', given('onFailure'))
  const gpus = given('gpus')
  if (gpus !== undefined) {
    const t = gpus.trim()
    raw.gpus = t === 'all' || t === 'none' ? t : numberList('--gpus', t, { min: 0, max: 63 })
  }
  const launcher = launcherFromFlags(given)
  if (launcher) raw.launcher = launcher
  if (given('workersPerGpu') !== undefined) raw.workersPerGpu = integerValue('--workers-per-gpu', given('workersPerGpu')!, { min: 1, max: 64 })
  if (given('repeats') !== undefined) explicit('repeats', integerValue('--repeats', given('repeats')!, LIMITS.repeats))
  if (given('seed') !== undefined) explicit('seed', integerValue('--seed', given('seed')!, LIMITS.seed))
  if (!ownData && given('features') !== undefined) explicit('features', integerValue('--features', given('features')!, LIMITS.features))
  if (given('testSplit') !== undefined) {
    explicit('testSplit', numberValue('--test-split', given('testSplit')!, 'real', `a number from ${LIMITS.testSplit.min} to ${LIMITS.testSplit.max}`))
  }
  // the family's own flags; another family's flag is a mistake worth naming
  const own = new Set(family.fields.map((f) => f.flag))
  for (const other of allFamilies()) {
    for (const f of other.fields) {
      if (!own.has(f.flag) && given(optionKey(f.flag)) !== undefined) {
        throw new UsageError(`${f.flag} is a ${other.label} parameter; it does not apply to --model ${family.kind} (its flags: ${[...own].join(' ')})`)
      }
    }
  }
  // a field given several values makes a grid (a list field's alternatives are separated by /)
  const model = { ...(raw.model as Record<string, unknown>) }
  const grid: Record<string, GridValue[]> = {}
  for (const f of family.fields) {
    const value = given(optionKey(f.flag))
    if (value === undefined) continue
    const alternatives = value.split(f.type === 'intList' ? '/' : ',').map((v) => v.trim())
    // an empty alternative ("0.1,,0.3") is a slip, never dropped: said by its place, as the panel says it
    const empty = alternatives.length > 1 ? alternatives.findIndex((v) => v === '') : -1
    if (empty >= 0) throw new UsageError(`${f.flag} ${JSON.stringify(value)}: ${itemProblem('', empty, 'real')}; accepted: ${acceptedText(f)}, or several separated by ${f.type === 'intList' ? '/' : 'commas'}`)
    if (alternatives.length > 1) {
      if (f.vary !== true) {
        throw new UsageError(`${f.flag} takes one value: it cannot vary in a grid; the ${family.label}'s fields that can: ${varyingFields(family).map((v) => v.flag).join(' ')}`)
      }
      grid[f.key] = alternatives.map((v) => fieldValue(f, v))
    } else model[f.key] = fieldValue(f, value)
    if (preset === undefined) raw.preset = 'custom'
  }
  raw.model = model
  const seeds = given('seeds')
  const folds = given('folds')
  if (Object.keys(grid).length > 0 || seeds !== undefined || folds !== undefined) {
    const set = {
      grid,
      seeds: seeds === undefined ? 1 : integerValue('--seeds', seeds, SET_LIMITS.seeds),
      folds: folds === undefined ? null : integerValue('--folds', folds, SET_LIMITS.folds),
    }
    raw.set = set
    if (sweep !== undefined) throw new UsageError(`--sweep models does not combine with a model set (${MODEL_SET_FLAGS}): the set's N is one count, ${setSize(set)}`)
    // N is the set's: configurations × seeds × folds (a --models that disagrees is refused by the schema)
    // (a set beyond the model limit, or with seeds or folds out of range, keeps the preset's count:
    // the schema then names the set's own field, not --models or --workers)
    const n = checkedSetSize(set)
    if (given('models') === undefined && n !== null && n >= LIMITS.models.min && n <= LIMITS.models.max) raw.models = [n]
    if (preset === undefined) raw.preset = 'custom'
  }
  const parsed = BenchConfigSchema.safeParse(raw)
  if (!parsed.success) {
    const messages = fieldIssues(parsed.error, raw).map((issue) => {
      const parts = issue.field.split('.')
      const [top, sub] = parts
      // a model field's flag; in a set, the grid's field (set.grid.eta.1) or seeds/folds (set.seeds)
      const key = top === 'model' ? sub : top === 'set' && sub === 'grid' ? parts[2] : undefined
      const field = key ? family.fields.find((f) => f.key === key) : undefined
      const setFlag = top === 'set' && (sub === 'seeds' || sub === 'folds') ? `--${sub}` : undefined
      const launcherFlag = top === 'launcher' ? FLAG_FOR_LAUNCHER_FIELD[`${top}.${sub}`] : undefined
      if (launcherFlag) return flagMessage(launcherFlag, sub, issue.message)
      return flagMessage(field?.flag ?? setFlag ?? FLAG_FOR_FIELD[top] ?? top, field ? key! : (setFlag ? sub : top), issue.message)
    })
    throw new UsageError([...new Set(messages)].join('\n'))
  }
  return parsed.data
}

function columnList(flag: string, text: string): string[] {
  const names = text.split(',').map((s) => s.trim())
  if (names.some((n) => n === '')) throw new UsageError(`${flag} ${JSON.stringify(text)}: a column name is empty; accepted: comma-separated column names`)
  return names
}

/** The data source of `--data FILE` once the file is loaded: --target, --features, --exclude, --impute. Throws UsageError. */
/** --launcher slurm and its sbatch flags → config.launcher (values checked by the contract); a Slurm flag without it is a mistake worth naming. */
function launcherFromFlags(given: (key: string) => string | undefined): Record<string, unknown> | undefined {
  const engine = given('launcher')
  const slurmOnly = Object.entries(FLAG_FOR_LAUNCHER_FIELD).filter(([field]) => given(optionKey(FLAG_FOR_LAUNCHER_FIELD[field])) !== undefined)
  if (engine === undefined || engine === 'local') {
    if (slurmOnly.length) throw new UsageError(`${slurmOnly[0][1]} applies to Slurm workers only: add --launcher slurm`)
    return undefined
  }
  if (engine !== 'slurm') throw new UsageError(`--launcher ${JSON.stringify(engine)} is not a launcher; accepted: local (worker processes on this machine), slurm`)
  const launcher: Record<string, unknown> = { engine }
  for (const [field, flag] of Object.entries(FLAG_FOR_LAUNCHER_FIELD)) {
    const value = given(optionKey(flag))
    if (value === undefined) continue
    const key = field.split('.')[1]
    if (key === 'gres') launcher.gres = value === 'none' ? null : value
    else if (key === 'sbatchArgs') launcher.sbatchArgs = value.split(/\s+/).filter(Boolean)
    else if (key === 'queueTimeoutS') launcher.queueTimeoutS = integerValue(flag, value, { min: 5, max: 7 * 24 * 3600 })
    else launcher[key] = value
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
  backend: `${backendChoices().join(' | ')} (auto, per model family: ${allFamilies()
    .map((f) => `${f.kind} ${autoOrder(f.backends).join(' → ')}`)
    .join('; ')}; a backend not in that order runs only when asked for by name); several, comma-separated, or all (every one available here) measure them side by side`,
  target: `generated data: ${TARGETS.join(' | ')}; with --data: the column to predict`,
  features: 'generated data: how many input features; with --data: the feature columns, comma-separated (default: every other numeric column)',
  impute: `with --data, MLP only: missing feature values ${IMPUTE_MODES.join(' | ')} (none refuses them; mean fills in the training rows' mean)`,
}
