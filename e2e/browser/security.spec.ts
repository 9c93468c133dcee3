// Browser mode's locks, seen from a real browser and a raw WebSocket client: no token → 401 page,
// a page from another origin cannot open the socket, a schema-violating message gets an error reply
// and the server (and the open tab) keep working.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type WebSocket from 'ws'
import { WS_CLOSE } from '@shared/contract/websocket'
import { openWs, roundTrip } from '../../src-main/testing/http'
import { type E2eServer, launchChromium, openApp, shot, skipBrowserSpecs, startE2eServer, waitForCapabilities } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

describe.skipIf(skip)('browser mode: token, origin and bad messages', () => {
  let env: E2eServer
  let browser: Browser
  let foreign: Server

  beforeAll(async () => {
    env = await startE2eServer()
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
    await env?.close()
    await new Promise((r) => (foreign ? foreign.close(r) : r(undefined)))
  })

  it('without the token the page gets 401 (and with a wrong one)', async () => {
    const page = await browser.newPage()
    const res = await page.goto(env.server.baseUrl)
    expect(res?.status()).toBe(401)
    expect(await page.textContent('body')).toMatch(/unauthorized/)
    expect(await page.locator('#app').count()).toBe(0)
    await shot(page, '30-no-token-401')
    const wrong = await page.goto(`${env.server.baseUrl}?token=${'f'.repeat(48)}`)
    expect(wrong?.status()).toBe(401)
    const asset = await page.goto(`${env.server.baseUrl}assets/`)
    expect(asset?.status()).toBe(401)
    await page.close()
  })

  it('with the token the app loads, and later requests ride on the cookie', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await openApp(page, env.server)
    const cookies = await context.cookies()
    expect(cookies.find((c) => c.name === `trainpool-token-${env.server.port}`)).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
    const plain = await page.goto(env.server.baseUrl) // no ?token=: the cookie unlocks it
    expect(plain?.status()).toBe(200)
    await waitForCapabilities(page)
    await context.close()
  })

  it('a page from another origin cannot open the WebSocket, even knowing the token', async () => {
    foreign = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' })
      res.end('<!doctype html><title>elsewhere</title><p>another site</p>')
    })
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', () => r()))
    const page = await browser.newPage()
    await page.goto(`http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`)
    const outcome = await page.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const WS = (globalThis as unknown as { WebSocket: new (u: string) => { onopen: () => void; onclose: (e: { code: number }) => void } }).WebSocket
          const ws = new WS(url)
          ws.onopen = () => resolve('open')
          ws.onclose = (e) => resolve(`closed ${e.code}`)
        }),
      `${env.server.wsUrl}?token=${env.server.token}`,
    )
    expect(outcome).toBe('closed 1006') // the upgrade was refused (403)
    expect(env.server.connections()).toBe(0)
    await page.close()
  })

  it('a WebSocket without the token is closed with 4401', async () => {
    expect(await openWs(env.server.wsUrl)).toMatchObject({ kind: 'closed', code: WS_CLOSE.unauthorized })
  })

  it('a schema-violating message gets an error reply and the server keeps serving', async () => {
    const page: Page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
    await openApp(page, env.server)
    const o = await openWs(`${env.server.wsUrl}?token=${env.server.token}`)
    expect(o.kind).toBe('open')
    const ws = (o as { ws: WebSocket }).ws
    try {
      const bad = await roundTrip(ws, JSON.stringify({ id: 1, method: 'start', payload: { config: 'not an object' } }))
      expect(bad).toMatchObject({ id: 1, ok: false, error: { code: 'invalid-input' } })
      const badRun = await roundTrip(ws, JSON.stringify({ id: 2, method: 'getRun', payload: { runId: '../../etc/passwd' } }))
      expect(badRun).toMatchObject({ id: 2, ok: false, error: { code: 'invalid-input' } })
      const garbage = await roundTrip(ws, '{"id": 3, "method": ')
      expect(garbage).toMatchObject({ id: null, ok: false, error: { code: 'invalid-input' } })
      const badConfig = await roundTrip(ws, JSON.stringify({ id: 4, method: 'start', payload: { config: { sizes: [-1], models: [0] } } }))
      expect(badConfig).toMatchObject({ id: 4, ok: false, error: { code: 'invalid-input' } })
      expect((badConfig.error as { issues: { field: string }[] }).issues.map((i) => i.field)).toEqual(expect.arrayContaining(['sizes.0']))
      // still serving: this socket, and the open tab
      const list = await roundTrip(ws, JSON.stringify({ id: 5, method: 'listRuns' }))
      expect(list).toEqual({ id: 5, ok: true, value: [] })
      expect(await env.service.currentRun()).toBeNull()
      await page.locator('[data-test="nav-history"]').click()
      await page.getByText('No runs yet.').waitFor({ timeout: 10_000 })
      await shot(page, '31-still-serving')
    } finally {
      ws.close()
      await page.close()
    }
  })
})
