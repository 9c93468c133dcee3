// Browser mode with the user's own data, end to end in real Chromium: upload a small CSV through the
// page (POST /api/upload with the page's token), see its preview and each column's type and missing
// count, pick the target, let "All rows" fix a size larger than the file, run the smoke preset on
// wasm on it, and see the run finish with the same work verified and the data set named in the Run
// view and in History. A throttled upload shows its progress bar; cancelled, it leaves nothing behind.
// Last, the file is removed from the data cache through the page; the finished run keeps its record.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { skipWithout } from '../../src-main/testing/capability'
import {
  accessibilityProblems,
  ARTIFACTS,
  type BrowserSession,
  chooseSmokeOnWasm,
  collectPageErrors,
  type E2eServer,
  openApp,
  openBrowserSession,
  shot,
  skipBrowserSpecs,
} from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()
const noPoppler = skipWithout(
  'poppler',
  spawnSync('sh', ['-c', 'command -v pdftotext && command -v pdftoppm']).status === 0,
  'pdftotext/pdftoppm missing (apt-get install poppler-utils)',
)

const ROWS = 300
/** this server's upload cap: room for the CSV above, not for a megabyte */
const MAX_UPLOAD = 256 * 1024

/** A small regression table: five numeric features (x3 with a few gaps), a text column, target y. */
function writeCsv(): string {
  const lines = ['x1,x2,x3,x4,x5,site,y']
  for (let i = 0; i < ROWS; i++) {
    const x = [1, 2, 3, 4, 5].map((k) => ((i * (k * 37 + 11)) % 101) / 100)
    const y = 2 * x[0] - x[1] + 0.5 * x[2] + x[3] * x[4] + ((i * 7) % 13) / 100
    const x3 = i % 50 === 7 ? '' : x[2].toFixed(2)
    lines.push([x[0].toFixed(2), x[1].toFixed(2), x3, x[3].toFixed(2), x[4].toFixed(2), `site-${i % 4}`, y.toFixed(4)].join(','))
  }
  const file = join(mkdtempSync(join(tmpdir(), 'trainpool-own-data-')), 'plants.csv')
  writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}

describe.skipIf(skip)('browser mode: your own data', () => {
  let env: E2eServer
  let session: BrowserSession
  let browser: Browser
  let page: Page
  let pageErrors: string[] = []

  beforeAll(async () => {
    session = await openBrowserSession({ maxUploadBytes: MAX_UPLOAD })
    ;({ env, browser, page, pageErrors } = session)
  })

  afterAll(async () => {
    await session?.close()
  })

  it('uploads a CSV and shows its preview, column types and missing counts', async () => {
    await openApp(page, env.server)
    await chooseSmokeOnWasm(page)
    await page.locator('[data-test="source-file"]').check()
    await page.locator('[data-test="data-upload"]').setInputFiles(writeCsv())
    await page.locator('[data-test="data-summary"]').waitFor({ timeout: 30_000 })
    expect(await page.locator('[data-test="data-summary"]').textContent()).toMatch(/plants\.csv · 300 rows × 7 columns · CSV/)
    expect(await page.locator('[data-test="upload-progress"]').count()).toBe(0)
    const cells = (name: string) => page.locator(`[data-test="data-column-${name}"]`).locator('th, td').allTextContents()
    expect((await cells('x3')).slice(0, 3)).toEqual(['x3', 'numeric', '6'])
    expect((await cells('site')).slice(0, 2)).toEqual(['site', 'text'])
    expect(await page.locator('[data-test="data-preview"] tbody tr').count()).toBe(10)
    // the upload is in the service's cache, under its own name
    const cached = await env.service.dataSets()
    expect(cached.map((d) => [d.name, d.rows])).toEqual([['plants.csv', ROWS]])
    await page.locator('[data-test="data-source"]').scrollIntoViewIfNeeded()
    await shot(page, '60-own-data-uploaded')
  })

  it("shows the upload's progress, and a cancelled upload leaves nothing on the server", async () => {
    // a slow link (Chromium's network emulation throttles the request body) so progress is seen
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 16 * 1024 })
    try {
      const big = join(mkdtempSync(join(tmpdir(), 'trainpool-own-data-')), 'big.csv')
      writeFileSync(big, `a,b\n${'1,2\n'.repeat(50_000)}`)
      await page.locator('[data-test="data-upload"]').setInputFiles(big)
      const bar = page.locator('[data-test="upload-progress"] progress')
      await bar.waitFor({ timeout: 10_000 })
      await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 20_000, interval: 100 }).toBeGreaterThan(0)
      expect(Number(await bar.getAttribute('value'))).toBeLessThan(Number(await bar.getAttribute('max')))
      expect(await page.locator('[data-test="upload-progress"]').textContent()).toMatch(/big\.csv: \d+ % \([\d.]+ KiB of 195 KiB\)/)
      await page.locator('[data-test="upload-progress"]').scrollIntoViewIfNeeded()
      await shot(page, '64-own-data-uploading')
      await page.locator('[data-test="upload-cancel"]').click()
      await expect.poll(() => page.locator('[data-test="data-error"]').textContent()).toBe('big.csv: upload cancelled')
      expect(await page.locator('[data-test="upload-progress"]').count()).toBe(0)
      // the server removed what had arrived, and cached nothing
      const uploads = join(env.store.dir, '.uploads')
      await expect.poll(() => readdirSync(uploads).filter((f) => f.endsWith('.part')), { timeout: 10_000 }).toEqual([])
      expect((await env.service.dataSets()).map((d) => d.name)).toEqual(['plants.csv'])
      // the data set shown is still the one uploaded before
      expect(await page.locator('[data-test="data-summary"]').textContent()).toMatch(/^plants\.csv/)
    } finally {
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
      await cdp.detach()
    }
  })

  it("a file over the server's upload cap is refused, saying the cap and how to raise it; nothing kept", async () => {
    const huge = join(mkdtempSync(join(tmpdir(), 'trainpool-own-data-')), 'huge.csv')
    writeFileSync(huge, `a,b\n${'1,2\n'.repeat(100_000)}`)
    await page.locator('[data-test="data-upload"]').setInputFiles(huge)
    await expect
      .poll(() => page.locator('[data-test="data-error"]').textContent(), { timeout: 20_000 })
      .toBe(`huge.csv: the file is 391 KiB, over this server's upload limit of 256 KiB (${MAX_UPLOAD} bytes; trainpool serve --max-upload BYTES raises it)`)
    expect(readdirSync(join(env.store.dir, '.uploads')).filter((f) => f.endsWith('.part'))).toEqual([])
    expect((await env.service.dataSets()).map((d) => d.name)).toEqual(['plants.csv'])
    expect(await page.locator('[data-test="data-summary"]').textContent()).toMatch(/^plants\.csv/)
    // the browser logs the refused request itself; nothing else went wrong
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/status of 413/)])
  })

  it('picks the target and features; a size larger than the file is an error until All rows', async () => {
    await page.locator('[data-test="data-target"]').selectOption('y')
    expect(await page.locator('[data-test="data-features-used"]').textContent()).toBe('5 feature columns: x1, x2, x3, x4, x5 (text, left out: site)')
    // the smoke preset's 2 000 rows do not fit in 300
    expect(await page.locator('#err-sizes').textContent()).toMatch(/must be at most 300: plants\.csv has 300 rows \(you typed "2000"\)/)
    expect(await page.locator('[data-test="run"]').isDisabled()).toBe(true)
    await page.locator('[data-test="data-all-rows"]').click()
    expect(await page.locator('[data-test="size-0"]').inputValue()).toBe(String(ROWS))
    expect(await page.locator('#err-sizes').count()).toBe(0)
    // the MLP cannot train on the gaps in x3: impute with the training mean
    await page.locator('[data-test="data-impute"]').selectOption('mean')
    await shot(page, '61-own-data-configured')
  })

  it('runs the smoke preset on the file and finishes with the same work verified, naming the data set', async () => {
    const run = page.locator('[data-test="run"]')
    expect(await run.isEnabled()).toBe(true)
    await run.click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 180_000, interval: 250 }).toBe('Finished')
    const badge = page.locator('[data-test="verification"]')
    await expect.poll(() => badge.getAttribute('class')).toMatch(/verify-ok/)
    expect(await badge.textContent()).toMatch(/same work: 4\/4 models per strategy/)
    const runs = await env.service.listRuns()
    const stored = await env.store.get(runs[0].runId)
    expect(stored.status).toBe('ok')
    expect(stored.dataset).toMatchObject({ name: 'plants.csv', rows: ROWS, target: 'y', features: ['x1', 'x2', 'x3', 'x4', 'x5'], impute: 'mean' })
    const card = page.locator('[data-test="dataset"]')
    expect(await card.textContent()).toMatch(new RegExp(`plants\\.csv.*${stored.dataset!.sha256.slice(0, 12)}.*300 × 7`))
    await card.scrollIntoViewIfNeeded()
    await shot(page, '62-own-data-finished')
    expect(pageErrors).toEqual([])
  })

  it('History shows the data set of the run', async () => {
    const [entry] = await env.service.listRuns()
    await page.locator('[data-test="nav-history"]').click()
    expect(await page.locator(`[data-test="history-${entry.runId}"] [data-test="history-data"]`).textContent()).toBe('data: plants.csv · 300 × 7')
    await page.locator(`[data-test="history-${entry.runId}"] button`).first().click()
    const card = page.locator('[data-test="run-report"] [data-test="dataset"]')
    await card.waitFor({ timeout: 10_000 })
    expect(await card.textContent()).toMatch(/plants\.csv/)
    expect(await card.textContent()).toMatch(/Features \(5\)x1, x2, x3, x4, x5/)
    await shot(page, '63-own-data-history')
  })

  it.skipIf(noPoppler)('the PDF report (Save PDF in browser mode) has the data set section', async () => {
    const [entry] = await env.service.listRuns()
    const pdf = await env.service.reportPdf({ runId: entry.runId })
    const dir = mkdtempSync(join(tmpdir(), 'trainpool-own-data-pdf-'))
    const file = join(dir, 'report.pdf')
    writeFileSync(file, Buffer.from(pdf.base64!, 'base64'))
    const raw = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' })
    const text = raw.replace(/\s+/g, ' ')
    expect(text).toMatch(/Data plants\.csv: 5 feature columns → y/)
    expect(text).toMatch(/DATA SET File plants\.csv sha256 [0-9a-f]{12} /i)
    expect(text).toMatch(/Rows × columns 300 × 7/)
    expect(text).toMatch(/Features \(5\) x1, x2, x3, x4, x5/)
    // the page with the data set, for people to look at
    const pages = raw.split('\f')
    const page = pages.findIndex((p) => /DATA SET/i.test(p)) + 1
    mkdirSync(ARTIFACTS, { recursive: true })
    execFileSync('pdftoppm', ['-png', '-r', '70', '-f', String(page), '-l', String(page), '-singlefile', file, join(ARTIFACTS, '65-own-data-report')])
  })

  it('the data section, with a file from the recent list, is accessible in both themes', async () => {
    // a second page with bypassCSP only so axe-core's script can be injected; the upload above ran
    // under the app's CSP (connect-src 'self' covers POST /api/upload: no violation was logged)
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, bypassCSP: true })
    try {
      const other = await context.newPage()
      await openApp(other, env.server)
      await other.locator('[data-test="source-file"]').check()
      const sha = (await env.service.dataSets())[0].sha256
      await other.locator('[data-test="data-recent"]').selectOption(sha)
      await other.locator('[data-test="data-summary"]').waitFor({ timeout: 10_000 })
      expect(await accessibilityProblems(other)).toEqual([])
      // and with the removal's question showing
      await other.locator('[data-test="data-remove"]').click()
      expect(await accessibilityProblems(other)).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('removes the file from the data cache through the page; the finished run keeps its record of it', async () => {
    const other = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    const errors = collectPageErrors(other)
    try {
      await openApp(other, env.server)
      await other.locator('[data-test="source-file"]').check()
      const [set] = await env.service.dataSets()
      await other.locator('[data-test="data-recent"]').selectOption(set.sha256)
      await other.locator('[data-test="data-remove"]').click()
      expect(await other.locator('[data-test="data-remove-confirm"]').textContent()).toMatch(/Remove plants\.csv from the data cache\?/)
      await other.locator('[data-test="data-remove-confirm"]').scrollIntoViewIfNeeded()
      await shot(other, '66-own-data-remove-confirm')
      await other.locator('[data-test="data-remove-yes"]').click()
      await expect.poll(() => other.locator('[data-test="data-summary"]').count()).toBe(0)
      expect(await env.service.dataSets()).toEqual([])
      expect(await other.locator('#err-data').textContent()).toMatch(/choose a file/)
      const [entry] = await env.service.listRuns()
      expect((await env.store.get(entry.runId)).dataset).toMatchObject({ name: 'plants.csv', sha256: set.sha256 })
      expect(errors).toEqual([])
    } finally {
      await other.close()
    }
  })
})
