// The draft config remembered across restarts (localStorage): restored only when still valid under
// today's schema, saved only when valid (a restart never shows a half-typed draft), and the one
// legacy shape (v1: the MLP's fields at the top, before the model-family seam) migrated on read.
import { watch } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import { BenchConfigSchema } from '@shared/contract/config'

export const STORAGE_KEY = 'trainpool.config.v2'
/** Before the model-family seam: the MLP's fields at the top of the config. */
export const LEGACY_STORAGE_KEY = 'trainpool.config.v1'

/** A v1 stored config (epochs, batchSize, hidden, lr at the top) in today's shape. */
function fromLegacy(raw: Record<string, unknown>): Record<string, unknown> {
  const { epochs, batchSize, hidden, lr, ...rest } = raw
  return { ...rest, model: { kind: 'mlp', epochs, batchSize, hidden, lr } }
}

/** The last config the user edited, if it is still valid under the current schema. */
export function restoreDraft(): BenchConfig | null {
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

/** Saves every valid edit of `draft` (invalid drafts are not saved). */
export function persistValidDrafts(draft: BenchConfig): void {
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
}
