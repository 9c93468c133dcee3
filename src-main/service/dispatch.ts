// One request path for every shell (Electron's ipcMain handlers, the browser mode's WebSocket):
// look the method up in the contract's API table, validate the payload against its schema, call the
// service's method of that name with the parsed request, and wrap the outcome in an Envelope.
// Unknown methods and invalid input are typed errors, never a throw.
import { API, METHODS, TrainpoolError, echoValue, invalidInput, isMethod, toErrorShape } from '@shared/contract'
import type { ApiResponse, Envelope, Method } from '@shared/contract'
import type { BenchServiceApi } from './types'

export { METHODS, isMethod }

export async function dispatch<M extends Method>(service: BenchServiceApi, method: M | string, payload: unknown): Promise<Envelope<ApiResponse<M>>> {
  try {
    // not String(method): ["getRun"] would become "getRun"; only the table's own names pass
    if (!isMethod(method)) {
      throw new TrainpoolError('invalid-input', `unknown method ${echoValue(method)}; accepted: ${METHODS.join(', ')}`)
    }
    const parsed = API[method].request.safeParse(payload)
    if (!parsed.success) throw invalidInput(parsed.error, payload, `${method} request`)
    const handler = service[method] as (request: unknown) => Promise<unknown>
    const value = await handler.call(service, parsed.data)
    return { ok: true, value: value as ApiResponse<M> }
  } catch (err) {
    return { ok: false, error: toErrorShape(err) }
  }
}
