// The editable run configuration, validated inline against the shared BenchConfigSchema, and the one
// way a run is started from it (startFromDraft). Its parts live in draft/: the text boxes
// (text-boxes.ts: the model's fields are the family's own field specs, no field of any family is
// named), the user's data choice (data-choice.ts), where the workers run (launcher-choice.ts: this
// machine or Slurm), the estimate (estimate.ts) and what is remembered across restarts (persistence.ts). This file holds the draft, presets, issues and starting.
// Store dependencies run one way: config → run, capabilities, dataSets (those import no store).
import { defineStore } from 'pinia'
import { computed, reactive, ref, watch } from 'vue'
import type { BenchConfig, ConcreteBackend, ModelParams, PresetName } from '@shared/contract/config'
import { backendsOf, BenchConfigSchema, DEFAULT_CONFIG, PRESETS, presetConfig, presetDescription } from '@shared/contract/config'
import type { FieldIssue } from '@shared/contract/errors'
import { fieldIssues } from '@shared/contract/errors'
import { allFamilies, findFamily, type ModelFamily } from '@shared/families'
import { fieldWords, sayIssue } from '../lib/fieldText'
import { useCapabilitiesStore } from './capabilities'
import { useDataSetsStore } from './dataSets'
import { type DataSourceKind, useDataChoice } from './draft/data-choice'
import { useDraftEstimate } from './draft/estimate'
import { useLauncherChoice } from './draft/launcher-choice'
import { persistValidDrafts, restoreDraft } from './draft/persistence'
import { useTextBoxes } from './draft/text-boxes'
import { useRunStore } from './run'

export type { DataSourceKind } from './draft/data-choice'
export type { ListField, NumberField } from './draft/text-boxes'

function clone<T>(c: T): T {
  return JSON.parse(JSON.stringify(c)) as T
}

/**
 * Fields that say where and how to run, not what to train: changing them keeps a preset's name
 * (smoke on wasm is still "smoke"); any other field is the workload and makes the config custom.
 */
export const NON_WORKLOAD_FIELDS = ['backend', 'failurePolicy', 'launcher'] as const satisfies readonly (keyof BenchConfig)[]

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

export const useConfigStore = defineStore('config', () => {
  const run = useRunStore()
  const caps = useCapabilitiesStore()
  const dataSets = useDataSetsStore()
  const draft = reactive<BenchConfig>(clone(restoreDraft() ?? DEFAULT_CONFIG))
  persistValidDrafts(draft)
  /** where the rows come from: generated (seeded) or the user's file (draft.data once one is chosen) */
  const source = ref<DataSourceKind>(draft.data ? 'file' : 'generated')
  /** issues the service reported for the last start attempt; cleared on the next edit */
  const serverIssues = ref<FieldIssue[]>([])
  function touched() {
    if (serverIssues.value.length) serverIssues.value = []
  }

  /** The family of the draft's model (the draft always holds a known kind: restoreDraft() validated it). */
  const family = computed<ModelFamily>(() => findFamily(draft.model.kind) ?? (allFamilies()[0] as ModelFamily))

  const boxes = useTextBoxes(draft, family, touched)
  boxes.syncText()
  const data = useDataChoice({ draft, source, family, dataSets, showNumber: boxes.showNumber, setOnlySize: boxes.setOnlySize, touched })
  const where = useLauncherChoice({ draft, caps, touched })
  where.syncText()

  /** The draft becomes `c`: a field `c` leaves out (a model set, data, launcher, GPUs) goes too. */
  function replace(c: BenchConfig) {
    const next = clone(c)
    for (const key of Object.keys(draft) as (keyof BenchConfig)[]) if (!(key in next)) delete draft[key]
    Object.assign(draft, next)
    source.value = draft.data ? 'file' : 'generated'
    if (draft.data) void dataSets.select(draft.data.sha256)
    boxes.syncText()
    where.syncText()
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

  /** A preset's workload; where and how to run (backend, failure policy, launcher) and the data file stay as they were. */
  function applyPreset(name: PresetName) {
    const { data, launcher } = draft
    replace({ ...presetConfig(name, { backend: draft.backend, failurePolicy: draft.failurePolicy, model: { kind: draft.model.kind } }), ...(data ? { data } : {}), ...(launcher ? { launcher } : {}) })
  }

  function reset() {
    replace(DEFAULT_CONFIG)
  }

  /** Switches the model to another family, with that family's defaults. */
  function setFamily(kind: string) {
    const next = findFamily(kind)
    if (!next || next.kind === draft.model.kind) return
    boxes.setModelDefaults(next.defaults as unknown as ModelParams)
  }

  function toggleStrategy(s: BenchConfig['strategies'][number], on: boolean) {
    const has = draft.strategies.includes(s)
    if (on && !has) draft.strategies.push(s)
    if (!on && has) draft.strategies.splice(draft.strategies.indexOf(s), 1)
    touched()
  }

  /** Backends side by side: the concrete backends the draft runs on (none for auto). */
  const comparedBackends = computed<ConcreteBackend[]>(() => backendsOf(draft).filter((b): b is ConcreteBackend => b !== 'auto'))

  /**
   * Ticks or unticks a backend to compare: two or more ticked make draft.backend their list (in the
   * family's order, the order the plan runs them), one ticked that backend alone, none auto.
   */
  function setCompared(name: ConcreteBackend, on: boolean) {
    const now = new Set(comparedBackends.value)
    if (on) now.add(name)
    else now.delete(name)
    const order = family.value.backends.map((b) => b.name as string)
    const list = [...now].sort((a, b) => {
      const [ia, ib] = [order.indexOf(a), order.indexOf(b)]
      return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib)
    })
    draft.backend = list.length >= 2 ? list : (list[0] ?? 'auto')
    touched()
  }

  const parsed = computed(() => BenchConfigSchema.safeParse(draft))

  /** The schema's and the service's issues, said with the panel's labels and the text typed. */
  const issues = computed<FieldIssue[]>(() => {
    const list = parsed.value.success ? [] : fieldIssues(parsed.value.error, draft)
    const side = Array.isArray(draft.backend)
    for (const [i, backend] of backendsOf(draft).entries()) {
      const opt = caps.option(backend, draft.model.kind)
      // side by side, on the compared backend's own box (backend.N)
      if (caps.caps && opt && !opt.available) list.push({ field: side ? `backend.${i}` : 'backend', message: `Backend ${backend} is not available here: ${opt.detail}` })
    }
    const fields = family.value.fields
    const texts = { ...boxes.texts.value, ...where.texts.value }
    return [...list, ...data.dataIssues.value, ...where.launcherIssues.value, ...serverIssues.value].map((i) => ({ ...i, message: sayIssue(i, fieldWords(i.field, texts, fields), fields) }))
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

  const { estimate, calibrated } = useDraftEstimate(config, caps, run)

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
    setSource: data.setSource,
    useDataSet: data.useDataSet,
    forgetDataSet: data.forgetDataSet,
    setDataTarget: data.setDataTarget,
    setFeatureUsed: data.setFeatureUsed,
    setImpute: data.setImpute,
    featureColumns: data.featureColumns,
    textColumnsLeftOut: data.textColumnsLeftOut,
    missingInUse: data.missingInUse,
    usable: data.usable,
    refusesMissing: data.refusesMissing,
    useAllRows: data.useAllRows,
    place: where.place,
    slurm: where.slurm,
    slurmOffered: where.offered,
    slurmText: where.slurmText,
    setPlace: where.setPlace,
    setSlurmText: where.setSlurmText,
    listText: boxes.listText,
    modelText: boxes.modelText,
    setText: boxes.setText,
    setSetNumber: boxes.setSetNumber,
    numberBox: boxes.numberBox,
    sizeBox: boxes.sizeBox,
    family,
    serverIssues,
    applyPreset,
    reset,
    replace,
    setList: boxes.setList,
    sweepModels: boxes.sweepModels,
    setSweep: boxes.setSweep,
    setNumber: boxes.setNumber,
    setSize: boxes.setSize,
    setFamily,
    setModelField: boxes.setModelField,
    addSize: boxes.addSize,
    removeSize: boxes.removeSize,
    toggleStrategy,
    comparedBackends,
    setCompared,
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
