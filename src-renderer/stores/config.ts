// The editable run configuration and the one way a run is started from it (startFromDraft). Its
// parts live in draft/: text boxes, data choice, what the models learn (objective, metric, the
// task said before Run), how a model set is searched (grid or halving, early stopping), launcher choice, compared strategies and backends, presets, validation,
// the estimate, persistence. This file makes the draft and wires the parts.
// Store dependencies run one way: config → run, capabilities, dataSets (those import no store).
import { defineStore } from 'pinia'
import { computed, reactive, ref, watch } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import { DEFAULT_CONFIG } from '@shared/contract/config'
import type { FieldIssue } from '@shared/vocabulary/errors'
import { allFamilies, findFamily, type ModelFamily } from '@shared/families'
import { useCapabilitiesStore } from './capabilities'
import { useDataSetsStore } from './dataSets'
import { useComparedChoices } from './draft/compare'
import { type DataSourceKind, useDataChoice } from './draft/data-choice'
import { useDraftEstimate } from './draft/estimate'
import { useLauncherChoice } from './draft/launcher-choice'
import { persistValidDrafts, restoreDraft } from './draft/persistence'
import { copyConfig, useDraftPresets } from './draft/presets'
import { useSearchChoice } from './draft/search-choice'
import { useTaskChoice } from './draft/task-choice'
import { useTextBoxes } from './draft/text-boxes'
import { useDraftValidation } from './draft/validation'
import { useRunStore } from './run'

export type { DataSourceKind } from './draft/data-choice'
export type { ListField, NumberField } from './draft/text-boxes'

export const useConfigStore = defineStore('config', () => {
  const run = useRunStore()
  const caps = useCapabilitiesStore()
  const dataSets = useDataSetsStore()
  const draft = reactive<BenchConfig>(copyConfig(restoreDraft() ?? DEFAULT_CONFIG))
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

  // each part's own wiring is kept here; the rest of it is the config panel's
  const { syncText: syncBoxes, texts: boxTexts, showNumber, setOnlySize, ...boxes } = useTextBoxes(draft, family, touched)
  syncBoxes()
  const { dataIssues, dataCheck, ...data } = useDataChoice({ draft, source, family, dataSets, showNumber, setOnlySize, touched })
  const { syncText: syncWhere, texts: whereTexts, launcherIssues, offered: launcherOffered, ...where } = useLauncherChoice({ draft, caps, touched })
  syncWhere()
  const { syncText: syncTask, ...learn } = useTaskChoice({ draft, source, dataCheck, touched })
  syncTask()
  const { syncText: syncSearch, ...search } = useSearchChoice({ draft, family, touched })
  syncSearch()

  /** The draft becomes `c`: a field `c` leaves out (a model set, data, launcher, GPUs) goes too. */
  function replace(c: BenchConfig) {
    const next = copyConfig(c)
    for (const key of Object.keys(draft) as (keyof BenchConfig)[]) if (!(key in next)) delete draft[key]
    Object.assign(draft, next)
    source.value = draft.data ? 'file' : 'generated'
    if (draft.data) void dataSets.select(draft.data.sha256)
    syncBoxes()
    syncWhere()
    syncTask()
    syncSearch()
    serverIssues.value = []
  }

  showJoinedRuns(run, replace)

  const texts = () => ({ ...boxTexts.value, ...whereTexts.value, ...search.searchText, classes: learn.classesText.value })
  const moreIssues = () => [...dataIssues.value, ...launcherIssues.value, ...serverIssues.value]
  const { parsed, ...checked } = useDraftValidation({ draft, family, caps, texts, moreIssues })
  const presets = useDraftPresets(draft, parsed, replace)
  const { estimate, calibrated } = useDraftEstimate(presets.config, caps, run)
  /** Run is allowed: the config is valid and no run is starting or running. */
  const canRun = computed(() => checked.valid.value && !run.busy)

  /** The one way to start a run from the panel (Run button, menu, shortcut). False when nothing started. */
  async function startFromDraft(): Promise<boolean> {
    const c = presets.config.value
    if (!canRun.value || !c) return false
    const started = await run.start(c)
    if (!started && run.error?.issues?.length) serverIssues.value = run.error.issues
    return started
  }

  return {
    draft,
    source,
    family,
    serverIssues,
    touched,
    replace,
    launcherOffered,
    ...boxes,
    ...data,
    ...learn,
    ...search,
    ...where,
    ...useComparedChoices(draft, family, touched),
    ...checked,
    ...presets,
    estimate,
    calibrated,
    canRun,
    startFromDraft,
  }
})

/**
 * A run this page did not start (re-attached on load, or started in another tab): the panel shows
 * what is running. Sync, so the panel never shows the old draft next to the joined run.
 */
function showJoinedRuns(run: ReturnType<typeof useRunStore>, replace: (c: BenchConfig) => void) {
  watch(
    () => (run.joined && run.busy ? run.runId : null),
    (id) => {
      if (id && run.config) replace(run.config)
    },
    { flush: 'sync', immediate: true },
  )
}
