// The FakeService's advice methods behave as the service's: advise is the real advice of a stored
// run; verifyAdvice refuses when the advice does, else starts a live run; completeVerification
// stores the check with the source run before run-finished reaches a listener.
import { describe, expect, it } from 'vitest'
import { presetConfig } from '../contract/config'
import type { RunEvent } from '../contract/events'
import { modelSweep } from '../plan'
import { fakeBridge, FakeService } from './fake-service'
import { measurementFor, planFor, resultFor } from './fixtures'

function sweepRun(runId: string) {
  const config = presetConfig('smoke', { models: modelSweep(16), workers: [1, 2] })
  return resultFor(
    config,
    planFor(config).map((k) => measurementFor(k, false, config)),
    { runId },
  )
}

describe('FakeService advice', () => {
  it('advise gives the real advice of a stored run; a bad target is refused by the bridge as invalid-input', async () => {
    const service = new FakeService().addRun(sweepRun('sweep'))
    const advice = await service.advise({ runId: 'sweep', models: 64, size: 2000 })
    expect(advice.refusal).toBeNull()
    expect(advice.options.length).toBeGreaterThan(0)
    const bridge = fakeBridge(service)
    await expect(bridge.advise({ runId: 'sweep', models: 0, size: 2000 })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/models must be a whole number from 1 to 1000000/),
    })
    await expect(bridge.advise({ runId: 'nope', models: 5, size: 2000 })).rejects.toMatchObject({ code: 'not-found' })
  })

  it('verifyAdvice starts a live run; completeVerification stores the check with the source, then run-finished', async () => {
    const service = new FakeService({ runId: 'verify-1' }).addRun(sweepRun('sweep'))
    const { runId } = await service.verifyAdvice({ runId: 'sweep', models: 64, size: 2000 })
    expect(runId).toBe('verify-1')
    expect((await service.currentRun())?.runId).toBe('verify-1')
    const checksAtFinish: number[] = []
    service.onEvent((e: RunEvent) => {
      if (e.type === 'run-finished') checksAtFinish.push(service.results.get('sweep')!.adviceChecks?.length ?? 0)
    })
    const config = presetConfig('smoke', { models: [64], workers: [1, 2] })
    const measured = resultFor(
      config,
      planFor(config).map((k) => measurementFor(k, false, config)),
      { runId: 'ignored' },
    )
    const check = service.completeVerification('verify-1', measured)
    expect(checksAtFinish).toEqual([1])
    expect(check.rows.every((r) => r.measuredMs !== null)).toBe(true)
    expect((await service.getRun({ runId: 'verify-1' })).verifies).toBe('sweep')
    expect(await service.currentRun()).toBeNull()
  })

  it('verifyAdvice is refused when the advice is', async () => {
    const service = new FakeService().addRun(sweepRun('sweep'))
    await expect(service.verifyAdvice({ runId: 'sweep', models: 64, size: 9999 })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/nothing to verify: 9 999 rows was not measured/),
    })
    expect(await service.currentRun()).toBeNull()
  })
})
