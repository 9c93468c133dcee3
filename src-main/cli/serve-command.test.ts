// `trainpool serve` as a process (from sources via tsx): prints the token URL, serves it, warns on
// 0.0.0.0, refuses bad flags with exit 2, and stops cleanly on SIGINT/SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { fakeRendererDir } from '../server/test-support'
import { waitUntil } from '../testing/capability'
import { parseServeFlags } from './serve-command'

const cliEntry = resolve(__dirname, 'index.ts')
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

function serve(args: string[]) {
  const store = mkdtempSync(join(tmpdir(), 'trainpool-serve-store-'))
  const child = spawn(process.execPath, ['--import', 'tsx', cliEntry, 'serve', '--store', store, ...args], {
    env: { ...process.env, TRAINPOOL_RENDERER_DIR: fakeRendererDir().dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  const out = { stdout: '', stderr: '' }
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out.stdout += c))
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out.stderr += c))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })))
  return { child, out, exited }
}

describe('trainpool serve', () => {
  it('prints a token URL that serves the page, and stops cleanly on SIGINT', async () => {
    const { child, out, exited } = serve(['--port', '0'])
    expect(await waitUntil(() => /\?token=/.test(out.stdout), 30_000)).toBe(true)
    const url = out.stdout.match(/http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{48}/)?.[0]
    expect(url, out.stdout).toBeTruthy()
    expect((await fetch(url!)).status).toBe(200)
    expect((await fetch(url!.replace(/\?token=.*/, ''))).status).toBe(401)
    expect(out.stderr).not.toMatch(/WARNING/)
    child.kill('SIGINT')
    const t0 = Date.now()
    expect(await exited).toEqual({ code: 0, signal: null })
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(out.stderr).toMatch(/SIGINT: stopping workers/)
    expect(out.stderr).toMatch(/stopped/)
  })

  it('warns when bound to 0.0.0.0, and stops on SIGTERM', async () => {
    const { child, out, exited } = serve(['--port', '0', '--host', '0.0.0.0'])
    expect(await waitUntil(() => /\?token=/.test(out.stdout), 30_000)).toBe(true)
    expect(out.stderr).toMatch(/WARNING: listening on 0\.0\.0\.0/)
    child.kill('SIGTERM')
    expect((await exited).code).toBe(0)
  })

  it('refuses bad flags with exit 2 and a message naming the flag', async () => {
    const bad = serve(['--port', '99999'])
    expect((await bad.exited).code).toBe(2)
    expect(bad.out.stderr).toMatch(/--port: "99999" is not a port/)
    expect(parseServeFlags({ port: 'x' })).toMatch(/^--port/)
    expect(parseServeFlags({ host: 'not a host!' })).toMatch(/^--host/)
    expect(parseServeFlags({})).toMatchObject({ port: 7878, host: '127.0.0.1' })
  })
})
