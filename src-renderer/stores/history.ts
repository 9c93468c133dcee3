import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import type { RunListEntry } from '@shared/contract/api'
import type { RunResult } from '@shared/contract/result'
import { chooseBridge } from '../bridge'
import { asErrorShape } from '../lib/errors'

export const useHistoryStore = defineStore('history', () => {
  const runs = shallowRef<RunListEntry[]>([])
  const loading = ref(false)
  const error = ref<string | null>(null)
  const selectedId = ref<string | null>(null)
  const selected = shallowRef<RunResult | null>(null)
  const selectedError = ref<string | null>(null)
  const opening = ref(false)

  async function refresh(): Promise<void> {
    loading.value = true
    error.value = null
    try {
      const list = await chooseBridge().listRuns()
      runs.value = [...list].sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? ''))
    } catch (err) {
      error.value = asErrorShape(err).message
    } finally {
      loading.value = false
    }
  }

  async function open(runId: string): Promise<void> {
    selectedId.value = runId
    selected.value = null
    selectedError.value = null
    opening.value = true
    try {
      const r = await chooseBridge().getRun({ runId })
      if (selectedId.value === runId) selected.value = r
    } catch (err) {
      if (selectedId.value === runId) selectedError.value = asErrorShape(err).message
    } finally {
      opening.value = false
    }
  }

  function close() {
    selectedId.value = null
    selected.value = null
    selectedError.value = null
  }

  return { runs, loading, error, selectedId, selected, selectedError, opening, refresh, open, close }
})
