// Browser mode's server with a scripted service: the token (HTTP 401, WebSocket 4401), Host/Origin
// checks, loopback binding, static files (types, traversal), and the WebSocket contract (replies,
// error replies for bad frames, events to every tab, clean close).
import { symlinkSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type WebSocket from 'ws'
import type { RunEvent } from '@shared/contract'
import { WS_CLOSE, WS_MAX_MESSAGE_BYTES } from '@shared/contract/websocket'
import { METHODS } from '../service/dispatch'
import { canonicalHost, hostAllowed, isLoopbackHost, isWildcardHost, originAllowed, tokenMatches } from './security'
import { type TrainpoolServer, startServer } from './server'
import { lookupStatic } from './static'
import { FakeService } from '@shared/testing/fake-service'
import { fakeRendererDir, openWs, rawGet, roundTrip } from '../testing/http'
import { presetConfig } from '@shared/contract'

/** a whole config: the service (and so the fake) checks it */
const SMOKE = presetConfig('smoke')

let service: FakeService
let server: TrainpoolServer
let renderer: { root: string; dir: string }
const open: WebSocket[] = []

beforeEach(async () => {
  service = new FakeService({ capabilities: { shell: 'browser' } })
  renderer = fakeRendererDir()
  server = await startServer({ service, port: 0, rendererDir: renderer.dir })
})

afterEach(async () => {
  for (const ws of open.splice(0)) ws.terminate()
  await server.close()
})

async function authorizedWs(): Promise<WebSocket> {
  const o = await openWs(`${server.wsUrl}?token=${server.token}`)
  if (o.kind !== 'open') throw new Error(`expected an open socket, got ${JSON.stringify(o)}`)
  open.push(o.ws)
  return o.ws
}

describe('binding', () => {
  it('binds 127.0.0.1 by default and prints a URL with a long random token', async () => {
    expect(server.host).toBe('127.0.0.1')
    expect(server.exposed).toBe(false)
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`)
    expect(server.token).toMatch(/^[0-9a-f]{48}$/)
    const other = await startServer({ service: new FakeService(), port: 0, rendererDir: renderer.dir })
    try {
      expect(other.token).not.toBe(server.token)
    } finally {
      await other.close()
    }
  })

  it('is not reachable on a non-loopback address', async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)
    if (!external) return // no external interface on this machine: nothing to probe
    const reached = await fetch(`http://${external.address}:${server.port}/?token=${server.token}`)
      .then(() => true)
      .catch(() => false)
    expect(reached).toBe(false)
  })

  it('knows loopback by address, not text: 127.1 and 2130706433 are loopback (Host check on), 0 is every interface (a URL that works)', async () => {
    for (const host of ['127.1', '2130706433']) {
      const s = await startServer({ service: new FakeService(), port: 0, host, rendererDir: renderer.dir })
      try {
        expect(s.exposed, host).toBe(false)
        expect(s.url, host).toBe(`http://127.0.0.1:${s.port}/?token=${s.token}`)
        // the DNS-rebinding check stays on: a foreign Host is refused even with the token
        expect((await rawGet(s.port, `/?token=${s.token}`, { Host: `evil.example:${s.port}` })).status, host).toBe(403)
        expect((await rawGet(s.port, `/?token=${s.token}`)).status, host).toBe(200)
      } finally {
        await s.close()
      }
    }
    const wildcard = await startServer({ service: new FakeService(), port: 0, host: '0', rendererDir: renderer.dir })
    try {
      expect(wildcard.exposed).toBe(true)
      expect(wildcard.url).toBe(`http://127.0.0.1:${wildcard.port}/?token=${wildcard.token}`)
      expect((await rawGet(wildcard.port, `/?token=${wildcard.token}`)).status).toBe(200)
    } finally {
      await wildcard.close()
    }
  })

  it('reports itself exposed on 0.0.0.0', async () => {
    const s = await startServer({ service: new FakeService(), port: 0, host: '0.0.0.0', rendererDir: renderer.dir })
    try {
      expect(s.exposed).toBe(true)
      expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/)
    } finally {
      await s.close()
    }
  })
})

describe('HTTP token', () => {
  it('refuses the page and its assets without the token (401), and with a wrong one', async () => {
    for (const path of ['/', '/index.html', '/assets/app.js', '/?token=', `/?token=${'0'.repeat(48)}`, `/?token=${server.token}x`]) {
      const r = await rawGet(server.port, path)
      expect(r.status, path).toBe(401)
      expect(r.body).not.toContain('Trainpool</title>')
    }
  })

  it('serves the page with the token, sets an HttpOnly cookie that then unlocks the assets', async () => {
    const r = await rawGet(server.port, `/?token=${server.token}`)
    expect(r.status).toBe(200)
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8')
    const cookie = String(r.headers['set-cookie'])
    expect(cookie).toContain(`trainpool-token-${server.port}=${server.token}`)
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Strict/)
    const asset = await rawGet(server.port, '/assets/app.js', { Cookie: `trainpool-token-${server.port}=${server.token}` })
    expect(asset.status).toBe(200)
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8')
    // a cookie for another port does not count
    const other = await rawGet(server.port, '/assets/app.js', { Cookie: `trainpool-token-1=${server.token}` })
    expect(other.status).toBe(401)
  })

  it('accepts the token as Authorization: Bearer (what its 401 advertises), and refuses a wrong or malformed one', async () => {
    const refused = await rawGet(server.port, '/assets/app.js')
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer /)
    expect((await rawGet(server.port, '/assets/app.js', { Authorization: `Bearer ${server.token}` })).status).toBe(200)
    expect((await rawGet(server.port, '/assets/app.js', { Authorization: `bearer ${server.token}` })).status).toBe(200)
    for (const value of [`Bearer ${server.token}x`, `Basic ${server.token}`, `Bearer`, `${server.token}`, `Bearer ${server.token} extra`]) {
      expect((await rawGet(server.port, '/assets/app.js', { Authorization: value })).status, value).toBe(401)
    }
  })

  it('sends CSP (connect-src to this server only), nosniff and no-referrer', async () => {
    const r = await rawGet(server.port, `/?token=${server.token}`)
    const csp = String(r.headers['content-security-policy'])
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${server.port}`)
    expect(csp).toContain("object-src 'none'")
    expect(csp).not.toMatch(/https?:\/\//)
    expect(r.headers['x-content-type-options']).toBe('nosniff')
    expect(r.headers['referrer-policy']).toBe('no-referrer')
    const denied = await rawGet(server.port, '/')
    expect(denied.headers['x-content-type-options']).toBe('nosniff')
  })

  it('uses the right content types', async () => {
    const t = `?token=${server.token}`
    expect((await rawGet(server.port, `/assets/app.css${t}`)).headers['content-type']).toBe('text/css; charset=utf-8')
    expect((await rawGet(server.port, `/assets/mod.wasm${t}`)).headers['content-type']).toBe('application/wasm')
    expect((await rawGet(server.port, `/assets/missing.js${t}`)).status).toBe(404)
    expect((await rawGet(server.port, `/assets${t}`)).status).toBe(404)
    expect((await rawGet(server.port, `/${t}`, {}, 'POST')).status).toBe(405)
    const head = await rawGet(server.port, `/assets/app.js${t}`, {}, 'HEAD')
    expect(head.status).toBe(200)
    expect(head.body).toBe('')
  })
})

describe('static traversal', () => {
  it('never serves a file outside the renderer folder', async () => {
    symlinkSync(join(renderer.root, 'secret.txt'), join(renderer.dir, 'assets', 'link.txt'))
    const t = `token=${server.token}`
    for (const path of [
      `/../secret.txt?${t}`,
      `/assets/../../secret.txt?${t}`,
      `/%2e%2e/secret.txt?${t}`,
      `/..%2fsecret.txt?${t}`,
      `/assets/..%2f..%2fsecret.txt?${t}`,
      `/..%5csecret.txt?${t}`,
      `/%00?${t}`,
      `/%E0%A4%A?${t}`,
      `/assets/link.txt?${t}`,
      `//etc/passwd?${t}`,
    ]) {
      const r = await rawGet(server.port, path)
      expect([400, 404], path).toContain(r.status)
      expect(r.body, path).not.toContain('SECRET')
      expect(r.body, path).not.toContain('root:')
    }
  })

  it('lookupStatic maps / to index.html and refuses escapes', async () => {
    expect(await lookupStatic(renderer.dir, '/')).toMatchObject({ ok: true, contentType: 'text/html; charset=utf-8' })
    expect(await lookupStatic(renderer.dir, '/../secret.txt')).toEqual({ ok: false, status: 400 })
    expect(await lookupStatic(renderer.dir, '/a/%2e%2e/%2e%2e/secret.txt')).toEqual({ ok: false, status: 400 })
  })
})

describe('Host and Origin', () => {
  it('refuses foreign Origins (403) on the page', async () => {
    const r = await rawGet(server.port, `/?token=${server.token}`, { Origin: 'http://evil.example' })
    expect(r.status).toBe(403)
    const same = await rawGet(server.port, `/?token=${server.token}`, { Origin: `http://127.0.0.1:${server.port}` })
    expect(same.status).toBe(200)
  })

  it('refuses a foreign Host (DNS rebinding) even with the token', async () => {
    const r = await rawGet(server.port, `/?token=${server.token}`, { Host: `evil.example:${server.port}` })
    expect(r.status).toBe(403)
    expect((await rawGet(server.port, `/?token=${server.token}`, { Host: `localhost:${server.port}` })).status).toBe(200)
  })

  it('refuses WebSocket upgrades from a foreign Origin, even with the token', async () => {
    const o = await openWs(`${server.wsUrl}?token=${server.token}`, { origin: 'http://evil.example' })
    expect(o).toEqual({ kind: 'refused', status: 403 })
    const rebound = await openWs(`${server.wsUrl}?token=${server.token}`, {
      origin: `http://evil.example:${server.port}`,
      headers: { Host: `evil.example:${server.port}` },
    })
    expect(rebound).toEqual({ kind: 'refused', status: 403 })
  })

  it('security helpers', () => {
    for (const h of [
      '127.0.0.1',
      '127.1',
      '2130706433',
      '0x7f.1',
      '127.8.9.10',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      'localhost',
      'LOCALHOST',
      'app.localhost',
    ]) {
      expect(isLoopbackHost(h), h).toBe(true)
    }
    for (const h of ['0.0.0.0', '0', '::', '10.0.0.1', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h), h).toBe(false)
    for (const h of ['0', '0.0.0.0', '::', '[::]', '0:0::0']) expect(isWildcardHost(h), h).toBe(true)
    expect(isWildcardHost('127.0.0.1')).toBe(false)
    expect(canonicalHost('2130706433')).toBe('127.0.0.1')
    expect(tokenMatches('abc', 'abc')).toBe(true)
    expect(tokenMatches('abd', 'abc')).toBe(false)
    expect(tokenMatches('', 'abc')).toBe(false)
    expect(tokenMatches(null, 'abc')).toBe(false)
    expect(originAllowed(undefined, '127.0.0.1:1')).toBe(true)
    expect(originAllowed('http://127.0.0.1:1', '127.0.0.1:1')).toBe(true)
    expect(originAllowed('http://127.0.0.1:2', '127.0.0.1:1')).toBe(false)
    expect(originAllowed('null', '127.0.0.1:1')).toBe(false)
    expect(hostAllowed('127.0.0.1:7878', '127.0.0.1', 7878)).toBe(true)
    expect(hostAllowed('[::1]:7878', '127.0.0.1', 7878)).toBe(true)
    expect(hostAllowed('127.0.0.1:7879', '127.0.0.1', 7878)).toBe(false)
    expect(hostAllowed('gpu-box:7878', '127.0.0.1', 7878)).toBe(false)
    expect(hostAllowed('gpu-box:7878', '0.0.0.0', 7878)).toBe(true)
    expect(hostAllowed(undefined, '0.0.0.0', 7878)).toBe(false)
  })
})

describe('WebSocket token', () => {
  it('closes sockets without the token or with a wrong one with 4401', async () => {
    for (const url of [server.wsUrl, `${server.wsUrl}?token=nope`, `${server.wsUrl}?token=`]) {
      const o = await openWs(url)
      expect(o, url).toMatchObject({ kind: 'closed', code: WS_CLOSE.unauthorized })
    }
    expect(server.connections()).toBe(0)
  })

  it('accepts the token from the cookie too', async () => {
    const o = await openWs(server.wsUrl, { headers: { Cookie: `trainpool-token-${server.port}=${server.token}` } })
    expect(o.kind).toBe('open')
    if (o.kind === 'open') open.push(o.ws)
  })

  it('refuses upgrades on other paths', async () => {
    const o = await openWs(`ws://127.0.0.1:${server.port}/other?token=${server.token}`)
    expect(o).toEqual({ kind: 'refused', status: 404 })
  })
})

describe('WebSocket contract', () => {
  it('answers every contract method with {id, ...Envelope}', async () => {
    const ws = await authorizedWs()
    const caps = await roundTrip(ws, JSON.stringify({ id: 1, method: 'capabilities' }))
    expect(caps).toMatchObject({ id: 1, ok: true, value: { shell: 'browser' } })
    const started = await roundTrip(ws, JSON.stringify({ id: 'a', method: 'start', payload: { config: SMOKE } }))
    expect(started).toEqual({ id: 'a', ok: true, value: { runId: 'run-1' } })
    expect(service.callsTo('start')).toEqual([{ config: SMOKE }])
    const missing = await roundTrip(ws, JSON.stringify({ id: 3, method: 'getRun', payload: { runId: 'nope' } }))
    expect(missing).toMatchObject({ id: 3, ok: false, error: { code: 'not-found' } })
    expect(METHODS).toContain('currentRun')
  })

  it('a schema-violating request gets an invalid-input reply and the server keeps serving', async () => {
    const ws = await authorizedWs()
    const bad = await roundTrip(ws, JSON.stringify({ id: 7, method: 'getRun', payload: { runId: '../../etc/passwd' } }))
    expect(bad).toMatchObject({ id: 7, ok: false, error: { code: 'invalid-input' } })
    expect((bad.error as { message: string }).message).toMatch(/runId/)
    const extraField = await roundTrip(ws, JSON.stringify({ id: 8, method: 'start', payload: { config: {}, evil: true } }))
    expect(extraField).toMatchObject({ id: 8, ok: false, error: { code: 'invalid-input' } })
    const unknown = await roundTrip(ws, JSON.stringify({ id: 9, method: 'rm -rf', payload: null }))
    expect(unknown).toMatchObject({ id: 9, ok: false, error: { code: 'invalid-input' } })
    expect((unknown.error as { message: string }).message).toMatch(/unknown method/)
    const noId = await roundTrip(ws, JSON.stringify({ method: 'listRuns' }))
    expect(noId).toMatchObject({ id: null, ok: false, error: { code: 'invalid-input' } })
    const extraKey = await roundTrip(ws, JSON.stringify({ id: 10, method: 'listRuns', __proto__x: 1 }))
    expect(extraKey).toMatchObject({ id: 10, ok: false, error: { code: 'invalid-input' } })
    expect(service.callsTo('start')).toEqual([])
    const still = await roundTrip(ws, JSON.stringify({ id: 11, method: 'listRuns' }))
    expect(still).toEqual({ id: 11, ok: true, value: [] })
  })

  it('malformed JSON, arrays, binary frames and oversized messages get {id:null, ok:false} replies', async () => {
    const ws = await authorizedWs()
    for (const frame of ['{not json', '[1,2]', 'null', '42']) {
      const r = await roundTrip(ws, frame)
      expect(r, frame).toMatchObject({ id: null, ok: false, error: { code: 'invalid-input' } })
    }
    expect(await roundTrip(ws, Buffer.from('{"id":1,"method":"listRuns"}'), true)).toMatchObject({ id: null, ok: false })
    const big = JSON.stringify({ id: 1, method: 'start', payload: { config: { pad: 'x'.repeat(WS_MAX_MESSAGE_BYTES) } } })
    const r = await roundTrip(ws, big)
    expect(r).toMatchObject({ id: null, ok: false, error: { code: 'invalid-input' } })
    expect((r.error as { message: string }).message).toMatch(/limit/)
    expect(service.callsTo('start')).toEqual([])
    expect(await roundTrip(ws, JSON.stringify({ id: 2, method: 'listRuns' }))).toEqual({ id: 2, ok: true, value: [] })
    // and a fresh socket works too
    const ws2 = await authorizedWs()
    expect(await roundTrip(ws2, JSON.stringify({ id: 3, method: 'currentRun' }))).toEqual({ id: 3, ok: true, value: null })
  })

  it('pushes run events to every connected tab', async () => {
    const tabs = [await authorizedWs(), await authorizedWs(), await authorizedWs()]
    const got = tabs.map(
      (ws) =>
        new Promise<unknown>((resolve) =>
          ws.on('message', (d) => {
            const m = JSON.parse(d.toString())
            if (m.event) resolve(m.event)
          }),
        ),
    )
    const event: RunEvent = { type: 'phase', runId: 'r', phase: 'starting', index: 0, key: null, message: 'hello' }
    service.emit(event)
    expect(await Promise.all(got)).toEqual([event, event, event])
  })

  it('close() shuts the service down and closes sockets with 1001', async () => {
    const ws = await authorizedWs()
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)))
    await server.close()
    expect(service.callsTo('shutdown')).toHaveLength(1)
    expect(await closed).toBe(WS_CLOSE.goingAway)
    await server.close() // idempotent
    expect(service.callsTo('shutdown')).toHaveLength(1)
    await expect(rawGet(server.port, `/?token=${server.token}`)).rejects.toThrow()
  })
})
