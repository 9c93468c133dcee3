// The renderer's WebSocket bridge against the real server (ws's client stands in for the
// browser's WebSocket): calls and typed errors, pushed events, requests pending when the socket
// drops are rejected with a clear error, reconnect with backoff (and re-attach to the live run),
// and a refused token stops reconnecting.
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import type { RunEvent, RunResult } from '@shared/contract'
import { waitUntil } from '../testing/capability'
import { createWebSocketBridge, type WebSocketBridge } from '../../src-renderer/bridge/websocket'
import { type TrainpoolServer, startServer } from './server'
import { FakeService } from '@shared/testing/fake-service'
import { fakeRendererDir } from '../testing/http'
import { presetConfig } from '@shared/contract'

/** a whole config: the service (and so the fake) checks it */
const SMOKE = presetConfig('smoke')

const WS = WebSocket as unknown as typeof globalThis.WebSocket
const cleanup: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c()
})

async function setup(port = 0, service = new FakeService({ capabilities: { shell: 'browser' } })) {
  const server = await startServer({ service, port, rendererDir: fakeRendererDir().dir, token: 'secret-token' })
  cleanup.push(() => server.close())
  return { server, service }
}

function bridgeFor(server: TrainpoolServer, token: string | null = server.token): WebSocketBridge {
  const b = createWebSocketBridge({ url: server.wsUrl, token, WebSocketImpl: WS, initialDelayMs: 50, maxDelayMs: 200 })
  cleanup.push(() => b.close())
  return b
}

describe('WebSocket bridge', () => {
  it('implements TrainpoolApi: values, typed errors, events', async () => {
    const { server, service } = await setup()
    const bridge = bridgeFor(server)
    expect((await bridge.capabilities()).shell).toBe('browser') // queued until open, then sent
    expect(bridge.state).toBe('open')
    expect(await bridge.currentRun()).toBeNull()
    expect(await bridge.start({ config: SMOKE })).toEqual({ runId: 'run-1' })
    expect(service.callsTo('start')).toEqual([{ config: SMOKE }])
    expect(await bridge.currentRun()).toEqual({ runId: 'run-1', events: [] })
    expect(await bridge.cancel({})).toEqual({ cancelled: true })
    await expect(bridge.getRun({ runId: '../x' })).rejects.toMatchObject({ name: 'TrainpoolError', code: 'invalid-input' })
    await expect(bridge.getRun({ runId: 'nope' })).rejects.toMatchObject({ code: 'not-found', message: 'no run nope' })
    const seen: RunEvent[] = []
    const off = bridge.onEvent((e) => seen.push(e))
    const e: RunEvent = { type: 'phase', runId: 'run-1', phase: 'warming', index: 0, key: null, message: 'm' }
    service.emit(e)
    await waitUntil(() => seen.length === 1, 2000)
    expect(seen).toEqual([e])
    off()
    service.emit(e)
    await new Promise((r) => setTimeout(r, 100))
    expect(seen).toHaveLength(1)
  })

  it('rejects requests in flight when the connection drops, with a clear error, then reconnects', async () => {
    const { server, service } = await setup()
    const port = server.port
    const bridge = bridgeFor(server)
    await bridge.listRuns()
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    service.respond('start', async () => {
      await gate
      return { runId: 'run-1' }
    })
    const inFlight = bridge.start({ config: SMOKE })
    const outcome = inFlight.then(
      () => null,
      (err: unknown) => err,
    )
    await new Promise((r) => setTimeout(r, 50))
    await server.close()
    release()
    expect(await outcome).toMatchObject({
      code: 'internal',
      message: expect.stringMatching(/^start: connection to the Trainpool server closed \(code 1001: server stopping\)/),
    })
    expect(bridge.state).toBe('connecting')
    // the server comes back on the same port: the bridge reconnects by itself
    const again = await setup(port)
    await waitUntil(() => bridge.state === 'open', 5000)
    expect(bridge.state).toBe('open')
    expect(await bridge.listRuns()).toEqual([])
    expect(again.server.connections()).toBe(1)
  })

  it('after a reconnect, replays the live run, or delivers the run-finished it missed', async () => {
    const { server, service } = await setup()
    const port = server.port
    const bridge = bridgeFor(server)
    const seen: RunEvent[] = []
    bridge.onEvent((e) => seen.push(e))
    await bridge.listRuns()
    const started = { type: 'run-started', runId: 'run-9', config: {}, plan: [], startedAt: new Date().toISOString() } as unknown as RunEvent
    service.emit(started)
    await waitUntil(() => seen.length === 1, 2000)
    await server.close()
    // the run finished while the tab was disconnected
    const finished = { runId: 'run-9', status: 'ok' } as unknown as RunResult
    const restarted = new FakeService()
    restarted.results.set('run-9', finished)
    await setup(port, restarted)
    await waitUntil(() => seen.length === 2, 5000)
    expect(seen[1]).toEqual({ type: 'run-finished', runId: 'run-9', result: finished })
  })

  it('a refused token rejects calls as unauthorized and stops reconnecting', async () => {
    const { server } = await setup()
    const bridge = bridgeFor(server, 'wrong')
    await expect(bridge.listRuns()).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/4401/) })
    expect(bridge.state).toBe('unauthorized')
    await new Promise((r) => setTimeout(r, 300))
    expect(server.connections()).toBe(0)
    await expect(bridge.listRuns()).rejects.toMatchObject({ code: 'unauthorized' })
  })
})
