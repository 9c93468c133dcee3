// Each API method's request payload, written once for both transports (the preload's IPC and the
// browser mode's WebSocket). Type-only imports: the sandboxed preload bundles this file as is.
import type { ApiResponses, TrainpoolApi } from './api'
import type { Method } from './channels'

export type RequestMethods = Omit<TrainpoolApi, 'onEvent' | 'onMenuCommand'>
export type Caller = <M extends Method>(method: M, payload: unknown) => Promise<ApiResponses[M]>

export function requestMethods(call: Caller): RequestMethods {
  return {
    capabilities: () => call('capabilities', undefined),
    start: (config) => call('start', { config }),
    cancel: (runId) => call('cancel', runId === undefined ? {} : { runId }),
    listRuns: () => call('listRuns', undefined),
    getRun: (runId) => call('getRun', { runId }),
    currentRun: () => call('currentRun', undefined),
    renameRun: (runId, name) => call('renameRun', { runId, name }),
    tagRun: (runId, tags) => call('tagRun', { runId, tags }),
    deleteRun: (runId) => call('deleteRun', { runId }),
    exportRun: (runId, format) => call('exportRun', { runId, format }),
    reportPdf: (runId) => call('reportPdf', { runId }),
  }
}
