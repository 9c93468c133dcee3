// Server-side PDF rendering of a run's report (CLI `trainpool report --pdf`, browser mode's
// "Save PDF"): the built report page (out/renderer/report.html) in headless Chromium driven by
// playwright-core, served from files under a private origin with every other request blocked,
// the run injected before load, printed once the page says it is ready (charts drawn, fonts loaded).
import { existsSync, promises as fs } from 'node:fs'
import { extname, join, normalize, resolve, sep } from 'node:path'
import type { RunResult } from '@shared/contract'
import { TrainpoolError } from '@shared/contract'
import type { Browser, Page } from 'playwright-core'

/** The report page's private origin: requests to it are answered from out/renderer; all others are aborted. */
const ORIGIN = 'http://trainpool.report'

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-default-apps',
  '--disable-extensions',
  '--mute-audio',
]

/** Where a Chromium-family browser usually lives; TRAINPOOL_CHROMIUM wins. */
export function chromiumCandidates(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
  const list: string[] = []
  if (env.TRAINPOOL_CHROMIUM) list.push(env.TRAINPOOL_CHROMIUM)
  if (platform === 'darwin') {
    list.push(
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    )
  } else if (platform === 'win32') {
    for (const base of [env['PROGRAMFILES'], env['PROGRAMFILES(X86)'], env.LOCALAPPDATA].filter(Boolean) as string[]) {
      list.push(
        join(base, 'Google', 'Chrome', 'Application', 'chrome.exe'),
        join(base, 'Chromium', 'Application', 'chrome.exe'),
        join(base, 'Microsoft', 'Edge', 'Application', 'msedge.exe'),
      )
    }
  } else {
    list.push(
      '/usr/bin/chromium',
      '/usr/bin/chromium-browser',
      '/usr/bin/google-chrome',
      '/usr/bin/google-chrome-stable',
      '/snap/bin/chromium',
      '/usr/bin/microsoft-edge',
    )
  }
  return list
}

/** The first existing browser executable, or null. TRAINPOOL_CHROMIUM set but missing is an error (no silent fallback). */
export function findChromium(env: NodeJS.ProcessEnv = process.env, exists: (p: string) => boolean = existsSync): string | null {
  if (env.TRAINPOOL_CHROMIUM) {
    if (!exists(env.TRAINPOOL_CHROMIUM)) throw noChromium(`TRAINPOOL_CHROMIUM=${env.TRAINPOOL_CHROMIUM} does not exist`)
    return env.TRAINPOOL_CHROMIUM
  }
  return chromiumCandidates(env).find((p) => exists(p)) ?? null
}

export function noChromium(detail: string): TrainpoolError {
  return new TrainpoolError(
    'internal',
    `cannot render the PDF: ${detail}. Install Chromium or Chrome (Debian/Ubuntu: apt-get install chromium) or set TRAINPOOL_CHROMIUM to its executable; the Markdown table (--md) and the JSON/CSV exports need no browser`,
  )
}

/** out/renderer holding report.html: TRAINPOOL_RENDERER_DIR, else next to the built main bundle, else the repo's out/. */
export function findRendererDir(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    env.TRAINPOOL_RENDERER_DIR,
    resolve(__dirname, '..', 'renderer'), // out/main/*.js
    resolve(__dirname, '..', '..', 'renderer'), // out/main/chunks/*.js
    resolve(__dirname, '..', '..', 'out', 'renderer'), // src-main/report/*.ts (tsx, tests)
    resolve(process.cwd(), 'out', 'renderer'),
  ].filter((p): p is string => !!p)
  const found = candidates.find((d) => existsSync(join(d, 'report.html')))
  if (!found) {
    throw new TrainpoolError('internal', `the report page is not built (no report.html in ${candidates.join(', ')}): run \`npm run build\` first`)
  }
  return found
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.json': 'application/json',
}

export interface RenderOptions {
  /** browser executable; default: findChromium() */
  executablePath?: string
  rendererDir?: string
  /** how long the page may take to draw (ms) */
  timeoutMs?: number
}

/** Margins shared with Electron's printToPDF (there in inches). */
export const PDF_MARGINS_MM = { top: 12, bottom: 16, left: 12, right: 12 }

/** Footer on every page: "Trainpool · run id · page N of M". */
export function footerTemplate(run: Pick<RunResult, 'runId'>): string {
  const id = run.runId.replace(/[^A-Za-z0-9_-]/g, '')
  return `<div style="font: 8px system-ui, sans-serif; color: #6b7280; width: 100%; padding: 0 12mm; display: flex; justify-content: space-between;"><span>Trainpool · run ${id}</span><span>page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>`
}

/**
 * One Chromium at a time in this process: each render starts a browser (several processes and
 * ~150 MB), so calls queue behind each other (six "Save PDF" clicks at once used to start ~67
 * processes). A failed render does not stop the queue.
 */
let queue: Promise<unknown> = Promise.resolve()
const renders = { active: 0, peak: 0 }

/** Renders now running and the most ever at once in this process (tests check the bound). */
export function pdfRenders(): { active: number; peak: number } {
  return { ...renders }
}

export function renderReportPdf(run: RunResult, options: RenderOptions = {}): Promise<Buffer> {
  const next = queue.then(async () => {
    renders.active++
    renders.peak = Math.max(renders.peak, renders.active)
    try {
      return await renderOnce(run, options)
    } finally {
      renders.active--
    }
  })
  queue = next.catch(() => {})
  return next
}

async function renderOnce(run: RunResult, options: RenderOptions): Promise<Buffer> {
  const executablePath = options.executablePath ?? findChromium()
  if (!executablePath) throw noChromium(`no Chromium or Chrome found (looked in ${chromiumCandidates().join(', ')})`)
  const rendererDir = resolve(options.rendererDir ?? findRendererDir())
  const timeout = options.timeoutMs ?? 30_000
  const browser = await launchChromium(executablePath, timeout)
  try {
    const context = await browser.newContext({ viewport: { width: 794, height: 1123 }, colorScheme: 'light', offline: false })
    const page = await context.newPage()
    await serveReportFiles(page, rendererDir)
    await drawReport(page, run, timeout)
    return await printPdf(page, run)
  } finally {
    await browser.close().catch(() => {})
  }
}

async function launchChromium(executablePath: string, timeout: number): Promise<Browser> {
  let playwright: typeof import('playwright-core')
  try {
    playwright = await import('playwright-core')
  } catch (err) {
    throw noChromium(`playwright-core is not installed (${(err as Error).message})`)
  }
  try {
    return await playwright.chromium.launch({ executablePath, headless: true, args: CHROMIUM_FLAGS, timeout })
  } catch (err) {
    throw noChromium(`${executablePath} did not start (${(err as Error).message.split('\n')[0]})`)
  }
}

/** Nothing leaves the machine: only the report's own files (the built renderer's) are answered. */
async function serveReportFiles(page: Page, rendererDir: string): Promise<void> {
  await page.route('**/*', (route) => route.abort('blockedbyclient'))
  await page.route(`${ORIGIN}/**`, async (route) => {
    const path = decodeURIComponent(new URL(route.request().url()).pathname)
    const file = normalize(join(rendererDir, path))
    if (!file.startsWith(rendererDir + sep)) return route.fulfill({ status: 403, body: 'forbidden' })
    try {
      const body = await fs.readFile(file)
      return route.fulfill({ status: 200, body, headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' } })
    } catch {
      return route.fulfill({ status: 404, body: 'not found' })
    }
  })
}

/** Opens the report page on the run and waits until it says it has drawn (or why it could not). */
async function drawReport(page: Page, run: RunResult, timeout: number): Promise<void> {
  await page.addInitScript((data: string) => {
    ;(globalThis as unknown as { __TRAINPOOL_REPORT__: unknown }).__TRAINPOOL_REPORT__ = JSON.parse(data)
  }, JSON.stringify(run))
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(`${ORIGIN}/report.html`, { waitUntil: 'load', timeout })
  try {
    await page.waitForFunction(
      () => {
        const w = globalThis as unknown as { __REPORT_READY__?: boolean; __REPORT_ERROR__?: string }
        return w.__REPORT_READY__ === true || typeof w.__REPORT_ERROR__ === 'string'
      },
      undefined,
      { timeout },
    )
  } catch {
    throw new TrainpoolError('internal', `the report page did not finish drawing within ${timeout} ms${errors.length ? `: ${errors.join('; ')}` : ''}`)
  }
  const failure = await page.evaluate(() => (globalThis as unknown as { __REPORT_ERROR__?: string }).__REPORT_ERROR__ ?? null)
  if (failure) throw new TrainpoolError('internal', `the report page could not draw run ${run.runId}: ${failure}`)
}

async function printPdf(page: Page, run: RunResult): Promise<Buffer> {
  await page.emulateMedia({ media: 'print' })
  const mm = (n: number) => `${n}mm`
  return await page.pdf({
    format: 'A4',
    printBackground: true,
    displayHeaderFooter: true,
    headerTemplate: '<span></span>',
    footerTemplate: footerTemplate(run),
    margin: { top: mm(PDF_MARGINS_MM.top), bottom: mm(PDF_MARGINS_MM.bottom), left: mm(PDF_MARGINS_MM.left), right: mm(PDF_MARGINS_MM.right) },
    tagged: true,
    outline: true,
  })
}
