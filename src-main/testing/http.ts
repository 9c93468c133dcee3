// Shared by the server tests: a scripted BenchServiceApi (no worker processes), a tiny renderer
// folder, and raw HTTP/WebSocket helpers that do not normalise paths the way fetch() does.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { TrainpoolError, type Capabilities, type ParsedRequest, type RunEvent, type RunListEntry, type RunResult } from '@shared/contract'
import type { BenchServiceApi } from '../service/types'

export class FakeService implements BenchServiceApi {
  listeners = new Set<(e: RunEvent) => void>()
  shutdowns = 0
  started: unknown[] = []
  /** resolves a request only when the test says so (for "pending on close" tests) */
  gate: Promise<void> | null = null

  async capabilities(): Promise<Capabilities> {
    return {
      backends: [{ name: 'cpu', available: true, detail: 'fake cpu' } as Capabilities['backends'][number]],
      autoBackend: 'cpu',
      cpu: 'fake',
      cpuCount: 1,
      memoryBytes: 1,
      freeMemoryBytes: 1,
      os: 'fake',
      versions: {},
      shell: 'browser',
    }
  }
  async start({ config }: ParsedRequest<'start'>): Promise<{ runId: string }> {
    if (this.gate) await this.gate
    this.started.push(config)
    return { runId: 'run-1' }
  }
  async cancel(): Promise<{ cancelled: boolean }> {
    return { cancelled: false }
  }
  async listRuns(): Promise<RunListEntry[]> {
    return []
  }
  async getRun({ runId }: ParsedRequest<'getRun'>): Promise<RunResult> {
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }
  async currentRun(): Promise<{ runId: string; events: RunEvent[] } | null> {
    return null
  }
  async renameRun({ runId }: ParsedRequest<'renameRun'>): Promise<never> {
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }
  async tagRun({ runId }: ParsedRequest<'tagRun'>): Promise<never> {
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }
  async deleteRun({ runId }: ParsedRequest<'deleteRun'>): Promise<never> {
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }
  async exportRun({ runId }: ParsedRequest<'exportRun'>): Promise<never> {
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }
  async reportPdf({ runId }: ParsedRequest<'reportPdf'>): Promise<never> {
    throw new TrainpoolError('not-found', `no run ${runId}`)
  }
  onEvent(listener: (e: RunEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
  emit(e: RunEvent): void {
    for (const l of this.listeners) l(e)
  }
  async shutdown(): Promise<void> {
    this.shutdowns++
  }
}

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
  | { kind: 'open'; ws: WebSocket }
  | { kind: 'closed'; code: number; reason: string }
  | { kind: 'refused'; status: number }
  | { kind: 'error'; message: string }

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
