// Issue 26 at the command line (from sources via tsx): a store holding a FIFO, a /dev/zero link, a
// folder and a loop named run.json no longer hangs `trainpool bench`, `serve` or `report` — each
// finishes and names them as damaged; `bench --data` on a store it cannot write says so naming the
// path (exit 2, no stack trace); a run refused for its data leaves nothing in the data cache.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, promises as fs, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { DATASETS_DIR } from '../data/cache'
import { loadDataFile } from '../data'
import { RUN_FILE, RunStore } from '../store/run-store'
import { waitUntil } from '../testing/capability'
import { killAll, spawnCli } from '../testing/cli-process'
import { roundTrip } from '../testing/http'
import { fakeRun } from '../testing/run-fixtures'

afterEach(killAll)

const posix = process.platform !== 'win32'

/** A store with a good run and four run.json that used to hang or vanish. */
async function hostileStore(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'trainpool-hostile-cli-'))
  await new RunStore(dir).save(fakeRun({}, 'good-run'))
  const folder = (id: string) => {
    mkdirSync(join(dir, id))
    return join(dir, id, RUN_FILE)
  }
  execFileSync('mkfifo', [folder('fifo-run')])
  symlinkSync('/dev/zero', folder('zero-link'))
  mkdirSync(folder('dir-run'))
  symlinkSync(RUN_FILE, folder('loop-run'))
  return dir
}

/** No "    at …" lines: an error, not a stack trace. */
const noStack = (stderr: string) => expect(stderr).not.toMatch(/^\s+at /m)

describe.runIf(posix)('a store with a FIFO, /dev/zero, a folder and a loop as run.json', () => {
  it('trainpool bench finishes its start-up and lists them as damaged', async () => {
    const store = await hostileStore()
    const { out, exited } = spawnCli('bench', ['--preset', 'smoke', '--store', store, '--data', join(store, 'no-such.csv'), '--target', 'y'])
    const started = Date.now()
    expect(await exited).toEqual({ code: 2, signal: null })
    expect(Date.now() - started).toBeLessThan(60_000)
    expect(out.stderr).toContain(`warning: the store ${store} has 4 entries it cannot read (listed as damaged, left as they are):`)
    expect(out.stderr).toMatch(/ {2}fifo-run: run\.json is a FIFO \(named pipe\), not a file/)
    expect(out.stderr).toMatch(/ {2}zero-link: run\.json is a symbolic link to \/dev\/zero/)
    expect(out.stderr).toMatch(/ {2}dir-run: run\.json is a folder/)
    expect(out.stderr).toMatch(/ {2}loop-run: run\.json is a symbolic link that loops/)
    expect(out.stderr).toMatch(/--data: there is no file .*no-such\.csv/)
  })

  it('trainpool report names the damage of each (exit 2), and still reports a good run', async () => {
    const store = await hostileStore()
    for (const [runId, problem] of [
      ['fifo-run', 'run.json is a FIFO (named pipe)'],
      ['zero-link', 'run.json is a symbolic link to /dev/zero'],
      ['dir-run', 'run.json is a folder'],
      ['loop-run', 'run.json is a symbolic link that loops'],
    ]) {
      const { out, exited } = spawnCli('report', [runId, '--store', store])
      expect(await exited, out.stderr).toEqual({ code: 2, signal: null })
      expect(out.stderr).toContain(`trainpool report: run ${runId}: ${problem}`)
    }
    const good = spawnCli('report', ['good-run', '--store', store, '--md'])
    expect(await good.exited).toEqual({ code: 0, signal: null })
  })

  it('trainpool serve starts (prints its URL) and lists them as damaged', async () => {
    const store = await hostileStore()
    const { child, out, exited } = spawnCli('serve', ['--store', store, '--port', '0'])
    expect(await waitUntil(() => /\?token=/.test(out.stdout), 30_000), out.stderr).toBe(true)
    const url = new URL(out.stdout.match(/http:\/\/\S+/)![0])
    const ws = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get('token')}`)
    await new Promise((r) => ws.once('open', r))
    const reply = (await roundTrip(ws, JSON.stringify({ id: 1, method: 'listRuns' }))) as {
      ok: boolean
      value: { runId: string; status: string; problem?: string }[]
    }
    ws.close()
    expect(reply.ok).toBe(true)
    expect(Object.fromEntries(reply.value.map((e) => [e.runId, e.status]))).toEqual({
      'good-run': 'ok',
      'fifo-run': 'damaged',
      'zero-link': 'damaged',
      'dir-run': 'damaged',
      'loop-run': 'damaged',
    })
    child.kill('SIGINT')
    expect((await exited).code).toBe(0)
  })
})

describe.runIf(posix)('bench --data on a store it cannot write: a clear error naming the path, exit 2', () => {
  const csv = () => {
    const dir = mkdtempSync(join(tmpdir(), 'trainpool-data-'))
    writeFileSync(join(dir, 'f.csv'), 'x,y\n1,2\n3,4\n5,6\n')
    return { dir, file: join(dir, 'f.csv') }
  }

  it('a plain file, a link that loops, a HOME that is a file', async () => {
    const { dir, file } = csv()
    const plain = join(dir, 'plain-file')
    writeFileSync(plain, 'not a folder')
    const loop = join(dir, 'loop')
    symlinkSync(loop, loop)
    for (const [store, code] of [
      [plain, 'ENOTDIR'],
      [loop, 'ELOOP'],
    ]) {
      const { out, exited } = spawnCli('bench', ['--preset', 'smoke', '--store', store, '--data', file, '--target', 'y'])
      expect(await exited, out.stderr).toEqual({ code: 2, signal: null })
      expect(out.stderr).toContain(`trainpool bench: --store: the data cache ${join(store, DATASETS_DIR)} cannot be written (${code}`)
      noStack(out.stderr)
    }
    // no --store: the default store under HOME, which is a file here
    const { out, exited } = spawnCli('bench', ['--preset', 'smoke', '--data', file, '--target', 'y'], [], { HOME: plain, TRAINPOOL_STORE: undefined })
    expect(await exited, out.stderr).toEqual({ code: 2, signal: null })
    expect(out.stderr).toContain(
      `trainpool bench: --store (default ${join(plain, '.trainpool', 'runs')}): the data cache ${join(plain, '.trainpool', 'runs', DATASETS_DIR)} cannot be written (ENOTDIR`,
    )
    expect(out.stderr).toMatch(/choose another with --store DIR\n$/)
    noStack(out.stderr)
  })

  it.runIf(process.getuid?.() !== 0)('a read-only store folder (root writes anyway: skipped as root)', async () => {
    const { dir, file } = csv()
    const store = join(dir, 'read-only')
    mkdirSync(store, { mode: 0o500 })
    const { out, exited } = spawnCli('bench', ['--preset', 'smoke', '--store', store, '--data', file, '--target', 'y'])
    expect(await exited, out.stderr).toEqual({ code: 2, signal: null })
    expect(out.stderr).toContain(`trainpool bench: --store: the data cache ${join(store, DATASETS_DIR)} cannot be written (EACCES`)
    noStack(out.stderr)
  })
})

describe('a run refused for its data leaves nothing in the data cache', () => {
  it('a target that is not a column, no --target, a target of 1e308: refused, nothing cached (a set cached before stays)', async () => {
    const store = mkdtempSync(join(tmpdir(), 'trainpool-refused-'))
    const secret = join(store, '..', `${store.split('/').pop()}-secret.csv`)
    writeFileSync(secret, 'root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/sh\n')
    const cached = async () => (await fs.readdir(join(store, DATASETS_DIR)).catch(() => [] as string[])).filter((n) => !n.startsWith('.'))
    const refused = async (args: string[], message: RegExp) => {
      const { out, exited } = spawnCli('bench', ['--preset', 'smoke', '--store', store, '--data', secret, ...args])
      expect(await exited, out.stderr).toEqual({ code: 2, signal: null })
      expect(out.stderr).toMatch(message)
      noStack(out.stderr)
      expect(await cached()).toEqual([])
    }
    await refused(['--target', 'y'], /--target column "y" is not in/)
    await refused([], /--target/)
    writeFileSync(secret, 'x,y\n1,2\n3,1e308\n')
    await refused(['--target', 'y'], /trainpool bench: --data: .*-secret\.csv column "y" row 2: 1e308 is out of float32 range/)
    // a set the cache held before this command stays when the run is refused
    writeFileSync(secret, 'x,y\n1,2\n3,4\n')
    const { sha256 } = await loadDataFile(secret, store)
    const { exited } = spawnCli('bench', ['--preset', 'smoke', '--store', store, '--data', secret, '--target', 'nope'])
    expect((await exited).code).toBe(2)
    expect(await cached()).toEqual([sha256])
  })
})
