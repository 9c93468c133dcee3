// The façade both shells call (Electron's ipcMain handlers, the browser-mode WebSocket, the CLI).
import type { Capabilities, ExportedFile, ExportFormat, PdfReport, RunEvent, RunListEntry, RunResult } from '@shared/contract'

export interface BenchServiceApi {
  capabilities(): Promise<Capabilities>
  /** validates the raw config (TrainpoolError 'invalid-input' / 'backend-unavailable' / 'busy') and starts a run */
  start(rawConfig: unknown): Promise<{ runId: string }>
  cancel(runId?: string): Promise<{ cancelled: boolean }>
  listRuns(): Promise<RunListEntry[]>
  getRun(runId: string): Promise<RunResult>
  /** the live run's events so far (a reconnecting tab replays them), or null when idle */
  currentRun(): Promise<{ runId: string; events: RunEvent[] } | null>
  /** '' removes the name */
  renameRun(runId: string, name: string): Promise<RunListEntry>
  /** replaces the run's tags */
  tagRun(runId: string, tags: string[]): Promise<RunListEntry>
  /** refuses the live run ('busy') */
  deleteRun(runId: string): Promise<{ deleted: true }>
  exportRun(runId: string, format: ExportFormat): Promise<ExportedFile>
  /** renders the PDF report (headless Chromium) and returns its bytes (base64); shells may save it instead */
  reportPdf(runId: string): Promise<PdfReport>
  onEvent(listener: (event: RunEvent) => void): () => void
  /** cancels any run and stops every worker */
  shutdown(): Promise<void>
}
