// The CLI's output files (report --json/--csv/--pdf, bench --json): a path that cannot take the
// file is one line naming the flag, exit 2, checked before anything is rendered or started; a
// link planted at the name is replaced, not written through; a disk that fails mid-write exits 1
// and leaves neither the file nor a temporary one. Paths that are not files: a character device is
// written as such and stays one, `-` and a link to standard output are standard output, a FIFO or a
// link to a device is refused. A result file given to report or advise is read as the store reads
// run.json: a FIFO, a link to /dev/zero, a folder are refused at once.
import { spawnSync } from 'node:child_process'
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { killAll, spawnCli } from '../testing/cli-process'
import { fakeRun } from '../testing/run-fixtures'
import { tempDir } from '../testing/service-harness'
import { adviseCommand } from './advise-command'
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

/** a command run in this process: its exit code and what it wrote on stdout and stderr */
async function captured(command: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' }
  for (const stream of ['stdout', 'stderr'] as const)
    vi.spyOn(process[stream], 'write').mockImplementation((chunk: unknown, ...rest: unknown[]) => {
      out[stream] += Buffer.isBuffer(chunk) ? chunk.toString('latin1') : String(chunk)
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined
      callback?.()
      return true
    })
  try {
    return { code: await command(), ...out }
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

/**
 * A character device to write to: a private one (the null device, made where this test owns the
 * folder) when this process may make one, so a broken write that replaces it harms nothing; else /dev/null.
 */
function nullDevice(): string {
  const own = join(dir, 'null')
  if (spawnSync('mknod', [own, 'c', '1', '3']).status === 0 && lstatSync(own).isCharacterDevice()) return own
  return '/dev/null'
}

/** Ends any open() blocked on `fifo` (a reader or writer waiting for the other side), so a failing test cannot hang the worker. */
function unblock(fifo: string): void {
  closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK))
}

/** `command`, or 'hung' when it has not finished within `ms` */
const within = <T>(ms: number, command: Promise<T>): Promise<T | 'hung'> => Promise.race([command, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms))])

const mkfifo = process.platform !== 'win32' && spawnSync('mkfifo', ['--version']).status === 0

describe('report: paths that are not files', () => {
  it('--csv to a character device writes into it and leaves it a device (it was replaced by a regular file as root)', async () => {
    const device = nullDevice()
    const result = await report({ csv: device })
    expect(result.code, result.stderr).toBe(0)
    expect(lstatSync(device).isCharacterDevice()).toBe(true)
    expect(readdirSync(dirname(device)).filter((n) => n.includes('.tmp'))).toEqual([])
  })

  it('- is standard output for --json, --csv and --leaderboard; one thing at a time goes there', async () => {
    // from the test's folder: a file named - would land there
    const cwd = process.cwd()
    process.chdir(dir)
    const json = await report({ json: '-' }).finally(() => process.chdir(cwd))
    expect(json.code, json.stderr).toBe(0)
    expect(JSON.parse(json.stdout).runId).toBe(run.runId)
    expect(existsSync(join(dir, '-'))).toBe(false)
    const csv = await report({ csv: '-' })
    expect(csv.code, csv.stderr).toBe(0)
    expect(csv.stdout.split('\n')[0]).toMatch(/,/)
    expectOneLine(await report({ json: '-', csv: '-' }), 2, /^trainpool report: --json - and --csv - would all write to standard output/)
    expectOneLine(await report({ json: '-', md: true }), 2, /--json - and --md would all write to standard output/)
  })

  it('a link to standard output (/dev/stdout) is standard output: the JSON is printed and the link stays', async () => {
    // /dev/stdout's own kind of link, where the test owns the folder
    const link = join(dir, 'stdout')
    symlinkSync('/proc/self/fd/1', link)
    const result = await report({ json: link })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).runId).toBe(run.runId)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
  })

  it.skipIf(skipWithout('mkfifo', mkfifo, 'mkfifo is not installed'))(
    'a FIFO, a link to a device: refused at once naming the flag, nothing replaced',
    async () => {
      const fifo = join(dir, 'pipe')
      spawnSync('mkfifo', [fifo])
      try {
        const result = await within(5000, report({ csv: fifo }))
        expect(result).not.toBe('hung')
        expectOneLine(
          result as { code: number; stderr: string },
          2,
          /^trainpool report: --csv .*pipe is a FIFO \(named pipe\): a file, a character device such as \/dev\/null, or - for standard output is accepted$/m,
        )
        expect(lstatSync(fifo).isFIFO()).toBe(true)
      } finally {
        unblock(fifo)
      }
      const link = join(dir, 'to-null')
      symlinkSync(nullDevice(), link)
      expectOneLine(
        await report({ json: link }),
        2,
        /^trainpool report: --json .*to-null is a symbolic link to .*null, which is a character device: links are never written through/,
      )
      expect(lstatSync(link).isSymbolicLink()).toBe(true)
    },
  )
})

describe('report and advise read a result file as the store reads run.json', () => {
  const runFile = () => {
    const file = join(dir, 'result.json')
    writeFileSync(file, JSON.stringify(run))
    return file
  }
  const advise = (target: string, flags: Record<string, string> = {}) =>
    captured(() => adviseCommand(target, { models: '10', size: '2000', store: store.dir, ...flags }, 'test'))

  it.skipIf(skipWithout('mkfifo', mkfifo, 'mkfifo is not installed'))('a FIFO is refused at once (it hung both)', async () => {
    const fifo = join(dir, 'result-fifo.json')
    spawnSync('mkfifo', [fifo])
    try {
      for (const command of [() => captured(() => reportCommand(fifo, {})), () => advise(fifo)]) {
        const result = await within(5000, command())
        expect(result).not.toBe('hung')
        expectOneLine(
          result as { code: number; stderr: string },
          2,
          /^trainpool (report|advise): cannot read .*result-fifo\.json: it is a FIFO \(named pipe\), not a file$/m,
        )
      }
    } finally {
      unblock(fifo)
    }
  })

  it('a link to /dev/zero and a folder are refused before a byte is read; a link to a result file is read through', async () => {
    const zero = join(dir, 'zero.json')
    symlinkSync('/dev/zero', zero)
    const started = Date.now()
    expectOneLine(await captured(() => reportCommand(zero, {})), 2, /^trainpool report: cannot read .*zero\.json: it is a character device, not a file$/m)
    expectOneLine(await advise(zero), 2, /^trainpool advise: cannot read .*zero\.json: it is a character device, not a file$/m)
    // it read 640 MB first
    expect(Date.now() - started).toBeLessThan(2000)
    mkdirSync(join(dir, 'folder.json'))
    expectOneLine(await captured(() => reportCommand(join(dir, 'folder.json'), {})), 2, /cannot read .*folder\.json: it is a folder, not a file$/m)
    const link = join(dir, 'latest.json')
    symlinkSync(runFile(), link)
    const read = await captured(() => reportCommand(link, { json: '-' }))
    expect(read.code, read.stderr).toBe(0)
    expect(JSON.parse(read.stdout).runId).toBe(run.runId)
  })

  it('advise --json - prints the advice as JSON alone on stdout, its words on stderr; --json to a FIFO is refused before anything runs', async () => {
    const result = await advise(runFile(), { json: '-' })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ runId: run.runId, target: { models: 10, size: 2000 } })
    expect(result.stderr).toMatch(/Advice from run/)
    if (!mkfifo) return
    const fifo = join(dir, 'advice-fifo')
    spawnSync('mkfifo', [fifo])
    try {
      const refused = await within(5000, advise(runFile(), { json: fifo }))
      expect(refused).not.toBe('hung')
      expectOneLine(refused as { code: number; stderr: string }, 2, /^trainpool advise: --json .*advice-fifo is a FIFO \(named pipe\)/)
    } finally {
      unblock(fifo)
    }
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
