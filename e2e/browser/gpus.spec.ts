// Browser mode on a machine with two NVIDIA GPUs (a fake nvidia-smi): the config panel lists them,
// the user pins the workers to both, runs, and each live lane names its worker's GPU; the stored run
// records each worker's CUDA_VISIBLE_DEVICES as the worker itself reported it.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { discoverGpus } from '../../src-main/gpus/discover'
import { type BrowserSession, chooseSmokeOnWasm, type E2eServer, openApp, openBrowserSession, shot, skipBrowserSpecs } from '../../src-main/testing/e2e-browser'

const skip = skipBrowserSpecs()

describe.skipIf(skip)('browser mode: GPUs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trainpool-e2e-gpus-'))
  const fake = join(dir, 'nvidia-smi')
  let env: E2eServer
  let session: BrowserSession
  let page: Page
  let pageErrors: string[] = []

  beforeAll(async () => {
    writeFileSync(fake, '#!/bin/sh\necho "0, GPU-e2e-0, NVIDIA H200, 143771"\necho "1, GPU-e2e-1, NVIDIA H200, 143771"\n')
    chmodSync(fake, 0o755)
    session = await openBrowserSession({ discoverGpus: () => discoverGpus(fake) })
    ;({ env, page, pageErrors } = session)
  })

  afterAll(async () => {
    await session?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("picks both GPUs in the config panel; the lanes name each worker's GPU; the run records them", async () => {
    await openApp(page, env.server)
    await chooseSmokeOnWasm(page)
    await page.locator('[data-test="gpus-pin"]').check()
    expect(await page.locator('[data-test="gpus-summary"]').textContent()).toBe('the workers take GPUs 0, 1 in turn')
    await page.locator('[data-test="model-epochs"]').fill('20')
    await page.locator('[data-test="strategy-sequential"]').uncheck()
    await page.locator('[data-test="strategy-batched"]').uncheck()
    const seen = new Set<string>()
    const poll = setInterval(() => {
      void page
        .locator('[data-test="lane-gpu"]')
        .allTextContents()
        .then(
          (t) => t.forEach((x) => seen.add(x.trim())),
          () => undefined,
        )
    }, 100)
    await page.locator('[data-test="run"]').click()
    await expect.poll(() => page.locator('[data-test="run-status"]').textContent(), { timeout: 120_000, interval: 250 }).toBe('Finished')
    clearInterval(poll)
    expect([...seen].sort()).toEqual(['· GPU 0 · NVIDIA H200', '· GPU 1 · NVIDIA H200'])
    await shot(page, 'gpus-01-finished')
    const [entry] = await env.service.listRuns()
    const run = await env.store.get(entry.runId)
    expect(run.config.gpus).toBe('all')
    expect(run.measurements[0].workerGpus).toEqual(['GPU-e2e-0', 'GPU-e2e-1'])
    expect(pageErrors).toEqual([])
  })
})
