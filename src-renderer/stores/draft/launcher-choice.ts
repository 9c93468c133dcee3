// Where the run's workers run: this machine (no config.launcher) or a launcher the contract knows
// (config.launcher; its fields, labels and words are its spec's, contract/launcher.ts). Each box keeps
// its text as typed, per launcher, and the draft what it means (read by the field's own `read`, as the
// CLI reads its flag), so the contract's messages name the box. Choosing a launcher sets the GPU
// choice aside (its scheduler gives each task its GPU); choosing this machine again brings it back.
import { computed, reactive, ref } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import type { Capabilities } from '@shared/contract/events'
import type { FieldIssue } from '@shared/vocabulary/errors'
import { allLaunchers, findLauncher, type LauncherChoice, type LauncherSpec, LOCAL_LAUNCHER } from '@shared/contract/launcher'

/** 'local' (this machine) or a launcher's engine */
export type RunPlace = string

/** The GPU choice set aside while a launcher is chosen (the contract refuses both), and brought back with this machine. */
function gpuChoiceAside(draft: BenchConfig) {
  const kept = ref<Pick<BenchConfig, 'gpus' | 'workersPerGpu'> | null>(null)
  function putAside() {
    if (draft.gpus === undefined && draft.workersPerGpu === undefined) return
    kept.value = { gpus: draft.gpus, workersPerGpu: draft.workersPerGpu }
    delete draft.gpus
    delete draft.workersPerGpu
  }
  function bringBack() {
    if (!kept.value) return
    if (kept.value.gpus !== undefined) draft.gpus = kept.value.gpus
    if (kept.value.workersPerGpu !== undefined) draft.workersPerGpu = kept.value.workersPerGpu
    kept.value = null
  }
  return { putAside, bringBack, forget: () => (kept.value = null) }
}

/** What a launcher's boxes show for a choice (a new one: its schema's defaults). */
function textsOf(spec: LauncherSpec, choice: LauncherChoice | undefined): Record<string, string> {
  const shown = choice?.engine === spec.engine ? choice : spec.schema.safeParse({ engine: spec.engine }).data
  return Object.fromEntries(spec.fields.map((f) => [f.key, f.text(shown?.[f.key])]))
}

export function useLauncherChoice(deps: { draft: BenchConfig; caps: { caps: Capabilities | null }; touched: () => void }) {
  const { draft, caps, touched } = deps
  /** each launcher's boxes as typed, by engine then field */
  const launcherText = reactive<Record<string, Record<string, string>>>({})
  const gpuChoice = gpuChoiceAside(draft)

  const place = computed<RunPlace>(() => draft.launcher?.engine ?? LOCAL_LAUNCHER.engine)
  /** the chosen launcher's spec (null on this machine) */
  const launcher = computed(() => (draft.launcher ? (findLauncher(draft.launcher.engine) ?? null) : null))
  /** the launchers shown: those that can submit from here, and the one a draft chose (so it can be undone) */
  const launchersOffered = computed(() => allLaunchers().filter((l) => caps.caps?.launchers?.[l.engine]?.available === true || l.engine === place.value))
  const offered = computed(() => launchersOffered.value.length > 0)

  function textsFor(spec: LauncherSpec): Record<string, string> {
    return (launcherText[spec.engine] ??= textsOf(spec, undefined))
  }

  /** Every box from the draft (a new draft: restored, a preset, a run again). */
  function syncText() {
    for (const spec of allLaunchers()) launcherText[spec.engine] = textsOf(spec, draft.launcher)
    gpuChoice.forget()
  }

  /** The draft's launcher from its boxes as typed. */
  function launcherFromText(spec: LauncherSpec): LauncherChoice {
    const texts = textsFor(spec)
    const choice: Record<string, unknown> = { engine: spec.engine }
    for (const f of spec.fields) {
      const value = f.read(texts[f.key] ?? '')
      if (value !== undefined) choice[f.key] = value
    }
    return choice as LauncherChoice
  }

  function setPlace(next: RunPlace) {
    if (next === place.value) return
    const spec = findLauncher(next)
    if (spec) {
      if (!draft.launcher) gpuChoice.putAside()
      draft.launcher = launcherFromText(spec)
    } else {
      delete draft.launcher
      gpuChoice.bringBack()
    }
    touched()
  }

  /** A box of the chosen launcher typed into. */
  function setLauncherText(field: string, text: string) {
    const spec = launcher.value
    if (!spec) return
    textsFor(spec)[field] = text
    draft.launcher = launcherFromText(spec)
    touched()
  }

  /** The draft chose a launcher that cannot submit here (a restored draft, another machine): said on the section. */
  const launcherIssues = computed<FieldIssue[]>(() => {
    const spec = launcher.value
    const capability = spec ? caps.caps?.launchers?.[spec.engine] : undefined
    return spec && capability && !capability.available ? [{ field: 'launcher', message: `${spec.name} is not available here: ${capability.detail}` }] : []
  })

  /** What each box of the chosen launcher shows, by issue field ("launcher.partition", …). */
  const texts = computed<Record<string, string>>(() => {
    const spec = launcher.value
    return spec ? Object.fromEntries(spec.fields.map((f) => [`launcher.${f.key}`, textsFor(spec)[f.key] ?? ''])) : {}
  })

  return { launcherText, place, launcher, launchersOffered, offered, syncText, setPlace, setLauncherText, launcherIssues, texts }
}
