// Where the run's workers run: this machine (no config.launcher) or a Slurm cluster (config.launcher,
// contract/launcher.ts). Each Slurm box keeps its text as typed, the draft what it means (an empty
// partition, time or account left out, an empty GRES none, sbatch options split at spaces, the queue
// timeout a number or NaN), so the contract's messages name the box. Choosing Slurm sets the GPU
// choice aside (Slurm gives each task its GPU); choosing this machine again brings it back.
import { computed, reactive, ref } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import type { Capabilities } from '@shared/contract/events'
import type { FieldIssue } from '@shared/vocabulary/errors'
import { type LauncherChoice, SLURM_DEFAULTS } from '@shared/contract/launcher'
import { numberOf } from '@shared/vocabulary/fields'

export type RunPlace = 'local' | 'slurm'

/** The Slurm boxes, by their field in config.launcher. */
export type SlurmField = 'partition' | 'gres' | 'time' | 'account' | 'sbatchArgs' | 'queueTimeoutS'
export const SLURM_FIELDS: readonly SlurmField[] = ['partition', 'gres', 'time', 'account', 'sbatchArgs', 'queueTimeoutS']

type SlurmLauncher = Extract<LauncherChoice, { engine: 'slurm' }>

/** A box's text → the launcher's value for it. */
function slurmValue(field: SlurmField, text: string): unknown {
  const t = text.trim()
  switch (field) {
    case 'gres':
      return t === '' ? null : t
    case 'sbatchArgs':
      return t === '' ? [] : t.split(/\s+/)
    case 'queueTimeoutS':
      return numberOf(t, 'integer')
    default:
      return t === '' ? undefined : t
  }
}

/** What a box shows for a launcher's value. */
function textOf(launcher: SlurmLauncher | undefined, field: SlurmField): string {
  if (!launcher) return field === 'gres' ? SLURM_DEFAULTS.gres : field === 'queueTimeoutS' ? String(SLURM_DEFAULTS.queueTimeoutS) : ''
  const v = launcher[field]
  if (v == null) return ''
  return Array.isArray(v) ? v.join(' ') : String(v)
}

/** The GPU choice set aside while Slurm is chosen (the contract refuses both), and brought back with this machine. */
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

export function useLauncherChoice(deps: { draft: BenchConfig; caps: { caps: Capabilities | null }; touched: () => void }) {
  const { draft, caps, touched } = deps
  const slurmText = reactive<Record<SlurmField, string>>({ partition: '', gres: '', time: '', account: '', sbatchArgs: '', queueTimeoutS: '' })
  const gpuChoice = gpuChoiceAside(draft)

  const place = computed<RunPlace>(() => (draft.launcher ? 'slurm' : 'local'))
  const slurm = computed(() => caps.caps?.launchers?.slurm ?? null)
  /** the section shows where Slurm can submit, and on a draft that chose it (so it can be undone) */
  const offered = computed(() => slurm.value?.available === true || draft.launcher !== undefined)

  /** Every box from the draft (a new draft: restored, a preset, a run again). */
  function syncText() {
    for (const f of SLURM_FIELDS) slurmText[f] = textOf(draft.launcher, f)
    gpuChoice.forget()
  }

  /** The draft's launcher from the boxes as typed. */
  function launcherFromText(): SlurmLauncher {
    const l: Record<string, unknown> = { engine: 'slurm' }
    for (const f of SLURM_FIELDS) {
      const v = slurmValue(f, slurmText[f])
      if (v !== undefined) l[f] = v
    }
    return l as SlurmLauncher
  }

  function setPlace(next: RunPlace) {
    if (next === place.value) return
    if (next === 'slurm') {
      gpuChoice.putAside()
      draft.launcher = launcherFromText()
    } else {
      delete draft.launcher
      gpuChoice.bringBack()
    }
    touched()
  }

  /** A Slurm box typed into. */
  function setSlurmText(field: SlurmField, text: string) {
    slurmText[field] = text
    if (draft.launcher) draft.launcher = launcherFromText()
    touched()
  }

  /** The draft chose Slurm where it cannot submit (a restored draft, another machine): said on the section. */
  const launcherIssues = computed<FieldIssue[]>(() => {
    const s = slurm.value
    return draft.launcher && s && !s.available ? [{ field: 'launcher', message: `Slurm is not available here: ${s.detail}` }] : []
  })

  /** What each box shows, by issue field ("launcher.partition", "launcher.sbatchArgs", …). */
  const texts = computed<Record<string, string>>(() => Object.fromEntries(SLURM_FIELDS.map((f) => [`launcher.${f}`, slurmText[f]])))

  return { slurmText, place, slurm, offered, syncText, setPlace, setSlurmText, launcherIssues, texts }
}
