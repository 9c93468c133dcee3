// The CLI's output files (report --json/--csv/--pdf, bench --json): a path that cannot take the
// file is one line naming the flag, exit 2, checked before anything is rendered or started; a
// link planted at the name is replaced, not written through; a disk that fails mid-write exits 1
// and leaves neither the file nor a temporary one.
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { killAll, spawnCli } from '../testing/cli-process'
import { fakeRun } from '../testing/run-fixtures'
import { tempDir } from '../testing/service-harness'
import { benchCommand } from './bench-command'
import { reportCommand } from './report-command'

const run = fakeRun()
let dir: string
let store: RunStore
beforeEach(async () => {
  dir = tempDir('output-files')
  store = new RunStore(join(dir, 'runs'))
  await store.save(run)
})
afterEach(() => {
  killAll()
  vi.restoreAllMocks()
})

/** a command run in this process: its exit code and what it wrote on stderr */
async function captured(command: () => Promise<number>): Promise<{ code: number; stderr: string }> {
  let stderr = ''
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  try {
    return { code: await command(), stderr }
  } finally {
    vi.restoreAllMocks()
  }
}

const report = (flags: Parameters<typeof reportCommand>[1]) => captured(() => reportCommand(run.runId, { store: store.dir, ...flags }))

function expectOneLine(result: { code: number; stderr: string }, code: number, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(code)
  expect(result.stderr.trimEnd().split('\n'), 'one line').toHaveLength(1)
  expect(result.stderr).toMatch(pattern)
}

describe('report: a path that cannot take the file is refused naming the flag (exit 2)', () => {
  it('--json in a folder that does not exist, --csv naming a folder, --json under a file', async () => {
    expectOneLine(await report({ json: join(dir, 'missing', 'r.json') }), 2, /^trainpool report: --json .*missing\/r\.json: cannot write there \(ENOENT: /)
    expect(existsSync(join(dir, 'missing'))).toBe(false)
    expectOneLine(await report({ csv: dir }), 2, /^trainpool report: --csv .* is a folder: a file name is accepted/)
    writeFileSync(join(dir, 'a-file'), 'x')
    expectOneLine(
      await report({ json: join(dir, 'a-file', 'r.json') }),
      2,
      /^trainpool report: --json .*a-file\/r\.json: .*(a regular file, not a folder|ENOTDIR)/,
    )
  })

  it('--pdf to a bad path is refused before the report is rendered (no browser needed), and a bad path among several writes none', async () => {
    const started = Date.now()
    expectOneLine(await report({ pdf: join(dir, 'missing', 'r.pdf') }), 2, /^trainpool report: --pdf .*missing\/r\.pdf: cannot write there/)
    expect(Date.now() - started).toBeLessThan(5000)
    expectOneLine(await report({ json: join(dir, 'r.json'), pdf: join(dir, 'missing', 'r.pdf') }), 2, /--pdf/)
    expect(existsSync(join(dir, 'r.json'))).toBe(false)
  })

  it('a link planted at the --json name is replaced by the file; its target is unchanged', async () => {
    writeFileSync(join(dir, 'victim'), 'precious')
    symlinkSync(join(dir, 'victim'), join(dir, 'r.json'))
    expect((await report({ json: join(dir, 'r.json') })).code).toBe(0)
    expect(readFileSync(join(dir, 'victim'), 'utf8')).toBe('precious')
    expect(lstatSync(join(dir, 'r.json')).isFile()).toBe(true)
    expect(JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')).runId).toBe(run.runId)
  })
})

describe('bench: a --json or --csv path that cannot take the file is refused before the run starts (exit 2)', () => {
  it('--json under a file, --csv naming a folder: nothing is started, the store gains no run', async () => {
    writeFileSync(join(dir, 'a-file'), 'x')
    const bench = (flags: Record<string, unknown>) =>
      captured(() => benchCommand({ preset: 'smoke', backend: 'wasm', store: store.dir, ...flags } as never, 'test'))
    expectOneLine(await bench({ json: join(dir, 'a-file', 'r.json') }), 2, /^trainpool bench: --json .*a-file\/r\.json: /)
    expectOneLine(await bench({ csv: dir }), 2, /^trainpool bench: --csv .* is a folder: a file name is accepted/)
    expect((await store.list()).map((e) => e.runId)).toEqual([run.runId])
  })
})

const prlimit = process.platform === 'linux' && spawnSync('prlimit', ['--version']).status === 0

describe('the disk fails while the file is written', () => {
  it.skipIf(skipWithout('prlimit', prlimit, 'util-linux prlimit is not installed'))(
    'report --json: exit 1, one line naming --json, no file and no temporary file left',
    async () => {
      const out = join(dir, 'out')
      mkdirSync(out)
      // the result JSON (tens of kB) is over the file-size limit: EFBIG, as a full disk
      const cli = spawnCli('report', [run.runId, '--json', join(out, 'r.json'), '--store', store.dir], ['prlimit', '--fsize=4096'])
      const exit = await cli.exited
      expect(exit.code, cli.out.stderr).toBe(1)
      expect(cli.out.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(cli.out.stderr).toMatch(/^trainpool report: --json .*r\.json: cannot write the file \((EFBIG|ENOSPC)/)
      expect(readdirSync(out)).toEqual([])
    },
    60_000,
  )
})
