// Browser mode, a model set: build a trees grid (eta × max depth) with 2 seeds and 2 folds in the
// config panel, run it, see the leaderboard and the score charts, and save the best model — the
// download is an XGBoost JSON model of the best configuration, as export-models writes it, named by
// that configuration and carrying it in its attributes.
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { modelFileName } from '@shared/contract'
import { leaderboardOf } from '@shared/leaderboard'
import { bestModelIndex } from '../../src-main/export/models'
import { type BrowserSession, type E2eServer, openApp, openBrowserSession, shot, skipBrowserSpecs } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

describe.skipIf(skip)('browser mode: a model set', () => {
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let pageErrors: string[] = []

  beforeAll(async () => {
    session = await openBrowserSession({}, { acceptDownloads: true })
    ;({ env, page, pageErrors } = session)
  })

  afterAll(async () => {
    await session?.close()
  })

  it('builds a grid × seeds × folds in the panel, runs it, ranks it and saves the best model', async () => {
    await openApp(page, env.server)
    await page.locator('[data-test="family"]').selectOption('gbdt')
    await page.locator('[data-test="preset"]').selectOption('smoke')
    await page.locator('[data-test="backend"]').selectOption('cpu')
    await page.locator('[data-test="model-rounds"]').fill('5')
    await page.locator('[data-test="model-eta"]').fill('0.1, 0.3')
    await page.locator('[data-test="model-maxDepth"]').fill('3, 5')
    await page.locator('[data-test="set-seeds"]').fill('2')
    await page.locator('[data-test="set-folds"]').fill('2')
    expect(await page.locator('[data-test="models"]').inputValue()).toBe('16')
    expect(await page.locator('[data-test="set-summary"]').textContent()).toBe('Model set: max-depth 3,5 × eta 0.1,0.3 · 2 seeds · 2 folds → 16 models')
    await page.locator('[data-test="run"]').click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 180_000, interval: 250 }).toBe('Finished')

    const [entry] = await env.service.listRuns()
    const run = await env.store.get(entry.runId)
    expect(run.status).toBe('ok')
    expect(run.verification).toMatchObject({ sameWork: true, tolerance: 0 })
    expect(run.config.set).toEqual({ grid: { eta: [0.1, 0.3], maxDepth: [3, 5] }, seeds: 2, folds: 2 })
    const board = leaderboardOf(run)!
    await expect.poll(() => page.locator('[data-test="leaderboard-best"] td').nth(1).textContent()).toBe(board.entries[0].label)
    expect(await page.locator('[data-test="leaderboard-row"]').count()).toBe(3)
    expect(await page.locator('[data-test="score-chart-eta"] figcaption').textContent()).toBe('Validation MSE vs eta')
    expect(await page.locator('[data-test="score-chart-maxDepth"]').count()).toBe(1)
    await shot(page, 'model-set-01-leaderboard')

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-test="save-best-model"]').click()])
    const best = bestModelIndex(run, await env.store.getModels(run.runId))
    // the file names the best model's configuration, and so does the model itself
    expect(download.suggestedFilename()).toBe(modelFileName(run, best!, 'json'))
    expect(download.suggestedFilename()).toContain(board.entries[0].label.replace(/ · /g, '_').replace(/ /g, '-'))
    const model = JSON.parse(readFileSync((await download.path())!, 'utf8'))
    expect(model.learner.attributes).toMatchObject({ trainpool_run: run.runId, trainpool_model: String(best), trainpool_configuration: board.entries[0].label })
    expect(model.learner.objective.name).toBe('reg:squarederror')
    expect(model.learner.gradient_booster.model.trees).toHaveLength(5)
    expect(await page.locator('[data-test="action-message"]').textContent()).toBe(`Downloaded ${download.suggestedFilename()}`)
    expect(pageErrors).toEqual([])
  })
})
