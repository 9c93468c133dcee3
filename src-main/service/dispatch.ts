// One request path for every shell: validate the payload against the contract schema, call the
// service, and wrap the outcome in an Envelope. Invalid input is a typed error, never a throw.
import { REQUEST_SCHEMAS, TrainpoolError, invalidInput, toErrorShape } from '@shared/contract'
import type { ApiResponses, Envelope, ExportFormat, Method } from '@shared/contract'
import type { BenchServiceApi } from './types'

export const METHODS = Object.keys(REQUEST_SCHEMAS) as Method[]

export function isMethod(name: unknown): name is Method {
  return typeof name === 'string' && (METHODS as string[]).includes(name)
}

export async function dispatch<M extends Method>(
  service: BenchServiceApi,
  method: M | string,
  payload: unknown,
): Promise<Envelope<ApiResponses[M]>> {
  try {
    if (!isMethod(method)) {
      throw new TrainpoolError('invalid-input', `unknown method ${JSON.stringify(method)}; accepted: ${METHODS.join(', ')}`)
    }
    const parsed = REQUEST_SCHEMAS[method].safeParse(payload)
    if (!parsed.success) throw invalidInput(parsed.error, payload, `${method} request`)
    const value = await call(service, method, parsed.data)
    return { ok: true, value: value as ApiResponses[M] }
  } catch (err) {
    return { ok: false, error: toErrorShape(err) }
  }
}

function call(service: BenchServiceApi, method: Method, data: unknown): Promise<unknown> {
  switch (method) {
    case 'capabilities':
      return service.capabilities()
    case 'start':
      return service.start((data as { config: unknown }).config)
    case 'cancel':
      return service.cancel((data as { runId?: string }).runId)
    case 'listRuns':
      return service.listRuns()
    case 'getRun':
      return service.getRun((data as { runId: string }).runId)
    case 'currentRun':
      return service.currentRun()
    case 'renameRun': {
      const d = data as { runId: string; name: string }
      return service.renameRun(d.runId, d.name)
    }
    case 'tagRun': {
      const d = data as { runId: string; tags: string[] }
      return service.tagRun(d.runId, d.tags)
    }
    case 'deleteRun':
      return service.deleteRun((data as { runId: string }).runId)
    case 'exportRun': {
      const d = data as { runId: string; format: ExportFormat }
      return service.exportRun(d.runId, d.format)
    }
    case 'reportPdf':
      return service.reportPdf((data as { runId: string }).runId)
  }
}
