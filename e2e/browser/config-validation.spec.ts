// A bad value typed into the config: the field says what is wrong, Run stays disabled, nothing is
// sent to the server; fixing the value enables Run again. Reset after a model set leaves nothing of
// it behind, and the count of fields to fix always matches the messages shown.
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

  it('Reset after a trees grid is the default run: no set, nothing to fix; a new MLP grid counts its own boxes', async () => {
    // the messages on screen, checked against the count of fields to fix (no hint when there are none)
    const fieldsToFix = async () => {
      const shown = await page.locator('.field-error li').count()
      const hint = page.locator('[data-test="invalid-hint"]')
      if (shown === 0) expect(await hint.count()).toBe(0)
      else expect(await hint.textContent()).toBe(`${shown} field${shown === 1 ? '' : 's'} to fix`)
      return shown
    }
    await page.locator('[data-test="family"]').selectOption('gbdt')
    await page.locator('[data-test="model-eta"]').fill('0.1, 0.3')
    await page.locator('[data-test="model-maxDepth"]').fill('3, 5')
    await page.locator('[data-test="set-seeds"]').fill('2')
    expect(await page.locator('[data-test="set-summary"]').textContent()).toBe('Model set: max-depth 3,5 × eta 0.1,0.3 · 2 seeds → 8 models')
    await page.locator('[data-test="reset"]').click()

    expect(await page.locator('[data-test="family"]').inputValue()).toBe('mlp')
    const models = page.locator('[data-test="models"]')
    expect(await models.inputValue()).toBe('50')
    expect(await models.getAttribute('readonly')).toBeNull()
    expect(await page.locator('[data-test="set-summary"]').count()).toBe(0)
    expect(await page.locator('[data-test="set-seeds"]').inputValue()).toBe('1')
    expect(await fieldsToFix()).toBe(0)
    expect(await page.locator('[data-test="run"]').isEnabled()).toBe(true)
    await shot(page, '23-reset-after-a-grid')

    await page.locator('[data-test="model-lr"]').fill('0.01, 0.03')
    await page.locator('[data-test="set-folds"]').fill('3')
    expect(await page.locator('[data-test="set-summary"]').textContent()).toBe('Model set: lr 0.01,0.03 · 1 seed · 3 folds → 6 models')
    expect(await models.inputValue()).toBe('6')
    expect(await fieldsToFix()).toBe(0)
    expect(await page.locator('[data-test="run"]').isEnabled()).toBe(true)

    // a bad value in the set: said once, on its box, and counted once
    await page.locator('[data-test="set-folds"]').fill('0x3')
    await page.locator('#err-set-folds').waitFor()
    expect(await page.locator('#err-set-folds').textContent()).toBe(
      'Cross-validation folds: "0x3" is not a decimal number; enter a whole number from 2 to 10, or empty for none',
    )
    expect(await fieldsToFix()).toBe(1)
    expect(await page.locator('[data-test="set-summary"]').count()).toBe(0)
    await shot(page, '24-folds-in-hex')
    await page.locator('[data-test="reset"]').click()
    expect(await fieldsToFix()).toBe(0)
    expect(await env.service.listRuns()).toEqual([])
  })
})
