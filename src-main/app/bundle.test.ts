// Runs the BUILT desktop main process (out/main/index.js) under plain Node with a stand-in for the
// `electron` module (src-main/testing/electron-shim.cjs), so the bundle's wiring — window options,
// IPC handlers with sender checks, the real BenchService, ElectronLauncher forking out/main/worker.js —
// is exercised even where the Electron binary is absent. Needs `npm run build` first.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { skipWithoutBuild } from '../testing/capability'

const root = resolve(__dirname, '..', '..')
const mainJs = join(root, 'out', 'main', 'index.js')
const notBuilt = skipWithoutBuild()

interface ShimLine {
  kind: string
  data: unknown
}

describe.skipIf(notBuilt)('built main process (electron stand-in)', () => {
  it('opens a hardened window, answers IPC, refuses foreign senders, runs a smoke benchmark over the launcher, and shuts down on quit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trainpool-bundle-'))
    const config = { ...presetConfig('smoke'), backend: 'cpu', workers: [2], strategies: ['sequential', 'pool', 'batched'] }
    const driver = join(dir, 'driver.cjs')
    const appUrl = pathToFileURL(join(root, 'out', 'renderer', 'index.html')).href
    writeFileSync(
      driver,
      `
const say = (kind, data) => process.stdout.write('SHIM ' + JSON.stringify({ kind, data }) + '\\n')
setTimeout(async () => {
  const { handlers, app } = globalThis.__trainpoolShim
  const ev = { sender: { id: 1 }, senderFrame: { url: ${JSON.stringify(appUrl)}, parent: null } }
  const call = (ch, p, e = ev) => handlers.get(ch)(e, p)
  say('list', await call('trainpool:list-runs'))
  say('bad', await call('trainpool:get-run', { runId: '../x' }))
  say('foreign', await call('trainpool:list-runs', undefined, { sender: { id: 1 }, senderFrame: { url: 'https://evil.example/', parent: null } }))
  say('subframe', await call('trainpool:list-runs', undefined, { sender: { id: 1 }, senderFrame: { url: ev.senderFrame.url, parent: {} } }))
  const started = await call('trainpool:start', { config: ${JSON.stringify(config)} })
  say('start', started)
  for (let i = 0; i < 400 && started.ok; i++) {
    if (!(await call('trainpool:current-run')).value) break
    await new Promise((r) => setTimeout(r, 250))
  }
  if (started.ok) say('run', await call('trainpool:get-run', { runId: started.value.runId }))
  app.emit('before-quit', { preventDefault: () => say('quit-deferred', true) })
}, 200)
`,
    )
    const child = spawn(process.execPath, ['-r', join(__dirname, '..', 'testing', 'electron-shim.cjs'), '-r', driver, mainJs], {
      cwd: root,
      env: { ...process.env, TRAINPOOL_STORE: join(dir, 'store'), TRAINPOOL_SHIM_USERDATA: join(dir, 'userData'), ELECTRON_RENDERER_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => (stdout += c))
    child.stderr.on('data', (c) => (stderr += c))
    const code = await new Promise<number | null>((r) => child.on('exit', r))
    const lines: ShimLine[] = stdout
      .split('\n')
      .filter((l) => l.startsWith('SHIM '))
      .map((l) => JSON.parse(l.slice(5)))
    const first = (kind: string) => lines.find((l) => l.kind === kind)?.data as Record<string, unknown> | undefined
    const all = (kind: string) => lines.filter((l) => l.kind === kind).map((l) => l.data as Record<string, unknown>)

    expect(code, stderr).toBe(0)
    expect(first('sandbox')).toBe(true)
    expect(first('window')).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false, preload: join(root, 'out', 'preload', 'index.js') })
    expect(first('window-open')).toEqual({ action: 'deny' })
    expect(first('load')).toBe(join(root, 'out', 'renderer', 'index.html'))
    expect(first('list')).toEqual({ ok: true, value: [] })
    expect(first('bad')).toMatchObject({ ok: false, error: { code: 'invalid-input' } })
    expect(first('foreign')).toMatchObject({ ok: false, error: { code: 'unauthorized' } })
    expect(first('subframe')).toMatchObject({ ok: false, error: { code: 'unauthorized' } })
    expect(first('start')).toMatchObject({ ok: true })

    const forks = all('fork') as Array<{ modulePath: string; stdio: string; serviceName: string }>
    expect(forks.length).toBeGreaterThan(0)
    for (const f of forks) {
      expect(f.modulePath).toBe(join(root, 'out', 'main', 'worker.js'))
      expect(f.stdio).toBe('pipe')
      expect(f.serviceName).toMatch(/^trainpool-/)
    }
    const run = first('run') as unknown as { ok: boolean; value: { status: string; verification: { sameWork: boolean }; error?: string } }
    expect(run.ok).toBe(true)
    expect(run.value.status, run.value.error).toBe('ok')
    expect(run.value.verification.sameWork).toBe(true)

    const sent = all('send') as Array<{ channel: string; type: string }>
    expect(sent.every((s) => s.channel === 'trainpool:event')).toBe(true)
    expect(sent.map((s) => s.type)).toEqual(expect.arrayContaining(['run-started', 'progress', 'measurement', 'run-finished']))
    expect(first('quit-deferred')).toBe(true)
    expect(first('quit')).toBe(true)
  })
})
