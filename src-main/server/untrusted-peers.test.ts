// What a stranger at `serve` can cost: /ws sockets with a wrong token sending 15 MiB frames are
// closed (4401) without their bytes being kept — the server, in a process of its own, stays under
// 200 MB with 60 in flight; and at most PRE_AUTH_MAX_CONNECTIONS such sockets are held, the oldest first dropped.
import { afterAll, describe, expect, it } from 'vitest'
import { WS_CLOSE, WS_PATH } from '@shared/contract/websocket'
import { FakeService } from '@shared/testing/fake-service'
import { PRE_AUTH_MAX_CONNECTIONS } from '../net/pre-auth'
import { fakeRendererDir } from '../testing/http'
import { rawUpgrade, sendFrame, startSocketServerChild } from '../testing/socket-flood'
import { startServer } from './server'

const MiB = 2 ** 20
const stops: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop()
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
    console.log(`[server] 60 × 15 MiB frames with a wrong token: RSS ${mb(before.rssBytes)} → peak ${mb(after.maxRssBytes)} MB; closed 4401: ${codes.filter((c) => c === WS_CLOSE.unauthorized).length}, dropped to make room: ${codes.filter((c) => c === null).length}`)
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

const mb = (bytes: number) => (bytes / 1e6).toFixed(0)
