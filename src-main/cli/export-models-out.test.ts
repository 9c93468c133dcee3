// export-models writes only inside --out, never through a link: a link another user planted at a
// model's file name is replaced (its target untouched), an --out that is a link is refused, and an
// --out that cannot be a folder (a file, under a file, a dangling link, not writable, /proc/self/x)
// is one line naming --out with exit 2, at once; a disk that fills mid-export exits 1 leaving nothing.
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, promises, readFileSync, readdirSync, renameSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { modelFileName } from '@shared/contract'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { killAll, spawnCli } from '../testing/cli-process'
import { fakeTreesRun } from '../testing/run-fixtures'
import { tempDir } from '../testing/service-harness'
import { exportModelsCommand } from './export-models-command'

let dir: string
let store: RunStore
const { run, kept } = fakeTreesRun()
const names = kept.models.map((m) => modelFileName(run, m.index, 'json'))

beforeEach(async () => {
  dir = tempDir('export-out')
  store = new RunStore(join(dir, 'runs'))
  await store.save(run)
  await store.saveModels(run.runId, kept)
})
afterEach(() => {
  killAll()
  vi.restoreAllMocks()
})

/** export-models --all in this process: its exit code and what it wrote on stderr */
async function exportAll(out: string): Promise<{ code: number; stderr: string }> {
  let stderr = ''
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  try {
    return { code: await exportModelsCommand(run.runId, { all: true, out, store: store.dir }), stderr }
  } finally {
    vi.restoreAllMocks()
  }
}

function expectRefused(result: { code: number; stderr: string }, code: number, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(code)
  expect(result.stderr.trimEnd().split('\n'), 'one line').toHaveLength(1)
  expect(result.stderr).toMatch(/^trainpool export-models: --out /)
  expect(result.stderr).toMatch(pattern)
}

describe('export-models never writes through a link', () => {
  it("a link planted at a model's file name is replaced by the model file; its target (the victim) is unchanged", async () => {
    const out = join(dir, 'shared-out')
    mkdirSync(out)
    const victim = join(dir, 'victim.txt')
    writeFileSync(victim, 'precious')
    symlinkSync(victim, join(out, names[0]))
    // a dangling one too: following it would create the file it names
    symlinkSync(join(dir, 'created-through-link'), join(out, names[1]))
    expect(await exportAll(out)).toEqual({ code: 0, stderr: expect.stringMatching(/^wrote 2 models/) })
    expect(readFileSync(victim, 'utf8')).toBe('precious')
    expect(existsSync(join(dir, 'created-through-link'))).toBe(false)
    for (const name of names) {
      expect(lstatSync(join(out, name)).isFile()).toBe(true)
      expect(JSON.parse(readFileSync(join(out, name), 'utf8')).learner.gradient_booster.name).toBe('gbtree')
    }
    // no temporary file is left beside them
    expect(readdirSync(out).sort()).toEqual([...names].sort())
  })

  it('an --out that is a link is refused, even to a folder, and nothing is written where it leads', async () => {
    const elsewhere = join(dir, 'elsewhere')
    mkdirSync(elsewhere)
    symlinkSync(elsewhere, join(dir, 'out-link'))
    expectRefused(await exportAll(join(dir, 'out-link')), 2, /is a symbolic link to .*elsewhere: a real folder is accepted/)
    expect(readdirSync(elsewhere)).toEqual([])
  })
})

describe('an --out swapped for a link while the files are written', () => {
  // the race a probe won 1 try in 4: 395 of 400 models written into the link's target, exit 0
  for (const step of ['open', 'rename'] as const) {
    it(`swapped after the third ${step}: exit 2, nothing in the link's target, nothing left anywhere`, async () => {
      const six = fakeTreesRun(6, 1)
      await store.save(six.run)
      await store.saveModels(six.run.runId, six.kept)
      const out = join(dir, 'out')
      const moved = join(dir, 'out-moved')
      const victim = join(dir, 'victim')
      mkdirSync(out)
      mkdirSync(victim)
      const real = promises[step].bind(promises) as (...args: unknown[]) => Promise<unknown>
      let calls = 0
      // the swap, between two of the export's own file operations: --out moved away, a link to the victim in its place
      const swapThenCall = async (...args: unknown[]) => {
        if (String(args[0]).includes('-model-') && ++calls === 3) {
          renameSync(out, moved)
          symlinkSync(victim, out)
        }
        return real(...args)
      }
      vi.spyOn(promises, step).mockImplementation(swapThenCall as never)
      const result = await exportAll(out)
      expect(calls, 'the export reached the swap').toBeGreaterThanOrEqual(3)
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toMatch(
        /^trainpool export-models: --out \S+ was replaced while the models were written \(it is now a symbolic link.*\): nothing was exported\n$/,
      )
      expect(readdirSync(victim)).toEqual([])
      expect(readdirSync(moved)).toEqual([])
      expect(readdirSync(dir).sort()).toEqual(['out', 'out-moved', 'runs', 'victim'])
    })
  }

  it('left alone, every file is written and nothing else', async () => {
    const six = fakeTreesRun(6, 1)
    await store.save(six.run)
    await store.saveModels(six.run.runId, six.kept)
    const out = join(dir, 'out')
    expect(await exportAll(out)).toEqual({ code: 0, stderr: expect.stringMatching(/^wrote 6 models/) })
    expect(readdirSync(out).sort()).toEqual(six.kept.models.map((m) => modelFileName(six.run, m.index, 'json')).sort())
  })
})

describe('an --out that cannot be a folder: one line naming --out, exit 2, nothing written', () => {
  it('a file', async () => {
    writeFileSync(join(dir, 'a-file'), 'x')
    expectRefused(await exportAll(join(dir, 'a-file')), 2, /a-file is a regular file: a folder is accepted/)
    expect(readFileSync(join(dir, 'a-file'), 'utf8')).toBe('x')
  })

  it('a path under a file', async () => {
    writeFileSync(join(dir, 'a-file'), 'x')
    expectRefused(await exportAll(join(dir, 'a-file', 'models', 'deeper')), 2, /a-file is a regular file, not a folder/)
  })

  it('a dangling link', async () => {
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'))
    expectRefused(await exportAll(join(dir, 'dangling')), 2, /dangling is a symbolic link to .*nowhere/)
    expect(existsSync(join(dir, 'nowhere'))).toBe(false)
  })

  it('a folder this user cannot write', async () => {
    // root writes through permission bits, not into sysfs
    const root = process.getuid?.() === 0
    const locked = root && process.platform === 'linux' ? '/sys' : join(dir, 'locked')
    if (!root) {
      mkdirSync(locked)
      chmodSync(locked, 0o555)
    }
    expectRefused(await exportAll(locked), 2, /cannot write the file \((EACCES|EPERM|EROFS): /)
    if (!root) chmodSync(locked, 0o755)
  })

  it.skipIf(process.platform !== 'linux')(
    '/proc/self/x (where a recursive mkdir never returns): refused at once',
    async () => {
      const started = Date.now()
      expectRefused(await exportAll('/proc/self/x'), 2, /\/proc\/self\/x: cannot make the folder \/proc\/self\/x \(ENOENT/)
      expect(Date.now() - started).toBeLessThan(5000)
    },
    15_000,
  )
})

const prlimit = process.platform === 'linux' && spawnSync('prlimit', ['--version']).status === 0

describe('the disk fills up mid-export', () => {
  it.skipIf(skipWithout('prlimit', prlimit, 'util-linux prlimit is not installed'))(
    'exit 1, one line naming --out, and none of the files or the folders it made are left',
    async () => {
      // model 0 (one tree) fits under the file-size limit, model 1 (200 trees) does not: EFBIG, as a full disk
      const big = fakeTreesRun(2, 200)
      const small = fakeTreesRun(2, 1)
      const both = { ...big.kept, models: [small.kept.models[0], big.kept.models[1]] }
      await store.saveModels(run.runId, both)
      const out = join(dir, 'new', 'models')
      const cli = spawnCli('export-models', [run.runId, '--all', '--out', out, '--store', store.dir], ['prlimit', '--fsize=20000'])
      const exit = await cli.exited
      expect(exit.code, cli.out.stderr).toBe(1)
      expect(cli.out.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(cli.out.stderr).toMatch(/^trainpool export-models: --out .*models\/trainpool-.*-model-1\.json: cannot write the file \((EFBIG|ENOSPC)/)
      expect(existsSync(join(dir, 'new'))).toBe(false)
    },
    60_000,
  )
})
