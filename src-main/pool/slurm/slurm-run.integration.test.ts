// Runs with --launcher slurm on the real one-node test cluster (scripts/slurm-cluster.sh, two fake
// GPUs), through the service as the CLI and the app drive it: both families, every strategy, W=2,
// the same work as the local pool, each worker's host and CUDA_VISIBLE_DEVICES recorded (Slurm's
// own) and distinct; scancel of one task is a worker failure in Slurm's words and `continue` goes
// on; a cancelled run leaves no job in squeue; a task that cannot start fails the run with Slurm's
// pending reason; a coordinator that restarts cancels the jobs of the run it marks interrupted.
// Skips without Slurm, saying why; TRAINPOOL_REQUIRE=slurm (CI) makes that a failure.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type BenchConfig, presetConfig, type RunEvent, type RunResult } from '@shared/contract'
import { NodeLauncher } from '../node-launcher'
import { BenchService } from '../../service/bench-service'
import { RunStore } from '../../store/run-store'
import { skipWithout, waitUntil } from '../../testing/capability'
import { slurmAvailable } from '../../testing/slurm'
import { killAll, spawnCli } from '../../testing/cli-process'
import { cancelJobsOfRun } from '../schedulers'
import { queryArray, submitArray } from './slurm-cli'

const slurm = slurmAvailable({ gpus: 2 })
const noSlurm = skipWithout('slurm', slurm.ok, slurm.why)
const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-slurm-run-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const SLURM = { engine: 'slurm' as const, gres: 'gpu:1', sbatchArgs: [] as string[], queueTimeoutS: 120 }

function service(name: string): BenchService {
  return new BenchService({ launcher: new NodeLauncher(), store: new RunStore(join(dir, name)), shell: 'cli', telemetry: false })
}

/** Every trainpool worker job squeue lists now (this test's user), by id. */
function listJobs(): string[] {
  return execFileSync('squeue', ['-h', '-n', 'trainpool-worker', '-o', '%F'], { encoding: 'utf8' }).split('\n').filter(Boolean)
}

/** Processes of these Slurm jobs' tasks still alive (by SLURM_ARRAY_JOB_ID in their environment), by pid. */
function taskProcesses(jobs: readonly string[]): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0')
      if (env.some((v) => jobs.some((j) => v === `SLURM_ARRAY_JOB_ID=${j}`))) pids.push(Number(entry))
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids
}

/** Jobs of these ids still queued or running (squeue's view). */
function activeJobs(jobIds: readonly string[]): string[] {
  if (jobIds.length === 0) return []
  const out = execFileSync('squeue', ['-h', '-j', jobIds.join(','), '-o', '%i %T'], { encoding: 'utf8' })
  return out.split('\n').filter((l) => /PENDING|RUNNING|CONFIGURING|COMPLETING/.test(l))
}

async function runToEnd(svc: BenchService, config: BenchConfig, onEvent?: (e: RunEvent, runId: () => string) => void): Promise<RunResult> {
  let runId = ''
  const off = onEvent ? svc.onEvent((e) => onEvent(e, () => runId)) : () => {}
  try {
    ;({ runId } = await svc.start({ config }))
    return await svc.waitForRun(runId)
  } finally {
    off()
  }
}

describe.skipIf(noSlurm)('runs on Slurm (--launcher slurm)', () => {
  for (const [label, base] of [
    ['an MLP on wasm', presetConfig('smoke', { backend: 'wasm', workers: [2], models: [4] })],
    ['trees on cpu', { ...presetConfig('smoke', { backend: 'cpu', workers: [2], models: [4], model: { kind: 'gbdt' } }), sizes: [400] }],
  ] as [string, BenchConfig][]) {
    it(`${label}: every strategy at W=2 trains what the local pool trains; each worker's host and Slurm GPU recorded; no job left`, async () => {
      const svc = service(`family-${label.replace(/\W+/g, '-')}`)
      const remote = await runToEnd(svc, { ...base, launcher: SLURM } as BenchConfig)
      expect(remote.error).toBeNull()
      expect(remote.status).toBe('ok')
      expect(remote.verification.sameWork).toBe(true)
      const local = await runToEnd(svc, base)
      for (const m of remote.measurements) {
        const twin = local.measurements.find((l) => l.strategy === m.strategy && l.workers === m.workers && l.size === m.size)!
        expect(m.perModel.map((p) => p.fingerprint ?? p.testMse.toPrecision(4))).toEqual(twin.perModel.map((p) => p.fingerprint ?? p.testMse.toPrecision(4)))
        expect(m.workerHosts?.every((h) => h === os.hostname())).toBe(true)
        if (m.workers === 2 && m.strategy !== 'sequential') {
          // Slurm gave each task its own GPU (gres gpu:1 of the node's two)
          expect(new Set(m.workerGpus).size).toBe(2)
          expect(m.workerGpus!.every((g) => g === '0' || g === '1')).toBe(true)
        }
        expect(m.queueMs).toBeGreaterThanOrEqual(0)
      }
      expect(remote.scheduler?.jobIds.length).toBe(3)
      expect(activeJobs(remote.scheduler!.jobIds)).toEqual([])
    })
  }

  it("scancel of one task mid-run is a worker failure named with Slurm's state; with continue the run goes on", async () => {
    const svc = service('scancel')
    const config = {
      ...presetConfig('smoke', { backend: 'wasm', workers: [2], models: [4], model: { epochs: 40 } }),
      strategies: ['pool', 'batched'],
      sizes: [3000],
      failurePolicy: 'continue',
      launcher: SLURM,
    } as BenchConfig
    let cancelled = false
    const result = await runToEnd(svc, config, (e, runId) => {
      if (cancelled || e.type !== 'progress') return
      void svc.getRun({ runId: runId() }).then((run) => {
        const jobId = run.scheduler?.jobIds[0]
        if (!jobId || cancelled) return
        cancelled = true
        execFileSync('scancel', [`${jobId}_1`])
      })
    })
    expect(cancelled).toBe(true)
    const pool = result.measurements.find((m) => m.strategy === 'pool')!
    expect(pool.failures[0]?.reason).toMatch(new RegExp(`Slurm task ${result.scheduler!.jobIds[0]}_1 CANCELLED`))
    const batched = result.measurements.find((m) => m.strategy === 'batched')!
    expect(batched.status).toBe('ok')
    expect(activeJobs(result.scheduler!.jobIds)).toEqual([])
  })

  it('cancelling the run leaves no job in squeue', async () => {
    const svc = service('cancel')
    const config = {
      ...presetConfig('smoke', { backend: 'wasm', workers: [2], models: [4], model: { epochs: 200 } }),
      sizes: [3000],
      strategies: ['pool'],
      launcher: SLURM,
    } as BenchConfig
    let seen = false
    const off = svc.onEvent((e) => {
      if (e.type === 'progress') seen = true
    })
    const { runId } = await svc.start({ config })
    expect(await waitUntil(() => seen, 60_000)).toBe(true)
    await svc.cancel({ runId })
    off()
    const run = await svc.getRun({ runId })
    expect(run.status).toBe('cancelled')
    expect(run.scheduler!.jobIds.length).toBeGreaterThan(0)
    expect(await waitUntil(() => activeJobs(run.scheduler!.jobIds).length === 0, 15_000, 250)).toBe(true)
  })

  it('Ctrl+C in `trainpool bench --launcher slurm` cancels the run: no job left in squeue, no worker process left', async () => {
    const store = join(dir, 'cli')
    const cli = spawnCli('bench', [
      '--preset',
      'smoke',
      '--backend',
      'wasm',
      '--workers',
      '2',
      '--strategies',
      'pool',
      '--sizes',
      '3000',
      '--epochs',
      '200',
      '--launcher',
      'slurm',
      '--store',
      store,
    ])
    try {
      expect(await waitUntil(() => /measuring|W=2/.test(cli.out.stderr) && listJobs().length > 0, 60_000, 200)).toBe(true)
      const jobs = listJobs()
      // the job id is printed as it is submitted, while it may still wait in the queue
      const printed = [...cli.out.stderr.matchAll(/submitted Slurm job (\d+) \(squeue -j \1\)/g)].map((m) => m[1])
      expect(printed.length).toBeGreaterThan(0)
      expect(jobs.map((j) => j.split('_')[0])).toContain(printed[0])
      await waitUntil(() => activeJobs(jobs).some((l) => l.includes('RUNNING')), 30_000, 200)
      // the tasks' processes can be seen (so their absence below means something)
      expect(await waitUntil(() => taskProcesses(jobs).length > 0, 10_000, 200)).toBe(true)
      cli.child.kill('SIGINT')
      const exit = await cli.exited
      expect(exit.code).toBe(1)
      expect(await waitUntil(() => activeJobs(jobs).length === 0, 15_000, 250)).toBe(true)
      // the workers were Slurm's tasks: none of their processes is left on the node
      expect(await waitUntil(() => taskProcesses(jobs).length === 0, 10_000, 250)).toBe(true)
    } finally {
      killAll()
    }
  })

  it("a task that cannot start within the queue timeout fails the run with Slurm's pending reason, and is cancelled", async () => {
    const svc = service('queue')
    const config = {
      ...presetConfig('smoke', { backend: 'wasm', workers: [1], models: [2] }),
      strategies: ['sequential'],
      launcher: { ...SLURM, sbatchArgs: ['--begin=now+1hour'], queueTimeoutS: 5 },
    } as BenchConfig
    const result = await runToEnd(svc, config)
    expect(result.status).toBe('failed')
    expect(result.error).toMatch(/did not start within 5 s: Slurm keeps it pending \(BeginTime\)/)
    expect(activeJobs(result.scheduler!.jobIds)).toEqual([])
  })

  it("a Slurm run is not refused for this machine's free memory: its workers use the nodes'", async () => {
    const svc = service('memory')
    const big = { ...presetConfig('smoke', { backend: 'wasm', workers: [64], models: [1000] }), sizes: [2_000_000] } as BenchConfig
    await expect(svc.validate(big)).rejects.toMatchObject({ code: 'insufficient-memory' })
    await expect(svc.validate({ ...big, launcher: SLURM } as BenchConfig)).resolves.toMatchObject({ launcher: { engine: 'slurm' } })
  })

  it('a coordinator that restarts cancels the jobs of a run it marks interrupted', async () => {
    const store = new RunStore(join(dir, 'restart'))
    const { jobId } = await submitArray({
      indices: [0],
      gres: null,
      jobName: 'trainpool-orphan',
      output: join(dir, 'orphan-%A_%a.out'),
      command: ['sleep', '300'],
      env: {},
      cwd: dir,
    })
    const run: RunResult = {
      ...(await runToEnd(service('restart'), presetConfig('smoke', { backend: 'wasm', models: [1], workers: [1] }))),
      status: 'running',
      finishedAt: null,
      scheduler: { engine: 'slurm', jobIds: [jobId] },
    }
    await store.save(run)
    await waitUntil(() => activeJobs([jobId]).length === 1, 10_000)
    const marked = await store.markInterrupted(null, cancelJobsOfRun)
    expect(marked).toContain(run.runId)
    expect(await waitUntil(() => activeJobs([jobId]).length === 0, 15_000, 250)).toBe(true)
    const [task] = await queryArray(jobId, { indices: [0] })
    expect(['CANCELLED', 'UNKNOWN']).toContain(task.state)
  })
})
