// The façade both shells call (Electron's ipcMain handlers, the browser-mode WebSocket, the CLI).
// Its request methods come from the contract's API table: one per entry, each taking the request
// as dispatch() parsed it (e.g. getRun({ runId }), capabilities()).
import type { RunEvent, ServiceMethods } from '@shared/contract'

export interface BenchServiceApi extends ServiceMethods {
  onEvent(listener: (event: RunEvent) => void): () => void
  /** cancels any run and stops every worker */
  shutdown(): Promise<void>
}
