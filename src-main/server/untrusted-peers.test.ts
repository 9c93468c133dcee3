// What a stranger at `serve` can cost: headers that never finish time out (a slow upload that keeps
// moving still completes); /ws sockets with a wrong token sending 15 MiB frames are closed (4401)
// without their bytes being kept — the server, in a process of its own, stays under 200 MB with 60
// in flight; and at most PRE_AUTH_MAX_CONNECTIONS such sockets are held, the oldest dropped first.
import { mkdtempSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { WS_CLOSE, WS_PATH } from '@shared/contract/websocket'
import { FakeService } from '@shared/testing/fake-service'
import { loadDataFile } from '../data'
import { PRE_AUTH_MAX_CONNECTIONS } from '../net/pre-auth'
import { fakeRendererDir } from '../testing/http'
import { rawUpgrade, sendFrame, startSocketServerChild } from '../testing/socket-flood'
import { startServer } from './server'

const MiB = 2 ** 20
const store = mkdtempSync(join(tmpdir(), 'trainpool-untrusted-'))
const stops: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop()
})

describe('headers time out', () => {
  it('20 connections whose headers never finish are closed within the header timeout (1 s here); a slow upload that keeps moving completes', async () => {
    const server = await startServer({
      service: new FakeService({ capabilities: { shell: 'browser' } }),
      port: 0,
      rendererDir: fakeRendererDir().dir,
      headersTimeoutMs: 1000,
      uploads: { dir: join(store, '.uploads'), idleTimeoutMs: 500, load: (path) => loadDataFile(path, store) },
    })
    stops.push(() => server.close())
    const started = Date.now()
    // one header line every 200 ms: never silent, never finished
    const slow = Array.from({ length: 20 }, () => slowHeaders(server.port))
    const upload = slowUpload(server.port, server.token, 12, 200)
    const closedAfter = await Promise.all(slow.map((s) => s.closed))
    for (const ms of closedAfter) expect(ms).toBeLessThan(3000)
    console.log(`[server] slow headers closed after ${Math.min(...closedAfter)}–${Math.max(...closedAfter)} ms (header timeout 1000 ms)`)
    // 12 parts 200 ms apart: 2.4 s, past the header timeout, never 500 ms silent
    const answer = await upload
    expect(answer.status, answer.body).toBe(200)
    expect(Date.now() - started).toBeGreaterThan(2000)
    expect(JSON.parse(answer.body)).toMatchObject({ name: 'slow.csv' })
  })
})

describe('/ws before the token', () => {
  it('60 wrong-token sockets each sending a 15 MiB frame: each closed 4401 (or dropped to make room), the server stays under 200 MB', async () => {
    const child = await startSocketServerChild('serve')
    stops.push(() => child.stop())
    const before = await child.memory()
    const payload = Buffer.alloc(15 * MiB, 0x61)
    const codes = await Promise.all(
      Array.from({ length: 60 }, async () => {
        const upgrade = await rawUpgrade(child.port, `${WS_PATH}?token=${'0'.repeat(48)}`)
        expect(upgrade.status).toBe(101)
        await sendFrame(upgrade.socket, payload)
        const code = await upgrade.ended
        upgrade.socket.destroy()
        return code
      }),
    )
    const after = await child.memory()
    console.log(
      `[server] 60 × 15 MiB frames with a wrong token: RSS ${mb(before.rssBytes)} → peak ${mb(after.maxRssBytes)} MB; closed 4401: ${codes.filter((c) => c === WS_CLOSE.unauthorized).length}, dropped to make room: ${codes.filter((c) => c === null).length}`,
    )
    // each was told 4401, or dropped (its close frame maybe lost to the reset) when newer strangers came
    expect(codes.every((c) => c === WS_CLOSE.unauthorized || c === null)).toBe(true)
    expect(codes.filter((c) => c === WS_CLOSE.unauthorized).length).toBeGreaterThanOrEqual(PRE_AUTH_MAX_CONNECTIONS)
    expect(after.maxRssBytes).toBeLessThan(200 * 1e6)
  })

  it(`holds at most ${PRE_AUTH_MAX_CONNECTIONS} refused sockets that do not answer their close: the oldest is dropped first, the rest soon after`, async () => {
    const server = await startServer({ service: new FakeService({ capabilities: { shell: 'browser' } }), port: 0, rendererDir: fakeRendererDir().dir })
    stops.push(() => server.close())
    const extra = 5
    const sockets = []
    for (let i = 0; i < PRE_AUTH_MAX_CONNECTIONS + extra; i++) sockets.push(await rawUpgrade(server.port, `${WS_PATH}?token=wrong`))
    const ended = sockets.map(() => false)
    sockets.forEach((s, i) => void s.ended.then(() => (ended[i] = true)))
    await new Promise((r) => setTimeout(r, 100))
    expect(ended.slice(0, extra)).toEqual(Array(extra).fill(true))
    expect(ended.slice(extra)).toEqual(Array(PRE_AUTH_MAX_CONNECTIONS).fill(false))
    // none answers its close frame: each goes within the grace, not ws's 30 s
    await Promise.all(sockets.map((s) => s.ended))
  })
})

/** A request whose headers arrive one line every 200 ms and never end; `closed` resolves with the ms until the server closed it. */
function slowHeaders(port: number): { closed: Promise<number> } {
  const started = Date.now()
  const socket: Socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  let n = 0
  socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`)
  const timer = setInterval(() => socket.write(`X-Slow-${n++}: 1\r\n`), 200)
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer)
      resolve(Date.now() - started)
    }),
  )
  // a server that never closes it: the test fails on the time, not on a hang
  setTimeout(() => socket.destroy(), 6000).unref()
  return { closed }
}

function slowUpload(port: number, token: string, parts: number, pauseMs: number): Promise<{ status: number; body: string }> {
  const csv = Buffer.from(`a,y\n${Array.from({ length: 200 }, (_, i) => `${i},${i * 2}`).join('\n')}\n`)
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: `/api/upload?name=slow.csv&token=${token}`, method: 'POST', headers: { 'Content-Length': String(csv.length) } },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c) => (body += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on('error', reject)
    const step = Math.ceil(csv.length / parts)
    void (async () => {
      for (let k = 0; k < parts; k++) {
        req.write(csv.subarray(k * step, (k + 1) * step))
        await new Promise((r) => setTimeout(r, pauseMs))
      }
      req.end()
    })()
  })
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(0)
