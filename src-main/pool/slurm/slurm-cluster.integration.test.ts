// The Slurm test cluster for real (scripts/slurm-cluster.sh; .ci/run brings it up and requires it):
// a 2-task array on its 2 fake GPUs gives each task its own CUDA_VISIBLE_DEVICES, scancel of a
// running task shows CANCELLED, and slurm-cli's submit, query and cancel work against it. Skips
// without a Slurm cluster, saying why; TRAINPOOL_REQUIRE=slurm makes that a failure.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { skipWithout } from '../../testing/capability'
import { slurmAvailable } from '../../testing/slurm'
import { type ArrayTaskStatus, cancel, isFinished, parseSbatchParsable, queryArray, shellQuote, submitArray } from './slurm-cli'

const slurm = slurmAvailable({ gpus: 2 })
const noSlurm = skipWithout('slurm', slurm.ok, slurm.why)
const jobs: string[] = []
let dir = ''

/** Polls `probe` every 200 ms until it returns a value; fails naming `what` (and the last seen) after `ms`. */
async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined, seen?: () => string): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms${seen ? ` (last seen: ${seen()})` : ''}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

function sbatch(args: string[]): string {
  const jobId = parseSbatchParsable(execFileSync('sbatch', ['--parsable', ...args], { encoding: 'utf8', timeout: 30_000 }))
  jobs.push(jobId)
  return jobId
}

const states = (tasks: ArrayTaskStatus[]) => tasks.map((t) => `${t.index}:${t.state}`).join(' ')

describe.skipIf(noSlurm)('the Slurm test cluster', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(os.tmpdir(), 'trainpool-slurm-test-'))
  })
  afterAll(async () => {
    // Nothing of ours left queued or running on a cluster others use.
    for (const jobId of jobs) await cancel(jobId).catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  })

  it('a 2-task array with --gres=gpu:1: both tasks run at once, each with its own CUDA_VISIBLE_DEVICES', async () => {
    // Each task writes its environment, then waits for the other's file, so the two overlap (one
    // finishing before the other starts could hand both the same GPU).
    const task = `
      const fs = require('fs'), path = require('path'), dir = ${JSON.stringify(dir)}
      const me = process.env.SLURM_ARRAY_TASK_ID, other = me === '0' ? '1' : '0'
      fs.writeFileSync(path.join(dir, 'gpu-env-' + me + '.json'), JSON.stringify(process.env))
      const end = Date.now() + 20000
      const wait = () => fs.existsSync(path.join(dir, 'gpu-env-' + other + '.json')) || Date.now() > end ? null : setTimeout(wait, 50)
      wait()`
    const jobId = sbatch(['--array=0-1', '--gres=gpu:1', `--output=${dir}/gpu-%A_%a.out`, '--wrap', `${shellQuote(process.execPath)} -e ${shellQuote(task)}`])
    const files = [0, 1].map((i) => join(dir, `gpu-env-${i}.json`))
    await until('both tasks wrote their environment', 30_000, () => (files.every((f) => existsSync(f)) ? true : undefined))
    const envs = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Record<string, string>)
    expect(envs.map((e) => [e.SLURM_ARRAY_JOB_ID, e.SLURM_ARRAY_TASK_ID])).toEqual([
      [jobId, '0'],
      [jobId, '1'],
    ])
    const gpus = envs.map((e) => e.CUDA_VISIBLE_DEVICES)
    expect(
      gpus.every((g) => g === '0' || g === '1'),
      `CUDA_VISIBLE_DEVICES ${gpus}`,
    ).toBe(true)
    expect(new Set(gpus).size, `CUDA_VISIBLE_DEVICES ${gpus}`).toBe(2)
    let last: ArrayTaskStatus[] = []
    await until(
      'both tasks COMPLETED',
      30_000,
      async () => {
        last = await queryArray(jobId)
        return last.length === 2 && last.every((t) => t.state === 'COMPLETED') ? true : undefined
      },
      () => states(last),
    )
    expect(last.map((t) => t.exitCode)).toEqual([0, 0])
  })

  it('scancel of a running task: CANCELLED in squeue and scontrol, the other task runs on; then the whole array', async () => {
    const jobId = sbatch(['--array=0-1', '--gres=gpu:1', '--output=/dev/null', '--wrap', 'sleep 60'])
    let last: ArrayTaskStatus[] = []
    await until(
      'both tasks RUNNING',
      30_000,
      async () => {
        last = await queryArray(jobId)
        return last.length === 2 && last.every((t) => t.state === 'RUNNING') ? true : undefined
      },
      () => states(last),
    )

    await cancel(jobId, 0)
    const squeueState = (index: number) => execFileSync('squeue', ['-t', 'all', '-h', '-j', `${jobId}_${index}`, '-o', '%T'], { encoding: 'utf8' }).trim()
    await until(
      'task 0 CANCELLED in squeue',
      15_000,
      () => (squeueState(0) === 'CANCELLED' ? true : undefined),
      () => squeueState(0),
    )
    const task0 = last.find((t) => t.index === 0)!.taskJobId!
    expect(execFileSync('scontrol', ['show', 'job', '-o', task0], { encoding: 'utf8' })).toMatch(/ JobState=CANCELLED /)
    expect(squeueState(1)).toBe('RUNNING')
    const afterOne = await queryArray(jobId)
    expect(afterOne.map((t) => [t.index, t.state, t.signal])).toEqual([
      [0, 'CANCELLED', 15],
      [1, 'RUNNING', null],
    ])

    await cancel(jobId)
    await until(
      'task 1 CANCELLED',
      15_000,
      async () => {
        last = await queryArray(jobId)
        return last.every((t) => t.state === 'CANCELLED') ? true : undefined
      },
      () => states(last),
    )
  })

  it("slurm-cli: submitArray runs the worker command as given, with the secret in its environment only; queryArray reads each task's exit", async () => {
    const secret = `secret-${process.pid}-${Date.now()}`
    // The worker: records what it got, then exits with its index as the code (0, 1, 2).
    const worker = `
      const fs = require('fs'), path = require('path'), i = process.env.SLURM_ARRAY_TASK_ID
      fs.writeFileSync(path.join(${JSON.stringify(dir)}, 'cli-' + i + '.json'), JSON.stringify({
        argv: process.argv.slice(1), secret: process.env.TRAINPOOL_TEST_SECRET, cwd: process.cwd(), gpu: process.env.CUDA_VISIBLE_DEVICES }))
      process.exit(Number(i))`
    const base = {
      jobName: 'trainpool-slurm-test',
      output: `${dir}/cli-%A_%a.out`,
      command: [process.execPath, '-e', worker, "it's one argument", '$HOME'],
      env: { TRAINPOOL_TEST_SECRET: secret },
      cwd: dir,
    }
    const { jobId } = await submitArray({ ...base, indices: [0, 1, 2], maxConcurrent: 2 })
    jobs.push(jobId)
    let last: ArrayTaskStatus[] = []
    await until(
      'three tasks finished',
      30_000,
      async () => {
        last = await queryArray(jobId, { indices: [0, 1, 2] })
        return last.every((t) => isFinished(t.state)) ? true : undefined
      },
      () => states(last),
    )
    expect(last.map((t) => [t.index, t.state, t.exitCode, t.signal])).toEqual([
      [0, 'COMPLETED', 0, null],
      [1, 'FAILED', 1, null],
      [2, 'FAILED', 2, null],
    ])
    expect(last.every((t) => t.node !== null && t.taskJobId !== null)).toBe(true)
    for (const i of [0, 1, 2]) {
      const seen = JSON.parse(readFileSync(join(dir, `cli-${i}.json`), 'utf8'))
      expect(seen).toMatchObject({ argv: ["it's one argument", '$HOME'], secret, cwd: dir })
      expect(['0', '1']).toContain(seen.gpu)
    }
    // Slurm keeps the job's command line and script: neither holds the secret.
    const record = execFileSync('scontrol', ['show', 'job', '-o', jobId], { encoding: 'utf8' })
    expect(record).toContain('JobName=trainpool-slurm-test')
    expect(record).not.toContain(secret)
    const script = execFileSync('scontrol', ['write', 'batch_script', last[0].taskJobId!, '-'], { encoding: 'utf8' })
    expect(script).toMatch(/^#!\/bin\/sh\n/)
    expect(script).toContain("'it'\\''s one argument'")
    expect(script).not.toContain(secret)

    // A resubmitted task: an array of the one index.
    const again = await submitArray({ ...base, indices: [1] })
    jobs.push(again.jobId)
    await until(
      'the resubmitted task finished',
      30_000,
      async () => {
        last = await queryArray(again.jobId, { indices: [1] })
        return isFinished(last[0].state) ? true : undefined
      },
      () => states(last),
    )
    expect(last.map((t) => [t.index, t.state, t.exitCode])).toEqual([[1, 'FAILED', 1]])
  })
})
