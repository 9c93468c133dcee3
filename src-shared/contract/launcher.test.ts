// config.launcher's refusals name the field and what is accepted (issue 24): Slurm's own values are
// checked before anything is submitted, Trainpool's own sbatch options cannot be passed again, and
// --gpus (this machine's GPUs) does not combine with Slurm (which assigns each task its GPU).
import { describe, expect, it } from 'vitest'
import { BenchConfigSchema, presetConfig, reservedSbatchArg, SLURM_DEFAULTS } from '.'

const base = presetConfig('smoke')
const issues = (launcher: unknown, extra: object = {}) => {
  const r = BenchConfigSchema.safeParse({ ...base, ...extra, launcher })
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
}

describe('config.launcher', () => {
  it('slurm with its defaults: gres gpu:1, no pass-through options, a 600 s queue timeout', () => {
    const r = BenchConfigSchema.parse({ ...base, launcher: { engine: 'slurm' } })
    expect(r.launcher).toEqual({ engine: 'slurm', gres: SLURM_DEFAULTS.gres, sbatchArgs: [], queueTimeoutS: 600 })
    expect(
      BenchConfigSchema.parse({ ...base, launcher: { engine: 'slurm', gres: null, partition: 'gpu', time: '1-12:00', account: 'lab' } }).launcher,
    ).toMatchObject({ gres: null, time: '1-12:00' })
  })

  it('refuses bad values by field, with what is accepted', () => {
    expect(issues({ engine: 'ray' })[0]).toMatch(/^launcher\.engine/)
    expect(issues({ engine: 'slurm', time: 'an hour' })).toEqual(['launcher.time: launcher.time accepts a Slurm time limit such as 30, 1:00:00 or 1-12'])
    expect(issues({ engine: 'slurm', partition: 'gpu; rm -rf /' })[0]).toMatch(/^launcher\.partition: launcher\.partition accepts a Slurm value/)
    expect(issues({ engine: 'slurm', sbatchArgs: ['qos=short'] })[0]).toMatch(/^launcher\.sbatchArgs\.0: .*--option=value/)
    expect(issues({ engine: 'slurm', queueTimeoutS: 1 })[0]).toMatch(/^launcher\.queueTimeoutS/)
    expect(issues({ engine: 'slurm', extra: 1 })[0]).toMatch(/extra/)
  })

  it("refuses Trainpool's own sbatch options and --gpus beside Slurm", () => {
    expect(issues({ engine: 'slurm', sbatchArgs: ['--qos=short', '--array=0-9'] })).toEqual([
      'launcher.sbatchArgs.1: launcher.sbatchArgs: --array is set by Trainpool itself (its own field or the job array); accepted: other sbatch options such as --qos=short',
    ])
    expect(issues({ engine: 'slurm' }, { gpus: 'all' })[0]).toMatch(/^gpus: .*Slurm assigns each task its GPU/)
    expect(reservedSbatchArg('-a3')).toBe('-a')
    expect(reservedSbatchArg('--gres=gpu:2')).toBe('--gres')
    expect(reservedSbatchArg('--qos=short')).toBeNull()
  })
})
