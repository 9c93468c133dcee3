// The config panel's text boxes over the draft: each keeps its text as typed ("1e", "64, ") while the
// draft holds the parsed value (NaN when not a number, so the schema names the field). Lists (with
// the model-count sweep, "up to N"), numbers, one box per data size, and the model's own fields (the
// family's field specs) with the model set: several values in a field that can vary make a grid.
import { computed, reactive, ref, type ComputedRef } from 'vue'
import type { BenchConfig, ModelParams } from '@shared/contract/config'
import { LIMITS } from '@shared/contract/config'
import { numberOf, type NumberKind } from '@shared/vocabulary/fields'
import { checkedSetSize, type GridValue, gridValueText, type ModelSet } from '@shared/contract/model-set'
import { findFamily, type ModelFamily, type ParamField } from '@shared/families'
import { modelSweep } from '@shared/plan'
import { fieldKind, listItems } from '../../lib/fieldText'

/** The config's own list fields, typed as text ("1, 2, 5"). */
export type ListField = 'models' | 'workers'
const LIST_FIELDS: ListField[] = ['models', 'workers']
/** The config's own single-number fields, typed into text boxes. */
export type NumberField = 'repeats' | 'seed' | 'features' | 'testSplit'
/** each number box and what it takes (the run config's own; a family's fields carry their type) */
export const NUMBER_KIND: Record<NumberField, NumberKind> = { repeats: 'integer', seed: 'integer', features: 'integer', testSplit: 'real' }
const NUMBER_FIELDS = Object.keys(NUMBER_KIND) as NumberField[]

/** "50, 100" → [50, 100]: integers by the shared rule (numberOf); an item that is not one becomes NaN so validation names it. */
export function parseList(text: string): number[] {
  return listItems(text).map((t) => numberOf(t, 'integer'))
}

/** Model counts shaped as a sweep (1, 2, 4, … up to N: plan.ts modelSweep), from `min` counts on. */
export function isModelSweep(models: readonly number[], min = 3): boolean {
  if (models.length < min || !models.every((n) => Number.isInteger(n) && n >= 1)) return false
  const sweep = modelSweep(Math.max(...models))
  return sweep.length === models.length && sweep.every((n, i) => n === models[i])
}

/** The text a model field's box shows for a value, or for a grid's values. */
function fieldText(field: ParamField, value: unknown, grid?: readonly GridValue[]): string {
  if (grid) return grid.map(gridValueText).join(field.type === 'intList' ? ' / ' : ', ')
  if (field.type === 'intList') return Array.isArray(value) ? value.join(', ') : ''
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : ''
}

/** What separates a grid's values in a field's box: commas, or / for a list field (whose own values are comma-separated). */
export function gridSeparator(field: ParamField): string {
  return field.type === 'intList' ? '/' : ','
}

/** What a number box shows: the text as typed while it still parses to the value, else the value. */
function boxText(text: string | undefined, value: number, kind: NumberKind): string {
  if (text != null && Object.is(numberOf(text, kind), value)) return text
  return Number.isFinite(value) ? String(value) : (text ?? '')
}

/** What the boxes show, as typed: the one state every group of boxes below reads and writes. */
function boxTexts() {
  return {
    listText: reactive<Record<ListField, string>>({ models: '', workers: '' }),
    /** what each model field's box shows, by field key (kept as typed: "64, " stays "64, ") */
    modelText: reactive<Record<string, string>>({}),
    /** what each number box shows, as typed ("1e" stays "1e"): the config's numbers */
    numberText: reactive<Record<NumberField, string>>({ repeats: '', seed: '', features: '', testSplit: '' }),
    /** one box per data size */
    sizeText: ref<string[]>([]),
    /** the model set's seeds and folds boxes, as typed (folds empty: none) */
    setText: reactive<{ seeds: string; folds: string }>({ seeds: '1', folds: '' }),
    /**
     * "sweep model counts": the models box holds one N and the run measures 1, 2, 4, … up to N. Kept
     * on while the counts keep that shape; a config with that shape (3 counts or more: a run again, a
     * restored draft) turns it on.
     */
    sweepModels: ref(false),
    /** the models box as it was before a model set took it over (its N), put back when the set goes */
    modelsBeforeSet: null as { models: number[]; text: string; sweep: boolean } | null,
  }
}

/** What each group of boxes works on: the draft, its family, the texts, and `touched` after every edit. */
interface Boxes {
  draft: BenchConfig
  family: ComputedRef<ModelFamily>
  touched: () => void
  text: ReturnType<typeof boxTexts>
}

/** The boxes of `draft`; `touched` is called after every edit. */
export function useTextBoxes(draft: BenchConfig, family: ComputedRef<ModelFamily>, touched: () => void) {
  const text = boxTexts()
  const boxes: Boxes = { draft, family, touched, text }
  const numbers = numberBoxes(boxes)
  const sizes = sizeBoxes(boxes)

  /** Every box from the draft (a new draft: a preset, a run again, another family). */
  function syncText() {
    const { listText, numberText, modelText, setText, sweepModels } = text
    sweepModels.value = isModelSweep(draft.models, sweepModels.value ? 1 : 3)
    for (const f of LIST_FIELDS) listText[f] = f === 'models' && sweepModels.value ? String(Math.max(...draft.models)) : draft[f].join(', ')
    for (const f of NUMBER_FIELDS) numberText[f] = Number.isFinite(draft[f]) ? String(draft[f]) : ''
    text.sizeText.value = draft.sizes.map((s) => (Number.isFinite(s) ? String(s) : ''))
    for (const key of Object.keys(modelText)) delete modelText[key]
    const model = draft.model as unknown as Record<string, unknown>
    for (const f of family.value.fields) modelText[f.key] = fieldText(f, model[f.key], draft.set?.grid[f.key])
    setText.seeds = String(draft.set?.seeds ?? 1)
    setText.folds = draft.set?.folds == null ? '' : String(draft.set.folds)
  }

  /** What every box shows, by issue field: "sizes.0", "models", "repeats", "model.lr", … */
  const texts = computed<Record<string, string>>(() => {
    const t: Record<string, string> = { ...text.listText }
    for (const f of NUMBER_FIELDS) t[f] = numbers.numberBox(f)
    draft.sizes.forEach((_, i) => (t[`sizes.${i}`] = sizes.sizeBox(i)))
    for (const [k, v] of Object.entries(text.modelText)) t[`model.${k}`] = t[`set.grid.${k}`] = v
    t['set.seeds'] = text.setText.seeds
    t['set.folds'] = text.setText.folds
    return t
  })

  return {
    listText: text.listText,
    modelText: text.modelText,
    setText: text.setText,
    sweepModels: text.sweepModels,
    syncText,
    texts,
    ...listBoxes(boxes),
    ...numbers,
    ...sizes,
    ...modelBoxes(boxes, syncText),
  }
}

/** The models and workers boxes, and the model-count sweep that fills the models box. */
function listBoxes({ draft, touched, text }: Boxes) {
  function setList(field: ListField, typed: string) {
    text.listText[field] = typed
    const values = parseList(typed)
    // a sweep's box holds its largest N; anything else is left for the schema to judge
    const upTo = values.length === 1 && Number.isInteger(values[0]) && values[0] >= LIMITS.models.min && values[0] <= LIMITS.models.max ? values[0] : null
    draft[field] = field === 'models' && text.sweepModels.value && upTo != null ? modelSweep(upTo) : values
    touched()
  }

  /** Turns the model-count sweep on (the largest N typed becomes "up to N") or off (back to that one N). */
  function setSweep(on: boolean) {
    const finite = draft.models.filter((n) => Number.isInteger(n) && n >= 1)
    const upTo = finite.length ? Math.min(Math.max(...finite), LIMITS.models.max) : null
    text.sweepModels.value = on
    if (upTo != null) {
      draft.models = on ? modelSweep(upTo) : [upTo]
      text.listText.models = String(upTo)
    }
    touched()
  }

  return { setList, setSweep }
}

/** The config's own number boxes (repeats, seed, features, test split). */
function numberBoxes({ draft, touched, text }: Boxes) {
  /** A number box typed into: the text is kept as typed, the value parsed (NaN when it is not a number). */
  function setNumber(field: NumberField, typed: string) {
    text.numberText[field] = typed
    draft[field] = numberOf(typed, NUMBER_KIND[field])
    touched()
  }

  /** A box set from elsewhere (the file's feature count): the draft and the box agree. */
  function showNumber(field: NumberField, value: number) {
    draft[field] = value
    text.numberText[field] = String(value)
  }

  const numberBox = (f: NumberField) => boxText(text.numberText[f], draft[f], NUMBER_KIND[f])

  return { setNumber, showNumber, numberBox }
}

/** One box per data size: typed, added, removed, or one size of all rows. */
function sizeBoxes({ draft, touched, text }: Boxes) {
  const sizeText = text.sizeText

  function setSize(i: number, typed: string) {
    sizeText.value[i] = typed
    draft.sizes[i] = numberOf(typed, 'integer')
    touched()
  }

  /** One data size of `rows` ("all rows"). */
  function setOnlySize(rows: number) {
    draft.sizes = [rows]
    sizeText.value = [String(rows)]
    touched()
  }

  function addSize() {
    const last = draft.sizes[draft.sizes.length - 1]
    const next = Number.isFinite(last) && last > 0 ? Math.min(last * 2, LIMITS.size.max) : 10_000
    draft.sizes.push(next)
    sizeText.value.push(String(next))
    touched()
  }

  function removeSize(i: number) {
    draft.sizes.splice(i, 1)
    sizeText.value.splice(i, 1)
    touched()
  }

  const sizeBox = (i: number) => boxText(sizeText.value[i], draft.sizes[i], 'integer')

  return { setSize, setOnlySize, addSize, removeSize, sizeBox }
}

/**
 * The draft's set from a grid, seeds and folds: on when any is more than one configuration,
 * seed or fold; then the models box is its N (a sweep is off: the two do not combine).
 */
function applySet({ draft, text }: Boxes, grid: Record<string, GridValue[]>, seeds: number, folds: number | null) {
  if (Object.keys(grid).length === 0 && seeds === 1 && folds === null) {
    // a grid tried and taken away leaves the models box as it was, not at the grid's N
    const before = text.modelsBeforeSet
    if (draft.set && before) {
      draft.models = [...before.models]
      text.listText.models = before.text
      text.sweepModels.value = before.sweep
    }
    text.modelsBeforeSet = null
    delete draft.set
    return
  }
  if (!draft.set) text.modelsBeforeSet = { models: [...draft.models], text: text.listText.models, sweep: text.sweepModels.value }
  const set: ModelSet = { grid, seeds, folds }
  draft.set = set
  text.sweepModels.value = false
  // seeds or folds out of range leave the count as it was: their own box says what is wrong, once
  const n = checkedSetSize(set)
  if (n !== null && Number.isInteger(n) && n >= LIMITS.models.min && n <= LIMITS.models.max) {
    draft.models = [n]
    text.listText.models = String(n)
  }
}

/**
 * The backend choice kept across a family switch: what the new family has of it (several compared: those
 * it has), else auto — the old family's engine would only be refused (an MLP's webgpu is not the trees').
 */
export function backendForFamily(backend: BenchConfig['backend'], next: ModelFamily): BenchConfig['backend'] {
  const own = new Set(next.backends.map((b) => b.name as string))
  const kept = (Array.isArray(backend) ? backend : [backend]).filter((name) => name === 'auto' || own.has(name))
  if (kept.length === 0) return 'auto'
  return Array.isArray(backend) && kept.length > 1 ? (kept as BenchConfig['backend']) : kept[0]
}

/** The model's own fields, the model set's seeds and folds, and switching the family; `syncText` refills every box. */
function modelBoxes(boxes: Boxes, syncText: () => void) {
  const { draft, family, touched, text } = boxes

  /** The seeds or folds box typed into (folds empty: no folds). */
  function setSetNumber(which: 'seeds' | 'folds', typed: string) {
    text.setText[which] = typed
    const seeds = which === 'seeds' ? numberOf(typed, 'integer') : (draft.set?.seeds ?? 1)
    const folds = which === 'folds' ? (typed.trim() === '' ? null : numberOf(typed, 'integer')) : (draft.set?.folds ?? null)
    applySet(boxes, { ...(draft.set?.grid ?? {}) }, seeds, folds)
    touched()
  }

  /**
   * A model field typed into its box: numbers parsed, lists split; the schema judges the value.
   * Several values (in a field that can vary) make a grid: the model keeps the first as its base.
   */
  function setModelField(key: string, typed: string) {
    const field = family.value.fields.find((f) => f.key === key)
    if (!field) return
    text.modelText[key] = typed
    const parse = (t: string) => (field.type === 'intList' ? parseList(t) : numberOf(t, fieldKind(field)))
    // a field that cannot vary keeps its whole text, so "0.1, 0.5" there is said to be no number; an
    // empty alternative ("0.1,,0.3") stays in the grid, refused by its place as the CLI refuses it
    const alternatives = field.vary && typed.trim() !== '' ? typed.split(gridSeparator(field)) : [typed]
    const grid = { ...(draft.set?.grid ?? {}) }
    delete grid[key]
    if (field.vary && alternatives.length > 1) grid[key] = alternatives.map(parse)
    ;(draft.model as unknown as Record<string, unknown>)[key] = parse(alternatives[0] ?? '')
    applySet(boxes, grid, draft.set?.seeds ?? 1, draft.set?.folds ?? null)
    touched()
  }

  /**
   * Switches the model to another family, with that family's defaults: the grid keeps only the
   * fields the new family lets vary (no box would show another's), seeds and folds stay.
   */
  function setFamily(kind: string) {
    const next = findFamily(kind)
    if (!next || next.kind === draft.model.kind) return
    draft.model = JSON.parse(JSON.stringify(next.defaults)) as ModelParams
    draft.backend = backendForFamily(draft.backend, next)
    if (draft.set) {
      const own = new Set(family.value.fields.filter((f) => f.vary).map((f) => f.key))
      const grid = Object.fromEntries(Object.entries(draft.set.grid).filter(([key]) => own.has(key)))
      applySet(boxes, grid, draft.set.seeds, draft.set.folds)
    }
    syncText()
    touched()
  }

  return { setSetNumber, setModelField, setFamily }
}
