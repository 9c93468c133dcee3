// The probe's launcher answer (Capabilities.launchers): sbatch is asked once, and a check that
// throws reads as Slurm unavailable with its message, like an answer (never retried per request).
import { describe, expect, it } from 'vitest'
import { BackendProbe } from './backend-probe'

describe('BackendProbe: launchers', () => {
  it('asks about sbatch once and says it in the capabilities', async () => {
    let asked = 0
    const probe = new BackendProbe(
      async () => [],
      async () => [],
      async () => {
        asked++
        return { available: true, detail: 'slurm 22.05.8' }
      },
    )
    expect((await probe.capabilities('cli')).launchers).toEqual({ slurm: { available: true, detail: 'slurm 22.05.8' } })
    await probe.slurm()
    expect(asked).toBe(1)
  })

  it('a check that throws is Slurm unavailable, with why', async () => {
    const probe = new BackendProbe(
      async () => [],
      async () => [],
      async () => {
        throw new Error('sbatch timed out')
      },
    )
    expect(await probe.slurm()).toEqual({ available: false, detail: 'sbatch timed out' })
  })
})
