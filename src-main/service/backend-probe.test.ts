// The probe's launcher answer (Capabilities.launchers): each launcher's check is asked once, and a
// check that throws reads as that launcher unavailable with its message, like an answer (never
// retried per request). A launcher no check knows is unavailable, saying so.
import { describe, expect, it } from 'vitest'
import { BackendProbe } from './backend-probe'

describe('BackendProbe: launchers', () => {
  it('asks each launcher once and says it in the capabilities, by engine', async () => {
    let asked = 0
    const probe = new BackendProbe(
      async () => [],
      async () => [],
      () => ({
        slurm: async () => {
          asked++
          return { available: true, detail: 'slurm 22.05.8' }
        },
        toy: async () => ({ available: false, detail: 'no toy here' }),
      }),
    )
    expect((await probe.capabilities('cli')).launchers).toEqual({
      slurm: { available: true, detail: 'slurm 22.05.8' },
      toy: { available: false, detail: 'no toy here' },
    })
    await probe.launcher('slurm')
    expect(asked).toBe(1)
    expect(await probe.launcher('ray')).toEqual({ available: false, detail: 'no launcher "ray" in this build' })
  })

  it('a check that throws is that launcher unavailable, with why', async () => {
    const probe = new BackendProbe(
      async () => [],
      async () => [],
      () => ({
        slurm: async () => {
          throw new Error('sbatch timed out')
        },
      }),
    )
    expect(await probe.launcher('slurm')).toEqual({ available: false, detail: 'sbatch timed out' })
  })
})
