// Shared by the reliability tests: a launcher that records every worker it starts (so a test can
// kill one and check none survive), temp stores, /proc lookups, and a service with a fixed probe.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BackendCapability, RunEvent } from '@shared/contract'
import type { RunnerOptions } from '../../bench/runner'
import type { LaunchOptions, WorkerHandle, WorkerLauncher } from '../../pool/launcher'
import { NodeLauncher } from '../../pool/node-launcher'
import { BenchService } from '../../service/bench-service'
import { RunStore } from '../../store/run-store'
import { processAlive, waitUntil } from '../../testing/capability'

export interface Launched {
  pid: number | undefined
  handle: WorkerHandle
  exited: boolean
}

/** Node launcher that remembers every worker it launched and whether it has exited. */
export class RecordingLauncher implements WorkerLauncher {
  readonly kind = 'node' as const
  readonly launched: Launched[] = []
  private readonly inner = new NodeLauncher()

  launch(options: LaunchOptions): WorkerHandle {
    const handle = this.inner.launch(options)
    const entry: Launched = { pid: handle.pid, handle, exited: false }
    handle.onExit(() => (entry.exited = true))
    this.launched.push(entry)
    return handle
  }

  get pids(): number[] {
    return this.launched.flatMap((l) => (l.pid === undefined ? [] : [l.pid]))
  }

  get livePids(): number[] {
    return this.launched.filter((l) => !l.exited && l.pid !== undefined).map((l) => l.pid!)
  }

  /** true once every worker ever launched is gone (checked at the OS level) */
  allGone(timeoutMs = 3000): Promise<boolean> {
    return waitUntil(() => this.pids.every((p) => !processAlive(p)), timeoutMs)
  }
}

/** The backends the tests use, without a probe process (keeps launch counts exact). */
export const FIXED_PROBE = async (): Promise<BackendCapability[]> =>
  (['tensorflow', 'webgpu', 'wasm', 'cpu'] as const).map((name) => ({
    name,
    available: name === 'wasm' || name === 'cpu',
    detail: name === 'wasm' || name === 'cpu' ? 'test' : 'not used in the reliability tests',
  })) as BackendCapability[]

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `trainpool-rel-${prefix}-`))
}

export function makeService(opts: { store?: RunStore | null; runner?: RunnerOptions; launcher?: RecordingLauncher } = {}) {
  const launcher = opts.launcher ?? new RecordingLauncher()
  const store = opts.store === undefined ? new RunStore(tempDir('store')) : opts.store
  const service = new BenchService({ launcher, store, shell: 'cli', probe: FIXED_PROBE, telemetry: false, runner: opts.runner })
  const events: RunEvent[] = []
  service.onEvent((e) => events.push(e))
  return { service, launcher, store, events }
}

export { childrenOf } from '../../testing/cli-process'

/** A small deterministic PRNG (mulberry32) so "random" choices repeat run to run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
