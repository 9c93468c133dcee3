// Browser mode, a classifier on the user's data, end to end against the real serve: upload a churn
// CSV whose last column is yes/no, see the panel read it as "binary (2 classes: no, yes)" before
// Run, train a small trees grid with folds on it, see the leaderboard rank the configurations by
// validation log loss (lowest first, as the shared ranking does) and name the metric in its columns
// and its chart, and save the best model — an XGBoost 1.7 binary:logistic model that names its
// classes, from the best configuration.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { modelFileName } from '@shared/contract'
import { leaderboardOf } from '@shared/leaderboard'
import { bestModelIndex } from '../../src-main/export/models'
import { type BrowserSession, type E2eServer, openApp, openBrowserSession, shot, skipBrowserSpecs } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

const ROWS = 600

/** A churn table: tenure, monthly charge and support calls; churn (yes/no) more likely with short tenure, high charges and many calls. */
function writeChurnCsv(): string {
  const lines = ['tenure,monthly,calls,churn']
  for (let i = 0; i < ROWS; i++) {
    const tenure = 1 + ((i * 37) % 72)
    const monthly = 20 + ((i * 53) % 100) + ((i * 7) % 10) / 10
    const calls = (i * 11) % 5
    const risk = (72 - tenure) / 72 + (monthly - 20) / 100 + calls / 5 + ((i * 13) % 17) / 17 - 1.2
    lines.push(`${tenure},${monthly.toFixed(1)},${calls},${risk > 0 ? 'yes' : 'no'}`)
  }
  const file = join(mkdtempSync(join(tmpdir(), 'trainpool-classifier-')), 'churn.csv')
  writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}

describe.skipIf(skip)('browser mode: a classifier on your own data', () => {
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

  it('reads a yes/no target as binary, trains a trees grid with folds, ranks it by validation log loss and saves the best model', async () => {
    await openApp(page, env.server)
    await page.locator('[data-test="family"]').selectOption('gbdt')
    await page.locator('[data-test="preset"]').selectOption('smoke')
    await page.locator('[data-test="backend"]').selectOption('cpu')
    await page.locator('[data-test="source-file"]').check()
    await page.locator('[data-test="data-upload"]').setInputFiles(writeChurnCsv())
    await page.locator('[data-test="data-summary"]').waitFor({ timeout: 30_000 })

    // the last column is the target, its two values the classes, sorted; auto reads it as binary, ranked by log loss
    expect(await page.locator('[data-test="data-target"]').inputValue()).toBe('churn')
    await expect
      .poll(() => page.locator('[data-test="task"]').textContent())
      .toBe('Task: binary (2 classes: no, yes), read from the target · ranked by log loss')
    expect(await page.locator('[data-test="data-features-used"]').textContent()).toMatch(/3 feature columns: tenure, monthly, calls/)

    await page.locator('[data-test="data-all-rows"]').click()
    await page.locator('[data-test="model-rounds"]').fill('5')
    await page.locator('[data-test="model-maxDepth"]').fill('2, 4')
    await page.locator('[data-test="set-folds"]').fill('2')
    expect(await page.locator('[data-test="models"]').inputValue()).toBe('4')
    expect(await page.locator('.field-error').allTextContents()).toEqual([])
    await page.locator('[data-test="model-fields"]').scrollIntoViewIfNeeded()
    await shot(page, 'classifier-01-task')
    await page.locator('[data-test="run"]').click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 180_000, interval: 250 }).toBe('Finished')

    const [entry] = await env.service.listRuns()
    const run = await env.store.get(entry.runId)
    expect(run.status).toBe('ok')
    expect(run.task).toEqual({ objective: 'binary', classes: ['no', 'yes'], metric: 'logloss', auto: true })
    expect(run.verification).toMatchObject({ sameWork: true })
    // every model scored in the objective's metrics, on its held-out fold and on the test rows
    for (const p of run.measurements[0].perModel) {
      expect(Object.keys(p.metrics ?? {})).toEqual(expect.arrayContaining(['logloss', 'accuracy']))
      expect(p.validationMetrics?.logloss).toBeGreaterThan(0)
    }

    // the board ranks by validation log loss, lowest first; the page shows the same order and names the metric
    const board = leaderboardOf(run)!
    expect(board.task.metric).toBe('logloss')
    const means = board.entries.map((e) => e.score.mean)
    expect(means).toEqual([...means].sort((a, b) => a - b))
    expect(await page.locator('[data-test="leaderboard-title"]').textContent()).toMatch(/ranked by validation log loss over 2 folds, best first/)
    expect(await page.locator('[data-test="leaderboard"] thead th').allTextContents()).toEqual([
      'rank',
      'configuration',
      'validation log loss',
      'validation accuracy',
      'validation ROC AUC',
      'test log loss',
      'time/model',
    ])
    await expect.poll(() => page.locator('[data-test="leaderboard-best"] td').nth(1).textContent()).toBe(board.entries[0].label)
    expect(await page.locator('[data-test="leaderboard-row"] td:nth-child(2)').allTextContents()).toEqual(board.entries.slice(1).map((e) => e.label))
    expect(await page.locator('[data-test="score-chart-maxDepth"] figcaption').textContent()).toBe('Validation log loss vs max-depth')
    expect(await page.locator('[data-test="verdict-task"]').textContent()).toBe(
      'Objective: binary (2 classes: no, yes), read from the target; the models are ranked and compared by log loss.',
    )
    expect(await page.locator('[data-test="verification"]').textContent()).toMatch(/per-model log loss agree/)
    await page.locator('[data-test="leaderboard"]').scrollIntoViewIfNeeded()
    await shot(page, 'classifier-02-leaderboard')

    // Save best model: the best configuration's best model, a binary:logistic XGBoost model naming its classes
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-test="save-best-model"]').click()])
    const best = bestModelIndex(run, await env.store.getModels(run.runId))
    expect(download.suggestedFilename()).toBe(modelFileName(run, best!, 'json'))
    const model = JSON.parse(readFileSync((await download.path())!, 'utf8'))
    expect(model.learner.objective.name).toBe('binary:logistic')
    expect(model.learner.attributes).toMatchObject({
      trainpool_run: run.runId,
      trainpool_model: String(best),
      trainpool_configuration: board.entries[0].label,
      trainpool_objective: 'binary',
      trainpool_classes: JSON.stringify(['no', 'yes']),
    })
    expect(model.learner.gradient_booster.model.trees).toHaveLength(5)
    expect(await page.locator('[data-test="action-message"]').textContent()).toBe(`Downloaded ${download.suggestedFilename()}`)
    expect(pageErrors).toEqual([])
  })
})
