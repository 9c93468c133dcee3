// Browser mode, backends side by side (issue 25): pick wasm and cpu with the config panel's Compare
// backends boxes, run the smoke preset, and see both backends everywhere a result is shown: each
// series of the charts names its backend, the summary table has a Backend column equal to the
// stored run's entries, the verdict says which backend was faster than the other's best, the
// badge gives the cross-backend Δ, the Environment card each backend's device, and History's run
// page the same after a reload.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { formatDuration, formatNumber } from '@shared/format'
import { type BrowserSession, type E2eServer, openApp, openBrowserSession, shot, skipBrowserSpecs } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

/** A table's body as text, row by row. */
function tableRows(page: Page, selector: string): Promise<string[][]> {
  return page
    .locator(`${selector} tbody tr`)
    .evaluateAll((trs) =>
      trs.map((tr) => Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children).map((c) => c.textContent?.trim() ?? '')),
    )
}

describe.skipIf(skip)('browser mode: backends side by side (wasm and cpu)', () => {
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let stored: RunResult
  let pageErrors: string[] = []

  beforeAll(async () => {
    session = await openBrowserSession()
    ;({ env, page, pageErrors } = session)
  })

  afterAll(async () => {
    await session?.close()
  })

  it('picks wasm and cpu in Compare backends: the panel says what it will measure', async () => {
    await openApp(page, env.server)
    await page.locator('[data-test="preset"]').selectOption('smoke')
    await page.locator('[data-test="backend"]').selectOption('wasm')
    const compare = page.locator('[data-test="compare-backends"]')
    await compare.waitFor()
    expect(await page.locator('[data-test="compare-wasm"]').isChecked()).toBe(true)
    await page.locator('[data-test="compare-cpu"]').check()
    await expect.poll(() => page.locator('[data-test="compare-help"]').textContent()).toMatch(/on wasm, then cpu, compared side by side/)
    expect(await page.locator('[data-test="estimate-basis"]').textContent()).toMatch(/first backend's speed/)
    // still the smoke preset: where to run is not the workload
    expect(await page.locator('[data-test="preset"]').inputValue()).toBe('smoke')
    expect(await page.locator('[data-test="run"]').isEnabled()).toBe(true)
    await compare.scrollIntoViewIfNeeded()
    await shot(page, 'backends-01-compare-picked')
  })

  it('runs the smoke preset on both backends', async () => {
    await page.locator('[data-test="run"]').click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 240_000, interval: 250 }).toBe('Finished')
    const [entry] = await env.service.listRuns()
    stored = await env.store.get(entry.runId)
    expect(stored.status).toBe('ok')
    expect(stored.config.backend).toEqual(['wasm', 'cpu'])
    expect(stored.environment?.backends?.map((b) => b.backend)).toEqual(['wasm', 'cpu'])
    expect(new Set(stored.summary.map((s) => s.backend))).toEqual(new Set(['wasm', 'cpu']))
  })

  it('draws a series per backend, strategy and W, each naming its backend', async () => {
    const chart = page.locator('[data-test="chart-time"]')
    expect(await chart.locator('figcaption').textContent()).toMatch(/wasm vs cpu/)
    // the canvas is labelled with every series (what its legend shows)
    const label = (await chart.locator('canvas').getAttribute('aria-label')) ?? ''
    for (const s of ['wasm sequential', 'wasm pool (W=2)', 'wasm batched (W=2)', 'cpu sequential', 'cpu pool (W=2)', 'cpu batched (W=2)'])
      expect(label).toContain(`${s}:`)
    await chart.locator('details summary').click()
    const columns = (await chart.locator('thead th').allTextContents()).map((c) => c.trim())
    expect(columns.slice(1)).toEqual(['wasm sequential', 'wasm pool (W=2)', 'wasm batched (W=2)', 'cpu sequential', 'cpu pool (W=2)', 'cpu batched (W=2)'])
    const rows = await tableRows(page, '[data-test="chart-time"]')
    expect(rows.map((r) => r[0])).toEqual(['2,000'])
    for (const cell of rows[0].slice(1)) expect(cell).toMatch(/^\d[\d.,]* (ms|s)$/)
    const speedup = (await page.locator('[data-test="chart-speedup"] canvas').getAttribute('aria-label')) ?? ''
    expect(speedup).toMatch(/wasm pool \(W=2\):.*cpu pool \(W=2\):/)
    await chart.scrollIntoViewIfNeeded()
    await shot(page, 'backends-02-charts')
  })

  it('the summary table has a Backend column equal to the stored run', async () => {
    const headers = (await page.locator('[data-test="summary"] thead th').allTextContents()).map((t) => t.trim())
    expect(headers.slice(0, 5)).toEqual(['Rows', 'Models', 'Backend', 'Strategy', 'W'])
    const rows = await tableRows(page, '[data-test="summary"]')
    expect(rows).toHaveLength(stored.summary.length)
    rows.forEach((r, i) => {
      const s = stored.summary[i]
      expect(r.slice(0, 6)).toEqual([
        formatNumber(s.size),
        String(s.models),
        s.backend,
        s.strategy,
        String(s.strategy === 'sequential' ? 1 : s.workers),
        formatDuration(s.medianMs),
      ])
    })
    expect(rows.filter((r) => r[2] === 'wasm')).toHaveLength(3)
    expect(rows.filter((r) => r[2] === 'cpu')).toHaveLength(3)
    await page.locator('[data-test="summary"]').scrollIntoViewIfNeeded()
    await shot(page, 'backends-03-summary')
  })

  it("the verdict says which backend was faster than the other one's best; the badge the cross-backend Δ", async () => {
    const headline = (await page.locator('[data-test="verdict-headline"]').textContent()) ?? ''
    expect(headline).toMatch(
      /^On this machine, for 4 models at 2,000 rows: (wasm|cpu) (sequential|pool|batched).*, [\d.]+× faster than (wasm|cpu)'s best \((wasm|cpu) /,
    )
    const [, winner] = /rows: (\w+) /.exec(headline)!
    expect(headline).toContain(`faster than ${winner === 'wasm' ? 'cpu' : 'wasm'}'s best`)
    const badge = page.locator('[data-test="verification"]')
    await expect.poll(() => badge.getAttribute('class')).toMatch(/verify-ok/)
    expect(await badge.textContent()).toMatch(/across backends max Δ/)
    const envCard = (await page.locator('[data-test="environment"]').textContent()) ?? ''
    expect(envCard).toMatch(/Backend wasm/)
    expect(envCard).toMatch(/Backend cpu/)
    await page.locator('[data-test="verdict"]').scrollIntoViewIfNeeded()
    await shot(page, 'backends-04-verdict')
  })

  it("History's run page shows both backends after a reload; the draft keeps both ticked", async () => {
    await page.reload()
    await page.locator('[data-test="compare-backends"]').waitFor()
    expect(await page.locator('[data-test="compare-wasm"]').isChecked()).toBe(true)
    expect(await page.locator('[data-test="compare-cpu"]').isChecked()).toBe(true)
    await page.locator('[data-test="nav-history"]').click()
    const row = page.locator(`[data-test="history-${stored.runId}"]`)
    await row.waitFor({ timeout: 30_000 })
    expect(await row.locator('[data-test="history-backend"]').textContent()).toMatch(/wasm, cpu/)
    await row.locator('button').first().click()
    const report = page.locator('[data-test="run-report"]')
    await report.waitFor()
    expect(await report.locator('[data-test="chart-time"] figcaption').textContent()).toMatch(/wasm vs cpu/)
    const rows = await tableRows(page, '[data-test="run-report"] [data-test="summary"]')
    expect(rows.map((r) => r[2]).sort()).toEqual(['cpu', 'cpu', 'cpu', 'wasm', 'wasm', 'wasm'])
    expect(await report.locator('[data-test="verdict-headline"]').textContent()).toMatch(/'s best/)
    await shot(page, 'backends-05-history-report')
  })

  it('logged no errors in the page', () => {
    expect(pageErrors).toEqual([])
  })
})
