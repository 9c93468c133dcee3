// Run management from the History view: rename, tag, delete, export (JSON/CSV/MD), Save PDF, the best
// trained model, and loading two runs for a side-by-side comparison. Each action reports one line of status.
import { defineStore } from 'pinia'
import { type Ref, ref, shallowRef } from 'vue'
import type { ExportFormat } from '@shared/contract/api'
import type { RunResult } from '@shared/contract/result'
import { chooseBridge } from '../bridge'
import { asErrorShape } from '../lib/errors'
import { deliverExport, deliverModel, deliverPdf } from '../lib/saveFile'
import { useHistoryStore } from './history'

export const useRunActionsStore = defineStore('runActions', () => {
  const busy = ref<string | null>(null)
  const message = ref<string | null>(null)
  const error = ref<string | null>(null)
  const compared = shallowRef<[RunResult, RunResult] | null>(null)

  /** Runs one action: busy while it runs, its failure said in `error`; null when it failed. */
  async function act<T>(label: string, fn: () => Promise<T>): Promise<T | null> {
    busy.value = label
    error.value = null
    message.value = null
    try {
      return await fn()
    } catch (err) {
      error.value = `${label} failed: ${asErrorShape(err).message}`
      return null
    } finally {
      busy.value = null
    }
  }

  async function compare(a: string, b: string) {
    const runs = await act('Compare', () => Promise.all([chooseBridge().getRun({ runId: a }), chooseBridge().getRun({ runId: b })]))
    if (runs) compared.value = runs as [RunResult, RunResult]
  }

  function closeCompare() {
    compared.value = null
  }

  return { busy, message, error, compared, ...runEdits(act, message), ...runFiles(act, message), compare, closeCompare }
})

type Act = <T>(label: string, fn: () => Promise<T>) => Promise<T | null>

/** Rename, tag and delete: the history list (and the run open in it) read again after each. */
function runEdits(act: Act, message: Ref<string | null>) {
  async function afterChange(runId: string) {
    const history = useHistoryStore()
    await history.refresh()
    if (history.selectedId === runId) await history.open(runId)
  }

  async function rename(runId: string, name: string) {
    if ((await act('Rename', () => chooseBridge().renameRun({ runId, name }))) !== null) {
      message.value = name.trim() ? `Renamed to “${name.trim()}”` : 'Name removed'
      await afterChange(runId)
    }
  }

  async function tag(runId: string, tags: string[]) {
    if ((await act('Tag', () => chooseBridge().tagRun({ runId, tags }))) !== null) {
      message.value = tags.length ? `Tags: ${tags.join(', ')}` : 'Tags removed'
      await afterChange(runId)
    }
  }

  async function remove(runId: string) {
    if ((await act('Delete', () => chooseBridge().deleteRun({ runId }))) !== null) {
      const history = useHistoryStore()
      if (history.selectedId === runId) history.close()
      message.value = `Deleted run ${runId}`
      await history.refresh()
    }
  }

  return { rename, tag, remove }
}

/** A run's files: its export, its PDF report, its best trained model. */
function runFiles(act: Act, message: Ref<string | null>) {
  async function exportRun(runId: string, format: ExportFormat) {
    const file = await act(`Export ${format.toUpperCase()}`, () => chooseBridge().exportRun({ runId, format }))
    if (file) message.value = deliverExport(file)
  }

  async function savePdf(runId: string) {
    const report = await act('Save PDF', () => chooseBridge().reportPdf({ runId }))
    if (report) message.value = deliverPdf(report)
  }

  async function saveBestModel(runId: string) {
    const model = await act('Save best model', () => chooseBridge().bestModel({ runId }))
    if (model) message.value = deliverModel(model)
  }

  return { exportRun, savePdf, saveBestModel }
}
