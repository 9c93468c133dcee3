// The run store against what anyone on the machine (or a careless user) can put in it: a FIFO, a
// device, a folder or a link named run.json, links that loop or leave the store, a huge file, JSON
// that is not a run object. Nothing blocks, nothing balloons, every entry is listed (a run or
// damaged, with the reason); a list does not re-read unchanged files; a start removes what killed
// writers left; a live run keeps a rename made by another process (issue 22).
import { execFileSync, spawn } from 'node:child_process'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SCHEMA_VERSION } from '@shared/contract'
import { DATASETS_DIR } from '../data/cache'
import { checkStoreAtStartUp } from '../service/open-service'
import { fakeRun } from '../testing/run-fixtures'
import { LOCK_FILE, readLock } from './writer-lock'
import { MAX_RUN_FILE_BYTES, RUN_FILE, RunStore, parseRun } from './run-store'

const posix = process.platform !== 'win32'
let root: string
let dir: string
let store: RunStore
beforeEach(async () => {
  root = await fs.mkdtemp(join(os.tmpdir(), 'trainpool-hostile-'))
  dir = join(root, 'store')
  await fs.mkdir(dir)
  store = new RunStore(dir)
})
afterEach(async () => {
  vi.restoreAllMocks()
  await fs.rm(root, { recursive: true, force: true })
})

/** Fails (instead of hanging the suite) when `work` has not finished within `ms`. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)))
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

async function runFolder(runId: string): Promise<string> {
  const folder = join(dir, runId)
  await fs.mkdir(folder, { recursive: true })
  return folder
}

/** a pid that certainly belonged to a process that has exited */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await new Promise((r) => child.once('exit', r))
  return child.pid!
}

describe.runIf(posix)('a hostile store: every entry listed, nothing blocks or balloons', () => {
  it('a FIFO, /dev/zero, a folder, loops, links out, a huge file, null and [] are each listed as damaged with the reason', async () => {
    await store.save(fakeRun({}, 'good-run'))
    execFileSync('mkfifo', [join(await runFolder('fifo-run'), RUN_FILE)])
    await fs.symlink('/dev/zero', join(await runFolder('zero-link'), RUN_FILE))
    await fs.mkdir(join(await runFolder('dir-run'), RUN_FILE))
    await fs.symlink(RUN_FILE, join(await runFolder('loop-run'), RUN_FILE))
    // a valid run outside the store, reached by a link: not read
    const outside = join(root, 'outside')
    await fs.mkdir(outside)
    await fs.writeFile(join(outside, RUN_FILE), JSON.stringify(fakeRun({}, 'outside-link')))
    await fs.symlink(join(outside, RUN_FILE), join(await runFolder('outside-link'), RUN_FILE))
    // 700 MB (sparse: no disk used), the size that used to vanish from the list as "no run"
    const huge = await fs.open(join(await runFolder('huge-run'), RUN_FILE), 'w')
    await huge.truncate(700 * 2 ** 20)
    await huge.close()
    await fs.writeFile(join(await runFolder('null-run'), RUN_FILE), 'null')
    await fs.writeFile(join(await runFolder('array-run'), RUN_FILE), '[]')
    // the store's entries themselves: a link to a folder outside, a link to itself, a file, a FIFO
    await fs.symlink(outside, join(dir, 'folder-link'))
    await fs.symlink(join(dir, 'folder-loop'), join(dir, 'folder-loop'))
    await fs.writeFile(join(dir, 'plain-file'), 'not a run')
    execFileSync('mkfifo', [join(dir, 'fifo-entry')])

    const rssBefore = process.memoryUsage().rss
    const list = await within(5_000, 'listing the store', store.list())
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 2 ** 20)
    const problem = Object.fromEntries(list.map((e) => [e.runId, e.status === 'damaged' ? e.problem : e.status]))
    expect(problem).toEqual({
      'good-run': 'ok',
      'fifo-run': 'run fifo-run: run.json is a FIFO (named pipe), not a file; Trainpool reads only regular files it wrote',
      'zero-link': 'run zero-link: run.json is a symbolic link to /dev/zero; Trainpool reads only regular files it wrote',
      'dir-run': expect.stringMatching(/^run dir-run: run\.json is a folder, not a file/),
      'loop-run': 'run loop-run: run.json is a symbolic link that loops (to run.json); Trainpool reads only regular files it wrote',
      'outside-link': `run outside-link: run.json is a symbolic link to ${join(outside, RUN_FILE)}; Trainpool reads only regular files it wrote`,
      'huge-run': `run huge-run: run.json is 700.0 MiB, over the ${(MAX_RUN_FILE_BYTES / 2 ** 20).toFixed(1)} MiB Trainpool reads for such a file`,
      'null-run': expect.stringMatching(/^run null-run: the file holds null, not a run object/),
      'array-run': expect.stringMatching(/^run array-run: the file holds an array, not a run object/),
      'folder-link': `run folder-link: the store holds a symbolic link to ${outside} by this name, not a run folder; Trainpool writes each run in a folder of its own`,
      'folder-loop': expect.stringMatching(/^run folder-loop: the store holds a symbolic link that loops .* not a run folder/),
      'plain-file': expect.stringMatching(/^run plain-file: the store holds a regular file by this name, not a run folder/),
      'fifo-entry': expect.stringMatching(/^run fifo-entry: the store holds a FIFO \(named pipe\) by this name, not a run folder/),
    })

    // reading one, the start-up check and deleting: none blocks; a damaged entry can be deleted
    for (const runId of Object.keys(problem).filter((id) => id !== 'good-run')) {
      await within(2_000, `get ${runId}`, expect(store.get(runId)).rejects.toMatchObject({ code: 'damaged', message: problem[runId] }))
    }
    expect(await within(5_000, 'the start-up check', new RunStore(dir).markInterrupted())).toEqual([])
    for (const runId of ['fifo-entry', 'folder-loop', 'folder-link', 'fifo-run']) await within(2_000, `delete ${runId}`, store.delete(runId))
    expect((await store.list()).map((e) => e.runId)).not.toEqual(expect.arrayContaining(['fifo-entry', 'folder-loop', 'folder-link', 'fifo-run']))
    // the link was removed, not what it pointed to
    expect(await fs.readdir(outside)).toEqual([RUN_FILE])
  })

  it('a writer lock that is a FIFO does not block the start-up check (the run is then interrupted)', async () => {
    await store.save({ ...fakeRun({}, 'fifo-lock'), status: 'running' })
    execFileSync('mkfifo', [join(dir, 'fifo-lock', LOCK_FILE)])
    expect(await within(2_000, 'reading the lock', readLock(join(dir, 'fifo-lock')))).toBeNull()
    expect(await within(5_000, 'the start-up check', new RunStore(dir).markInterrupted())).toEqual(['fifo-lock'])
  })

  it('a list does not re-read a run.json that has not changed, and re-reads one that has', async () => {
    for (const id of ['run-a', 'run-b', 'run-c']) await store.save(fakeRun({}, id))
    const reads: string[] = []
    const realOpen = fs.open.bind(fs)
    const realReadFile = fs.readFile.bind(fs)
    vi.spyOn(fs, 'open').mockImplementation(((path: string, ...rest: never[]) => {
      reads.push(String(path))
      return realOpen(path, ...rest)
    }) as typeof fs.open)
    vi.spyOn(fs, 'readFile').mockImplementation(((path: string, ...rest: never[]) => {
      reads.push(String(path))
      return realReadFile(path, ...rest)
    }) as typeof fs.readFile)
    const runFiles = () => reads.filter((p) => p.endsWith(RUN_FILE)).length

    expect((await store.list()).map((e) => e.runId)).toEqual(['run-c', 'run-b', 'run-a'])
    expect(runFiles()).toBe(3)
    expect(await store.list()).toHaveLength(3)
    expect(runFiles()).toBe(3)
    // another process renames run-b: only that file is read again
    await new RunStore(dir).rename('run-b', 'renamed elsewhere')
    const before = runFiles()
    const list = await store.list()
    expect(list.find((e) => e.runId === 'run-b')?.name).toBe('renamed elsewhere')
    expect(runFiles() - before).toBe(1)
    // a deleted run leaves the list
    await fs.rm(join(dir, 'run-a'), { recursive: true })
    expect((await store.list()).map((e) => e.runId)).toEqual(['run-c', 'run-b'])
  })

  it('a start removes temp files and partial cache folders whose writer is gone, and leaves a live writer’s', async () => {
    const dead = await deadPid()
    await store.save(fakeRun({}, 'killed-mid-save'))
    const folder = join(dir, 'killed-mid-save')
    const deadTemps = [`.run.json.${dead}.0badc0de.tmp`, `.writer.lock.${dead}.1234abcd.tmp`]
    const liveTemp = `.run.json.${process.pid}.feedf00d.tmp`
    for (const name of [...deadTemps, liveTemp]) await fs.writeFile(join(folder, name), '{"half": ')
    const cache = join(dir, DATASETS_DIR)
    const deadPartial = join(cache, `.partial.${dead}.00112233.tmp`)
    const livePartial = join(cache, `.partial.${process.pid}.44556677.tmp`)
    // the older versions' partial folders have no pid: removed once unchanged for 10 minutes
    const oldLegacy = join(cache, '.partial-0123456789ab')
    const freshLegacy = join(cache, '.partial-ba9876543210')
    for (const partial of [deadPartial, livePartial, oldLegacy, freshLegacy]) {
      await fs.mkdir(partial, { recursive: true })
      await fs.writeFile(join(partial, 'table.f32'), 'half a table')
    }
    const hourAgo = new Date(Date.now() - 3_600_000)
    await fs.utimes(oldLegacy, hourAgo, hourAgo)

    expect(await checkStoreAtStartUp(new RunStore(dir))).toEqual([])
    expect((await fs.readdir(folder)).sort()).toEqual([liveTemp, RUN_FILE].sort())
    expect((await fs.readdir(cache)).sort()).toEqual(['.partial-ba9876543210', `.partial.${process.pid}.44556677.tmp`].sort())
    expect((await store.list()).map((e) => e.runId)).toEqual(['killed-mid-save'])
  })
})

describe('a run that is not a run object', () => {
  it('null, [] and a number are said to be no run object (not "schemaVersion undefined")', () => {
    expect(() => parseRun('null', 'r')).toThrow('run r: the file holds null, not a run object ({"schemaVersion": …, "runId": …})')
    expect(() => parseRun('[]', 'r')).toThrow('run r: the file holds an array, not a run object')
    expect(() => parseRun('42', 'r')).toThrow('run r: the file holds a number, not a run object')
    expect(parseRun(JSON.stringify(fakeRun())).schemaVersion).toBe(SCHEMA_VERSION)
  })
})

describe('issue 22: a rename or re-tag of a live run from another process survives the writer’s next save', () => {
  const running = (runId: string) => ({ ...fakeRun({}, runId), status: 'running' as const })

  it('the writer keeps the other process’s name and tags, and its own later rename still wins', async () => {
    const writer = new RunStore(dir)
    const other = new RunStore(dir)
    const live = running('renamed-live')
    await writer.save(live, { writer: true })
    await other.rename('renamed-live', 'named in the app')
    await other.tag('renamed-live', ['laptop'])
    // the writer's next measurement: its in-memory run knows nothing of the edits
    live.measurements = live.measurements.slice(0, 2)
    await writer.save(live, { writer: true })
    expect(await writer.get('renamed-live')).toMatchObject({ name: 'named in the app', tags: ['laptop'], measurements: live.measurements })
    // the live result itself now shows them (the writer's process lists and exports it)
    expect(live).toMatchObject({ name: 'named in the app', tags: ['laptop'] })

    // the writer's own rename (its service renaming the live run) is saved as given
    live.name = 'renamed by the writer'
    await writer.save(live, { writer: true })
    expect((await other.get('renamed-live')).name).toBe('renamed by the writer')
    // an untag elsewhere (tags removed) also survives, and the final save keeps it
    await other.tag('renamed-live', [])
    await writer.save({ ...live, status: 'ok' }, { writer: true })
    const final = await other.get('renamed-live')
    expect(final.status).toBe('ok')
    expect(final.tags).toBeUndefined()
    expect(final.name).toBe('renamed by the writer')
  })
})
