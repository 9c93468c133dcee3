// Error text is said once. A run on a backend that its workers cannot initialise fails with one
// sentence ("backend webgpu is not available here: why"): the worker sends the BackendUnavailableError's
// reason alone and the pool says the sentence, never one in front of the other.
import { describe, expect, it } from 'vitest'
import { type FromWorker, type ToWorker, presetConfig } from '@shared/contract'
import { BackendUnavailableError } from '../engine/backend/types'
import type { LaunchOptions, WorkerExit, WorkerHandle, WorkerLauncher } from '../pool/launcher'
import { BackendInitError } from '../pool/worker-pool'
import { BenchService } from './bench-service'

/** Workers that answer `init` as a real worker does when its backend fails: init-failed with the error's reason (worker/loop.ts). */
class BackendFailsLauncher implements WorkerLauncher {
  readonly kind = 'node' as const
  constructor(private readonly why: string) {}

  launch(_options: LaunchOptions): WorkerHandle {
    const messages = new Set<(m: FromWorker) => void>()
    const exits = new Set<(e: WorkerExit) => void>()
    let alive = true
    const exit = (e: WorkerExit) => {
      if (!alive) return
      alive = false
      setImmediate(() => exits.forEach((l) => l(e)))
    }
    const why = this.why
    return {
      pid: undefined,
      send(message: ToWorker) {
        if (message.type === 'init') {
          const err = new BackendUnavailableError(message.backend, why)
          setImmediate(() => messages.forEach((l) => l({ type: 'init-failed', backend: message.backend, reason: err.reason })))
        } else if (message.type === 'shutdown') exit({ code: 0, signal: null })
      },
      onMessage: (l) => void messages.add(l),
      onStderr: () => {},
      onExit: (l) => void exits.add(l),
      kill: (signal) => exit({ code: null, signal }),
    }
  }
}

const countOf = (text: string, part: string) => text.split(part).length - 1

describe('backend error text', () => {
  it('a run on a backend its workers cannot initialise fails with the reason said once', async () => {
    const service = new BenchService({
      launcher: new BackendFailsLauncher('no adapter found'),
      store: null,
      shell: 'cli',
      telemetry: false,
      // the probe said yes (it ran in another process), the run's workers say no
      probe: async () => (['tensorflow', 'webgpu', 'wasm', 'cpu'] as const).map((name) => ({ name, available: true, detail: 'test' })),
    })
    const { runId } = await service.start({ config: presetConfig('smoke', { backend: 'webgpu' }) })
    const result = await service.waitForRun(runId)
    expect(result.status).toBe('failed')
    expect(result.error).toBe('backend webgpu is not available here: no adapter found')
    expect(countOf(result.error!, 'not available')).toBe(1)
  })

  it('BackendInitError says the same sentence as BackendUnavailableError', () => {
    expect(new BackendInitError('webgpu', 'no adapter found').message).toBe(new BackendUnavailableError('webgpu', 'no adapter found').message)
    expect(new BackendInitError('wasm', 'out of memory').message).toBe('backend wasm is not available here: out of memory')
  })
})
