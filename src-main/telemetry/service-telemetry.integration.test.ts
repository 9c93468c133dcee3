// Telemetry through the service on a real (smoke, cpu) run: samples stored on the result, tagged
// with the measurement, worker pids sampled, events at ≤ 1 Hz, the nvidia-smi child gone after.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { presetConfig, type RunEvent, RunResultSchema } from '@shared/contract'
import { NodeLauncher } from '../pool/node-launcher'
import { BenchService } from '../service/bench-service'
import { processAlive } from '../testing/capability'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(os.tmpdir(), 'trainpool-svc-telemetry-'))
  writeFileSync(
    join(dir, 'nvidia-smi'),
    '#!/bin/sh\necho $$ > "$(dirname "$0")/pid"\nwhile true; do\n  echo "0, Fake GPU, 37, 100, 1000, 40, 50.0, 100.0"\n  echo "1, Fake GPU, [N/A], 100, 1000, [N/A], [N/A], [N/A]"\n  sleep 0.2\ndone\n',
  )
  chmodSync(join(dir, 'nvidia-smi'), 0o755)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('BenchService telemetry', () => {
  it('stores 1 Hz samples with the run and streams them as telemetry events', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dir}${delimiter}${process.env.PATH ?? ''}` }
    delete env.TRAINPOOL_NVIDIA_SMI
    const service = new BenchService({
      launcher: new NodeLauncher(),
      store: null,
      shell: 'cli',
      probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }],
      telemetry: { nvidiaSmi: { env } },
    })
    const events: Extract<RunEvent, { type: 'telemetry' }>[] = []
    const seenPids = new Set<number>()
    service.onEvent((e) => {
      if (e.type === 'telemetry') events.push(e)
    })
    const { runId } = await service.start({ config: presetConfig('smoke', { backend: 'cpu' }) })
    const poll = setInterval(async () => {
      const current = await service.currentRun()
      if (current) for (const e of current.events) if (e.type === 'telemetry') for (const s of e.samples) for (const w of s.workers) seenPids.add(w.pid)
    }, 300)
    const result = await service.waitForRun(runId)
    clearInterval(poll)
    expect(result.status).toBe('ok')
    const t = result.telemetry!
    expect(RunResultSchema.parse(JSON.parse(JSON.stringify(result))).telemetry).toEqual(t)
    expect(t.gpu.state).toBe('ok')
    expect(t.samples.length).toBeGreaterThan(0)
    expect(t.samples.length).toBe(events.reduce((n, e) => n + e.samples.length, 0))
    for (let i = 1; i < events.length; i++) expect(events[i].samples[0].t - events[i - 1].samples[0].t).toBeGreaterThanOrEqual(700)
    expect(t.samples.some((s) => s.gpus.length === 2 && s.gpus[0].util === 37 && s.gpus[1].util === null)).toBe(true)
    expect(t.samples.some((s) => s.workers.length > 0 && s.workers.every((w) => w.rssBytes! > 0))).toBe(true)
    expect(t.samples.some((s) => s.strategy != null && s.index != null && s.phase != null)).toBe(true)
    expect(seenPids.size).toBeGreaterThan(0)
    // the nvidia-smi child is gone once the run finished
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'))
    expect(processAlive(pid)).toBe(false)
    expect(await service.currentRun()).toBeNull()
  })
})
