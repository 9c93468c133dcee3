// Browser-mode E2E (the specs in e2e/browser): Debian's Chromium driven by playwright-core, against
// `trainpool serve`'s server started in-process (port 0, a temp run store, the real BenchService and
// Node launcher over the built worker). The launcher records every worker it starts so specs can
// check that none outlives a run.
import type { GpuInfo, LauncherCapability } from '@shared/contract'
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type Browser, type BrowserContextOptions, type Page, chromium } from 'playwright-core'
import { type TrainpoolServer, startServer } from '../server/server'
import { serviceUploads } from '../server/upload'
import { BenchService } from '../service/bench-service'
import { RunStore } from '../store/run-store'
import { skipWithout } from './capability'
import { builtOrSourceLauncher, RecordingLauncher } from './recording-launcher'

export const repoRoot = resolve(__dirname, '..', '..')
export const CHROMIUM_PATH = process.env.TRAINPOOL_CHROMIUM ?? '/usr/bin/chromium'
export const ARTIFACTS = join(repoRoot, 'test-artifacts', 'e2e')
const RENDERER = join(repoRoot, 'out', 'renderer', 'index.html')

/** true: skip the browser specs (the reason is printed); throws under TRAINPOOL_REQUIRE=chromium. */
export function skipBrowserSpecs(): boolean {
  return skipWithout('chromium', existsSync(CHROMIUM_PATH), `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set TRAINPOOL_CHROMIUM)`)
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: 60_000,
  })
}

export interface E2eServer {
  server: TrainpoolServer
  service: BenchService
  store: RunStore
  launcher: RecordingLauncher
  close(): Promise<void>
}

/** `maxUploadBytes`: the data-file upload cap (default: serve's, 2 GiB); `discoverGpus`, `checkSlurm`: a machine's GPUs and Slurm as a spec needs them. */
export async function startE2eServer(
  options: { maxUploadBytes?: number; discoverGpus?: () => Promise<GpuInfo[]>; checkSlurm?: () => Promise<LauncherCapability> } = {},
): Promise<E2eServer> {
  if (!existsSync(RENDERER)) {
    throw new Error(`the renderer is not built (${RENDERER} missing): run \`npx electron-vite build\` (npm test does it first)`)
  }
  const store = new RunStore(mkdtempSync(join(tmpdir(), 'trainpool-e2e-browser-')))
  const launcher = new RecordingLauncher(builtOrSourceLauncher())
  const service = new BenchService({
    launcher,
    store,
    shell: 'browser',
    appVersion: 'e2e',
    ...(options.discoverGpus ? { discoverGpus: options.discoverGpus } : {}),
    ...(options.checkSlurm ? { checkLaunchers: { slurm: options.checkSlurm } } : {}),
  })
  const server = await startServer({
    service,
    port: 0,
    rendererDir: join(repoRoot, 'out', 'renderer'),
    uploads: serviceUploads(service, options.maxUploadBytes),
  })
  return { server, service, store, launcher, close: () => server.close() }
}

/** A spec's server, its Chromium and one page (1400×1000) whose errors are collected. */
export interface BrowserSession {
  env: E2eServer
  browser: Browser
  page: Page
  pageErrors: string[]
  /** closes Chromium, then the server */
  close(): Promise<void>
}

/** Opens a BrowserSession (`server`: startE2eServer's options; `page`: more of the page's options). */
export async function openBrowserSession(server: Parameters<typeof startE2eServer>[0] = {}, page: BrowserContextOptions = {}): Promise<BrowserSession> {
  const env = await startE2eServer(server)
  let browser: Browser | null = null
  try {
    browser = await launchChromium()
    const opened = await browser.newPage({ viewport: { width: 1400, height: 1000 }, ...page })
    const b = browser
    return {
      env,
      browser,
      page: opened,
      pageErrors: collectPageErrors(opened),
      close: async () => {
        await b.close()
        await env.close()
      },
    }
  } catch (err) {
    await browser?.close()
    await env.close()
    throw err
  }
}

/** Saves a full-page screenshot as test-artifacts/e2e/<name>.png. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
}

/** The page's uncaught errors and console errors as they happen (a spec expects none at its end). */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(err.message))
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text())
  })
  return errors
}

/** Opens the app with the token and waits until the capabilities arrived (backend list filled). */
export async function openApp(page: Page, server: TrainpoolServer): Promise<void> {
  const response = await page.goto(server.url)
  if (response?.status() !== 200) throw new Error(`GET ${server.url} → ${response?.status()}`)
  await waitForCapabilities(page)
}

/** The backend probe (a short-lived worker) answered: the backend detail names a device, not "not loaded". */
export async function waitForCapabilities(page: Page, timeoutMs = 60_000): Promise<void> {
  // polled from here: the page's CSP (script-src 'self') rightly refuses string-evaluated predicates
  const detail = page.locator('[data-test="backend-detail"]')
  const end = Date.now() + timeoutMs
  for (;;) {
    const text = ((await detail.textContent().catch(() => null)) ?? '').trim()
    if (text && !/not loaded/i.test(text)) return
    if (Date.now() > end) throw new Error(`capabilities did not load within ${timeoutMs} ms (backend detail: ${JSON.stringify(text)})`)
    await page.waitForTimeout(100)
  }
}

/** Smoke preset on wasm, as a user would pick them. */
export async function chooseSmokeOnWasm(page: Page): Promise<void> {
  await page.locator('[data-test="preset"]').selectOption('smoke')
  await page.locator('[data-test="backend"]').selectOption('wasm')
}

/** Collects, inside the page, what the live view showed over time (lanes and model cells). */
export async function recordLiveView(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = globalThis as unknown as { __seen: { lanes: string[]; done: string[]; fractions: string[] } }
    w.__seen = { lanes: [], done: [], fractions: [] }
    const doc = (
      globalThis as unknown as {
        document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null; getAttribute(a: string): string | null }>; body: unknown }
      }
    ).document
    const note = (list: string[], v: string | null) => {
      if (v != null && list[list.length - 1] !== v) list.push(v)
    }
    const sample = () => {
      const lanes = Array.from(doc.querySelectorAll('[data-test="lane-models"]')).map((e) => e.textContent?.trim() ?? '')
      if (lanes.length) note(w.__seen.lanes, lanes.join(' | '))
      const done = doc.querySelectorAll('[data-test="models-done"]')[0]
      if (done) note(w.__seen.done, done.textContent?.trim() ?? null)
      const cells = Array.from(doc.querySelectorAll('[data-test="model-grid"] li')).map((e) => e.getAttribute('data-fraction') ?? '')
      if (cells.length) note(w.__seen.fractions, cells.join(','))
    }
    const Observer = (globalThis as unknown as { MutationObserver: new (cb: () => void) => { observe(t: unknown, o: object): void } }).MutationObserver
    new Observer(sample).observe(doc.body, { subtree: true, childList: true, characterData: true, attributes: true })
  })
}

export function seenLiveView(page: Page): Promise<{ lanes: string[]; done: string[]; fractions: string[] }> {
  return page.evaluate(() => (globalThis as unknown as { __seen: { lanes: string[]; done: string[]; fractions: string[] } }).__seen)
}

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[]; failureSummary?: string }[]
}

let axeSource: string | null = null

/** axe-core's WCAG 2 A/AA rules on the page as it is; the serious and critical violations, said briefly. */
export async function seriousViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(join(repoRoot, 'package.json')).resolve('axe-core/axe.min.js'), 'utf8')
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ content: axeSource })
  const violations = await page.evaluate(async () => {
    const w = globalThis as unknown as { document: unknown; axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }
    const result = await w.axe.run(w.document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] })
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }))
  })
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary ?? ''}`).join(' | ')}`)
}

/** Both themes (light, then dark, back to light): the serious axe violations, each named with its theme. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  const problems: string[] = []
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    await page.waitForTimeout(100)
    problems.push(...(await seriousViolations(page)).map((v) => `${scheme} theme: ${v}`))
  }
  await page.emulateMedia({ colorScheme: 'light' })
  return problems
}
