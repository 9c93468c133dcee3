// What a stranger at the worker socket can cost: a frame over PRE_AUTH_MAX_FRAME_BYTES before the
// hello is closed with 1009 and logged, without its bytes being kept — the gateway, in a process of
// its own, stays under 200 MB with 60 hellos of 15 MiB in flight; a welcomed worker's frames go up
// to the contract's limit again; at most PRE_AUTH_MAX_CONNECTIONS sockets wait for their hello; a
// refused one that never answers its close frame is dropped within seconds (ws alone waits 30 s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { WORKER_SOCKET } from '@shared/contract'
import { PRE_AUTH_MAX_CONNECTIONS, PRE_AUTH_MAX_FRAME_BYTES } from '../../net/pre-auth'
import { rawUpgrade, sendFrame, startSocketServerChild } from '../../testing/socket-flood'
import { WorkerGateway } from './gateway'
import { newRunSecret, workerToken } from './token'

const MiB = 2 ** 20
const log: string[] = []
let gateway: WorkerGateway
beforeAll(async () => {
  gateway = await WorkerGateway.listen({ host: '127.0.0.1', port: 0 }, newRunSecret(), (line) => log.push(line))
})
afterAll(() => gateway.close())

const hello = (worker: number, token: string) => JSON.stringify({ type: 'hello', worker, submission: 0, token, host: 'test-host', pid: 4242 })

/** A socket that says hello as worker `worker` and resolves once welcomed. */
async function welcomed(worker: number): Promise<WebSocket> {
  const socket = new WebSocket(gateway.url)
  const welcome = new Promise<unknown>((resolve) => socket.once('message', (d) => resolve(JSON.parse(d.toString()))))
  socket.on('open', () => socket.send(hello(worker, workerToken(gateway.secret, worker, 0))))
  expect(await welcome).toEqual({ type: 'welcome' })
  return socket
}

const closeOf = (socket: WebSocket) => new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))

describe('the worker socket before the hello', () => {
  it(`closes a first frame over ${PRE_AUTH_MAX_FRAME_BYTES} bytes with 1009 and logs it; once welcomed, frames up to the contract's limit are read`, async () => {
    const stranger = new WebSocket(gateway.url)
    stranger.on('error', () => {})
    stranger.on('open', () => stranger.send('x'.repeat(PRE_AUTH_MAX_FRAME_BYTES + 1)))
    expect(await closeOf(stranger)).toBe(1009)
    expect(log.at(-1)).toMatch(/refused a worker connection from .*: a frame over 4096 bytes before its hello/)

    const { connected } = gateway.expect(21, 0)
    const socket = await welcomed(21)
    const connection = await connected
    // 1 MiB: far over the pre-hello limit, within the contract's; judged by the contract, not by size
    const why = new Promise<string>((resolve) => connection.onClose(resolve))
    socket.send(JSON.stringify({ type: 'no-such-frame', padding: 'x'.repeat(MiB) }))
    expect(await why).toMatch(/outside the contract/)
  })

  it(`holds at most ${PRE_AUTH_MAX_CONNECTIONS} sockets waiting for their hello: the oldest is dropped to make room, and a worker still gets in`, async () => {
    const silent = []
    for (let i = 0; i < PRE_AUTH_MAX_CONNECTIONS + 1; i++) silent.push(await rawUpgrade(Number(new URL(gateway.url).port), WORKER_SOCKET.path))
    expect(silent.every((s) => s.status === 101)).toBe(true)
    await silent[0].ended
    expect(log.at(-1)).toMatch(/dropped a worker connection from .*: 32 others were waiting for their hello/)
    const { connected } = gateway.expect(22, 0)
    const socket = await welcomed(22)
    expect((await connected).hello.worker).toBe(22)
    socket.close()
    for (const s of silent) s.socket.destroy()
  })

  it("a refused hello whose peer never answers the close frame is dropped within 5 s, not ws's 30 s", async () => {
    const peer = await rawUpgrade(Number(new URL(gateway.url).port), WORKER_SOCKET.path)
    expect(peer.status).toBe(101)
    const sentAt = Date.now()
    // a raw socket: it reads the close frame and never answers it
    await sendFrame(peer.socket, Buffer.from('{"type":"hello"}'))
    expect(await peer.ended).toBe(WORKER_SOCKET.refusedCode)
    // the grace is 1 s; 5 s is room for a loaded machine
    expect(Date.now() - sentAt).toBeLessThan(5000)
    expect(log.at(-1)).toMatch(/refused a worker connection from .*: the first frame is not a valid hello/)
  })

  it('60 hellos of 15 MiB in flight: each refused at its header, the gateway stays under 200 MB', async () => {
    const child = await startSocketServerChild('worker-gateway')
    try {
      const before = await child.memory()
      const payload = Buffer.alloc(15 * MiB, 0x61)
      const codes = await Promise.all(
        Array.from({ length: 60 }, async () => {
          const upgrade = await rawUpgrade(child.port, WORKER_SOCKET.path)
          expect(upgrade.status).toBe(101)
          await sendFrame(upgrade.socket, payload)
          const code = await upgrade.ended
          upgrade.socket.destroy()
          return code
        }),
      )
      const after = await child.memory()
      console.log(
        `[gateway] 60 × 15 MiB hellos: RSS ${mb(before.rssBytes)} → peak ${mb(after.maxRssBytes)} MB; closed 1009: ${codes.filter((c) => c === 1009).length}, dropped to make room: ${codes.filter((c) => c === null).length}`,
      )
      // each was refused at its frame's header (1009), or dropped unread when newer strangers came
      expect(codes.every((c) => c === 1009 || c === null)).toBe(true)
      expect(codes.filter((c) => c === 1009).length).toBeGreaterThan(0)
      expect(after.maxRssBytes).toBeLessThan(200 * 1e6)
    } finally {
      await child.stop()
    }
  })
})

const mb = (bytes: number) => (bytes / 1e6).toFixed(0)
