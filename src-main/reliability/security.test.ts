// Security checks not already covered elsewhere (docs/reliability.md is the map):
// run-id path traversal refused by the store AND through dispatch() for every run-id method, with a
// victim folder outside the store left untouched; and the CSP header the BUILT main bundle installs
// (out/main/index.js under the electron stand-in), next to its window's hardening options.
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { TrainpoolError } from '@shared/contract'
import { dispatch } from '../service/dispatch'
import { RUN_FILE, RunStore } from '../store/run-store'
import { skipWithoutBuild } from '../testing/capability'
import { fakeRun } from '../testing/run-fixtures'
import { makeService, tempDir } from '../testing/service-harness'

const TRAVERSALS = [
  '../x',
  '..',
  '../../etc/passwd',
  '..%2Fx',
  '..%2F..%2Fetc',
  '%2e%2e%2fx',
  '/etc/passwd',
  '/tmp',
  'a/../../x',
  '..\\x',
  'a\u0000b',
  '\u0000',
  '.',
  '',
]

describe('run-id path traversal', () => {
  it('is refused by the store and through dispatch() for every run-id method; a folder beside the store is untouched', async () => {
    const root = tempDir('traversal')
    const storeDir = join(root, 'store')
    const store = new RunStore(storeDir)
    const s = makeService({ store })
    await store.save(fakeRun({}, '20250101-000000-abcdef'))
    // a victim beside the store, reachable as ../victim from it
    const victim = join(root, 'victim')
    mkdirSync(victim)
    writeFileSync(join(victim, RUN_FILE), JSON.stringify(fakeRun({}, 'victim')))
    const ids = [...TRAVERSALS, `../${basename(victim)}`, victim, `..%2F${basename(victim)}`]
    let refused = 0
    for (const runId of ids) {
      for (const call of [() => store.get(runId), () => store.delete(runId), () => store.rename(runId, 'x'), () => store.tag(runId, ['x'])]) {
        const err = await call().then(
          () => null,
          (e: unknown) => e,
        )
        expect(err, runId).toBeInstanceOf(TrainpoolError)
        expect((err as TrainpoolError).code, runId).toBe('invalid-input')
        refused++
      }
      expect(() => store.runDir(runId), runId).toThrow(/not valid|escapes/)
      for (const [method, payload] of [
        ['getRun', { runId }],
        ['deleteRun', { runId }],
        ['renameRun', { runId, name: 'x' }],
        ['tagRun', { runId, tags: ['x'] }],
        ['exportRun', { runId, format: 'json' }],
        ['reportPdf', { runId }],
        ['cancel', { runId }],
      ] as const) {
        expect(await dispatch(s.service, method, payload), `${method} ${JSON.stringify(runId)}`).toMatchObject({ ok: false, error: { code: 'invalid-input' } })
        refused++
      }
    }
    expect(JSON.parse(readFileSync(join(victim, RUN_FILE), 'utf8')).runId).toBe('victim')
    expect((await store.list()).map((r) => r.runId)).toEqual(['20250101-000000-abcdef'])
    expect(s.launcher.launched).toHaveLength(0)
    console.log(`[reliability] ${refused} traversal attempts refused (${ids.length} ids × store and dispatch methods)`)
  })
})

const root = resolve(__dirname, '..', '..')
const mainJs = join(root, 'out', 'main', 'index.js')
const notBuilt = skipWithoutBuild()

describe.skipIf(notBuilt)('the built main bundle (electron stand-in)', () => {
  it('installs a CSP with no remote origin on app pages, leaves other responses alone, and hardens the window', async () => {
    const dir = tempDir('csp')
    const appUrl = pathToFileURL(join(root, 'out', 'renderer', 'index.html')).href
    const driver = join(dir, 'driver.cjs')
    writeFileSync(
      driver,
      `
const electron = require('electron') // the stand-in from electron-shim.cjs
const say = (kind, data) => process.stdout.write('SEC ' + JSON.stringify({ kind, data }) + '\\n')
let handler = null
electron.session.defaultSession.webRequest.onHeadersReceived = (h) => { handler = h }
setTimeout(() => {
  if (!handler) { say('no-handler', true); process.exit(0) }
  const ask = (url) => new Promise((r) => handler({ url, responseHeaders: { 'content-security-policy': ["default-src *"], 'X-Other': ['1'] } }, r))
  Promise.all([ask(${JSON.stringify(appUrl)}), ask('https://evil.example/')]).then(([app, other]) => {
    say('app', app)
    say('other', other)
    process.exit(0)
  })
}, 300)
`,
    )
    const child = spawn(process.execPath, ['-r', join(root, 'src-main', 'testing', 'electron-shim.cjs'), '-r', driver, mainJs], {
      cwd: root,
      env: { ...process.env, TRAINPOOL_STORE: join(dir, 'store'), TRAINPOOL_SHIM_USERDATA: join(dir, 'userData'), ELECTRON_RENDERER_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => (stdout += c))
    child.stderr.on('data', (c) => (stderr += c))
    await new Promise((r) => child.on('exit', r))
    const lines = stdout
      .split('\n')
      .filter((l) => /^(SEC|SHIM) /.test(l))
      .map((l) => JSON.parse(l.slice(l.indexOf(' ') + 1)) as { kind: string; data: unknown })
    const first = (kind: string) => lines.find((l) => l.kind === kind)?.data
    expect(first('no-handler'), stderr).toBeUndefined()
    const app = first('app') as { responseHeaders: Record<string, string[]> }
    expect(app, stderr).toBeDefined()
    // the page's own CSP header is replaced (not merged), other headers kept
    expect(Object.keys(app.responseHeaders).filter((k) => k.toLowerCase() === 'content-security-policy')).toEqual(['Content-Security-Policy'])
    expect(app.responseHeaders['X-Other']).toEqual(['1'])
    const [csp] = app.responseHeaders['Content-Security-Policy']
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive)
    }
    expect(csp).not.toMatch(/https?:|\*|unsafe-eval/)
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/)
    expect(first('other')).toEqual({})
    expect(first('sandbox')).toBe(true)
    expect(first('window')).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false })
    expect((first('window') as Record<string, unknown>).webSecurity).not.toBe(false)
  })
})
