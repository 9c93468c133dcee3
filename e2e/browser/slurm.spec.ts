// Browser mode where sbatch can submit (the service's Slurm check stubbed: no cluster is needed for
// the UI; real Slurm runs are tested in src-main/pool/slurm/slurm-run.integration.test.ts) on a
// machine with two GPUs: "Where to run" offers a Slurm cluster, its boxes say the contract's errors
// by field, the GPU picker steps aside, the choice survives a reload; and a stored Slurm run shows
// its job ids, queue waits and hosts on History's run page.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { fakeRun } from '../../src-main/testing/run-fixtures'
import {
  type BrowserSession,
  chooseSmokeOnWasm,
  type E2eServer,
  openApp,
  openBrowserSession,
  shot,
  skipBrowserSpecs,
  waitForCapabilities,
} from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

/** A finished run on Slurm as the service stores one: launcher, job ids, each pool's queue wait and hosts. */
function storedSlurmRun(): RunResult {
  const r = fakeRun(
    { workers: [2], repeats: 1, launcher: { engine: 'slurm', partition: 'gpu', gres: 'gpu:1', time: '30', sbatchArgs: ['--qos=short'], queueTimeoutS: 600 } },
    '20250101-120000-51a4a1',
  )
  return {
    ...r,
    scheduler: { engine: 'slurm', jobIds: r.measurements.map((_, i) => String(4101 + i)) },
    measurements: r.measurements.map((m, i) => ({
      ...m,
      startupMs: 900 + 100 * i,
      queueMs: 2500 + 1200 * i,
      workerHosts: m.strategy === 'sequential' ? ['node01'] : ['node01', 'node02'],
      workerGpus: m.strategy === 'sequential' ? ['0'] : ['0', '0'],
    })),
  }
}

describe.skipIf(skip)('browser mode: where to run (Slurm)', () => {
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let pageErrors: string[] = []
  const slurmRun = storedSlurmRun()

  beforeAll(async () => {
    session = await openBrowserSession({
      checkSlurm: async () => ({ available: true, detail: 'slurm 22.05.8' }),
      discoverGpus: async () => [0, 1].map((index) => ({ index, uuid: `GPU-e2e-${index}`, name: 'NVIDIA H200', memoryMiB: 143771 })),
    })
    ;({ env, page, pageErrors } = session)
    await env.store.save(slurmRun)
  })

  afterAll(async () => {
    await session?.close()
  })

  it('chooses a Slurm cluster: its boxes, their errors by field, the GPU picker aside; remembered across a reload', async () => {
    await openApp(page, env.server)
    await chooseSmokeOnWasm(page)
    const section = page.locator('[data-test="where-to-run"]')
    expect(await section.locator('[data-test="slurm-detail"]').textContent()).toBe('slurm 22.05.8')
    await page.locator('[data-test="gpus-pin"]').check()
    await page.locator('[data-test="place-slurm"]').check()
    expect(await page.locator('[data-test="slurm-gres"]').inputValue()).toBe('gpu:1')
    expect(await page.locator('[data-test="gpu-picker"]').getAttribute('disabled')).not.toBeNull()
    expect(await page.locator('[data-test="gpus-pin"]').count()).toBe(0)
    expect(await page.locator('[data-test="gpus-slurm-note"]').textContent()).toContain('each task gets its GPU from Slurm')

    await page.locator('[data-test="slurm-partition"]').fill('gpu a100')
    await page.locator('[data-test="slurm-queueTimeoutS"]').fill('2')
    expect(await page.locator('#err-slurm-partition li').textContent()).toContain('Partition accepts a Slurm value such as gpu')
    expect(await page.locator('#err-slurm-queueTimeoutS li').textContent()).toContain('Queue timeout (s) must be an integer from 5 to 604800')
    expect(await page.locator('[data-test="run"]').isDisabled()).toBe(true)
    await shot(page, 'slurm-01-config-errors')

    await page.locator('[data-test="slurm-partition"]').fill('gpu')
    await page.locator('[data-test="slurm-queueTimeoutS"]').fill('300')
    await page.locator('[data-test="slurm-time"]').fill('30')
    await page.locator('[data-test="slurm-sbatchArgs"]').fill('--qos=short')
    expect(await page.locator('[data-test="run"]').isDisabled()).toBe(false)
    expect(await page.locator('[data-test="estimate-slurm"]').textContent()).toContain('one job array per pool')
    await shot(page, 'slurm-02-config')

    await page.reload()
    await waitForCapabilities(page)
    expect(await page.locator('[data-test="place-slurm"]').isChecked()).toBe(true)
    expect(await page.locator('[data-test="slurm-partition"]').inputValue()).toBe('gpu')
    expect(await page.locator('[data-test="slurm-sbatchArgs"]').inputValue()).toBe('--qos=short')
    // the service takes it as it is (validate: nothing is submitted)
    const saved = await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem('trainpool.config.v2'),
    )
    const config = await env.service.validate(JSON.parse(saved ?? 'null'))
    expect(config.launcher).toEqual({ engine: 'slurm', partition: 'gpu', gres: 'gpu:1', time: '30', sbatchArgs: ['--qos=short'], queueTimeoutS: 300 })
    expect(config.gpus).toBeUndefined()
  })

  it("History's run page shows a Slurm run's job ids, queue waits and hosts", async () => {
    await page.locator('[data-test="nav-history"]').click()
    await page.locator(`[data-test="history-${slurmRun.runId}"] td button`).first().click()
    const card = page.locator('[data-test="scheduler"]')
    await card.waitFor()
    expect(await card.locator('[data-test="slurm-job-ids"]').textContent()).toBe(slurmRun.scheduler!.jobIds.join(', '))
    expect(await card.locator('[data-test="slurm-row-1"] [data-test="slurm-hosts"]').textContent()).toBe('node01 (W0) · node02 (W1)')
    expect(await card.locator('[data-test="slurm-row-1"] [data-test="slurm-queue"]').textContent()).toBe('3.70 s')
    await card.scrollIntoViewIfNeeded()
    await shot(page, 'slurm-03-history-run')
    expect(pageErrors).toEqual([])
  })
})
