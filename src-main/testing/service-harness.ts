// The real BenchService for the reliability tests, without the slow or variable parts: a fixed
// backend probe (no probe process, so launch counts stay exact), a temp run store, and a launcher
// that records every worker it starts.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BackendCapability, RunEvent } from '@shared/contract'
import type { RunnerOptions } from '../bench/runner'
import { BenchService } from '../service/bench-service'
import { RunStore } from '../store/run-store'
import { RecordingLauncher } from './recording-launcher'

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

/** A CLI-shell BenchService over a recording launcher and a temp store (`store: null`: none); `events` collects everything it emits. */
export function makeService(opts: { store?: RunStore | null; runner?: RunnerOptions; launcher?: RecordingLauncher } = {}) {
  const launcher = opts.launcher ?? new RecordingLauncher()
  const store = opts.store === undefined ? new RunStore(tempDir('store')) : opts.store
  const service = new BenchService({ launcher, store, shell: 'cli', probe: FIXED_PROBE, telemetry: false, runner: opts.runner })
  const events: RunEvent[] = []
  service.onEvent((e) => events.push(e))
  return { service, launcher, store, events }
}
