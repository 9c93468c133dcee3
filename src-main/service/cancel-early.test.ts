// A cancel that arrives while start() is still saving the new run must not return before the run
// has ended (it used to await a placeholder and return at once, while the run went on).
import os from 'node:os'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { registerFamily } from '@shared/families'
import { configFromFlags } from '../cli/options'
import { RunStore } from '../store/run-store'
import { constantFamily, constantWorkerFamily } from '../testing/constant-family'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

/** A store whose first save takes a while, as on a slow disk. */
class SlowFirstSave extends RunStore {
  private saves = 0
  override async save(run: RunResult, options?: { writer?: boolean }): Promise<void> {
    if (this.saves++ === 0) await new Promise((resolve) => setTimeout(resolve, 300))
    return super.save(run, options)
  }
}

let dir: string
let unregister: () => void
beforeAll(() => {
  dir = mkdtempSync(join(os.tmpdir(), 'trainpool-cancel-early-'))
  unregister = registerFamily(constantFamily as never)
})
afterAll(() => {
  unregister()
  rmSync(dir, { recursive: true, force: true })
})

it('cancel during the first save resolves only after the run ended, cancelled and saved', async () => {
  const service = new BenchService({
    launcher: new InProcessLauncher(() => constantWorkerFamily as never),
    store: new SlowFirstSave(dir),
    shell: 'cli',
    telemetry: false,
    probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
  })
  const config = configFromFlags({ model: 'constant', passes: '20', sizes: '300', models: '3', workers: '1', backend: 'cpu', repeats: '2' })
  const starting = service.start({ config })
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(await service.cancel()).toEqual({ cancelled: true })
  // the run is over when cancel returns: nothing live, status final and on disk
  expect(await service.currentRun()).toBeNull()
  const { runId } = await starting
  const run = await service.getRun({ runId })
  expect(run.status).toBe('cancelled')
  expect(run.measurements).toEqual([])
  expect((await new RunStore(dir).get(runId)).status).toBe('cancelled')
})
