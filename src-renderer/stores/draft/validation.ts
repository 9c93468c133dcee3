// The draft checked: the shared schema's issues, a backend not available here, and the issues of the
// draft's parts (data file, launcher) and of the service's last refusal, each said with the panel's
// labels and the text as typed (lib/fieldText.ts).
import { computed, type ComputedRef } from 'vue'
import { backendsOf, type BenchConfig, BenchConfigSchema } from '@shared/contract/config'
import { findLauncher } from '@shared/contract/launcher'
import { type FieldIssue, fieldIssues } from '@shared/vocabulary/errors'
import type { ModelFamily } from '@shared/families'
import { fieldWords, sayIssue } from '../../lib/fieldText'
import type { useCapabilitiesStore } from '../capabilities'

export interface DraftValidationDeps {
  draft: BenchConfig
  family: ComputedRef<ModelFamily>
  caps: Pick<ReturnType<typeof useCapabilitiesStore>, 'caps' | 'option'>
  /** what every box shows, by issue field */
  texts: () => Record<string, string>
  /** the issues the schema cannot see (the data file, the launcher, the service's last refusal) */
  moreIssues: () => FieldIssue[]
}

export function useDraftValidation({ draft, family, caps, texts, moreIssues }: DraftValidationDeps) {
  const result = computed(() => BenchConfigSchema.safeParse(draft))
  /** the draft as the schema read it; null while it is invalid */
  const parsed = computed<BenchConfig | null>(() => (result.value.success ? result.value.data : null))

  /** The schema's and the service's issues, said with the panel's labels and the text typed. */
  const issues = computed<FieldIssue[]>(() => {
    const r = result.value
    const list = r.success ? [] : fieldIssues(r.error, draft)
    const side = Array.isArray(draft.backend)
    for (const [i, backend] of backendsOf(draft).entries()) {
      const opt = caps.option(backend, draft.model.kind)
      // side by side, on the compared backend's own box (backend.N)
      if (caps.caps && opt && !opt.available)
        list.push({ field: side ? `backend.${i}` : 'backend', message: `Backend ${backend} is not available here: ${opt.detail}` })
    }
    const fields = family.value.fields
    const launcherFields = (draft.launcher && findLauncher(draft.launcher.engine)?.fields) || []
    const shown = texts()
    return [...list, ...moreIssues()].map((i) => ({ ...i, message: sayIssue(i, fieldWords(i.field, shown, fields, launcherFields), fields) }))
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

  return { parsed, issues, messagesFor, itemMessages, valid }
}
