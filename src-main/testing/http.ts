// Browser mode from the outside, for the server, CLI, reliability and e2e tests: a tiny renderer
// folder, and raw HTTP/WebSocket helpers that do not normalise paths the way fetch() does. (The
// scripted service behind a server in tests is the one FakeService, src-shared/testing/fake-service.ts.)
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'

/** A renderer folder: index.html, one script, one stylesheet, and a secret next to it (outside). */
export function fakeRendererDir(): { root: string; dir: string } {
  const root = mkdtempSync(join(tmpdir(), 'trainpool-server-test-'))
  const dir = join(root, 'renderer')
  mkdirSync(join(dir, 'assets'), { recursive: true })
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Trainpool</title><script type="module" src="./assets/app.js"></script>')
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log("app")')
  writeFileSync(join(dir, 'assets', 'app.css'), 'body{}')
  writeFileSync(join(dir, 'assets', 'mod.wasm'), Buffer.from([0, 97, 115, 109]))
  writeFileSync(join(root, 'secret.txt'), 'SECRET')
  return { root, dir }
}

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** GET with the path sent exactly as given (no ../ resolution), optional extra headers. */
export function rawGet(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { Connection: 'close', ...headers } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

export type WsOutcome =
  { kind: 'open'; ws: WebSocket } | { kind: 'closed'; code: number; reason: string } | { kind: 'refused'; status: number } | { kind: 'error'; message: string }

/** Opens a raw client; reports whether it stayed open, was closed (code) or refused (HTTP status). */
export function openWs(url: string, options: WebSocket.ClientOptions = {}): Promise<WsOutcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, options)
    let settled = false
    const done = (o: WsOutcome) => {
      if (!settled) {
        settled = true
        resolve(o)
      }
    }
    ws.on('unexpected-response', (_req, res) => {
      done({ kind: 'refused', status: res.statusCode ?? 0 })
      ws.terminate()
    })
    ws.on('close', (code, reason) => done({ kind: 'closed', code, reason: reason.toString() }))
    ws.on('error', (err) => setTimeout(() => done({ kind: 'error', message: err.message }), 50))
    // an accepted socket that is closed at once by the server reports "closed" within this window
    ws.on('open', () => setTimeout(() => done({ kind: 'open', ws }), 150))
  })
}

/** Sends one frame and resolves with the next frame that is not a pushed event. */
export function roundTrip(ws: WebSocket, frame: string | Buffer, binary = false): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: WebSocket.RawData) => {
      const msg = JSON.parse(data.toString()) as Record<string, unknown>
      if ('event' in msg) return
      ws.off('message', onMessage)
      resolve(msg)
    }
    ws.on('message', onMessage)
    ws.once('close', (code) => reject(new Error(`socket closed (${code}) before a reply`)))
    ws.send(frame, { binary })
  })
}
