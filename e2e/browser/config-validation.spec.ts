// A bad value typed into the config: the field says what is wrong, Run stays disabled, nothing is
// sent to the server; fixing the value enables Run again.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type E2eServer, chooseSmokeOnWasm, launchChromium, openApp, shot, skipBrowserSpecs, startE2eServer } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

describe.skipIf(skip)('browser mode: bad config values', () => {
  let env: E2eServer
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    env = await startE2eServer()
    browser = await launchChromium()
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    await openApp(page, env.server)
    await chooseSmokeOnWasm(page)
  })

  afterAll(async () => {
    await browser?.close()
    await env?.close()
  })

  it('a negative data size shows the message and keeps Run disabled', async () => {
    const run = page.locator('[data-test="run"]')
    expect(await run.isEnabled()).toBe(true)
    await page.locator('[data-test="size-0"]').fill('-5')
    await page.locator('#err-sizes').waitFor()
    expect(await page.locator('#err-sizes').textContent()).toMatch(/size|rows|-5/i)
    expect(await page.locator('[data-test="size-0"]').getAttribute('aria-invalid')).toBe('true')
    expect(await run.isDisabled()).toBe(true)
    expect(await page.locator('[data-test="invalid-hint"]').textContent()).toMatch(/1 field to fix/)
    await shot(page, '20-bad-size')
    await run.click({ force: true })
    await page.waitForTimeout(300)
    expect(await page.locator('[data-test="run-status"]').textContent()).toBe('No run yet')
    expect(await env.service.listRuns()).toEqual([])
  })

  it('more workers than models, and a non-number, are refused the same way', async () => {
    await page.locator('[data-test="size-0"]').fill('2000')
    await page.locator('[data-test="workers"]').fill('9')
    await page.locator('#err-workers').waitFor()
    expect(await page.locator('#err-workers').textContent()).toMatch(/worker|model/i)
    expect(await page.locator('[data-test="run"]').isDisabled()).toBe(true)
    await page.locator('[data-test="workers"]').fill('2')
    await page.locator('[data-test="models"]').fill('abc')
    await page.locator('#err-models').waitFor()
    expect(await page.locator('[data-test="run"]').isDisabled()).toBe(true)
    await shot(page, '21-bad-models')
  })

  it('fixing the values enables Run again', async () => {
    await page.locator('[data-test="models"]').fill('4')
    await expect.poll(() => page.locator('[data-test="run"]').isEnabled()).toBe(true)
    expect(await page.locator('.field-error').count()).toBe(0)
    expect(await env.service.listRuns()).toEqual([])
    await shot(page, '22-fixed')
  })
})
