// Browser mode end to end in real Chromium: open the token URL, run the smoke preset on wasm, watch
// the live view move, get a chart point per data size and strategy, a green verification badge, a
// summary table equal to the stored run JSON, and the run in History after a reload.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { formatDuration, formatNumber } from '@shared/format'
import {
  type BrowserSession,
  chooseSmokeOnWasm,
  type E2eServer,
  openApp,
  openBrowserSession,
  recordLiveView,
  seenLiveView,
  shot,
  skipBrowserSpecs,
} from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

describe.skipIf(skip)('browser mode: smoke run on wasm', () => {
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let runId: string
  let stored: RunResult
  let pageErrors: string[] = []

  beforeAll(async () => {
    session = await openBrowserSession()
    ;({ env, page, pageErrors } = session)
  })

  afterAll(async () => {
    await session?.close()
  })

  it('opens the URL with the token', async () => {
    await openApp(page, env.server)
    expect(await page.title()).toMatch(/trainpool/i)
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent()).toBe('No run yet')
    expect(await page.locator('[data-test="fatal"]').count()).toBe(0)
    expect(env.server.connections()).toBe(1)
    await shot(page, '01-opened')
  })

  it('runs the smoke preset on wasm: lanes and the model grid move while it runs', async () => {
    await chooseSmokeOnWasm(page)
    expect(await page.locator('[data-test="size-0"]').inputValue()).toBe('2000')
    expect(await page.locator('[data-test="models"]').inputValue()).toMatch(/^4$/)
    await expect.poll(() => page.locator('[data-test="backend-detail"]').textContent()).toMatch(/WebAssembly|wasm/i)
    await shot(page, '02-smoke-on-wasm')
    await recordLiveView(page)
    const run = page.locator('[data-test="run"]')
    expect(await run.isEnabled()).toBe(true)
    await run.click()
    // the lanes go when the run ends: on an idle machine a smoke run can end before a poll sees
    // them, so what the live view showed is read from the recorder (recordLiveView) instead
    await page
      .locator('[data-test="lanes"]')
      .waitFor({ timeout: 5_000 })
      .then(
        () => shot(page, '03-running'),
        () => undefined,
      )
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 120_000, interval: 250 }).toBe('Finished')
    const seen = await seenLiveView(page)
    // lanes showed models being trained, and the per-model progress changed over time
    expect(
      seen.lanes.some((l) => /#\d/.test(l)),
      JSON.stringify(seen.lanes),
    ).toBe(true)
    expect(seen.done.length, JSON.stringify(seen.done)).toBeGreaterThanOrEqual(2)
    expect(new Set(seen.fractions).size, JSON.stringify(seen.fractions)).toBeGreaterThanOrEqual(2)
    expect(seen.done).toContain('4/4')
    const runs = await env.service.listRuns()
    expect(runs).toHaveLength(1)
    runId = runs[0].runId
    stored = await env.store.get(runId)
    expect(stored.status).toBe('ok')
    expect(stored.environment?.backend).toBe('wasm')
  })

  it('draws a chart point for every data size and strategy', async () => {
    const chart = page.locator('[data-test="chart-time"]')
    await chart.locator('details summary').click()
    const columns = await chart.locator('thead th').allTextContents()
    const rows = await chart
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children).map((c) => c.textContent?.trim() ?? ''),
        ),
      )
    const strategies = stored.config.strategies
    const sizes = stored.config.sizes
    expect(
      columns
        .slice(1)
        .map((c) => c.replace(/ \(W=\d+\)$/, ''))
        .sort(),
    ).toEqual([...strategies].sort())
    expect(rows.map((r) => r[0])).toEqual(sizes.map(formatNumber))
    for (const r of rows) for (const cell of r.slice(1)) expect(cell, JSON.stringify(rows)).toMatch(/^\d[\d.,]* (ms|s)$/)
    // the canvas was actually drawn on
    const painted = await chart.locator('canvas').evaluate((c) => {
      const canvas = c as unknown as {
        width: number
        height: number
        getContext(t: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null
      }
      const data = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data
      if (!data) return 0
      let n = 0
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++
      return n
    })
    expect(painted).toBeGreaterThan(100)
    await chart.scrollIntoViewIfNeeded()
    await shot(page, '04-charts')
  })

  it('turns the verification badge green', async () => {
    const badge = page.locator('[data-test="verification"]')
    await expect.poll(() => badge.getAttribute('class')).toMatch(/verify-ok/)
    expect(await badge.textContent()).toMatch(/same work: 4\/4 models per strategy/)
    await badge.scrollIntoViewIfNeeded()
    await shot(page, '05-verified')
  })

  it('shows a summary table equal to the run JSON in the store', async () => {
    const rows = await page
      .locator('[data-test="summary"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children).map((c) => c.textContent?.trim() ?? ''),
        ),
      )
    const fromStore = await env.service.getRun({ runId })
    expect(fromStore).toEqual(stored)
    expect(rows).toHaveLength(stored.summary.length)
    expect(stored.summary.length).toBe(stored.config.strategies.length)
    rows.forEach((r, i) => {
      const s = stored.summary[i]
      expect(r.slice(0, 8)).toEqual([
        formatNumber(s.size),
        String(s.models),
        s.strategy,
        String(s.strategy === 'sequential' ? 1 : s.workers),
        formatDuration(s.medianMs),
        formatDuration(s.minMs),
        formatDuration(s.maxMs),
        s.speedupVsSequential == null ? '—' : `${s.speedupVsSequential.toFixed(2)}×`,
      ])
    })
    await page.locator('[data-test="summary"]').scrollIntoViewIfNeeded()
    await shot(page, '06-summary')
  })

  it('lists the finished run in History after a page reload', async () => {
    await page.reload()
    await page.locator('[data-test="nav-history"]').click()
    const row = page.locator(`[data-test="history-${runId}"]`)
    await row.waitFor({ timeout: 30_000 })
    expect(await row.textContent()).toMatch(/ok/)
    expect(await row.textContent()).toMatch(/wasm/)
    await shot(page, '07-history')
    await row.locator('button').first().click()
    await page.locator('[data-test="run-report"]').waitFor()
    expect(await page.locator('[data-test="run-report"] [data-test="verification"]').getAttribute('class')).toMatch(/verify-ok/)
    await shot(page, '08-history-report')
  })

  it('logged no errors in the page', () => {
    expect(pageErrors).toEqual([])
  })
})
