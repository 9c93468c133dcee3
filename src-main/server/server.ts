// Browser mode: the built renderer over HTTP (http-routes.ts) and the contract over one WebSocket
// (/ws, ws-gateway.ts), backed by the same BenchService as the desktop shell; data files come in by
// POST /api/upload (upload.ts). Token-locked (URL ?token=, Authorization: Bearer, or the cookie the
// first authorized load sets), Host/Origin-checked, bound to 127.0.0.1 unless told otherwise. This
// file binds, composes the two and closes them in order.
import { type IncomingMessage, type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WS_PATH } from '@shared/contract/websocket'
import { guardConnections, STRANGER_CONNECTIONS } from '../net/http-connections'
import type { BenchServiceApi } from '../service/types'
import { httpRoutes } from './http-routes'
import { isLoopbackHost, isWildcardHost, listenHost, newToken, urlHost } from './security'
import { resolveRendererDir } from './static'
import { removeAbandonedUploads, type UploadOptions } from './upload'
import { WsGateway } from './ws-gateway'

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 7878

export interface ServeOptions {
  service: BenchServiceApi
  host?: string
  /** 0 picks a free port */
  port?: number
  rendererDir?: string
  /** fixed token (tests); a random one otherwise */
  token?: string
  /** call service.shutdown() in close() (default true) */
  shutdownService?: boolean
  /** data-file uploads (POST /api/upload): where they arrive, the cap, the loader; absent: refused (503) */
  uploads?: UploadOptions
  /** ms a request's headers may take to arrive before the connection is closed (default DEFAULT_HEADERS_TIMEOUT_MS) */
  headersTimeoutMs?: number
  /** connections without a proven token held at once, per remote address and in all (default STRANGER_CONNECTIONS) */
  strangerConnections?: { perPeer: number; total: number }
}

export const DEFAULT_HEADERS_TIMEOUT_MS = 60_000

export interface TrainpoolServer {
  host: string
  port: number
  token: string
  /** http://host:port/ */
  baseUrl: string
  /** the URL to open: baseUrl with ?token= */
  url: string
  /** ws://host:port/ws (add ?token=) */
  wsUrl: string
  /** true when bound to something other than loopback */
  exposed: boolean
  connections(): number
  /** stops the workers (service.shutdown()), closes every socket and the server */
  close(): Promise<void>
}

export async function startServer(options: ServeOptions): Promise<TrainpoolServer> {
  const service = options.service
  const host = options.host ?? DEFAULT_HOST
  const token = options.token ?? newToken()
  const rendererDir = options.rendererDir ?? resolveRendererDir()
  let port = options.port ?? DEFAULT_PORT

  const portNow = () => port
  // Node's own timeouts are off: an upload is bounded by its idle timeout (upload.ts), not by Node's
  // 5 minutes in total, and a request's headers by guardConnections, per connection and on time
  // whatever the peer sends (Node's header check is a sweep every connectionsCheckingInterval, 30 s
  // by default, so a connection silent mid-headers stayed open up to that much past the timeout).
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS
  const http: Server = createServer({ requestTimeout: 0, headersTimeout: 0 })
  const guard = guardConnections(http, { headersTimeoutMs: headersTimeout, strangers: options.strangerConnections ?? STRANGER_CONNECTIONS })
  const tokenProven = (req: IncomingMessage) => guard.trust(req.socket)
  http.on('request', httpRoutes({ host, port: portNow, token, rendererDir, uploads: options.uploads, tokenProven }))
  const gateway = new WsGateway({ service, host, port: portNow, token, tokenProven })
  http.on('upgrade', (req, socket, head) => gateway.upgrade(req, socket, head))

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err)
    http.once('error', onError)
    http.listen(port, listenHost(host), () => {
      http.off('error', onError)
      resolve()
    })
  })
  port = (http.address() as AddressInfo).port
  if (options.uploads) await removeAbandonedUploads(options.uploads.dir)

  // a wildcard bind is reached on this machine at loopback: print a URL that works
  const shownHost = urlHost(isWildcardHost(host) ? DEFAULT_HOST : listenHost(host))
  const baseUrl = `http://${shownHost}:${port}/`
  let closing: Promise<void> | null = null

  return {
    host,
    port,
    token,
    baseUrl,
    url: `${baseUrl}?token=${token}`,
    wsUrl: `ws://${shownHost}:${port}${WS_PATH}`,
    exposed: !isLoopbackHost(host),
    connections: () => gateway.connections,
    close() {
      closing ??= (async () => {
        try {
          if (options.shutdownService !== false) await service.shutdown()
        } finally {
          await gateway.close()
          await new Promise<void>((resolve) => {
            http.close(() => resolve())
            http.closeAllConnections()
          })
        }
      })()
      return closing
    },
  }
}
