// The editable run configuration, validated inline against the shared BenchConfigSchema, and the one
// way a run is started from it (startFromDraft). The model's fields are the family's own field
// specs (families/), edited generically: no field of any family is named here.
// The user's own data (draft.data: which file, target, features, impute) is edited here too; the
// files themselves (recent list, preview, upload) are the dataSets store's.
// Store dependencies run one way: config → run, capabilities, dataSets (those import no store).
import { defineStore } from 'pinia'
import { computed, reactive, ref, watch } from 'vue'
import type { BenchConfig, ModelParams, PresetName } from '@shared/contract/config'
import type { DataSetInfo, ImputeMode } from '@shared/contract/dataset'
import { BenchConfigSchema, DEFAULT_CONFIG, LIMITS, PRESETS, presetConfig, presetDescription } from '@shared/contract/config'
import type { FieldIssue } from '@shared/contract/errors'
import { fieldIssues } from '@shared/contract/errors'
import { checkDataChoice, type DataCheck } from '@shared/data-check'
import { skippedTextColumns } from '@shared/data-columns'
import { estimateRun, type RunEstimate } from '@shared/estimate'
import { allFamilies, findFamily, type ModelFamily, type ParamField } from '@shared/families'
import { modelSweep } from '@shared/plan'
import { type Calibration, calibrationFrom } from '../lib/calibration'
import { fieldWords, sayIssue } from '../lib/fieldText'
import { useCapabilitiesStore } from './capabilities'
import { useDataSetsStore } from './dataSets'
import { useRunStore } from './run'

/** Where a run's rows come from. */
export type DataSourceKind = 'generated' | 'file'

/** The config's own list fields, typed as text ("1, 2, 5"). */
export type ListField = 'models' | 'workers'
const LIST_FIELDS: ListField[] = ['models', 'workers']
/** The config's own single-number fields, typed into text boxes. */
export type NumberField = 'repeats' | 'seed' | 'features' | 'testSplit'
const NUMBER_FIELDS: NumberField[] = ['repeats', 'seed', 'features', 'testSplit']

function clone<T>(c: T): T {
  return JSON.parse(JSON.stringify(c)) as T
}

/** "50, 100" → [50, 100]; anything not a number becomes NaN so validation names the field. */
export function parseList(text: string): number[] {
  return text
    .split(/[\s,;]+/)
    .filter((t) => t.length > 0)
    .map((t) => (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) ? Number(t) : NaN))
}

/** Model counts shaped as a sweep (1, 2, 4, … up to N: plan.ts modelSweep), from `min` counts on. */
export function isModelSweep(models: readonly number[], min = 3): boolean {
  if (models.length < min || !models.every((n) => Number.isInteger(n) && n >= 1)) return false
  const sweep = modelSweep(Math.max(...models))
  return sweep.length === models.length && sweep.every((n, i) => n === models[i])
}

/** A number box's text → its value; an empty box is NaN, so validation names the field. */
export function parseNumber(text: string): number {
  const v = text.trim()
  return v === '' ? NaN : Number(v)
}

/**
 * Fields that say where and how to run, not what to train: changing them keeps a preset's name
 * (smoke on wasm is still "smoke"); any other field is the workload and makes the config custom.
 */
export const NON_WORKLOAD_FIELDS = ['backend', 'failurePolicy'] as const satisfies readonly (keyof BenchConfig)[]

/** Same workload: every field but the preset name and the non-workload fields agrees. */
function sameWorkload(a: BenchConfig, b: BenchConfig): boolean {
  const strip = (c: BenchConfig) => {
    const r: Partial<BenchConfig> = { ...c }
    delete r.preset
    for (const f of NON_WORKLOAD_FIELDS) delete r[f]
    return JSON.stringify(r)
  }
  return strip(a) === strip(b)
}

/** The preset a config still is ("custom" once its workload differs from the named preset's). */
export function effectivePreset(c: BenchConfig): BenchConfig['preset'] {
  return c.preset !== 'custom' && sameWorkload(c, presetConfig(c.preset, { model: { kind: c.model.kind } })) ? c.preset : 'custom'
}

export const STORAGE_KEY = 'trainpool.config.v2'
/** Before the model-family seam: the MLP's fields at the top of the config. */
export const LEGACY_STORAGE_KEY = 'trainpool.config.v1'

/** A v1 stored config (epochs, batchSize, hidden, lr at the top) in today's shape. */
function fromLegacy(raw: Record<string, unknown>): Record<string, unknown> {
  const { epochs, batchSize, hidden, lr, ...rest } = raw
  return { ...rest, model: { kind: 'mlp', epochs, batchSize, hidden, lr } }
}

/** The last config the user edited, if it is still valid under the current schema. */
function restore(): BenchConfig | null {
  const valid = (raw: unknown) => {
    const r = BenchConfigSchema.safeParse(raw)
    return r.success ? r.data : null
  }
  try {
    const storage = globalThis.localStorage
    const raw = storage?.getItem(STORAGE_KEY)
    if (raw) return valid(JSON.parse(raw))
    const legacy = storage?.getItem(LEGACY_STORAGE_KEY)
    return legacy ? valid(fromLegacy(JSON.parse(legacy) as Record<string, unknown>)) : null
  } catch {
    return null
  }
}

/** The text a model field's box shows for a value. */
function fieldText(field: ParamField, value: unknown): string {
  if (field.type === 'intList') return Array.isArray(value) ? value.join(', ') : ''
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : ''
}

export const useConfigStore = defineStore('config', () => {
  const run = useRunStore()
  const caps = useCapabilitiesStore()
  const dataSets = useDataSetsStore()
  const draft = reactive<BenchConfig>(clone(restore() ?? DEFAULT_CONFIG))
  /** where the rows come from: generated (seeded) or the user's file (draft.data once one is chosen) */
  const source = ref<DataSourceKind>(draft.data ? 'file' : 'generated')
  const listText = reactive<Record<ListField, string>>({ models: '', workers: '' })
  /** what each model field's box shows, by field key (kept as typed: "64, " stays "64, ") */
  const modelText = reactive<Record<string, string>>({})
  /** what each number box shows, as typed ("1e" stays "1e"): the config's numbers and one per data size */
  const numberText = reactive<Record<NumberField, string>>({ repeats: '', seed: '', features: '', testSplit: '' })
  const sizeText = ref<string[]>([])
  /** issues the service reported for the last start attempt; cleared on the next edit */
  const serverIssues = ref<FieldIssue[]>([])

  /** The family of the draft's model (the draft always holds a known kind: restore() validated it). */
  const family = computed<ModelFamily>(() => findFamily(draft.model.kind) ?? (allFamilies()[0] as ModelFamily))

  /**
   * "sweep model counts": the models box holds one N and the run measures 1, 2, 4, … up to N. Kept
   * on while the counts keep that shape; a config with that shape (3 counts or more: a run again, a
   * restored draft) turns it on.
   */
  const sweepModels = ref(false)

  function syncText() {
    sweepModels.value = isModelSweep(draft.models, sweepModels.value ? 1 : 3)
    for (const f of LIST_FIELDS) listText[f] = f === 'models' && sweepModels.value ? String(Math.max(...draft.models)) : draft[f].join(', ')
    for (const f of NUMBER_FIELDS) numberText[f] = Number.isFinite(draft[f]) ? String(draft[f]) : ''
    sizeText.value = draft.sizes.map((s) => (Number.isFinite(s) ? String(s) : ''))
    for (const key of Object.keys(modelText)) delete modelText[key]
    const model = draft.model as unknown as Record<string, unknown>
    for (const f of family.value.fields) modelText[f.key] = fieldText(f, model[f.key])
  }
  syncText()

  // remember valid edits across restarts (invalid drafts are not saved, so a restart never shows them)
  watch(
    () => JSON.stringify(draft),
    (json) => {
      if (!BenchConfigSchema.safeParse(draft).success) return
      try {
        globalThis.localStorage?.setItem(STORAGE_KEY, json)
      } catch {
        // storage full or disabled: not worth bothering the user
      }
    },
  )

  function replace(c: BenchConfig) {
    const next = clone(c)
    if (!next.data) delete draft.data
    Object.assign(draft, next)
    source.value = draft.data ? 'file' : 'generated'
    if (draft.data) void dataSets.select(draft.data.sha256)
    syncText()
    serverIssues.value = []
  }

  // A run this page did not start (re-attached on load, or started in another tab): the panel shows
  // what is running. Sync, so the panel never shows the old draft next to the joined run.
  watch(
    () => (run.joined && run.busy ? run.runId : null),
    (id) => {
      if (id && run.config) replace(run.config)
    },
    { flush: 'sync', immediate: true },
  )

  /** A preset's workload; where and how to run (backend, failure policy) and the data file stay as they were. */
  function applyPreset(name: PresetName) {
    const data = draft.data
    replace({ ...presetConfig(name, { backend: draft.backend, failurePolicy: draft.failurePolicy, model: { kind: draft.model.kind } }), ...(data ? { data } : {}) })
  }

  // ---- the user's own data ----

  /** Generated or file: switching to file uses the data set on show (if any); back to generated drops draft.data. */
  function setSource(kind: DataSourceKind) {
    source.value = kind
    if (kind === 'generated') delete draft.data
    else if (dataSets.current && !draft.data) useDataSet(dataSets.current)
    touched()
  }

  /**
   * Trains on `info`: its last numeric column is the target (a file's usual layout), every other
   * numeric column a feature. The same file again keeps the columns already picked.
   */
  function useDataSet(info: DataSetInfo) {
    source.value = 'file'
    dataSets.current = info
    if (draft.data?.sha256 === info.sha256) return touched()
    const numeric = info.columns.filter((c) => c.type === 'numeric')
    const target = numeric[numeric.length - 1]?.name ?? info.columns[info.columns.length - 1]?.name ?? ''
    draft.data = { sha256: info.sha256, name: info.name, target, features: null, exclude: [], impute: 'none' }
    touched()
  }

  /** The data set was removed from the cache: the draft stops naming it (still on "your file", to pick another). */
  function forgetDataSet(sha256: string) {
    if (draft.data?.sha256 !== sha256) return
    delete draft.data
    touched()
  }

  /** The target column; it stops being a feature (and is no longer excluded: it is not one). */
  function setDataTarget(name: string) {
    if (!draft.data) return
    draft.data.target = name
    draft.data.exclude = draft.data.exclude.filter((c) => c !== name)
    touched()
  }

  /** A numeric column in or out of the features (the default is every one but the target). */
  function setFeatureUsed(name: string, used: boolean) {
    const d = draft.data
    if (!d) return
    // an explicit feature list (a config from the CLI) becomes the default rule plus exclusions
    if (d.features) {
      const info = dataSets.current
      const all = info ? info.columns.filter((c) => c.type === 'numeric' && c.name !== d.target).map((c) => c.name) : d.features
      d.exclude = all.filter((c) => !d.features!.includes(c))
      d.features = null
    }
    d.exclude = used ? d.exclude.filter((c) => c !== name) : [...new Set([...d.exclude, name])]
    touched()
  }

  function setImpute(mode: ImputeMode) {
    if (!draft.data) return
    draft.data.impute = mode
    touched()
  }

  /** The service's own check of the data choice (src-shared/data-check.ts); null until the file's info is here. */
  const dataCheck = computed<DataCheck | null>(() => {
    const d = draft.data
    const info = dataSets.current
    if (!d || !info || info.sha256 !== d.sha256) return null
    return checkDataChoice({ info, data: d, family: family.value, sizes: draft.sizes })
  })

  /** The feature columns the run will use (none while the choice has a problem). */
  const featureColumns = computed<string[]>(() => dataCheck.value?.choice?.features.map((c) => c.name) ?? [])

  /** Text columns the default feature rule leaves out (said next to the features). */
  const textColumnsLeftOut = computed<string[]>(() => {
    const d = draft.data
    const info = dataSets.current
    return d && info && info.sha256 === d.sha256 ? skippedTextColumns(info, d).map((c) => c.name) : []
  })

  /** Missing values among the feature columns used (rows missing the target are left out, not imputed). */
  const missingInUse = computed<number>(() => dataCheck.value?.withMissing.reduce((n, col) => n + col.missing, 0) ?? 0)

  /** Rows a run can use (those with a target value): the most a data size may be; null until a file's columns are chosen. */
  const usable = computed<number | null>(() => dataCheck.value?.usableRows ?? null)

  /** The family cannot train on missing values (the MLP): they must be imputed, or the run is refused. */
  const refusesMissing = computed(() => (family.value.userData?.missingValues ?? 'refuse') === 'refuse')

  // the config's feature count follows the file's columns (the estimate counts them; the service sets the same)
  let generatedFeatures: number | null = null
  watch(
    () => [source.value, featureColumns.value.length] as const,
    ([kind, n]) => {
      if (kind === 'file' && n > 0) {
        generatedFeatures ??= draft.features
        draft.features = n
        numberText.features = String(n)
      } else if (kind === 'generated' && generatedFeatures !== null) {
        draft.features = generatedFeatures
        numberText.features = String(generatedFeatures)
        generatedFeatures = null
      }
    },
    { immediate: true },
  )

  /** "All rows": one data size, every row with a target value. */
  function useAllRows() {
    const n = usable.value
    if (!n) return
    draft.sizes = [n]
    sizeText.value = [String(n)]
    touched()
  }

  /** What the file choice gets wrong (the schema cannot know the file's columns or row count). */
  const dataIssues = computed<FieldIssue[]>(() => {
    if (source.value !== 'file') return []
    if (!draft.data) return [{ field: 'data', message: 'Data file: choose a file (Open…, Upload, or one of the recent ones), or use generated data' }]
    return dataCheck.value?.refusals ?? []
  })

  function reset() {
    replace(DEFAULT_CONFIG)
  }

  /** A number box typed into: the text is kept as typed, the value parsed (NaN when it is not a number). */
  function setNumber(field: NumberField, text: string) {
    numberText[field] = text
    draft[field] = parseNumber(text)
    touched()
  }

  function setSize(i: number, text: string) {
    sizeText.value[i] = text
    draft.sizes[i] = parseNumber(text)
    touched()
  }

  function setList(field: ListField, text: string) {
    listText[field] = text
    const values = parseList(text)
    // a sweep's box holds its largest N; anything else is left for the schema to judge
    const upTo = values.length === 1 && Number.isInteger(values[0]) && values[0] >= LIMITS.models.min && values[0] <= LIMITS.models.max ? values[0] : null
    draft[field] = field === 'models' && sweepModels.value && upTo != null ? modelSweep(upTo) : values
    touched()
  }

  /** Turns the model-count sweep on (the largest N typed becomes "up to N") or off (back to that one N). */
  function setSweep(on: boolean) {
    const finite = draft.models.filter((n) => Number.isInteger(n) && n >= 1)
    const upTo = finite.length ? Math.min(Math.max(...finite), LIMITS.models.max) : null
    sweepModels.value = on
    if (upTo != null) {
      draft.models = on ? modelSweep(upTo) : [upTo]
      listText.models = String(upTo)
    }
    touched()
  }

  /** Switches the model to another family, with that family's defaults. */
  function setFamily(kind: string) {
    const next = findFamily(kind)
    if (!next || next.kind === draft.model.kind) return
    draft.model = clone(next.defaults) as unknown as ModelParams
    syncText()
    touched()
  }

  /** A model field typed into its box: numbers parsed, lists split; the schema judges the value. */
  function setModelField(key: string, text: string) {
    const field = family.value.fields.find((f) => f.key === key)
    if (!field) return
    modelText[key] = text
    ;(draft.model as unknown as Record<string, unknown>)[key] = field.type === 'intList' ? parseList(text) : parseNumber(text)
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

  function toggleStrategy(s: BenchConfig['strategies'][number], on: boolean) {
    const has = draft.strategies.includes(s)
    if (on && !has) draft.strategies.push(s)
    if (!on && has) draft.strategies.splice(draft.strategies.indexOf(s), 1)
    touched()
  }

  function touched() {
    if (serverIssues.value.length) serverIssues.value = []
  }

  const parsed = computed(() => BenchConfigSchema.safeParse(draft))

  /** What a number box shows: the text as typed while it still parses to the value, else the value. */
  function boxText(text: string | undefined, value: number): string {
    if (text != null && Object.is(parseNumber(text), value)) return text
    return Number.isFinite(value) ? String(value) : (text ?? '')
  }
  const numberBox = (f: NumberField) => boxText(numberText[f], draft[f])
  const sizeBox = (i: number) => boxText(sizeText.value[i], draft.sizes[i])

  /** What every box shows, by issue field: "sizes.0", "models", "repeats", "model.lr", … */
  const texts = computed<Record<string, string>>(() => {
    const t: Record<string, string> = { ...listText }
    for (const f of NUMBER_FIELDS) t[f] = numberBox(f)
    draft.sizes.forEach((_, i) => (t[`sizes.${i}`] = sizeBox(i)))
    for (const [k, v] of Object.entries(modelText)) t[`model.${k}`] = v
    return t
  })

  /** The schema's and the service's issues, said with the panel's labels and the text typed. */
  const issues = computed<FieldIssue[]>(() => {
    const list = parsed.value.success ? [] : fieldIssues(parsed.value.error, draft)
    const opt = caps.option(draft.backend, draft.model.kind)
    if (caps.caps && opt && !opt.available) {
      list.push({ field: 'backend', message: `Backend ${draft.backend} is not available here: ${opt.detail}` })
    }
    const fields = family.value.fields
    return [...list, ...dataIssues.value, ...serverIssues.value].map((i) => ({ ...i, message: sayIssue(i, fieldWords(i.field, texts.value, fields), fields) }))
  })

  /** Messages for a field, including its list items ("sizes" covers "sizes.2", "model.hidden" "model.hidden.0"). */
  function messagesFor(field: string): string[] {
    return issues.value.filter((i) => i.field === field || i.field.startsWith(`${field}.`)).map((i) => i.message)
  }

  /** Messages for one list item only, e.g. itemMessages("sizes", 1). */
  function itemMessages(field: string, index: number): string[] {
    return issues.value.filter((i) => i.field === `${field}.${index}`).map((i) => i.message)
  }

  const valid = computed(() => issues.value.length === 0)

  /** The config to send: preset becomes "custom" once the workload differs from the named preset. */
  const config = computed<BenchConfig | null>(() => {
    if (!parsed.value.success) return null
    const c = clone(parsed.value.data)
    c.preset = effectivePreset(c)
    return c
  })

  /** What the preset picker shows: the draft's preset while its workload still matches, else custom. */
  const shownPreset = computed<BenchConfig['preset']>(() => {
    if (draft.preset === 'custom') return 'custom'
    return config.value ? config.value.preset : 'custom'
  })

  /**
   * The shared estimate (the service's own memory estimator): counts and memory at once, time only
   * once the capabilities say which backend `auto` is and how many cores there are.
   */
  const estimate = computed<RunEstimate | null>(() => {
    const c = config.value
    if (!c) return null
    const backend = caps.caps ? caps.resolve(c.backend, c.model.kind) : null
    const e = estimateRun(c, backend, { cpuCount: caps.caps?.cpuCount })
    const cal = calibration.value
    if (e.totalMs == null || !cal || cal.backend !== backend || cal.kind !== c.model.kind) return e
    return { ...e, totalMs: e.totalMs * cal.factor }
  })

  /**
   * The measured speed the time estimate is calibrated on: the latest finished run shown here (the
   * run just finished, or the last one found on opening), on the backend and family it ran.
   */
  const calibration = computed<Calibration | null>(() => calibrationFrom(run.result) ?? calibrationFrom(run.lastResult))
  /** the estimate's time is scaled by a measured run (else it is the assumed speed) */
  const calibrated = computed(() => {
    const c = config.value
    const cal = calibration.value
    return !!c && !!cal && cal.backend === (caps.caps ? caps.resolve(c.backend, c.model.kind) : null) && cal.kind === c.model.kind
  })

  /** Run is allowed: the config is valid and no run is starting or running. */
  const canRun = computed(() => valid.value && !run.busy)

  /** The one way to start a run from the panel (Run button, menu, shortcut). False when nothing started. */
  async function startFromDraft(): Promise<boolean> {
    const c = config.value
    if (!canRun.value || !c) return false
    const started = await run.start(c)
    if (!started && run.error?.issues?.length) serverIssues.value = run.error.issues
    return started
  }

  // a preset's description names the current family's tweak ("1 epoch", "10 rounds")
  const presets = computed(() =>
    Object.entries(PRESETS).map(([name, p]) => ({ name: name as PresetName, ...p, description: presetDescription(name as PresetName, draft.model.kind) })),
  )

  return {
    draft,
    source,
    setSource,
    useDataSet,
    forgetDataSet,
    setDataTarget,
    setFeatureUsed,
    setImpute,
    featureColumns,
    textColumnsLeftOut,
    missingInUse,
    usable,
    refusesMissing,
    useAllRows,
    listText,
    modelText,
    numberBox,
    sizeBox,
    family,
    serverIssues,
    applyPreset,
    reset,
    replace,
    setList,
    sweepModels,
    setSweep,
    setNumber,
    setSize,
    setFamily,
    setModelField,
    addSize,
    removeSize,
    toggleStrategy,
    touched,
    issues,
    messagesFor,
    itemMessages,
    valid,
    canRun,
    config,
    shownPreset,
    estimate,
    calibrated,
    startFromDraft,
    presets,
  }
})
