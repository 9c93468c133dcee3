// Issue 26: runs measured at the same time on one machine compete for its cores and GPU, so their
// timings are not what either would measure alone. Another live run's writer lock in the same
// store (a `trainpool bench`, the app, `serve`) puts a warning in the run's result, which the CLI
// prints under its summary table.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { registerFamily } from '@shared/families'
import { configFromFlags } from '../cli/options'
import { summaryTable } from '../cli/bench-command'
import { RunStore } from '../store/run-store'
import { constantFamily, constantWorkerFamily } from '../testing/constant-family'
import { InProcessLauncher } from '../testing/in-process-launcher'
import { BenchService } from './bench-service'

let dir: string
let unregister: () => void
let other: ChildProcess
beforeAll(async () => {
  dir = mkdtempSync(join(os.tmpdir(), 'trainpool-competing-'))
  unregister = registerFamily(constantFamily as never)
  // another process writing a live run in the same store (it holds the writer lock, refreshed)
  other = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'testing', 'live-writer.ts'), dir, 'other-live-run'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  other.stdout!.on('data', (c: Buffer) => (out += c.toString()))
  const deadline = Date.now() + 60_000
  while (!out.includes('writing') && Date.now() < deadline && other.exitCode === null) await new Promise((r) => setTimeout(r, 20))
  expect(out).toContain('writing')
})
afterAll(() => {
  other.kill('SIGKILL')
  unregister()
  rmSync(dir, { recursive: true, force: true })
})

function service(store: RunStore): BenchService {
  return new BenchService({
    launcher: new InProcessLauncher(() => constantWorkerFamily as never),
    store,
    shell: 'cli',
    telemetry: false,
    probe: async () => [{ name: 'cpu', available: true, detail: 'test cpu' }] as never,
  })
}

const config = () => configFromFlags({ model: 'constant', passes: '2', sizes: '100', models: '2', workers: '1', backend: 'cpu', repeats: '1' })

it('a run measured while another process trains in the same store says so, naming its pid; the CLI prints it', async () => {
  const s = service(new RunStore(dir))
  const { runId } = await s.start({ config: config() })
  const result = await s.waitForRun(runId)
  const warning = `another run, pid ${other.pid}, is training on this machine: these timings compete (run other-live-run in ${dir})`
  expect(result.warnings).toContain(warning)
  expect((await new RunStore(dir).get(runId)).warnings).toContain(warning)
  expect(summaryTable(result)).toContain(`warning: ${warning}`)
})

it('once the other writer is gone, a new run has no such warning', async () => {
  other.kill('SIGKILL')
  await new Promise((r) => (other.exitCode !== null || other.signalCode !== null ? r(null) : other.once('exit', r)))
  const s = service(new RunStore(dir))
  const { runId } = await s.start({ config: config() })
  const result = await s.waitForRun(runId)
  expect(result.status).toBe('ok')
  expect(result.warnings.filter((w) => w.startsWith('another run'))).toEqual([])
})
