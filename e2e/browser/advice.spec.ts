// Browser mode end to end: a small model-count sweep (MLP, smoke sizes, N = 1, 2, 4, 8, 16 on wasm),
// the model-count chart, advice asked for a target (a bad one first: refused inline), "Verify this
// advice" run as a live run, and the check table — predicted against measured — equal to the check
// stored with the source run. The sweep trains 20 epochs and takes the median of 3 repeats so that even
// batched time grows with N well above a busy machine's noise (at 4 epochs and 1 repeat batched grew
// 80 ms over N = 1…16 and CI refused every fit). axe-core finds no serious violation in either theme.
// Screenshots: test-artifacts/e2e/70–77.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { formatDuration } from '@shared/format'
import {
  accessibilityProblems,
  ARTIFACTS,
  type BrowserSession,
  chooseSmokeOnWasm,
  type E2eServer,
  openApp,
  openBrowserSession,
  shot,
  skipBrowserSpecs,
} from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

/** A screenshot of one part of the page (test-artifacts/e2e/<name>.png), readable at full size. */
async function shotOf(page: Page, selector: string, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.locator(selector).screenshot({ path: join(ARTIFACTS, `${name}.png`) })
}

/** A table's body as text cells (th and td), row by row. */
function cells(page: Page, selector: string): Promise<string[][]> {
  return page
    .locator(`${selector} tbody tr`)
    .evaluateAll((trs) =>
      trs.map((tr) => Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children).map((c) => c.textContent?.trim() ?? '')),
    )
}

describe.skipIf(skip)('browser mode: advice from a model-count sweep, verified', () => {
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let sourceId: string
  let pageErrors: string[] = []

  beforeAll(async () => {
    // bypassCSP: only so axe-core's script can be injected; the app's own CSP is tested in security.spec.ts
    session = await openBrowserSession({}, { bypassCSP: true })
    ;({ env, page, pageErrors } = session)
  })

  afterAll(async () => {
    await session?.close()
  })

  it('runs a models sweep chosen in the config panel', async () => {
    await openApp(page, env.server)
    await chooseSmokeOnWasm(page)
    await page.locator('[data-test="models"]').fill('16')
    await page.locator('[data-test="sweep-models"]').check()
    await page.locator('[data-test="workers"]').fill('1, 2')
    await page.locator('[data-test="model-epochs"]').fill('20')
    await page.locator('[data-test="repeats"]').fill('3')
    expect(await page.locator('[data-test="sweep-counts"]').textContent()).toBe("measures N = 1, 2, 4, 8, 16 (for the advice's fits)")
    await shot(page, '70-sweep-config')
    await page.locator('[data-test="run"]').click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 300_000, interval: 500 }).toBe('Finished')
    const runs = await env.service.listRuns()
    expect(runs).toHaveLength(1)
    sourceId = runs[0].runId
    const stored = await env.store.get(sourceId)
    expect(stored.status).toBe('ok')
    expect(stored.config.models).toEqual([1, 2, 4, 8, 16])
  }, 320_000)

  it('draws time against N per strategy, and throughput as a second view', async () => {
    const chart = page.locator('[data-test="chart-model-count"]')
    await chart.scrollIntoViewIfNeeded()
    await chart.locator('details summary').click()
    const rows = await cells(page, '[data-test="chart-model-count"]')
    expect(rows.map((r) => r[0])).toEqual(['N=1', 'N=2', 'N=4', 'N=8', 'N=16'])
    for (const r of rows) for (const c of r.slice(1)) expect(c, JSON.stringify(rows)).toMatch(/^(—|\d[\d.,]* (ms|s))$/)
    await shotOf(page, '[data-test="model-count"]', '71-model-count-time')
    await page.locator('[data-test="mc-view-throughput"]').click()
    await expect.poll(() => chart.locator('figcaption').textContent()).toMatch(/^Throughput vs model count/)
    expect(await page.locator('[data-test="mc-plateaus"] li').count()).toBeGreaterThanOrEqual(3)
    await shotOf(page, '[data-test="model-count"]', '72-model-count-throughput')
  })

  it('refuses a bad target inline, then advises for 32 models', async () => {
    const panel = page.locator('[data-test="advice-panel"]')
    await panel.scrollIntoViewIfNeeded()
    await page.locator('[data-test="advice-models"]').fill('0')
    await page.locator('[data-test="advice-ask"]').click()
    expect(await page.locator('#err-advice-models').textContent()).toBe('models must be a whole number from 1 to 1000000')
    expect(await page.locator('[data-test="advice-models"]').getAttribute('aria-invalid')).toBe('true')
    await shotOf(page, '[data-test="advice-card"]', '73-advice-bad-target')
    expect(await accessibilityProblems(page), 'a bad advice target').toEqual([])
    await page.locator('[data-test="advice-models"]').fill('32')
    await page.locator('[data-test="advice-size"]').fill('2000')
    await page.locator('[data-test="advice-ask"]').click()
    await expect.poll(() => page.locator('[data-test="advice-answer"]').textContent()).toMatch(/For 32 models at 2,000 rows/)
    expect(await page.locator('#err-advice-models').count()).toBe(0)
    // the same advice as the service's, whichever way it went on this machine
    const advice = await env.service.advise({ runId: sourceId, models: 32, size: 2000 })
    expect(advice.refusal, `the sweep's fits were refused on this machine: ${advice.refusal}`).toBeNull()
    const best = advice.options[0]
    expect(await page.locator('[data-test="advice-pick"]').textContent()).toContain(formatDuration(best.predictedMs))
    expect(await page.locator('[data-test="chart-worker-fit"]').count()).toBe(1)
    expect(await page.locator('[data-test="cm-table"] tbody tr[data-test^="cm-row-"]').count()).toBe(advice.costModels.length)
    await shotOf(page, '[data-test="advice-panel"]', '74-advice')
    expect(await accessibilityProblems(page), 'the advice panel').toEqual([])
  })

  it('verifies the advice: a live run, then predicted against measured from the stored check', async () => {
    await page.locator('[data-test="advice-verify"]').click()
    // the live view shows the verification run (it may end before a poll sees it running)
    await page
      .locator('[data-test="advice-verification"] [role="progressbar"]')
      .waitFor({ timeout: 10_000 })
      .then(
        () => shot(page, '75-verifying'),
        () => undefined,
      )
    const table = page.locator('[data-test="advice-check"] [data-test="advice-check-table"]')
    await table.waitFor({ timeout: 180_000 })
    const source: RunResult = await env.store.get(sourceId)
    expect(source.adviceChecks).toHaveLength(1)
    const check = source.adviceChecks![0]
    const verifyRun = await env.store.get(check.verifyRunId)
    expect(verifyRun.verifies).toBe(sourceId)
    expect(await page.locator('[data-test="run-status"]').textContent()).toBe('Finished')
    const rows = await cells(page, '[data-test="advice-check"]')
    expect(rows).toHaveLength(check.rows.length)
    rows.forEach((r, i) => {
      const c = check.rows[i]
      expect(r[0]).toContain(c.strategy)
      expect(r[1]).toBe(formatDuration(c.predictedMs))
      expect(r[3]).toBe(c.measuredMs == null ? 'not measured' : formatDuration(c.measuredMs))
    })
    expect(await page.locator('[data-test="advice-check-verdict"]').textContent()).toMatch(/the pick (was right|was wrong|could not be judged)/i)
    await page.locator('[data-test="advice-check"]').scrollIntoViewIfNeeded()
    await shotOf(page, '[data-test="advice-card"]', '76-verified')
    await shot(page, '76-verified-page')
    expect(await accessibilityProblems(page), 'the verified advice').toEqual([])
    expect(pageErrors).toEqual([])
  }, 200_000)

  it('History shows the check with the source run', async () => {
    await page.locator('[data-test="nav-history"]').click()
    await page.locator(`[data-test="history-${sourceId}"]`).waitFor()
    await page.locator(`[data-test="history-${sourceId}"] td button`).first().click()
    // the Run view stays in the page, hidden: look inside History's run page
    const check = page.locator('[data-test="run-report"] [data-test="advice-check"]')
    await check.waitFor({ timeout: 10_000 })
    expect(await check.locator('tbody tr').count()).toBeGreaterThanOrEqual(1)
    await check.scrollIntoViewIfNeeded()
    await shot(page, '77-history-check')
  })
})
