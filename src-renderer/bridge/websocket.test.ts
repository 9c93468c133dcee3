// Choosing the browser-mode bridge: ws URL and token from the page location, the preload wins when
// present, and requests queued before the socket opens go out once it does.
import { afterEach, describe, expect, it } from 'vitest'
import { chooseBridge, installBrowserBridge, setBridge } from './index'
import { bridgeForLocation } from './websocket'

class FakeSocket {
  static OPEN = 1
  static last: FakeSocket | null = null
  readyState = 0
  sent: string[] = []
  onopen: (() => void) | null = null
  onmessage: ((e: { data: unknown }) => void) | null = null
  onclose: ((e: { code: number; reason: string }) => void) | null = null
  onerror: (() => void) | null = null
  constructor(readonly url: string) {
    FakeSocket.last = this
  }
  send(s: string) {
    this.sent.push(s)
  }
  close() {}
  open() {
    this.readyState = 1
    this.onopen?.()
  }
}

afterEach(() => {
  setBridge(null)
  delete (globalThis as { trainpool?: unknown }).trainpool
})

describe('browser-mode bridge', () => {
  it('connects to /ws on the page host with the token from ?token=', async () => {
    const b = bridgeForLocation(
      { protocol: 'http:', host: '127.0.0.1:7878', search: '?token=abc123' },
      { WebSocketImpl: FakeSocket as unknown as typeof WebSocket },
    )
    const sock = FakeSocket.last!
    expect(sock.url).toBe('ws://127.0.0.1:7878/ws?token=abc123')
    const p = b.listRuns()
    expect(sock.sent).toEqual([])
    sock.open()
    expect(JSON.parse(sock.sent[0])).toEqual({ id: 1, method: 'listRuns' })
    sock.onmessage!({ data: JSON.stringify({ id: 1, ok: true, value: [] }) })
    expect(await p).toEqual([])
    const q = b.getRun({ runId: 'x' })
    expect(JSON.parse(sock.sent[1])).toEqual({ id: 2, method: 'getRun', payload: { runId: 'x' } })
    sock.onmessage!({ data: JSON.stringify({ id: 2, ok: false, error: { code: 'not-found', message: 'no run x' } }) })
    await expect(q).rejects.toMatchObject({ code: 'not-found', message: 'no run x' })
    const r = b.currentRun()
    sock.onclose!({ code: 1006, reason: '' })
    await expect(r).rejects.toMatchObject({ message: expect.stringMatching(/^currentRun: connection to the Trainpool server closed \(code 1006\)/) })
    b.close()
  })

  it('is not installed when the preload exists, or for file: pages', () => {
    const preload = { fake: true }
    ;(globalThis as { trainpool?: unknown }).trainpool = preload
    installBrowserBridge({ protocol: 'http:', host: 'x', search: '' })
    expect(chooseBridge()).toBe(preload)
    delete (globalThis as { trainpool?: unknown }).trainpool
    installBrowserBridge({ protocol: 'file:', host: '', search: '' })
    expect(() => chooseBridge()).toThrow(/not connected/)
  })
})
