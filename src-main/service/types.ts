// The façade both shells call (Electron's ipcMain handlers, the browser-mode WebSocket, the CLI).
import type { Capabilities, RunEvent, RunListEntry, RunResult } from '../contract'

export interface BenchServiceApi {
  capabilities(): Promise<Capabilities>
  /** validates the raw config (TrainpoolError 'invalid-input' / 'backend-unavailable' / 'busy') and starts a run */
  start(rawConfig: unknown): Promise<{ runId: string }>
  cancel(runId?: string): Promise<{ cancelled: boolean }>
  listRuns(): Promise<RunListEntry[]>
  getRun(runId: string): Promise<RunResult>
  /** the live run's events so far (a reconnecting tab replays them), or null when idle */
  currentRun(): Promise<{ runId: string; events: RunEvent[] } | null>
  onEvent(listener: (event: RunEvent) => void): () => void
  /** cancels any run and stops every worker */
  shutdown(): Promise<void>
}
