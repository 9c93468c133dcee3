// The editable run configuration, validated inline against the shared BenchConfigSchema.
import { defineStore } from 'pinia'
import { computed, reactive, ref, watch } from 'vue'
import type { BenchConfig, PresetName } from '@shared/contract/config'
import { BenchConfigSchema, DEFAULT_CONFIG, LIMITS, PRESETS, presetConfig } from '@shared/contract/config'
import type { FieldIssue } from '@shared/contract/errors'
import { fieldIssues } from '@shared/contract/errors'
import { estimateRun, type Estimate } from '../lib/estimate'
import { useCapabilitiesStore } from './capabilities'
import { useRunStore } from './run'

export type ListField = 'models' | 'workers' | 'hidden'
const LIST_FIELDS: ListField[] = ['models', 'workers', 'hidden']

function clone(c: BenchConfig): BenchConfig {
  return JSON.parse(JSON.stringify(c)) as BenchConfig
}

/** "50, 100" → [50, 100]; anything not a number becomes NaN so validation names the field. */
export function parseList(text: string): number[] {
  return text
    .split(/[\s,;]+/)
    .filter((t) => t.length > 0)
    .map((t) => (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) ? Number(t) : NaN))
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
  return c.preset !== 'custom' && sameWorkload(c, presetConfig(c.preset)) ? c.preset : 'custom'
}

export const STORAGE_KEY = 'trainpool.config.v1'

/** The last config the user edited, if it is still valid under the current schema. */
function restore(): BenchConfig | null {
  try {
    const raw = globalThis.localStorage?.getItem(STORAGE_KEY)
    if (!raw) return null
    const r = BenchConfigSchema.safeParse(JSON.parse(raw))
    return r.success ? r.data : null
  } catch {
    return null
  }
}

export const useConfigStore = defineStore('config', () => {
  const draft = reactive<BenchConfig>(clone(restore() ?? DEFAULT_CONFIG))
  const listText = reactive<Record<ListField, string>>({ models: '', workers: '', hidden: '' })
  /** issues the service reported for the last start attempt; cleared on the next edit */
  const serverIssues = ref<FieldIssue[]>([])

  function syncText() {
    for (const f of LIST_FIELDS) listText[f] = draft[f].join(', ')
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
    Object.assign(draft, clone(c))
    syncText()
    serverIssues.value = []
  }

  /** A preset's workload; where and how to run (backend, failure policy) stay as they were. */
  function applyPreset(name: PresetName) {
    replace(presetConfig(name, { backend: draft.backend, failurePolicy: draft.failurePolicy }))
  }

  function reset() {
    replace(DEFAULT_CONFIG)
  }

  function setList(field: ListField, text: string) {
    listText[field] = text
    draft[field] = parseList(text)
    touched()
  }

  function addSize() {
    const last = draft.sizes[draft.sizes.length - 1]
    draft.sizes.push(Number.isFinite(last) && last > 0 ? Math.min(last * 2, LIMITS.size.max) : 10_000)
    touched()
  }

  function removeSize(i: number) {
    draft.sizes.splice(i, 1)
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

  const issues = computed<FieldIssue[]>(() => {
    const list = parsed.value.success ? [] : fieldIssues(parsed.value.error, draft)
    const caps = useCapabilitiesStore()
    const opt = caps.option(draft.backend)
    if (caps.caps && opt && !opt.available) {
      list.push({ field: 'backend', message: `backend ${draft.backend} is not available here: ${opt.detail}` })
    }
    return [...list, ...serverIssues.value]
  })

  /** Messages for a field, including its list items ("sizes" covers "sizes.2"). */
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

  const estimate = computed<Estimate | null>(() => {
    const c = config.value
    if (!c) return null
    const caps = useCapabilitiesStore()
    return estimateRun(c, caps.resolve(c.backend) ?? 'cpu')
  })

  /** Run is allowed: the config is valid and no run is starting or running. */
  const canRun = computed(() => valid.value && !useRunStore().busy)

  const presets = Object.entries(PRESETS).map(([name, p]) => ({ name: name as PresetName, ...p }))

  return {
    draft,
    listText,
    serverIssues,
    applyPreset,
    reset,
    replace,
    setList,
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
    presets,
  }
})
