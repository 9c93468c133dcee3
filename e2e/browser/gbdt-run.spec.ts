// Browser mode, trees: pick the gradient-boosted trees family in the config panel, run its smoke
// preset on Trainpool's own engine, watch the lanes count trees ("tree 7/10"), and get a chart
// point per strategy, the tree parameters on the page, and an exact same-work verification.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrowserSession, type E2eServer, openApp, openBrowserSession, shot, skipBrowserSpecs } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

describe.skipIf(skip)('browser mode: trees (gbdt) smoke run', () => {
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let pageErrors: string[] = []

  beforeAll(async () => {
    session = await openBrowserSession()
    ;({ env, page, pageErrors } = session)
  })

  afterAll(async () => {
    await session?.close()
  })

  it('runs the trees smoke preset; lanes count trees while it runs', async () => {
    await openApp(page, env.server)
    await page.locator('[data-test="family"]').selectOption('gbdt')
    await page.locator('[data-test="preset"]').selectOption('smoke')
    await page.locator('[data-test="backend"]').selectOption('cpu')
    expect(await page.locator('[data-test="model-rounds"]').inputValue()).toBe('10')
    expect(await page.locator('[data-test="model-maxDepth"]').inputValue()).toBe('6')
    // a slower job than the preset's, so the lanes are seen mid-way
    await page.locator('[data-test="model-rounds"]').fill('40')
    await page.evaluate(() => {
      const w = globalThis as unknown as {
        __progress: string[]
        document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }>; body: unknown }
      }
      w.__progress = []
      const Observer = (globalThis as unknown as { MutationObserver: new (cb: () => void) => { observe(t: unknown, o: object): void } }).MutationObserver
      new Observer(() => {
        for (const e of Array.from(w.document.querySelectorAll('[data-test="lane-progress"]'))) {
          const t = e.textContent?.trim() ?? ''
          if (t && w.__progress[w.__progress.length - 1] !== t) w.__progress.push(t)
        }
      }).observe(w.document.body, { subtree: true, childList: true, characterData: true })
    })
    await page.locator('[data-test="run"]').click()
    await page
      .locator('[data-test="lanes"]')
      .waitFor({ timeout: 10_000 })
      .then(
        () => shot(page, 'gbdt-01-running'),
        () => undefined,
      )
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 180_000, interval: 250 }).toBe('Finished')
    const progress = await page.evaluate(() => (globalThis as unknown as { __progress: string[] }).__progress)
    const trees = progress.filter((t) => /^tree \d+\/40$/.test(t))
    expect(trees.length, JSON.stringify(progress)).toBeGreaterThanOrEqual(2)
  })

  it('verifies the same trees in every strategy and charts each strategy', async () => {
    const [entry] = await env.service.listRuns()
    const run = await env.store.get(entry.runId)
    expect(run.status).toBe('ok')
    expect(run.config.model).toMatchObject({ kind: 'gbdt', rounds: 40 })
    expect(run.verification).toMatchObject({ sameWork: true, tolerance: 0 })
    expect(entry.model).toMatch(/^GBDT · 40 rounds, depth 6/)
    const chart = page.locator('[data-test="chart-time"]')
    await chart.locator('details summary').click()
    const columns = await chart.locator('thead th').allTextContents()
    expect(
      columns
        .slice(1)
        .map((c) => c.replace(/ \(W=\d+\)$/, ''))
        .sort(),
    ).toEqual(['batched', 'pool', 'sequential'])
    expect(await page.locator('[data-test="chart-time"] figcaption').first().textContent()).toMatch(/4 GBDT models · cpu/)
    expect(await page.locator('body').textContent()).toMatch(/M hist\. updates\/s/)
    await shot(page, 'gbdt-02-finished')
    expect(pageErrors).toEqual([])
  })
})
