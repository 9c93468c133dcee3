// Browser mode's HTTP side: every request passes the Host/Origin check and the token (security.ts),
// then goes to the upload (upload.ts) or to the built renderer's files (static.ts). The WebSocket
// endpoint answers plain HTTP with 426; its upgrade is ws-gateway.ts's.
import { createReadStream } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { UPLOAD_PATH } from '@shared/contract/upload'
import { WS_PATH } from '@shared/contract/websocket'
import { BASE_HEADERS, contentSecurityPolicy, foreignRequest, tokenCookie, tokenSource } from './security'
import { lookupStatic } from './static'
import { handleUpload, type UploadOptions } from './upload'

export interface HttpRoutesOptions {
  /** the address the server is bound to (the Host check's reference) */
  host: string
  /** the bound port (known once listening: port 0 picks one) */
  port: () => number
  token: string
  rendererDir: string
  uploads: UploadOptions | undefined
  /** a request proved the token: its connection is no stranger's (net/http-connections.ts) */
  tokenProven: (req: IncomingMessage) => void
}

/** The server's request listener: never throws (a failure is a 500, or a dropped socket once the answer began). */
export function httpRoutes(options: HttpRoutesOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { host, token, rendererDir } = options
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const port = options.port()
    for (const [k, v] of Object.entries(BASE_HEADERS)) res.setHeader(k, v)
    const foreign = foreignRequest(req, host, port)
    if (foreign) return send(res, 403, foreign === 'Host' ? 'forbidden: unexpected Host header' : 'forbidden: foreign Origin')
    const hostHeader = req.headers.host!
    const url = new URL(req.url ?? '/', `http://${hostHeader}`)
    const source = tokenSource(req, url, token, port)
    if (!source) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="trainpool"')
      return send(res, 401, 'unauthorized: open the URL `trainpool serve` printed (it carries ?token=…)')
    }
    options.tokenProven(req)
    if (url.pathname === UPLOAD_PATH) return handleUpload(req, res, url, options.uploads)
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD')
      return send(res, 405, 'method not allowed')
    }
    if (url.pathname === WS_PATH) return send(res, 426, 'this endpoint speaks WebSocket', { Upgrade: 'websocket' })
    const found = await lookupStatic(rendererDir, url.pathname)
    if (!found.ok) {
      // browsers ask for a favicon on their own; the app has none: no content rather than a logged 404
      if (url.pathname === '/favicon.ico') return void res.writeHead(204, { 'Cache-Control': 'max-age=86400' }).end()
      return send(res, found.status, found.status === 404 ? 'not found' : 'bad path')
    }
    if (source === 'query') res.setHeader('Set-Cookie', tokenCookie(token, port))
    const isHtml = found.contentType.startsWith('text/html')
    res.writeHead(200, {
      'Content-Type': found.contentType,
      'Content-Length': String(found.size),
      'Cache-Control': isHtml ? 'no-store' : 'no-cache',
      ...(isHtml ? { 'Content-Security-Policy': contentSecurityPolicy(hostHeader) } : {}),
    })
    if (req.method === 'HEAD') return void res.end()
    createReadStream(found.file)
      .on('error', () => res.destroy())
      .pipe(res)
  }
  return (req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, `internal error: ${(err as Error)?.message ?? String(err)}`)
      else res.destroy()
    })
  }
}

function send(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = `${status} ${text}\n`
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    ...headers,
  })
  res.end(body)
}
