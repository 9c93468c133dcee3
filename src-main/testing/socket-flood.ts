// Strangers at a socket, for the tests of what they may cost a server: the server in a process of
// its own (socket-server-child.ts, bundled for plain Node: its memory measured alone), raw WebSocket
// upgrades, and frames that announce and send N bytes out of one shared buffer (a client masks what
// it sends; a zero mask keeps the bytes as they are, so 60 frames of 15 MiB cost this process 15 MiB).
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface, type Interface } from 'node:readline'
import { buildSync } from 'esbuild'

export interface SocketServerChild {
  /** the child's process id (a test may lower its limits: prlimit --pid) */
  pid: number
  port: number
  token: string
  /** the child's resident memory now and at its peak, in bytes */
  memory(): Promise<{ rssBytes: number; maxRssBytes: number }>
  stop(): Promise<void>
}

let bundle: string | null = null

/** Starts browser mode's server or the worker gateway in a child process. */
export async function startSocketServerChild(kind: 'serve' | 'worker-gateway'): Promise<SocketServerChild> {
  if (!bundle) {
    bundle = join(mkdtempSync(join(tmpdir(), 'trainpool-socket-child-')), 'socket-server-child.cjs')
    buildSync({
      entryPoints: [resolve(__dirname, 'socket-server-child.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: bundle,
      alias: { '@shared': resolve(__dirname, '..', '..', 'src-shared') },
      logLevel: 'error',
    })
  }
  const child: ChildProcess = spawn(process.execPath, [bundle, kind], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
  const lines: Interface = createInterface({ input: child.stdout! })
  const nextLine = () =>
    new Promise<string>((resolveLine, reject) => {
      const onExit = () => reject(new Error(`socket-server-child exited: ${stderr}`))
      child.once('exit', onExit)
      lines.once('line', (line) => {
        child.off('exit', onExit)
        resolveLine(line)
      })
    })
  const { port, token } = JSON.parse(await nextLine()) as { port: number; token: string }
  return {
    pid: child.pid!,
    port,
    token,
    async memory() {
      const answer = nextLine()
      child.stdin!.write('memory\n')
      return JSON.parse(await answer) as { rssBytes: number; maxRssBytes: number }
    },
    async stop() {
      if (child.exitCode !== null) return
      const exited = new Promise((r) => child.once('exit', r))
      child.stdin!.end()
      await exited
    },
  }
}

export interface RawUpgrade {
  socket: Socket
  /** the HTTP status of the answer to the upgrade (101 when it became a WebSocket) */
  status: number
  /** resolves when the connection ends: the first close frame's code the server sent, or null (dropped without one) */
  ended: Promise<number | null>
}

/** A WebSocket upgrade by hand on `path`, with `headers`; resolves when the server's answer head has arrived. */
export function rawUpgrade(port: number, path: string, headers: Record<string, string> = {}): Promise<RawUpgrade> {
  return new Promise((resolveUpgrade, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = Buffer.alloc(0)
    let status = 0
    let closeCode: number | null = null
    socket.on('error', () => {}) // a refused or dropped socket is what the tests look at
    const ended = new Promise<number | null>((r) => socket.once('close', () => r(closeCode)))
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      if (status === 0) {
        const end = received.indexOf('\r\n\r\n')
        if (end < 0) return
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received.subarray(0, end).toString('latin1'))?.[1] ?? -1)
        received = received.subarray(end + 4)
        resolveUpgrade({ socket, status, ended })
      }
      closeCode ??= serverCloseCode(received)
    })
    socket.once('close', () => (status === 0 ? reject(new Error('the connection closed before the server answered the upgrade')) : undefined))
    socket.on('connect', () => {
      const lines = [
        `GET ${path} HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ]
      socket.write(`${lines.join('\r\n')}\r\n\r\n`)
    })
  })
}

/** The code of a close frame at the start of `bytes` (a server's frames are not masked), if one is there whole. */
function serverCloseCode(bytes: Buffer): number | null {
  let at = 0
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at] & 0x0f
    let length = bytes[at + 1] & 0x7f
    let header = 2
    if (length === 126) {
      if (at + 4 > bytes.length) return null
      length = bytes.readUInt16BE(at + 2)
      header = 4
    } else if (length === 127) {
      if (at + 10 > bytes.length) return null
      length = Number(bytes.readBigUInt64BE(at + 2))
      header = 10
    }
    if (opcode === 0x8) return at + header + 2 <= bytes.length ? bytes.readUInt16BE(at + header) : null
    at += header + length
  }
  return null
}

/** Sends one text frame holding `payload` (not copied: masked with a zero key); resolves when written or the socket is gone. */
export function sendFrame(socket: Socket, payload: Buffer): Promise<void> {
  const n = payload.length
  const lengthBytes =
    n < 126 ? Buffer.from([0x80 | n]) : n < 2 ** 16 ? Buffer.from([0x80 | 126, n >> 8, n & 0xff]) : Buffer.concat([Buffer.from([0x80 | 127]), u64(n)])
  // FIN + text, the mask bit with its length, then a mask key of zeros
  const header = Buffer.concat([Buffer.from([0x81]), lengthBytes, Buffer.alloc(4)])
  return new Promise((resolveSent) => {
    if (socket.destroyed) return resolveSent()
    socket.once('close', () => resolveSent())
    socket.write(header)
    socket.write(payload, () => resolveSent())
  })
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt(n))
  return b
}
