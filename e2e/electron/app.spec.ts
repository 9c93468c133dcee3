// The desktop app end to end: Playwright drives the real Electron binary on the built app (out/).
// Skipped, with the reason, where Electron cannot run; TRAINPOOL_REQUIRE=electron makes that a failure.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { _electron, type ElectronApplication, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { METHODS } from '../../src-main/service/dispatch'
import { electronExecutablePath, electronRequired, electronUnavailableReason, repoRoot } from '../../src-main/testing/electron-binary'

const unavailable = electronUnavailableReason()
const required = electronRequired()

if (unavailable && !required) {
  console.warn(`[e2e/electron] skipped the Electron app specs: ${unavailable}. Set TRAINPOOL_REQUIRE=electron to make this a failure.`)
}

describe.runIf(unavailable !== null && required)('Electron app (required by TRAINPOOL_REQUIRE)', () => {
  it('can run here', () => {
    throw new Error(`TRAINPOOL_REQUIRE includes "electron" but the Electron specs cannot run: ${unavailable}`)
  })
})

describe.skipIf(unavailable !== null)('Electron app', () => {
  let app: ElectronApplication
  let page: Page

  beforeAll(async () => {
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
    delete env.ELECTRON_RENDERER_URL // never the dev server
    delete env.ELECTRON_RUN_AS_NODE
    env.TRAINPOOL_STORE = mkdtempSync(join(tmpdir(), 'trainpool-e2e-store-'))
    app = await _electron.launch({
      executablePath: electronExecutablePath()!,
      args: ['.'],
      cwd: repoRoot,
      env,
      timeout: 60_000,
    })
    page = await app.firstWindow()
    await page.waitForLoadState('domcontentloaded')
    await page.waitForFunction(() => 'trainpool' in globalThis, undefined, { timeout: 30_000 })
  })

  afterAll(async () => {
    await app?.close()
  })

  it('opens one window titled Trainpool', async () => {
    expect(await page.title()).toMatch(/trainpool/i)
    expect(app.windows()).toHaveLength(1)
  })

  it('exposes exactly the contract methods on window.trainpool, and no Node', async () => {
    const seen = await page.evaluate(() => {
      const w = globalThis as unknown as Record<string, unknown>
      const api = w.trainpool as Record<string, unknown>
      return {
        keys: Object.keys(api).sort(),
        allFunctions: Object.values(api).every((v) => typeof v === 'function'),
        require: typeof w.require,
        process: typeof w.process,
        module: typeof w.module,
        Buffer: typeof w.Buffer,
      }
    })
    expect(seen.keys).toEqual([...METHODS, 'onEvent', 'onMenuCommand'].sort())
    expect(seen.allFunctions).toBe(true)
    expect(seen).toMatchObject({ require: 'undefined', process: 'undefined', module: 'undefined', Buffer: 'undefined' })
  })

  it('loads the bundled page and refuses navigation, pop-ups and remote requests', async () => {
    const url = await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0].webContents.getURL())
    expect(url).toMatch(/^file:.*\/out\/renderer\/index\.html/)
    const popup = await page.evaluate(() => (globalThis as unknown as { open(u: string): unknown }).open('https://example.com/'))
    expect(popup).toBeNull()
    await page.evaluate(() => {
      ;(globalThis as unknown as { location: { href: string } }).location.href = 'https://example.com/'
    })
    await page.waitForTimeout(500)
    expect(page.url()).toBe(url)
    expect(app.windows()).toHaveLength(1)
    const blocked = await page.evaluate(async () => {
      try {
        await fetch('https://example.com/')
        return false
      } catch {
        return true
      }
    })
    expect(blocked).toBe(true)
  })

  it('a bad payload comes back as a typed error, not a crash', async () => {
    const err = await page.evaluate(async () => {
      const api = (globalThis as unknown as { trainpool: { getRun(request: { runId: string }): Promise<unknown> } }).trainpool
      try {
        await api.getRun({ runId: '../../etc/passwd' })
        return null
      } catch (e) {
        return e as { code?: string; message?: string }
      }
    })
    expect(err).toMatchObject({ code: 'invalid-input' })
    expect(err?.message).toMatch(/runId/)
  })

  it('answers capabilities from the service in the main process', async () => {
    const caps = await page.evaluate(() =>
      (globalThis as unknown as { trainpool: { capabilities(): Promise<{ shell: string; backends: unknown[] }> } }).trainpool.capabilities(),
    )
    expect(caps.shell).toBe('electron')
    expect(Array.isArray(caps.backends)).toBe(true)
  })
})
