// What a new user sees (issue 16), in real Chromium against `trainpool serve`: a small run on wasm
// says its result in words (the report's verdict), keeps Run focused while it runs, never counts
// measurements backwards, folds its timing warnings into one line, shows no GPU alarm on a CPU
// backend, and fits the window at 1 400, 1 280 and 1 024 px even with long warnings; a reload offers
// the last run; a cancelled run leaves no green cells and counts what it verified per data size;
// Compare says how two runs differ. axe-core checks contrast and names in light and dark.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { verdictFor } from '@shared/verdict'
import {
  accessibilityProblems,
  collectPageErrors,
  type E2eServer,
  launchChromium,
  openApp,
  shot,
  skipBrowserSpecs,
  startE2eServer,
} from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

/** The few DOM parts the in-page functions touch (this project's Node tsconfig has no DOM types). */
interface El {
  textContent: string | null
  children: ArrayLike<El>
  getAttribute(name: string): string | null
}
interface PageGlobals {
  document: { body: unknown; activeElement: El | null; documentElement: { scrollWidth: number }; querySelector(s: string): El | null }
  innerWidth: number
  MutationObserver: new (cb: () => void) => { observe(target: unknown, options: object): void }
  __counter: string[]
}

/** Both themes: no serious axe violation. */
async function expectAccessible(page: Page, where: string): Promise<void> {
  expect(await accessibilityProblems(page), where).toEqual([])
}

function overflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as PageGlobals
    return { scrollWidth: w.document.documentElement.scrollWidth, innerWidth: w.innerWidth }
  })
}

/** At each width: the document is no wider than the window. */
async function expectNoSidewaysScroll(page: Page, name: string, widths = [1400, 1280, 1024]): Promise<void> {
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 })
    await page.waitForTimeout(150)
    const o = await overflow(page)
    await shot(page, `${name}-${width}`)
    expect(o.scrollWidth, `${name} at ${width} px`).toBeLessThanOrEqual(o.innerWidth)
  }
  await page.setViewportSize({ width: 1400, height: 900 })
}

/** Every text the measurement counter showed, in order (recorded in the page). */
async function recordCounter(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = globalThis as unknown as PageGlobals
    w.__counter = []
    new w.MutationObserver(() => {
      const t = w.document.querySelector('[data-test="measurement-of"]')?.textContent?.trim()
      if (t && w.__counter[w.__counter.length - 1] !== t) w.__counter.push(t)
    }).observe(w.document.body, { subtree: true, childList: true, characterData: true })
  })
}
const counterSeen = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).__counter)
const focused = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute('data-test') ?? null)

async function configure(page: Page, c: { sizes: string[]; models: string; workers: string; repeats: string }): Promise<void> {
  await page.locator('[data-test="preset"]').selectOption('smoke')
  await page.locator('[data-test="backend"]').selectOption('wasm')
  while ((await page.locator('[data-test^="size-"]').count()) < c.sizes.length) await page.locator('[data-test="add-size"]').click()
  for (const [i, s] of c.sizes.entries()) await page.locator(`[data-test="size-${i}"]`).fill(s)
  await page.locator('#config-models').fill(c.models)
  await page.locator('#config-workers').fill(c.workers)
  await page.locator('#config-repeats').fill(c.repeats)
  for (const s of ['sequential', 'pool', 'batched']) await page.locator(`[data-test="strategy-${s}"]`).check()
}

const status = (page: Page) => page.locator('[data-test="run-status"]').textContent()

describe.skipIf(skip)('browser mode: what a new user sees', () => {
  let env: E2eServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let finished: RunResult
  let cancelled: RunResult
  let pageErrors: string[] = []

  beforeAll(async () => {
    env = await startE2eServer()
    browser = await launchChromium()
    // bypassCSP: only so axe-core's script can be injected; the app's own CSP is tested in security.spec.ts
    context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true })
    page = await context.newPage()
    pageErrors = collectPageErrors(page)
    await openApp(page, env.server)
  })

  afterAll(async () => {
    await browser?.close()
    await env?.close()
  })

  it('before a run: the tab and the form button have different names, presets say what they are, no serious axe violation', async () => {
    expect((await page.locator('[data-test="nav-run"]').textContent())?.trim()).not.toBe('Run')
    expect(await page.getByRole('button', { name: 'Run', exact: true }).count()).toBe(1)
    // the Backend select is named by its label alone; the device is its description
    const backend = page.getByRole('combobox', { name: 'Backend', exact: true })
    expect(await backend.count()).toBe(1)
    expect(await backend.getAttribute('aria-describedby')).toMatch(/backend-detail/)
    await page.locator('[data-test="preset"]').selectOption('smoke')
    expect(await page.locator('[data-test="preset-description"]').textContent()).toMatch(/^Smoke: 2 000 rows × 4 models/)
    await expectAccessible(page, 'the Run view before a run')
  })

  it("says a bad value with the field's label and the text typed", async () => {
    await page.locator('[data-test="model-lr"]').fill('1e')
    expect(await page.locator('#err-model-lr').textContent()).toBe('Learning rate: "1e" is not a number; enter a number from 0.000001 to 1')
    await page.locator('[data-test="size-0"]').fill('abc')
    expect(await page.locator('#err-sizes').textContent()).toMatch(/^Data size 1: "abc" is not a number/)
    await shot(page, '40-errors-in-words')
    await page.locator('[data-test="model-lr"]').fill('0.01')
    await page.locator('[data-test="size-0"]').fill('2000')
    expect(await page.locator('.field-error').count()).toBe(0)
  })

  it('runs 2 000 rows × 4 models × W 1, 2 × all strategies on wasm: Run keeps the focus, the counter never goes back', async () => {
    await configure(page, { sizes: ['2000'], models: '4', workers: '1, 2', repeats: '2' })
    await recordCounter(page)
    const run = page.locator('[data-test="run"]')
    await run.focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => status(page), { timeout: 30_000 }).toBe('Running')
    expect(await run.getAttribute('aria-disabled')).toBe('true')
    expect(await focused(page)).toBe('run')
    // a second Enter while running starts nothing
    await page.keyboard.press('Enter')
    await expect.poll(() => status(page), { timeout: 180_000, interval: 250 }).toBe('Finished')
    expect(await focused(page)).toBe('run')
    const runs = await env.service.listRuns()
    expect(runs).toHaveLength(1)
    finished = await env.store.get(runs[0].runId)
    expect(finished.status).toBe('ok')
    const seen = (await counterSeen(page)).map((t) => /measurement (\d+) of (\d+)/.exec(t)).filter((m) => m != null)
    expect(seen.length).toBeGreaterThan(1)
    const numbers = seen.map((m) => Number(m![1]))
    expect(numbers, JSON.stringify(numbers)).toEqual([...numbers].sort((a, b) => a - b))
    // the live part ends with the run: counts of what finished, no lanes or cells left behind
    expect(await page.locator('[data-test="measurement-of"]').textContent()).toBe(
      `${finished.measurements.length} of ${finished.measurements.length} measurements done`,
    )
    expect(await page.locator('[data-test="model-grid"]').count()).toBe(0)
  })

  it('says the verdict above the charts: the same text as the report', async () => {
    const v = verdictFor(finished)
    const card = page.locator('[data-test="verdict"]')
    expect(await card.locator('[data-test="verdict-headline"]').textContent()).toBe(v.headline)
    expect((await card.locator('[data-test="verdict-lines"] li').allTextContents()).map((t) => t.trim())).toEqual([...v.perSize, ...v.workers])
    const verdictBox = await card.boundingBox()
    const chartsBox = await page.locator('[data-test="chart-time"]').boundingBox()
    expect(verdictBox!.y + verdictBox!.height).toBeLessThanOrEqual(chartsBox!.y)
    // Efficiency is the pool's only
    const rows = await page
      .locator('[data-test="summary"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from((tr as unknown as El).children).map((c) => c.textContent?.trim() ?? '')))
    for (const r of rows) if (r[2] !== 'pool') expect(r[8], JSON.stringify(r)).toBe('—')
    await shot(page, '41-finished-verdict')
  })

  it('a wasm run shows no GPU alarm: workers only, said neutrally, with their last readings', async () => {
    const t = page.locator('[data-test="telemetry"]')
    expect(await t.locator('[data-test="gpu-status"]').count()).toBe(0)
    expect(await t.textContent()).not.toMatch(/nvidia-smi/)
    expect(await t.locator('[data-test="no-gpu"]').textContent()).toMatch(/wasm trains on the CPU: no GPU telemetry/)
    const rows = await t
      .locator('[data-test="telemetry-workers"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children).map((c) => c.textContent?.trim() ?? ''),
        ),
      )
    expect(rows.length).toBeGreaterThan(0)
    // the last readings stay after the run: memory always; CPU % needs two samples of a worker, so a
    // run shorter than the 1 Hz sampling may have none (N/A), never an empty cell
    expect(
      rows.some((r) => /\d+(\.\d+)? (MiB|GiB|KiB)/.test(r[2])),
      JSON.stringify(rows),
    ).toBe(true)
    for (const r of rows) expect(r[1], JSON.stringify(rows)).toMatch(/^\d+ %$|^N\/A$/)
    await expectAccessible(page, 'the finished Run view')
  })

  it('a reload offers the last run; opened, long warnings wrap and the page fits at 1 400, 1 280 and 1 024 px', async () => {
    // a finished run with many long timing warnings and one long run warning, newest in the store
    const long = `${'wide spread: max−min is 105% of the median (a busy or throttled machine?) '.repeat(3)}${'x'.repeat(180)}`
    const noisy: RunResult = structuredClone(finished)
    noisy.runId = `${finished.runId.slice(0, 9)}235959-noisy1`
    // the newest run in the store: started after the real one finished, finished now
    noisy.startedAt = new Date(Date.parse(finished.finishedAt!) + 1).toISOString()
    noisy.finishedAt = new Date().toISOString()
    noisy.summary = noisy.summary.map((s, i) => ({ ...s, warnings: i % 4 === 3 ? [] : [long] }))
    noisy.warnings = [
      `could not save the run to /a/very/long/path/${'segment/'.repeat(30)}: disk full (results are kept in memory; export them before closing)`,
    ]
    await env.store.save(noisy)
    try {
      await openNoisy(noisy)
    } finally {
      await env.store.delete(noisy.runId)
    }
    await page.locator('[data-test="back"]').click()
    await page.locator('[data-test="nav-run"]').click()
  })

  async function openNoisy(noisy: RunResult): Promise<void> {
    await page.reload()
    const offer = page.locator('[data-test="last-run"]')
    await offer.waitFor({ timeout: 30_000 })
    expect(await offer.textContent()).toMatch(/^Last run finished (\d+ s|just now) ago —\s*open$|^Last run finished just now —\s*open$/)
    expect(await status(page)).toBe('No run in progress')
    await shot(page, '42-reload-offers-last-run')
    await page.locator('[data-test="open-last-run"]').click()
    await page.locator('[data-test="verdict"]').waitFor()
    expect(await status(page)).toBe('Finished')
    // the timing warnings: one line, details folded
    const noise = page.locator('[data-test="timing-warnings"]')
    const noisyCount = noisy.summary.filter((s) => s.warnings.length).length
    expect(await noise.locator('[data-test="timing-warnings-line"]').textContent()).toBe(
      `${noisyCount} of ${noisy.summary.length} measurements noisy: add repeats or close other programs`,
    )
    expect(await noise.getAttribute('open')).toBeNull()
    expect(await page.locator('[data-test="run-warnings"] li').count()).toBe(1)
    await expectNoSidewaysScroll(page, '43-run-view-long-warnings')
    // unfolded, the long lines still wrap
    await noise.locator('summary').click()
    await expectNoSidewaysScroll(page, '44-run-view-warnings-open', [1280, 1024])
    // the config panel is not covered: Preset sits inside its card at 1 024 px
    await page.setViewportSize({ width: 1024, height: 768 })
    const panel = await page.locator('.config-panel').boundingBox()
    const preset = await page.locator('[data-test="preset"]').boundingBox()
    expect(preset!.x + preset!.width).toBeLessThanOrEqual(panel!.x + panel!.width)
    await page.setViewportSize({ width: 1400, height: 900 })
    // the History run page of the same run
    await page.locator('[data-test="nav-history"]').click()
    await page.locator(`[data-test="history-${noisy.runId}"] button`).first().click()
    await page.locator('[data-test="run-report"] [data-test="verdict"]').waitFor()
    expect(await page.locator('[data-test="run-report"] [data-test="verdict-headline"]').textContent()).toBe(verdictFor(noisy).headline)
    await expectNoSidewaysScroll(page, '45-history-run-long-warnings')
    await expectAccessible(page, 'the History run page')
  }

  it('cancel mid-run: no green cell for an unfinished model, counters reset, verified models counted per finished size', async () => {
    // the second size is large so that its measurements outlast the wait for a lane below: at 5 000
    // rows one CI run timed out waiting for a lane (most likely the size ended before one was seen)
    await configure(page, { sizes: ['2000', '20000'], models: '8', workers: '2', repeats: '1' })
    await recordCounter(page)
    await page.locator('[data-test="run"]').click()
    // into the second size: the first one finished every strategy
    await expect
      .poll(
        () =>
          page
            .locator('[data-test="current-key"]')
            .textContent()
            .catch(() => ''),
        { timeout: 180_000, interval: 200 },
      )
      .toMatch(/20k rows/)
    await page.locator('[data-test="lanes"] [data-test="lane-models"]', { hasText: '#' }).first().waitFor({ timeout: 60_000 })
    await page.locator('[data-test="cancel"]').click()
    await expect.poll(() => status(page), { timeout: 60_000 }).toBe('Cancelled')
    const runs = (await env.service.listRuns()).filter((r) => r.runId !== finished.runId)
    expect(runs).toHaveLength(1)
    cancelled = await env.store.get(runs[0].runId)
    expect(cancelled.status).toBe('cancelled')
    const done = cancelled.measurements.filter((m) => m.status === 'ok').length
    expect(await page.locator('[data-test="measurement-of"]').textContent()).toBe(`${done} of 6 measurements done`)
    expect(await page.locator('[data-test="model-grid"] li.done').count()).toBe(0)
    expect(await page.locator('[data-test="models-done"]').count()).toBe(0)
    const numbers = (await counterSeen(page))
      .map((t) => /measurement (\d+) of/.exec(t))
      .filter((m) => m != null)
      .map((m) => Number(m![1]))
    expect(numbers, JSON.stringify(numbers)).toEqual([...numbers].sort((a, b) => a - b))
    const badge = page.locator('[data-test="verification"]')
    expect(await badge.getAttribute('class')).toMatch(/verify-unverified/)
    expect(await badge.locator('[data-test="verification-partial"] summary').textContent()).toBe(
      'what was checked (2,000 rows: 8/8 models per strategy; 20,000 rows: not finished)',
    )
    await shot(page, '46-cancelled')
    await expectAccessible(page, 'a cancelled run')
  })

  it('History: Compare has labelled boxes, names the runs, says what differs and that they share no measurement', async () => {
    await page.locator('[data-test="nav-history"]').click()
    await page.locator('[data-test="history-table"]').waitFor()
    for (const r of [finished, cancelled]) {
      const pick = page.locator(`[data-test="pick-${r.runId}"]`)
      // a visible label next to each box
      expect((await page.locator(`[data-test="history-${r.runId}"] label.pick`).textContent())?.trim()).toBe('Compare')
      await pick.check()
    }
    await expectAccessible(page, 'the History list')
    await page.locator('[data-test="compare"]').click()
    const compare = page.locator('[data-test="run-compare"]')
    await compare.waitFor()
    const labels = [await compare.locator('[data-test="compare-label-a"]').textContent(), await compare.locator('[data-test="compare-label-b"]').textContent()]
    for (const l of labels) {
      expect(l).toMatch(/Smoke run of|Custom run of/)
      expect(l).not.toContain(finished.runId)
      expect(l).not.toContain(cancelled.runId)
    }
    const differ = await compare.locator('[data-test="compare-differ"]').textContent()
    expect(differ).toMatch(/models \((4 vs 8|8 vs 4)\)/)
    expect(differ).toMatch(/data sizes/)
    expect(await compare.locator('[data-test="compare-shared"]').textContent()).toMatch(
      /^These runs share no measurement: they differ in data sizes, models, workers/,
    )
    await expectNoSidewaysScroll(page, '47-compare', [1280, 1024])
    await expectAccessible(page, 'Compare')
  })

  it('logged no errors in the page', () => {
    expect(pageErrors).toEqual([])
  })
})
