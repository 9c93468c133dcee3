// `trainpool serve`: browser mode. Validates the flags (exit 2, nothing started), starts the server
// on the shared BenchService + Node launcher, prints the URL with its token, and on Ctrl+C
// (SIGINT/SIGTERM) cancels any run, stops the workers and closes the server.
import { isIP } from 'node:net'
import { DEFAULT_HOST, DEFAULT_PORT, startServer, type TrainpoolServer } from '../server/server'
import { serviceUploads } from '../server/upload'
import { openService } from '../service/open-service'
import type { BenchService } from '../service/bench-service'
import { defaultStoreDir } from '../store/run-store'
import { EXIT } from './bench-command'
import { DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_UPLOAD_IDLE_SECONDS } from '@shared/contract/upload'
import { formatBytes } from '@shared/format'
import { numberOf, readNumber } from '@shared/vocabulary/fields'
import { type ListenAddress, parseListenAddress, workerSocketOption } from '../pool/remote/gateway'

export interface ServeFlags {
  port?: string
  host?: string
  store?: string
  maxUpload?: string
  uploadIdleTimeout?: string
  /** runs on Slurm: the worker socket's HOST:PORT */
  listen?: string
}

export interface ParsedServeFlags {
  port: number
  host: string
  listen?: ListenAddress
  store: string
  /** the data-file upload cap in bytes */
  maxUpload: number
  /** seconds an upload may go without a byte before it is given up */
  uploadIdleSeconds: number
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 2 ** 10, kib: 2 ** 10, m: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gib: 2 ** 30 }

/** "2147483648", "500MiB", "2G", "1_000_000" → bytes (binary units); null when it is not one of those. */
export function parseByteSize(text: string): number | null {
  // the number before the unit follows the one rule for typed numbers (readNumber), as every other flag does
  const m = /^(.+?)\s*(b|k|kib|m|mib|g|gib)?$/i.exec(text.trim())
  const unit = m ? UNITS[(m[2] ?? '').toLowerCase()] : undefined
  const value = m ? numberOf(m[1], 'real') : NaN
  if (unit === undefined || !Number.isFinite(value)) return null
  const bytes = Math.floor(value * unit)
  return Number.isSafeInteger(bytes) && bytes >= 1 ? bytes : null
}

/** An integer flag by the shared rule (readNumber), in range; the message quotes what was typed. */
function integerFlag(flag: string, text: string, min: number, max: number, what: string): number | string {
  const read = readNumber(text, 'integer')
  if (read.problem !== undefined) return `${flag}: ${JSON.stringify(text)} ${read.problem}; ${what}`
  if (read.value < min || read.value > max) return `${flag}: ${JSON.stringify(text)} is out of range; ${what}`
  return read.value
}

export function parseServeFlags(flags: ServeFlags): ParsedServeFlags | string {
  const port = integerFlag('--port', flags.port ?? String(DEFAULT_PORT), 0, 65535, 'use an integer from 0 to 65535 (0 picks a free port)')
  if (typeof port === 'string') return port
  const host = (flags.host ?? DEFAULT_HOST).trim()
  if (!host || !(isIP(host) || /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(host))) {
    return `--host: ${JSON.stringify(flags.host)} is not an IP address or host name (e.g. 127.0.0.1, or 0.0.0.0 for every interface)`
  }
  const maxUpload = flags.maxUpload === undefined ? DEFAULT_MAX_UPLOAD_BYTES : parseByteSize(flags.maxUpload)
  if (maxUpload === null) {
    return `--max-upload: ${JSON.stringify(flags.maxUpload)} is not a size: use a whole number of bytes (e.g. 2147483648) or one with a unit (500MiB, 2GiB; K, M, G are binary too)`
  }
  const uploadIdleSeconds = integerFlag(
    '--upload-idle-timeout',
    flags.uploadIdleTimeout ?? String(DEFAULT_UPLOAD_IDLE_SECONDS),
    1,
    86_400,
    'use an integer from 1 to 86400 (seconds)',
  )
  if (typeof uploadIdleSeconds === 'string') return uploadIdleSeconds
  let listen: ListenAddress | undefined
  if (flags.listen !== undefined) {
    try {
      listen = parseListenAddress(flags.listen)
    } catch (err) {
      return (err as Error).message
    }
  }
  return { port, host, store: flags.store ?? defaultStoreDir(), maxUpload, uploadIdleSeconds, listen }
}

export async function serveCommand(flags: ServeFlags, version: string): Promise<number> {
  const parsed = parseServeFlags(flags)
  if (typeof parsed === 'string') {
    process.stderr.write(`trainpool serve: ${parsed}\n`)
    return EXIT.usage
  }
  const { service, store } = await openService({
    storeDir: parsed.store,
    shell: 'browser',
    appVersion: version,
    workerSocket: workerSocketOption(parsed.listen, (line) => process.stderr.write(`trainpool serve: worker socket: ${line}\n`)),
  })
  const server = await listenOrRefuse(service, parsed)
  if (typeof server === 'number') return server
  if (server.exposed) {
    process.stderr.write(
      `trainpool serve: WARNING: listening on ${parsed.host}, reachable from other machines. The token is the only lock ` +
        'and traffic is not encrypted (plain HTTP): prefer the default 127.0.0.1 with an SSH tunnel (ssh -L 7878:127.0.0.1:7878 host).\n',
    )
  }
  process.stderr.write(`trainpool serve: runs are kept in ${store?.dir ?? parsed.store}; data files upload up to ${formatBytes(parsed.maxUpload)}\n`)
  process.stdout.write(`\n  Trainpool is running. Open this URL in a browser:\n\n    ${server.url}\n\n  Press Ctrl+C to stop.\n\n`)

  return untilStopped(server)
}

/** Starts the server, or says which flag to change when the address cannot be used (exit 2). */
async function listenOrRefuse(service: BenchService, parsed: ParsedServeFlags): Promise<TrainpoolServer | number> {
  try {
    return await startServer({
      service,
      host: parsed.host,
      port: parsed.port,
      uploads: serviceUploads(service, parsed.maxUpload, parsed.uploadIdleSeconds * 1000),
    })
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code === 'EADDRINUSE') {
      process.stderr.write(`trainpool serve: --port: ${parsed.port} is already in use on ${parsed.host}: pick another, or --port 0 for a free one\n`)
      return EXIT.usage
    }
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' || e.code === 'EACCES') {
      process.stderr.write(`trainpool serve: --host/--port: cannot listen on ${parsed.host}:${parsed.port} (${e.code})\n`)
      return EXIT.usage
    }
    throw err
  }
}

/** Serves until SIGINT or SIGTERM, then stops the workers and closes the server; a second signal forces the exit. */
function untilStopped(server: TrainpoolServer): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write('trainpool serve: forced exit\n')
        process.exit(EXIT.failed)
      }
      stopping = true
      process.stderr.write(`\ntrainpool serve: ${signal}: stopping workers and closing the server (Ctrl+C again to force)…\n`)
      server
        .close()
        .then(() => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
          process.stderr.write('trainpool serve: stopped\n')
          resolve(EXIT.ok)
        })
        .catch((err: unknown) => {
          process.stderr.write(`trainpool serve: error while stopping: ${(err as Error)?.message ?? String(err)}\n`)
          resolve(EXIT.failed)
        })
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}
