// A finished run on Slurm for the views' tests (the Scheduler card, the report): the scripted run's
// result with a launcher, the job ids it submitted, a queue wait on its first measurement and each
// worker's host.
import type { BenchConfig } from '../contract/config'
import type { RunResult } from '../contract/result'
import { scriptedRun } from './fixtures'

export const SLURM_LAUNCHER: NonNullable<BenchConfig['launcher']> = {
  engine: 'slurm',
  partition: 'gpu',
  gres: 'gpu:1',
  time: '1:00:00',
  sbatchArgs: ['--qos=short'],
  queueTimeoutS: 600,
}

export function slurmResult(): RunResult {
  const r = (scriptedRun().at(-1) as { result: RunResult }).result
  const hosts = ['node01', 'node02']
  return {
    ...r,
    config: { ...r.config, launcher: SLURM_LAUNCHER },
    scheduler: { engine: 'slurm', jobIds: ['4101', '4102'] },
    measurements: r.measurements.map((m, i) => ({
      ...m,
      startupMs: i === 0 ? 1500 : 0,
      queueMs: i === 0 ? 12_000 : 0,
      workerHosts: hosts.slice(0, m.strategy === 'sequential' ? 1 : m.workers),
    })),
  }
}
