// What the config panel calls each field, what it accepts, and the schema's messages said in those
// words: the field's label instead of its internal name ("Learning rate", not "lr"), and the text the
// user typed instead of the parsed value ("1e", not "got null"). Pure; the config store applies it.
import { DEFAULT_GENERATED_CLASSES, LIMITS } from '@shared/contract/config'
import { SET_LIMITS } from '@shared/contract/model-set'
import { EARLY_STOPPING_LIMITS } from '@shared/contract/early-stopping'
import { HALVING_LIMITS } from '@shared/contract/halving'
import type { FieldIssue } from '@shared/vocabulary/errors'
import { CLASS_LIMITS } from '@shared/vocabulary/task'
import { itemProblem, type NumberKind, readNumber } from '@shared/vocabulary/fields'
import { acceptedText, type ParamField } from '@shared/families'
import type { LauncherField } from '@shared/contract/launcher-spec'
import { formatNumber } from '@shared/format'

const SIZE_ACCEPTED = `a whole number of rows from ${formatNumber(LIMITS.size.min)} to ${formatNumber(LIMITS.size.max)}`

/** The run config's own fields: label and what the box accepts (the family's fields carry their own). */
export const CONFIG_FIELDS: Record<string, { label: string; accepted?: string; kind?: NumberKind }> = {
  sizes: { label: 'Data sizes', accepted: `whole numbers of rows from ${formatNumber(LIMITS.size.min)} to ${formatNumber(LIMITS.size.max)}`, kind: 'integer' },
  models: { label: 'Models (N)', accepted: `whole numbers from ${LIMITS.models.min} to ${LIMITS.models.max}, e.g. 50 or 50, 100`, kind: 'integer' },
  workers: { label: 'Workers (W)', accepted: `whole numbers from ${LIMITS.workers.min} to ${LIMITS.workers.max}, e.g. 2 or 1, 2, 5`, kind: 'integer' },
  strategies: { label: 'Strategies' },
  backend: { label: 'Backend' },
  repeats: { label: 'Repeats', accepted: `a whole number from ${LIMITS.repeats.min} to ${LIMITS.repeats.max}`, kind: 'integer' },
  seed: { label: 'Seed', accepted: `a whole number from ${LIMITS.seed.min} to ${formatNumber(LIMITS.seed.max)}`, kind: 'integer' },
  target: { label: 'Target' },
  classes: {
    label: 'Classes',
    accepted: `a whole number from ${CLASS_LIMITS.min} to ${CLASS_LIMITS.max}, or empty for ${DEFAULT_GENERATED_CLASSES}`,
    kind: 'integer',
  },
  objective: { label: 'Objective' },
  metric: { label: 'Metric' },
  features: { label: 'Features', accepted: `a whole number from ${LIMITS.features.min} to ${formatNumber(LIMITS.features.max)}`, kind: 'integer' },
  testSplit: { label: 'Test split', accepted: `a number from ${LIMITS.testSplit.min} to ${LIMITS.testSplit.max}`, kind: 'real' },
  failurePolicy: { label: 'On failure' },
  model: { label: 'Model' },
  set: { label: 'Model set' },
  gpus: { label: 'GPUs' },
  launcher: { label: 'Where to run' },
  earlyStopping: {
    label: 'Early stopping (patience)',
    accepted: `a whole number of rounds from ${EARLY_STOPPING_LIMITS.rounds.min} to ${EARLY_STOPPING_LIMITS.rounds.max}, or empty for off`,
    kind: 'integer',
  },
  validation: {
    label: 'Validation fraction',
    accepted: `a number from ${EARLY_STOPPING_LIMITS.validation.min} to ${EARLY_STOPPING_LIMITS.validation.max}, or empty for none`,
    kind: 'real',
  },
  search: { label: 'Search' },
}

/** The search's own boxes (config.search.*: successive halving's). */
const SEARCH_FIELDS: Record<string, { label: string; accepted?: string; kind?: NumberKind }> = {
  method: { label: 'Search' },
  factor: { label: 'Halving factor', accepted: `a whole number from ${HALVING_LIMITS.factor.min} to ${HALVING_LIMITS.factor.max}`, kind: 'integer' },
  minRounds: { label: 'First rung (rounds)', accepted: "a whole number of rounds up to the model's, or empty for auto", kind: 'integer' },
}

/** The model set's own boxes (config.set.*; a grid's values are said with their field's label). */
const SET_FIELDS: Record<string, { label: string; accepted: string; kind: NumberKind }> = {
  seeds: { label: 'Seeds per configuration', accepted: `a whole number from ${SET_LIMITS.seeds.min} to ${SET_LIMITS.seeds.max}`, kind: 'integer' },
  folds: {
    label: 'Cross-validation folds',
    accepted: `a whole number from ${SET_LIMITS.folds.min} to ${SET_LIMITS.folds.max}, or empty for none`,
    kind: 'integer',
  },
}

/** The user's data file's fields (config.data.*), as the panel's data section labels them. */
export const DATA_FIELDS: Record<string, string> = {
  '': 'Data file',
  sha256: 'Data file',
  name: 'Data file',
  target: 'Target column',
  features: 'Feature columns',
  exclude: 'Feature columns',
  impute: 'Missing values',
}

export interface FieldWords {
  /** "Learning rate", "Data size 2" */
  label: string
  /** what the box holds now, as typed ("1e", "64, abc"); undefined when it is not a text box */
  typed?: string
  /** the one list item an issue is about, as typed ("abc" of "64, abc"; "" for an empty one) */
  item?: string
  /** that item's place in its list (0 for the first) */
  itemIndex?: number
  /** "a number from 1e-6 to 1" */
  accepted?: string
  /** what a number typed there must be (the shared rule's kind), when the box takes numbers */
  kind?: NumberKind
}

/**
 * A list box's items as typed, the way the store parses them: split at commas (semicolons and
 * spaces separate too), each trimmed; an empty item between two commas ("0.1,,0.3") stays, so it
 * is refused by its place, never dropped.
 */
export function listItems(text: string): string[] {
  const t = text.trim()
  return t === '' ? [] : t.split(/\s*[,;]\s*|\s+/)
}

/** The item at `index` of a typed list, with its place; nothing when there is no such item. */
function itemAt(items: readonly string[] | undefined, index: number): Pick<FieldWords, 'item' | 'itemIndex'> {
  return Number.isInteger(index) && items && index < items.length ? { item: items[index].trim(), itemIndex: index } : {}
}

/** What a family field's box takes, by its type (a list field's items are integers). */
export function fieldKind(field: ParamField): NumberKind {
  return field.type === 'real' ? 'real' : 'integer'
}

/**
 * Where an issue's field is: its label, the text typed and what it accepts. `texts` holds what each
 * box shows: "sizes.0", "models", "workers", "repeats", …, and "model.<key>" for a family field.
 */
export function fieldWords(
  field: string,
  texts: Readonly<Record<string, string>>,
  familyFields: readonly ParamField[],
  launcherFields: readonly LauncherField[] = [],
): FieldWords {
  const path = field.split('.')
  if (path[0] === 'model' && path.length >= 2 && path[1] !== 'kind') {
    const f = familyFields.find((x) => x.key === path[1])
    if (f) {
      const typed = texts[`model.${f.key}`]
      const index = path[2] != null ? Number(path[2]) : NaN
      return { label: f.label, typed, ...itemAt(typed == null ? undefined : listItems(typed), index), accepted: acceptedText(f), kind: fieldKind(f) }
    }
  }
  if (path[0] === 'set' && path[1] === 'grid' && path[2]) {
    const f = familyFields.find((x) => x.key === path[2])
    const typed = texts[`set.grid.${path[2]}`]
    const index = path[3] != null ? Number(path[3]) : NaN
    const items = typed != null && f ? typed.split(f.type === 'intList' ? '/' : ',') : undefined
    return { label: f?.label ?? path[2], typed, ...itemAt(items, index), accepted: f ? acceptedText(f) : undefined, kind: f ? fieldKind(f) : undefined }
  }
  if (path[0] === 'set' && SET_FIELDS[path[1] ?? '']) return { ...SET_FIELDS[path[1]], typed: texts[`set.${path[1]}`] }
  if (path[0] === 'search' && SEARCH_FIELDS[path[1] ?? '']) return { ...SEARCH_FIELDS[path[1]], typed: texts[`search.${path[1]}`] }
  if (path[0] === 'data') return { label: DATA_FIELDS[path[1] ?? ''] ?? DATA_FIELDS[''] }
  const launcherField = path[0] === 'launcher' ? launcherFields.find((f) => f.key === path[1]) : undefined
  if (launcherField) {
    // a launcher's list box is split at spaces (an option may hold commas: --mail-type=END,FAIL)
    const typed = texts[`launcher.${launcherField.key}`]
    const index = path[2] != null ? Number(path[2]) : NaN
    const { label, number } = launcherField
    return { label, accepted: number?.accepted, kind: number?.kind, typed, ...itemAt(typed == null ? undefined : typed.trim().split(/\s+/), index) }
  }
  const base = CONFIG_FIELDS[path[0]]
  if (!base) return { label: field || 'Configuration' }
  const index = path[1] != null ? Number(path[1]) : NaN
  if (path[0] === 'sizes') {
    // one box per size: the item is that box
    if (Number.isInteger(index))
      return { label: `Data size ${index + 1}`, typed: texts[`sizes.${index}`], item: texts[`sizes.${index}`], accepted: SIZE_ACCEPTED, kind: 'integer' }
    return { label: base.label, accepted: base.accepted }
  }
  const typed = texts[path[0]]
  return { label: base.label, typed, ...itemAt(typed == null ? undefined : listItems(typed), index), accepted: base.accepted, kind: base.kind }
}

/**
 * Internal names a message may mention besides its own field ("… at testSplit 0.2"): the code-like
 * ones (camelCase, "lr"), said as the panel says them; plain words ("models") are left as they are.
 */
function internalNames(familyFields: readonly ParamField[]): [string, string][] {
  const names: [string, string][] = [['testSplit', 'test split']]
  for (const f of familyFields) if (/[A-Z]/.test(f.key) || f.key === 'lr') names.push([f.key, f.label.toLowerCase()])
  return names
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A schema message in the panel's words: "lr must be a finite number (got null)" with the box
 * showing "1e" becomes 'Learning rate: "1e" is not a number; enter a number from 0.000001 to 1'.
 */
export function sayIssue(issue: FieldIssue, words: FieldWords, familyFields: readonly ParamField[] = []): string {
  // the data check's words (src-shared/data-check.ts) name their column and file already: shown as
  // the service says them, whether the panel found the problem or the service did
  if (issue.field === 'data' || issue.field.startsWith('data.')) {
    const text = issue.message.replace(/^data: /, '')
    return text.charAt(0).toUpperCase() + text.slice(1)
  }
  const name =
    issue.field
      .split('.')
      .filter((p) => !/^\d+$/.test(p))
      .pop() ?? ''
  let message = issue.message.replace(/\s*\(got [^)]*\)\s*$/, '')
  const typedItem = (words.item ?? words.typed ?? '').trim()
  const enter = words.accepted ? `; enter ${words.accepted}` : ''
  // an empty item of a list that is not empty ("0.1,,0.3"): said by its place, as the CLI says it
  if (words.item === '' && words.itemIndex !== undefined && (words.typed ?? '').trim() !== '') {
    return `${words.label}: ${itemProblem('', words.itemIndex, words.kind ?? 'real')}${enter}`
  }
  const notANumber = /must be a (finite )?number$|must be a list of integers$|is required$/.test(message)
  if (notANumber && words.typed != null) {
    if (!typedItem) return `${words.label} is empty${enter}`
    // the shared rule's words: "is not a decimal number" (0x10), "is not written as an integer" (2.0)
    const problem = (words.kind && readNumber(typedItem, words.kind).problem) || 'is not a number'
    return `${words.label}: "${typedItem}" ${problem}${enter}`
  }
  let rest = message
  let head = ''
  // a message may name its field by its path ("launcher.partition accepts …", "launcher.sbatchArgs: …")
  const path = issue.field
    .split('.')
    .filter((p) => !/^\d+$/.test(p))
    .join('.')
  const named = [path, name].find((n) => n && message.startsWith(`${n} `))
  if (named) {
    head = `${words.label} `
    rest = message.slice(named.length + 1)
  } else if (path.includes('.') && message.startsWith(`${path}: `)) {
    head = `${words.label}: `
    rest = message.slice(path.length + 2)
  } else if (name && !message.startsWith(words.label)) head = `${words.label}: `
  for (const [key, said] of internalNames(familyFields)) rest = rest.replace(new RegExp(`\\b${escape(key)}\\b`, 'g'), said)
  message = head + rest
  const mentioned = new Set(message.split(/[^\w.+-]+/))
  if (typedItem && words.typed != null && !listItems(typedItem).every((t) => mentioned.has(t))) message += ` (you typed "${typedItem}")`
  return message
}
