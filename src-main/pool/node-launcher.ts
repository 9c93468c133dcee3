// Node launcher: child_process.fork of the worker entry (CLI, tests, browser mode). From the built
// bundle it forks out/main/worker.js; from sources (tests, tsx) it forks the TypeScript entry
// through tsx.
import { fork } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { FromWorker } from '@shared/contract'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from './launcher'

export interface WorkerEntry {
  path: string
  execArgv: string[]
}

export function resolveWorkerEntry(): WorkerEntry {
  const override = process.env.TRAINPOOL_WORKER_ENTRY
  if (override) return { path: override, execArgv: override.endsWith('.ts') ? ['--import', 'tsx'] : [] }
  // built: this code sits in out/main/ or out/main/chunks/, next to out/main/worker.js
  for (const candidate of [join(__dirname, 'worker.js'), join(__dirname, '..', 'worker.js')]) {
    if (existsSync(candidate)) return { path: candidate, execArgv: [] }
  }
  const source = resolve(__dirname, '../worker/index.ts')
  if (existsSync(source)) return { path: source, execArgv: ['--import', 'tsx'] }
  throw new Error(`trainpool: worker entry not found next to ${__dirname}; run \`npm run build\` first`)
}

/**
 * TRAINPOOL_WORKER_MAX_MEMORY_MB=N (in the worker's environment) caps a worker's memory: the JS heap
 * (--max-old-space-size) and the wasm heap (--wasm-max-mem-pages, 64 KiB pages), where the wasm
 * backend keeps its tensors. A job that needs more fails with an out-of-memory error instead of
 * taking the machine's memory. Unset: no cap beyond Node's own.
 */
export function memoryCapArgs(env: Record<string, string | undefined>): string[] {
  const text = env.TRAINPOOL_WORKER_MAX_MEMORY_MB
  if (text === undefined || text === '') return []
  const mb = Number(text)
  if (!Number.isInteger(mb) || mb < 16)
    throw new Error(`TRAINPOOL_WORKER_MAX_MEMORY_MB ${JSON.stringify(text)} is not valid: an integer number of MB, at least 16`)
  return [`--max-old-space-size=${mb}`, `--wasm-max-mem-pages=${mb * 16}`]
}

/**
 * V8 flags of a worker process without a memory cap: garbage collection on the worker's own thread.
 * A worker trains on one core, and a pool runs as many workers as there are cores; V8's parallel and
 * concurrent GC helper threads then wake on a core another worker is using and preempt it for whole
 * time slices (two 25-model ONNX jobs side by side: steps' p90 10–12 ms instead of 5–6, jobs 1.2×
 * slower; README.md, "Worker processes"). Only at start-up: changed at run time, V8 aborts.
 */
export const WORKER_V8_FLAGS = ['--single-threaded-gc']

/**
 * A forked worker's Node/V8 arguments: the memory cap's where TRAINPOOL_WORKER_MAX_MEMORY_MB is set,
 * else WORKER_V8_FLAGS. Not both: under a tight cap a single-threaded heap reaches its limit and the
 * process aborts where it otherwise fails the job with a clean out-of-memory error
 * (pool.integration.test.ts, "a job that runs out of memory").
 */
export function workerExecArgv(env: Record<string, string | undefined>): string[] {
  const cap = memoryCapArgs(env)
  return cap.length > 0 ? cap : WORKER_V8_FLAGS
}

export class NodeLauncher implements WorkerLauncher {
  readonly kind = 'node' as const
  constructor(private readonly entry: WorkerEntry = resolveWorkerEntry()) {}

  launch(options: LaunchOptions): WorkerHandle {
    const child = fork(this.entry.path, [], {
      env: { ...options.env, TRAINPOOL_SERVICE_NAME: options.serviceName },
      execArgv: [...this.entry.execArgv, ...workerExecArgv(options.env)],
      // stdout is piped too: native libraries (Dawn, libtensorflow) print there, and the CLI's
      // stdout is reserved for the summary table
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    })
    // A worker that dies while a message is on its way makes the send fail (EPIPE). Without these
    // handlers that error is thrown in the parent; the death itself is reported through 'exit'.
    child.on('error', () => {})
    return {
      get pid() {
        return child.pid
      },
      send: (message) => {
        if (child.connected) child.send(message, (err) => void err)
      },
      onMessage: (listener) => child.on('message', (m) => listener(m as FromWorker)),
      onStderr: (listener) => {
        child.stderr?.setEncoding('utf8').on('data', listener)
        child.stdout?.setEncoding('utf8').on('data', listener)
      },
      onExit: (listener) => child.once('exit', (code, signal) => listener({ code, signal } satisfies WorkerExit)),
      kill: (signal) => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      },
    }
  }
}
