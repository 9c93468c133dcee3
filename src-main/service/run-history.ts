// The run history the shells browse: the live run, finished runs kept in memory (a store-less
// service, or a run whose save failed) and the store, merged; rename, tag, delete, export and the
// PDF report. The live run is read and changed through the accessor the service gives it.
import type { AdviceCheck, ExportedFile, ExportFormat, PdfReport, RunListEntry, RunResult } from '@shared/contract'
import { exportFileName, listEntry, newestFirst, TrainpoolError } from '@shared/contract'
import { exportRun } from '../bench/export'
import { cleanName, cleanTags, type RunStore } from '../store/run-store'

export interface LiveRunAccess {
  runId: string
  result: RunResult
  /** saves the live run as its writer */
  save(): Promise<void>
}

export class RunHistory {
  private finished = new Map<string, RunResult>()

  constructor(
    private readonly store: RunStore | null,
    private readonly live: () => LiveRunAccess | null,
    private readonly renderPdf?: (run: RunResult) => Promise<Buffer>,
  ) {}

  /** A finished run: kept in memory too, so it stays reachable when the store is absent or failed. */
  remember(run: RunResult): void {
    this.finished.set(run.runId, run)
  }

  async list(): Promise<RunListEntry[]> {
    const stored = this.store ? await this.store.list() : []
    const ids = new Set(stored.map((e) => e.runId))
    const memory = [...this.finished.values()].filter((r) => !ids.has(r.runId)).map((r) => listEntry(r))
    const live = this.live()
    const liveEntry = live && !ids.has(live.runId) ? [listEntry(live.result)] : []
    return newestFirst([...liveEntry, ...memory, ...stored])
  }

  async get(runId: string): Promise<RunResult> {
    const live = this.live()
    if (live?.runId === runId) return structuredClone(live.result)
    const memory = this.finished.get(runId)
    if (memory) return memory
    if (this.store) return this.store.get(runId)
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }

  rename(runId: string, name: string): Promise<RunListEntry> {
    const clean = cleanName(name)
    return this.update(runId, (run) => {
      if (clean) run.name = clean
      else delete run.name
    })
  }

  tag(runId: string, tags: string[]): Promise<RunListEntry> {
    const clean = cleanTags(tags)
    return this.update(runId, (run) => {
      if (clean.length) run.tags = clean
      else delete run.tags
    })
  }

  /** Stores the check of an advice drawn from this run (appended: a run keeps every check made of it). */
  addAdviceCheck(runId: string, check: AdviceCheck): Promise<RunListEntry> {
    return this.update(runId, (run) => {
      run.adviceChecks = [...(run.adviceChecks ?? []), check]
    })
  }

  /** Applies a change to a run wherever it lives (live, in memory, stored) and saves it. */
  private async update(runId: string, change: (run: RunResult) => void): Promise<RunListEntry> {
    const live = this.live()
    if (live?.runId === runId) {
      change(live.result)
      await live.save()
      return listEntry(live.result)
    }
    const memory = this.finished.get(runId)
    if (memory) {
      change(memory)
      if (this.store) await this.store.save(memory)
      return listEntry(memory)
    }
    if (!this.store) throw new TrainpoolError('not-found', `no run ${runId}`)
    const run = await this.store.get(runId)
    change(run)
    await this.store.save(run)
    return listEntry(run)
  }

  async delete(runId: string): Promise<{ deleted: true }> {
    if (this.live()?.runId === runId) throw new TrainpoolError('busy', `run ${runId} is still running: cancel it before deleting it`)
    const inMemory = this.finished.delete(runId)
    if (this.store) {
      try {
        await this.store.delete(runId)
      } catch (err) {
        if (!(inMemory && err instanceof TrainpoolError && err.code === 'not-found')) throw err
      }
    } else if (!inMemory) throw new TrainpoolError('not-found', `no run ${runId}`)
    return { deleted: true }
  }

  async export(runId: string, format: ExportFormat): Promise<ExportedFile> {
    return exportRun(await this.get(runId), format)
  }

  async reportPdf(runId: string): Promise<PdfReport> {
    const run = await this.get(runId)
    const render = this.renderPdf ?? (async (r: RunResult) => (await import('../report/render-pdf')).renderReportPdf(r))
    const pdf = await render(run)
    return { fileName: exportFileName(run, 'pdf'), sizeBytes: pdf.length, base64: pdf.toString('base64') }
  }
}
