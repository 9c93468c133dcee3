// advise and verifyAdvice through the real BenchService: the advice of a stored sweep, and the check
// — a real verification run (worker processes, wasm, small sizes) whose predicted-vs-measured rows
// are stored with the source run before run-finished goes out; refusals start nothing; a
// verification cancelled before it measured anything stores no check and says so.
import { afterAll, describe, expect, it } from 'vitest'
import type { RunEvent } from '@shared/contract'
import { mlpFamily } from '@shared/families'
import { modelSweep } from '@shared/plan'
import { fakeRun } from '../testing/run-fixtures'
import { makeService } from '../testing/service-harness'

const SOURCE = '20250101-120000-sweep1'
const sweep = fakeRun({ sizes: [2000], models: modelSweep(8), workers: [1, 2], repeats: 1, model: { ...mlpFamily.defaults, hidden: [16], epochs: 1 } }, SOURCE)
const { service, store, events } = makeService()
afterAll(() => service.shutdown())

describe('advise', () => {
  it('advises from a stored sweep', async () => {
    await store!.save(sweep)
    const advice = await service.advise({ runId: SOURCE, models: 8, size: 2000 })
    expect(advice.refusal).toBeNull()
    expect(advice.options.length).toBe(5) // sequential, pool W=1,2, batched W=1,2
    expect(advice.text).toMatch(/^8 models at 2 000 rows: /)
  })

  it('refuses an unknown run as not-found', async () => {
    await expect(service.advise({ runId: 'nope', models: 8, size: 2000 })).rejects.toMatchObject({ code: 'not-found' })
  })
})

describe('verifyAdvice', () => {
  it('refuses when the advice is refused (a size not measured), and starts nothing', async () => {
    await store!.save(sweep)
    await expect(service.verifyAdvice({ runId: SOURCE, models: 8, size: 5000 })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/nothing to verify: 5 000 rows was not measured \(measured: 2 000\)/),
    })
    expect(await service.currentRun()).toBeNull()
  })

  it('runs the recommended and runner-up options at the target and stores the check with the source run before run-finished', async () => {
    await store!.save(sweep)
    const advice = await service.advise({ runId: SOURCE, models: 4, size: 2000 })
    const { runId } = await service.verifyAdvice({ runId: SOURCE, models: 4, size: 2000 })
    const sourceAtFinish: Promise<unknown> = new Promise((resolve) => {
      const off = service.onEvent((e: RunEvent) => {
        if (e.type === 'run-finished' && e.runId === runId) {
          off()
          resolve(store!.get(SOURCE).then((r) => r.adviceChecks?.length ?? 0))
        }
      })
    })
    const check = await service.waitForAdviceCheck(runId)
    expect(await sourceAtFinish).toBe(1)

    const verifyRun = await service.getRun({ runId })
    expect(verifyRun.status).toBe('ok')
    expect(verifyRun.verifies).toBe(SOURCE)
    expect(verifyRun.config).toMatchObject({ sizes: [2000], models: [4], repeats: 1 })
    const picked = advice.options.slice(0, 2).map((o) => `${o.strategy}/${o.workers}`)
    for (const p of picked) expect(verifyRun.summary.map((s) => `${s.strategy}/${s.workers}`)).toContain(p)

    expect(check.verifyRunId).toBe(runId)
    expect(check.rows.map((r) => `${r.strategy}/${r.workers}`).slice(0, 2)).toEqual(picked)
    expect(check.rows.every((r) => r.measuredMs !== null && r.measuredMs > 0)).toBe(true)
    expect(typeof check.pickRight).toBe('boolean')
    const stored = await store!.get(SOURCE)
    expect(stored.adviceChecks).toEqual([check])
    expect(events.filter((e) => e.type === 'run-finished' && e.runId === runId)).toHaveLength(1)
  }, 120_000)

  it('a verification cancelled before it measured an option stores no check, and says why', async () => {
    await store!.save(sweep)
    const before = (await store!.get(SOURCE)).adviceChecks ?? []
    const { runId } = await service.verifyAdvice({ runId: SOURCE, models: 4, size: 2000 })
    const finished = new Promise<void>((resolve) => {
      const off = service.onEvent((e: RunEvent) => {
        if (e.type === 'run-finished' && e.runId === runId) {
          off()
          resolve()
        }
      })
    })
    await service.cancel({ runId })
    await expect(service.waitForAdviceCheck(runId)).rejects.toMatchObject({
      code: 'not-found',
      message: expect.stringMatching(new RegExp(`^no check stored: the verification run ${runId} ended cancelled before it measured an option`)),
    })
    await finished
    expect((await service.getRun({ runId })).status).toBe('cancelled')
    expect((await store!.get(SOURCE)).adviceChecks ?? []).toEqual(before)
  }, 120_000)
})
