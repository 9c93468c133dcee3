// The store is the user's alone: what Trainpool creates in it is 0600 (files) in 0700 (folders)
// whatever the umask — run.json, models.json, writer locks, run folders, the store folder — and a
// store an older version left 0644/0755 is narrowed by the start-up check, links not followed.
// The data cache's and the uploads' own creation tests are in data/ and server/.
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DATASETS_DIR } from '../data/cache'
import { checkStoreAtStartUp } from '../service/open-service'
import { loadDataFile } from '../data'
import { fakeRun } from '../testing/run-fixtures'
import { MODELS_FILE, RUN_FILE, RunStore, UPLOADS_DIR } from './run-store'
import { LOCK_FILE } from './writer-lock'

let root: string
let previousUmask: number
beforeEach(async () => {
  root = await fs.mkdtemp(join(os.tmpdir(), 'trainpool-private-'))
  // the most permissive umask: every mode below is Trainpool's own choice
  previousUmask = process.umask(0o000)
})
afterEach(async () => {
  process.umask(previousUmask)
  await fs.rm(root, { recursive: true, force: true })
})

const mode = async (path: string) => (await fs.lstat(path)).mode & 0o777
const RUN_ID = '20250101-120000-abcdef'

describe.runIf(process.platform !== 'win32')('what Trainpool creates in the store is private, whatever the umask', () => {
  it('the store folder and the folders above it that Trainpool makes: 0700', async () => {
    const store = new RunStore(join(root, 'home', '.trainpool', 'runs'))
    await store.save(fakeRun({}, RUN_ID))
    expect(await mode(join(root, 'home'))).toBe(0o700)
    expect(await mode(join(root, 'home', '.trainpool'))).toBe(0o700)
    expect(await mode(store.dir)).toBe(0o700)
  })

  it('a run folder 0700 and its run.json 0600', async () => {
    const store = new RunStore(join(root, 'store'))
    await store.save(fakeRun({}, RUN_ID))
    expect(await mode(join(store.dir, RUN_ID))).toBe(0o700)
    expect(await mode(join(store.dir, RUN_ID, RUN_FILE))).toBe(0o600)
    // a later save replaces the file: still private
    await store.rename(RUN_ID, 'again')
    expect(await mode(join(store.dir, RUN_ID, RUN_FILE))).toBe(0o600)
  })

  it('models.json 0600', async () => {
    const store = new RunStore(join(root, 'store'))
    await store.saveModels(RUN_ID, { size: 10, strategy: 'pool', workers: 1, models: [] })
    expect(await mode(join(store.dir, RUN_ID))).toBe(0o700)
    expect(await mode(join(store.dir, RUN_ID, MODELS_FILE))).toBe(0o600)
  })

  it('the writer lock 0600, first written and refreshed', async () => {
    const store = new RunStore(join(root, 'store'), { heartbeatMs: 20 })
    const run = { ...fakeRun({}, RUN_ID), status: 'running' as const }
    await store.save(run, { writer: true })
    const lock = join(store.dir, RUN_ID, LOCK_FILE)
    expect(await mode(lock)).toBe(0o600)
    const first = (await fs.lstat(lock)).ino
    await expect.poll(async () => (await fs.lstat(lock)).ino, { timeout: 5000 }).not.toBe(first)
    expect(await mode(lock)).toBe(0o600)
    await store.save({ ...run, status: 'ok' }, { writer: true })
  })
})

describe.runIf(process.platform !== 'win32')('a store an older version left readable by others is narrowed at start-up', () => {
  it('run folders, run.json, models.json, writer locks, the data cache and uploads; links and files not Trainpool’s are left alone', async () => {
    const dir = join(root, 'store')
    const run = join(dir, RUN_ID)
    await fs.mkdir(run, { recursive: true })
    await fs.writeFile(join(run, RUN_FILE), JSON.stringify(fakeRun({}, RUN_ID)))
    await fs.writeFile(join(run, MODELS_FILE), JSON.stringify({ size: 10, strategy: 'pool', workers: 1, models: [] }))
    // a live writer's lock (this process): the start-up leaves the run alone, but not its modes
    const now = Date.now()
    await fs.writeFile(join(run, LOCK_FILE), JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: now, heartbeatAt: now }))
    const csv = join(root, 'data.csv')
    await fs.writeFile(csv, 'a,y\n1,2\n3,4\n')
    const { sha256 } = await loadDataFile(csv, dir)
    const upload = join(dir, UPLOADS_DIR, sha256)
    await fs.mkdir(upload, { recursive: true })
    await fs.copyFile(csv, join(upload, 'data.csv'))
    // what an older version wrote: 0755 folders, 0644 files
    const cache = join(dir, DATASETS_DIR, sha256)
    const folders = [dir, run, join(dir, DATASETS_DIR), cache, join(dir, UPLOADS_DIR), upload]
    const files = [
      join(run, RUN_FILE),
      join(run, MODELS_FILE),
      join(run, LOCK_FILE),
      join(cache, 'info.json'),
      join(cache, 'table.f32'),
      join(upload, 'data.csv'),
    ]
    for (const f of folders) await fs.chmod(f, 0o755)
    for (const f of files) await fs.chmod(f, 0o644)
    // a link in a run folder to a file outside the store, and a file of the user's beside the runs
    const outside = join(root, 'outside.txt')
    await fs.writeFile(outside, 'not the store’s')
    await fs.chmod(outside, 0o644)
    await fs.symlink(outside, join(run, 'link.json'))
    const notes = join(dir, 'notes.txt')
    await fs.writeFile(notes, 'mine')
    await fs.chmod(notes, 0o644)

    await checkStoreAtStartUp(new RunStore(dir))

    for (const f of folders) expect(await mode(f), f).toBe(0o700)
    for (const f of files) expect(await mode(f), f).toBe(0o600)
    expect(await mode(outside)).toBe(0o644)
    expect(await mode(notes)).toBe(0o644)
  })

  it('a folder that cannot be made is refused at once, not waited on (recursive mkdir never returns on /proc/self/x)', async () => {
    const { makePrivateDir } = await import('./private-files')
    const started = Date.now()
    await expect(makePrivateDir('/proc/self/x/y')).rejects.toThrow(/ENOENT|EACCES|EPERM/)
    expect(Date.now() - started).toBeLessThan(5000)
  })
})
