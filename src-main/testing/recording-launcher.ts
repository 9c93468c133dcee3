// A launcher that remembers every worker process it starts, so a test can kill one and check that
// none outlives a run: the reliability tests (over the sources, via tsx) and the browser e2e specs
// (over the built worker when there is one, as `trainpool serve` runs it).
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { LaunchOptions, WorkerHandle, WorkerLauncher } from '../pool/launcher'
import { NodeLauncher } from '../pool/node-launcher'
import { processAlive, waitUntil } from './capability'

const BUILT_WORKER = join(resolve(__dirname, '..', '..'), 'out', 'main', 'worker.js')

export interface Launched {
  pid: number | undefined
  handle: WorkerHandle
  exited: boolean
}

/** The Node launcher over the built worker when there is one (out/main/worker.js), else over the sources via tsx. */
export function builtOrSourceLauncher(): NodeLauncher {
  return existsSync(BUILT_WORKER) ? new NodeLauncher({ path: BUILT_WORKER, execArgv: [] }) : new NodeLauncher()
}

/** Wraps a Node launcher (by default over the sources) and remembers every worker it launched and whether it has exited. */
export class RecordingLauncher implements WorkerLauncher {
  readonly kind = 'node' as const
  readonly launched: Launched[] = []

  constructor(private readonly inner: WorkerLauncher = new NodeLauncher()) {}

  launch(options: LaunchOptions): WorkerHandle {
    const handle = this.inner.launch(options)
    const entry: Launched = { pid: handle.pid, handle, exited: false }
    handle.onExit(() => (entry.exited = true))
    this.launched.push(entry)
    return handle
  }

  /** every worker process ever launched */
  get pids(): number[] {
    return this.launched.flatMap((l) => (l.pid === undefined ? [] : [l.pid]))
  }

  /** workers whose exit the handle has not reported yet */
  get livePids(): number[] {
    return this.launched.filter((l) => !l.exited && l.pid !== undefined).map((l) => l.pid!)
  }

  /** workers still alive at the OS level */
  alive(): number[] {
    return this.pids.filter(processAlive)
  }

  /** true once every worker ever launched is gone (checked at the OS level) */
  allGone(timeoutMs = 3000): Promise<boolean> {
    return waitUntil(() => this.pids.every((p) => !processAlive(p)), timeoutMs)
  }
}
