// `trainpool serve` as a process (from sources via tsx): prints the token URL, serves it, warns on
// 0.0.0.0, refuses bad flags with exit 2, and stops cleanly on SIGINT/SIGTERM.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type RunEvent, presetConfig } from '@shared/contract'
import { RunStore } from '../store/run-store'
import { processAlive, waitUntil } from '../testing/capability'
import { childrenOf, killAll, spawnCli } from '../testing/cli-process'
import { parseServeFlags } from './serve-command'

afterEach(killAll)

function serve(args: string[], store = mkdtempSync(join(tmpdir(), 'trainpool-serve-store-'))) {
  return spawnCli('serve', ['--store', store, ...args])
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
    // the page can upload a data file (token required), loaded into the store's data cache
    expect(out.stderr).toMatch(/data files upload up to 2\.0 GiB/)
    const token = new URL(url!).searchParams.get('token')
    const upload = await fetch(url!.replace(/\?token=.*/, `api/upload?name=t.csv&token=${token}`), { method: 'POST', body: 'a,b\n1,2\n3,4\n' })
    expect(upload.status).toBe(200)
    expect(await upload.json()).toMatchObject({ name: 't.csv', rows: 2, columns: [{ name: 'a' }, { name: 'b' }] })
    child.kill('SIGINT')
    const t0 = Date.now()
    expect(await exited).toEqual({ code: 0, signal: null })
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(out.stderr).toMatch(/SIGINT: stopping workers/)
    expect(out.stderr).toMatch(/stopped/)
  })

  it('Ctrl+C during a run cancels it, stops every worker and exits 0', async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'trainpool-serve-store-'))
    const { child, out, exited } = serve(['--port', '0'], storeDir)
    expect(await waitUntil(() => /\?token=/.test(out.stdout), 30_000)).toBe(true)
    const url = new URL(out.stdout.match(/http:\/\/\S+/)![0])
    const ws = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get('token')}`)
    const events: RunEvent[] = []
    const replies: { id: unknown; ok: boolean }[] = []
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString())
      if (m.event) events.push(m.event)
      else replies.push(m)
    })
    await new Promise((r) => ws.once('open', r))
    const config = presetConfig('smoke', { backend: 'wasm', sizes: [50_000], models: [8], workers: [2], model: { epochs: 5 } })
    ws.send(JSON.stringify({ id: 1, method: 'start', payload: { config } }))
    expect(
      await waitUntil(() => events.some((e) => e.type === 'progress'), 90_000),
      JSON.stringify({ replies, events: events.map((e) => e.type), stderr: out.stderr.slice(-2000) }),
    ).toBe(true)
    expect(replies[0]).toMatchObject({ id: 1, ok: true })
    const workers = childrenOf(child.pid!)
    if (process.platform === 'linux') expect(workers.length).toBeGreaterThan(0)
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)))
    child.kill('SIGINT')
    expect(await exited).toEqual({ code: 0, signal: null })
    expect(await closed).toBe(1001)
    expect(events.some((e) => e.type === 'run-finished' && e.result.status === 'cancelled')).toBe(true)
    expect(workers.filter(processAlive)).toEqual([])
    const runs = await new RunStore(storeDir).list()
    expect(runs.map((r) => r.status)).toEqual(['cancelled'])
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
    expect(bad.out.stderr).toMatch(/--port: "99999" is out of range; use an integer from 0 to 65535/)
    const upload = serve(['--max-upload', 'lots'])
    expect((await upload.exited).code).toBe(2)
    expect(upload.out.stderr).toMatch(/--max-upload: "lots" is not a size/)
    expect(parseServeFlags({ port: 'x' })).toMatch(/^--port/)
    expect(parseServeFlags({ host: 'not a host!' })).toMatch(/^--host/)
    expect(parseServeFlags({})).toMatchObject({ port: 7878, host: '127.0.0.1' })
  })

  it('reads --port and --upload-idle-timeout by the one rule for typed numbers (as --lr 1_000 is), quoting the text typed', () => {
    expect(parseServeFlags({ port: '8_080' })).toMatchObject({ port: 8080 })
    expect(parseServeFlags({ port: ' 0 ' })).toMatchObject({ port: 0 })
    expect(parseServeFlags({ uploadIdleTimeout: '1_200' })).toMatchObject({ uploadIdleSeconds: 1200 })
    expect(parseServeFlags({ port: '0x1F90' })).toBe('--port: "0x1F90" is not a decimal number; use an integer from 0 to 65535 (0 picks a free port)')
    expect(parseServeFlags({ port: '80.5' })).toMatch(/^--port: "80\.5" is not an integer; /)
    expect(parseServeFlags({ port: '9007199254740993' })).toMatch(/^--port: "9007199254740993" is too large to be exact/)
    expect(parseServeFlags({ uploadIdleTimeout: '0' })).toBe('--upload-idle-timeout: "0" is out of range; use an integer from 1 to 86400 (seconds)')
    expect(parseServeFlags({ maxUpload: '1_048_576' })).toMatchObject({ maxUpload: 2 ** 20 })
    expect(parseServeFlags({ maxUpload: '1.5KiB' })).toMatchObject({ maxUpload: 1536 })
  })

  it('--max-upload takes bytes or a binary unit; default 2 GiB; anything else names the flag', () => {
    expect(parseServeFlags({})).toMatchObject({ maxUpload: 2 * 2 ** 30 })
    expect(parseServeFlags({ maxUpload: '1048576' })).toMatchObject({ maxUpload: 2 ** 20 })
    expect(parseServeFlags({ maxUpload: '500MiB' })).toMatchObject({ maxUpload: 500 * 2 ** 20 })
    expect(parseServeFlags({ maxUpload: '2G' })).toMatchObject({ maxUpload: 2 * 2 ** 30 })
    for (const bad of ['', '0', '-5', 'lots', '2 TB', '1.5.2', '0x100', 'Infinity', 'G']) {
      expect(parseServeFlags({ maxUpload: bad }), bad).toMatch(/^--max-upload: .* is not a size: use a whole number of bytes/)
    }
  })
})
