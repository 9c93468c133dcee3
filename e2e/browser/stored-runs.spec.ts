// Browser mode, stored runs as a user reads them (no training: fixture runs saved to the store):
// the Advice card's cost-model table stays inside its card, chart titles stay readable next to a
// long device name, and two run folders holding the same run.json are both listed.
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { modelSweep } from '@shared/plan'
import { ARTIFACTS, type BrowserSession, type E2eServer, openApp, openBrowserSession, shot, skipBrowserSpecs } from '../../src-main/testing/e2e-browser'
import { fakeRun } from '../../src-main/testing/run-fixtures'

const skip = skipBrowserSpecs()
const LONG_DEVICE = 'NVIDIA GeForce RTX 4090 Laptop GPU with Max-Q Design (Vulkan 1.3.277, driver 550.54.14, 16 GiB)'
const SWEEP = '20250101-120000-sweep1'
const COPY = '20250102-090000-copy01'

describe.skipIf(skip)('browser mode: stored runs', () => {
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let pageErrors: string[] = []

  beforeAll(async () => {
    session = await openBrowserSession()
    ;({ env, page, pageErrors } = session)
    const run = fakeRun({ sizes: [2000], models: modelSweep(1000), workers: [1, 2], repeats: 3 }, SWEEP)
    run.environment!.device = LONG_DEVICE
    await env.store.save(run)
    // a run folder copied by hand: the same run.json under another folder name
    cpSync(join(env.store.dir, SWEEP), join(env.store.dir, COPY), { recursive: true })
    await openApp(page, env.server)
    await page.locator('[data-test="nav-history"]').click()
  })

  afterAll(async () => {
    await session?.close()
  })

  it('lists both folders of a copied run, the copy marked, so neither hides the other', async () => {
    await page.locator(`[data-test="history-${COPY}"]`).waitFor()
    await shot(page, '80-history-copied-run')
    expect(await page.locator(`[data-test="history-${SWEEP}"]`).count()).toBe(1)
    expect(await page.locator(`[data-test="history-${COPY}"] [data-test="history-copy-of"]`).textContent()).toBe(`copy of ${SWEEP}`)
    expect(await page.locator(`[data-test="history-${SWEEP}"] [data-test="history-copy-of"]`).count()).toBe(0)
  })

  it("keeps the Advice card's cost-model table inside the card, and chart titles readable next to a long device name", async () => {
    await page.locator(`[data-test="history-${SWEEP}"] button`).first().click()
    const advice = page.locator('[data-test="advice-panel"]')
    await advice.waitFor()
    await page.locator('[data-test="cm-table"]').waitFor()
    await shot(page, '81-stored-run-advice')
    await page
      .locator('.chart-grid')
      .first()
      .screenshot({ path: join(ARTIFACTS, '82-chart-titles-long-device.png') })
    await advice.screenshot({ path: join(ARTIFACTS, '83-advice-card.png') })
    // a sweep's 11 model counts: the table fits its card (wrapping its cells) at the usual widths,
    // and nothing sticks out of the card or the page
    for (const width of [1400, 1280, 1000]) {
      await page.setViewportSize({ width, height: 1000 })
      // the charts follow the new width on their next frame (ResizeObserver)
      await page.waitForTimeout(300)
      const fit = await advice.evaluate((el) => {
        type Box = { scrollWidth: number; clientWidth: number }
        const scroller = (el as unknown as { querySelector(s: string): Box }).querySelector('.cost-models .table-scroll')
        const doc = (globalThis as unknown as { document: { documentElement: Box } }).document.documentElement
        const card = el as unknown as Box
        return { table: scroller.scrollWidth - scroller.clientWidth, card: card.scrollWidth - card.clientWidth, page: doc.scrollWidth - doc.clientWidth }
      })
      expect(fit, `at ${width} px`).toEqual({ table: 0, card: 0, page: 0 })
    }
    await page.setViewportSize({ width: 1400, height: 1000 })
    // the chart titles: a readable size, the device cut short or wrapped, never shrunk to fit
    const titles = await page.locator('.chart-title').evaluateAll((els) =>
      els.map((e) => {
        const el = e as unknown as { textContent: string | null; scrollWidth: number; clientWidth: number }
        return {
          text: el.textContent ?? '',
          size: parseFloat((globalThis as unknown as { getComputedStyle(x: unknown): { fontSize: string } }).getComputedStyle(e).fontSize),
          overflows: el.scrollWidth > el.clientWidth + 1,
        }
      }),
    )
    expect(titles.some((t) => t.text.includes(LONG_DEVICE))).toBe(true)
    for (const t of titles) {
      expect(t.size, t.text).toBeGreaterThanOrEqual(12)
      expect(t.overflows, t.text).toBe(false)
    }
    expect(pageErrors).toEqual([])
  })
})
