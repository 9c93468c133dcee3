// What the models learn, in the draft: the objective (auto or asked), the primary metric, generated
// data's target and class count — and the task they come to, said before Run: generated data's from
// its target (resolveTask, as the service resolves it), the user's from the data check
// (src-shared/data-check.ts: the target column's listed values, the same resolveTask, its refusals
// among the data issues). A data set whose info does not list its target's values (cached by an
// older version) leaves the task to the start, and says so.
import { computed, type ComputedRef, type Ref, ref } from 'vue'
import type { BenchConfig, Target } from '@shared/contract/config'
import { resolveTask } from '@shared/contract/task'
import type { DataCheck } from '@shared/data-check'
import {
  CLASS_LIMITS,
  describeTask,
  METRIC_CHOICES,
  METRIC_SPECS,
  type MetricChoice,
  metricsOf,
  type ObjectiveChoice,
  type Task,
} from '@shared/vocabulary/task'
import { numberOf } from '@shared/vocabulary/fields'
import type { DataSourceKind } from './data-choice'

export interface TaskChoiceDeps {
  draft: BenchConfig
  source: Ref<DataSourceKind>
  /** the data check of the user's file (its task included); null until the file's info is here */
  dataCheck: ComputedRef<DataCheck | null>
  touched: () => void
}

/** The fields a refusal of the task is on: the panel says it there instead of a task. */
const TASK_FIELDS = ['objective', 'metric', 'data.target']

export function useTaskChoice({ draft, source, dataCheck, touched }: TaskChoiceDeps) {
  /** the classes box as typed (empty: the default count) */
  const classesText = ref('')

  /** The classes box from the draft (a new draft: a preset, a run again). */
  function syncText() {
    classesText.value = draft.classes === undefined ? '' : String(draft.classes)
  }

  /** The task the run will have, once it can be told here; null while the draft contradicts itself (its boxes say why) or the target's values are not known. */
  const task = computed<Task | null>(() => (source.value === 'generated' ? generatedTask(draft) : (dataCheck.value?.task ?? null)))

  /** The task in words under the pickers: "binary (2 classes: no, yes), read from the target · ranked by log loss". */
  const taskText = computed(() => {
    const t = task.value
    if (t) return `${describeTask(t)}${t.auto ? ', read from the target' : ''} · ranked by ${METRIC_SPECS[t.metric].label}`
    // the user's target chosen and accepted, its values not listed: the service reads them at the start
    const check = dataCheck.value
    if (source.value !== 'file' || !check?.choice || check.refusals.some((r) => TASK_FIELDS.includes(r.field))) return null
    const asked = draft.objective ?? 'auto'
    return asked === 'auto'
      ? 'objective: auto — read from the target when the run starts'
      : `objective: ${asked} — checked against the target when the run starts`
  })

  /** The metrics offered: auto and those of the objective (asked, else resolved; every one while neither is known), and the draft's own even when it does not fit, so its error shows beside it. */
  const metricChoices = computed<MetricChoice[]>(() => {
    const objective = draft.objective && draft.objective !== 'auto' ? draft.objective : task.value?.objective
    const offered: MetricChoice[] = objective ? ['auto', ...metricsOf(objective)] : [...METRIC_CHOICES]
    return draft.metric && !offered.includes(draft.metric) ? [...offered, draft.metric] : offered
  })

  function setObjective(choice: ObjectiveChoice) {
    // auto is what an absent objective means: the draft leaves it out, as a config from before classifiers
    if (choice === 'auto') delete draft.objective
    else draft.objective = choice
    touched()
  }

  function setMetric(choice: MetricChoice) {
    if (choice === 'auto') delete draft.metric
    else draft.metric = choice
    touched()
  }

  /** Generated data's target; the class count belongs to multiclass data only, so it goes with another target. */
  function setTarget(target: Target) {
    draft.target = target
    if (target !== 'multiclass') {
      delete draft.classes
      classesText.value = ''
    }
    touched()
  }

  /** The classes box typed into: empty is the default count; anything else the schema judges. */
  function setClasses(typed: string) {
    classesText.value = typed
    if (typed.trim() === '') delete draft.classes
    else draft.classes = numberOf(typed, 'integer')
    touched()
  }

  return { classesText, syncText, task, taskText, metricChoices, setObjective, setMetric, setTarget, setClasses }
}

/** Generated data's task from the draft alone; null while it contradicts itself (the schema's messages say why) or a class count is still being typed. */
function generatedTask(draft: BenchConfig): Task | null {
  const count = draft.classes
  if (count !== undefined && !(Number.isInteger(count) && count >= CLASS_LIMITS.min && count <= CLASS_LIMITS.max)) return null
  try {
    return resolveTask({ ...draft, data: undefined })
  } catch {
    return null
  }
}
