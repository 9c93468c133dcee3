// Browser mode, successive halving end to end against the real serve (issue 39): a trees grid of 6
// configurations × 3 folds searched by halving in the config panel (its rungs said before Run), the
// live lanes saying the rung in flight and marking the models that left at a cut, the leaderboard
// giving each configuration's last rung and rounds, the rungs' chart, the verdict's share of the
// grid's rounds (the CLI summary's words), and Save best model — the last rung's configuration,
// trained to the full rounds.
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { modelFileName } from '@shared/contract'
import { leaderboardOf } from '@shared/leaderboard'
import { halvingLine } from '@shared/search-summary'
import { REGRESSION_TASK } from '@shared/vocabulary/task'
import { bestModelIndex } from '../../src-main/export/models'
import { type BrowserSession, type E2eServer, openApp, openBrowserSession, shot, skipBrowserSpecs } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()
/** where the spec's screenshots of the panel and the results are kept besides the usual artifacts */
const SCREENSHOT_DIR = process.env.TRAINPOOL_E2E_SCREENSHOTS ?? null

/** The few DOM parts the in-page functions touch (this project's Node tsconfig has no DOM types). */
interface PageGlobals {
  document: { body: unknown; querySelector(s: string): { textContent: string | null } | null; querySelectorAll(s: string): { length: number } }
  MutationObserver: new (cb: () => void) => { observe(target: unknown, options: object): void }
  __rungTexts: string[]
  __mostLeft: number
}

/** Records, from before Run, every rung line the lanes show and the most cells marked as left at once (a run is too quick to poll). */
async function watchLanes(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = globalThis as unknown as PageGlobals
    w.__rungTexts = []
    w.__mostLeft = 0
    new w.MutationObserver(() => {
      const text = w.document.querySelector('[data-test="live-search"]')?.textContent?.trim()
      if (text && w.__rungTexts[w.__rungTexts.length - 1] !== text) w.__rungTexts.push(text)
      w.__mostLeft = Math.max(w.__mostLeft, w.document.querySelectorAll('[data-test="model-grid"] li[data-search="left"]').length)
    }).observe(w.document.body, { subtree: true, childList: true, characterData: true, attributes: true })
  })
}
const pageGlobals = (page: Page) =>
  page.evaluate(() => ({ texts: (globalThis as unknown as PageGlobals).__rungTexts, mostLeft: (globalThis as unknown as PageGlobals).__mostLeft }))

describe.skipIf(skip)('browser mode: a successive-halving search', () => {
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

  it('searches a trees grid with 3 folds by halving: lanes show models leaving, the leaderboard gives rungs, Save best model', async () => {
    await openApp(page, env.server)
    await page.locator('[data-test="family"]').selectOption('gbdt')
    await page.locator('[data-test="preset"]').selectOption('smoke')
    await page.locator('[data-test="backend"]').selectOption('cpu')
    await page.locator('[data-test="model-rounds"]').fill('12')
    await page.locator('[data-test="model-eta"]').fill('0.1, 0.3')
    await page.locator('[data-test="model-maxDepth"]').fill('2, 3, 4')
    await page.locator('[data-test="set-folds"]').fill('3')
    expect(await page.locator('[data-test="models"]').inputValue()).toBe('18')
    await page.locator('[data-test="search-method"]').selectOption('halving')
    await page.locator('[data-test="search-min-rounds"]').fill('1')
    expect(await page.locator('[data-test="search-rungs"]').textContent()).toBe('Rungs: 6 configurations × 1 round → 2 × 3 rounds → 1 × 12 rounds')
    expect(await page.locator('.field-error').allTextContents()).toEqual([])
    await page.locator('[data-test="model-fields"]').scrollIntoViewIfNeeded()
    await shot(page, 'halving-01-panel')
    if (SCREENSHOT_DIR) await page.locator('[data-test="model-fields"]').screenshot({ path: `${SCREENSHOT_DIR}/halving-panel.png` })

    await watchLanes(page)
    await page.locator('[data-test="run"]').click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 120_000, interval: 250 }).toBe('Finished')

    const [entry] = await env.service.listRuns()
    const run = await env.store.get(entry.runId)
    expect(run.status, run.error ?? undefined).toBe('ok')
    expect(run.verification).toMatchObject({ sameWork: true })
    expect(run.config.search).toEqual({ method: 'halving', factor: 3, minRounds: 1 })
    for (const m of run.measurements) expect(m.rungs!.map((r) => r.configurations.length)).toEqual([6, 2, 1])

    // the lanes said the rungs in flight, and marked the models that left: 12 after the first cut (4 configurations × 3 folds).
    // The first rung is on screen from the measurement's start and the last until its end; the middle one
    // (6 models × 2 more rounds of a smoke set) can begin and end between two renders, so its words are
    // not awaited here — run.json's rungs above say it ran, and the same formatter wrote the other two.
    const { texts, mostLeft } = await pageGlobals(page)
    expect(
      texts.some((t) => t.startsWith('rung 1 of 3 · 6 of 6 configurations · 18 models to 1 round')),
      texts.join('\n'),
    ).toBe(true)
    expect(
      texts.some((t) => t.startsWith('rung 3 of 3 · 1 of 6 configurations · 3 models to 12 rounds')),
      texts.join('\n'),
    ).toBe(true)
    expect(mostLeft).toBeGreaterThanOrEqual(12)

    // the leaderboard gives each configuration's last rung and rounds, as run.json has them
    const board = leaderboardOf(run)!
    const headers = await page.locator('[data-test="leaderboard"] thead th').allTextContents()
    expect(headers).toEqual(['rank', 'configuration', 'validation MSE', 'test MSE', 'last rung', 'rounds', 'time/model'])
    const cells = (row: string) => page.locator(`[data-test="${row}"] td`).allTextContents()
    await expect.poll(async () => (await cells('leaderboard-best'))[1]).toBe(board.entries[0].label)
    const rows = [
      await cells('leaderboard-best'),
      ...(await page
        .locator('[data-test="leaderboard-row"]')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')))),
    ]
    expect(rows.map((r) => [r[1], r[4], r[5]])).toEqual(board.entries.map((e) => [e.label, `${e.rounds!.rung! + 1} of 3`, String(e.rounds!.trained.max)]))
    expect(rows.map((r) => r[4]).sort()).toEqual(['1 of 3', '1 of 3', '1 of 3', '1 of 3', '2 of 3', '3 of 3'])

    // the rungs' chart, and the verdict's share of the grid's rounds in the CLI summary's words
    expect(await page.locator('[data-test="rung-chart"] figcaption').textContent()).toBe(
      "Validation MSE vs rounds, by configuration: successive halving's rungs",
    )
    const line = halvingLine(run, run.task ?? REGRESSION_TASK)!
    expect(line).toMatch(/trained \d+ % of the grid's rounds/)
    expect(await page.locator('[data-test="verdict-search"] li').allTextContents()).toEqual([line])
    await page.locator('[data-test="leaderboard"]').scrollIntoViewIfNeeded()
    await shot(page, 'halving-02-results')
    if (SCREENSHOT_DIR) {
      await page.screenshot({ path: `${SCREENSHOT_DIR}/halving-results.png`, fullPage: true })
      await page
        .locator('[data-test="leaderboard"]')
        .locator('xpath=..')
        .screenshot({ path: `${SCREENSHOT_DIR}/halving-leaderboard.png` })
    }

    // Save best model: the best configuration's model, its trees the full 12 rounds
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-test="save-best-model"]').click()])
    const best = bestModelIndex(run, await env.store.getModels(run.runId))
    expect(download.suggestedFilename()).toBe(modelFileName(run, best!, 'json'))
    const model = JSON.parse(readFileSync((await download.path())!, 'utf8'))
    expect(model.learner.attributes).toMatchObject({ trainpool_run: run.runId, trainpool_configuration: board.entries[0].label })
    expect(model.learner.gradient_booster.model.trees).toHaveLength(12)
    expect(await page.locator('[data-test="action-message"]').textContent()).toBe(`Downloaded ${download.suggestedFilename()}`)
    expect(pageErrors).toEqual([])
  })
})
