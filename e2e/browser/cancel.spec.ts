// Cancelling a run mid-way from the browser: a second tab that joins mid-run sees the live state
// (currentRun replay), both tabs say Cancelled, the stored run is cancelled, and no worker process
// outlives it.
import { readFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitUntil } from '../../src-main/testing/capability'
import { childrenOf } from '../../src-main/testing/cli-process'
import { type E2eServer, chooseSmokeOnWasm, launchChromium, openApp, shot, skipBrowserSpecs, startE2eServer } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

/** Child processes of this test process that run a Trainpool worker entry (Linux: /proc). */
function workerChildren(): number[] {
  return childrenOf(process.pid).filter((pid) => {
    try {
      return /worker(\.js|[/\\]index\.ts)/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
    } catch {
      return false /* gone meanwhile */
    }
  })
}

describe.skipIf(skip)('browser mode: cancel a run mid-way', () => {
  let env: E2eServer
  let browser: Browser
  let page: Page
  let second: Page

  beforeAll(async () => {
    env = await startE2eServer()
    browser = await launchChromium()
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  })

  afterAll(async () => {
    await browser?.close()
    await env?.close()
  })

  it('starts a bigger run that is still going a few seconds later', async () => {
    await openApp(page, env.server)
    await chooseSmokeOnWasm(page)
    await page.locator('[data-test="size-0"]').fill('50000')
    await page.locator('[data-test="models"]').fill('8')
    await page.locator('[data-test="model-epochs"]').fill('5')
    expect(await page.locator('[data-test="run"]').isEnabled()).toBe(true)
    await page.locator('[data-test="run"]').click()
    await page.locator('[data-test="lanes"] [data-test="lane-models"]', { hasText: '#' }).first().waitFor({ timeout: 90_000 })
    expect(await page.locator('[data-test="run-status"]').textContent()).toBe('Running')
    expect(env.launcher.alive().length).toBeGreaterThan(0)
    expect(workerChildren().length).toBeGreaterThan(0)
    await shot(page, '10-cancel-running')
  })

  it('a second tab opened mid-run sees the live state', async () => {
    second = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    await openApp(second, env.server)
    await expect.poll(() => second.locator('[data-test="run-status"]').textContent(), { timeout: 10_000 }).toBe('Running')
    await expect.poll(() => second.locator('[data-test="measurement-of"]').textContent(), { timeout: 10_000 }).toMatch(/measurement \d+ of 3/)
    await second.locator('[data-test="model-grid"]').waitFor({ timeout: 10_000 })
    expect(await second.locator('[data-test="cancel"]').isVisible()).toBe(true)
    expect(env.server.connections()).toBe(2)
    await shot(second, '11-cancel-second-tab')
  })

  it('Cancel: both tabs say Cancelled and no worker process remains', async () => {
    const pids = [...env.launcher.pids]
    await page.locator('[data-test="cancel"]').click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 30_000 }).toBe('Cancelled')
    await expect.poll(() => second.locator('[data-test="run-status"]').textContent(), { timeout: 10_000 }).toBe('Cancelled')
    expect(await page.locator('[data-test="cancel"]').count()).toBe(0)
    expect(await page.locator('[data-test="run"]').isEnabled()).toBe(true)
    expect(await waitUntil(() => env.launcher.alive().length === 0, 10_000), `alive: ${env.launcher.alive()}`).toBe(true)
    expect(await waitUntil(() => workerChildren().length === 0, 10_000), `children: ${workerChildren()}`).toBe(true)
    expect(pids.length).toBeGreaterThan(0)
    const runs = await env.service.listRuns()
    expect(runs).toHaveLength(1)
    expect((await env.store.get(runs[0].runId)).status).toBe('cancelled')
    expect(await env.service.currentRun()).toBeNull()
    await shot(page, '12-cancelled')
    await shot(second, '13-cancelled-second-tab')
  })
})
