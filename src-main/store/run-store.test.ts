import { spawn } from 'node:child_process'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RunResultSchema, SCHEMA_VERSION, TrainpoolError } from '@shared/contract'
import { RUN_FILE, RunStore, parseRun } from './run-store'
import { fakeRun } from '../testing/run-fixtures'
import { LOCK_FILE, readLock, writeLock } from './writer-lock'

let dir: string
let store: RunStore
beforeEach(async () => {
  dir = await fs.mkdtemp(join(os.tmpdir(), 'trainpool-store-'))
  store = new RunStore(dir)
})
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true })
})

async function writeRaw(runId: string, text: string) {
  await fs.mkdir(join(dir, runId), { recursive: true })
  await fs.writeFile(join(dir, runId, RUN_FILE), text)
}

describe('RunStore', () => {
  it('saves, lists and reads back a run exactly', async () => {
    const run = fakeRun()
    await store.save(run)
    expect(await store.get(run.runId)).toEqual(run)
    const [entry] = await store.list()
    expect(entry).toMatchObject({ runId: run.runId, status: 'ok', preset: 'quick', backend: 'wasm', sizes: [2000, 5000], models: [16] })
    expect(entry.bestSpeedup).toBeGreaterThan(1)
    // no temp file left behind
    expect(await fs.readdir(join(dir, run.runId))).toEqual([RUN_FILE])
  })

  it('renames and tags a run, and the list shows both', async () => {
    const run = fakeRun()
    await store.save(run)
    await store.rename(run.runId, '  wasm   baseline ')
    await store.tag(run.runId, ['laptop', ' cpu ', 'laptop', ''])
    const back = await store.get(run.runId)
    expect(back.name).toBe('wasm baseline')
    expect(back.tags).toEqual(['laptop', 'cpu'])
    expect(back.measurements).toEqual(run.measurements)
    const [entry] = await store.list()
    expect(entry).toMatchObject({ name: 'wasm baseline', tags: ['laptop', 'cpu'] })
    await store.rename(run.runId, '')
    await store.tag(run.runId, [])
    const cleared = await store.get(run.runId)
    expect(cleared.name).toBeUndefined()
    expect(cleared.tags).toBeUndefined()
  })

  it('refuses over-long names and tags with a field error', async () => {
    const run = fakeRun()
    await store.save(run)
    await expect(store.rename(run.runId, 'x'.repeat(500))).rejects.toMatchObject({ code: 'invalid-input', issues: [{ field: 'name' }] })
    await expect(store.tag(run.runId, ['y'.repeat(100)])).rejects.toMatchObject({ code: 'invalid-input', issues: [{ field: 'tags.0' }] })
  })

  it('deletes a run; unknown ids are not-found; ids that could escape the store are refused', async () => {
    const run = fakeRun()
    await store.save(run)
    await store.delete(run.runId)
    expect(await store.list()).toEqual([])
    await expect(store.delete(run.runId)).rejects.toMatchObject({ code: 'not-found' })
    // a sibling folder outside the store must survive every attempt
    const outside = resolve(dir, '..', `${dir.split('/').pop()}-victim`)
    await fs.mkdir(outside, { recursive: true })
    try {
      for (const bad of ['..', '../x', `../${outside.split('/').pop()}`, '/etc', 'a/b', 'a\\b', '', '.', 'x'.repeat(65)]) {
        await expect(store.delete(bad)).rejects.toMatchObject({ code: 'invalid-input' })
        await expect(store.rename(bad, 'n')).rejects.toMatchObject({ code: 'invalid-input' })
        await expect(store.tag(bad, ['t'])).rejects.toMatchObject({ code: 'invalid-input' })
      }
      await expect(fs.stat(outside)).resolves.toBeTruthy()
    } finally {
      await fs.rm(outside, { recursive: true, force: true })
    }
  })

  it('lists damaged files as damaged with the reason, next to good runs, without throwing', async () => {
    await store.save(fakeRun({}, 'good-run'))
    await writeRaw('bad-json', '{"schemaVersion": 1, "runId": ')
    await writeRaw('future-version', JSON.stringify({ ...fakeRun({}, 'future-version'), schemaVersion: SCHEMA_VERSION + 1 }))
    await writeRaw('no-version', JSON.stringify({ runId: 'no-version' }))
    const broken = fakeRun({}, 'schema-violation') as unknown as Record<string, unknown>
    broken.measurements = [{ size: 'big' }]
    await writeRaw('schema-violation', JSON.stringify(broken))
    await writeRaw('empty-file', '')
    await fs.mkdir(join(dir, 'no-file-yet'))
    await fs.writeFile(join(dir, 'stray.txt'), 'not a run')

    const list = await store.list()
    const byId = Object.fromEntries(list.map((e) => [e.runId, e]))
    expect(Object.keys(byId).sort()).toEqual(['bad-json', 'empty-file', 'future-version', 'good-run', 'no-version', 'schema-violation'])
    expect(byId['good-run'].status).toBe('ok')
    expect(byId['bad-json']).toMatchObject({ status: 'damaged', problem: expect.stringContaining('not valid JSON') })
    expect(byId['empty-file']).toMatchObject({ status: 'damaged', problem: expect.stringContaining('not valid JSON') })
    expect(byId['future-version']).toMatchObject({
      status: 'damaged',
      problem: `run future-version: schemaVersion ${SCHEMA_VERSION + 1} is not supported (this Trainpool reads 1 to ${SCHEMA_VERSION})`,
    })
    expect(byId['no-version']).toMatchObject({ status: 'damaged', problem: expect.stringContaining('schemaVersion undefined') })
    expect(byId['schema-violation']).toMatchObject({ status: 'damaged', problem: expect.stringContaining('measurements.0') })
    await expect(store.get('future-version')).rejects.toBeInstanceOf(TrainpoolError)
    await expect(store.get('future-version')).rejects.toMatchObject({ code: 'damaged' })
    // a damaged run can still be deleted
    await store.delete('bad-json')
    expect((await store.list()).map((e) => e.runId)).not.toContain('bad-json')
  })

  it('checks the schema version before anything else', () => {
    const run = fakeRun()
    expect(parseRun(JSON.stringify(run)).schemaVersion).toBe(SCHEMA_VERSION)
    expect(() => parseRun(JSON.stringify({ ...run, schemaVersion: 0 }))).toThrow(/schemaVersion 0 is not supported/)
    expect(() => parseRun(JSON.stringify({ ...run, schemaVersion: '1' }))).toThrow(/schemaVersion "1" is not supported/)
    expect(() => parseRun('null')).toThrow(/the file holds null, not a run object/)
  })

  it('marks runs left running by a dead process as interrupted, keeping their measurements', async () => {
    const run = { ...fakeRun({}, 'was-running'), status: 'running' as const }
    await store.save(run)
    await store.save(fakeRun({}, 'live-one'))
    expect(await store.markInterrupted()).toEqual(['was-running'])
    const back = await store.get('was-running')
    expect(back.status).toBe('interrupted')
    expect(back.measurements).toEqual(run.measurements)
  })

  it('survives a writer killed with SIGKILL mid-way: the file is valid and holds every completed save', async () => {
    const runId = 'killed-writer'
    const script = join(__dirname, '..', 'testing', 'killed-writer.ts')
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, runId], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (err += c.toString()))
    const lastSaved = () => Number(/saved (\d+)\n(?![\s\S]*saved)/.exec(out)?.[1] ?? 0)
    // let it grow a while (a larger file makes a kill mid-write likely), then kill -9 at a random moment
    const deadline = Date.now() + 60_000
    while (lastSaved() < 40 && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 20))
    expect(child.exitCode, `writer exited early: ${err}`).toBeNull()
    await new Promise((r) => setTimeout(r, Math.random() * 50))
    const seenBeforeKill = lastSaved()
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await exited
    expect(child.signalCode).toBe('SIGKILL')

    const text = await fs.readFile(join(dir, runId, RUN_FILE), 'utf8')
    const parsed = RunResultSchema.safeParse(JSON.parse(text))
    expect(parsed.success).toBe(true)
    const run = await new RunStore(dir).get(runId)
    // every save reported before the kill is there; at most one more (finished but not yet reported)
    expect(run.measurements.length).toBeGreaterThanOrEqual(seenBeforeKill)
    expect(run.measurements.length).toBeLessThanOrEqual(lastSaved() + 1)
    run.measurements.forEach((m, i) => expect(m.repeat).toBe(i))
    // the killed writer's temp file (if any) never shows up as a run
    const list = await new RunStore(dir).list()
    expect(list.map((e) => e.runId)).toEqual([runId])
    expect(list[0].status).toBe('running')
  })
})

describe('a store shared by several processes (app, CLI, serve): interrupted only when the writer is gone', () => {
  const running = (runId: string) => ({ ...fakeRun({}, runId), status: 'running' as const })

  /** a pid that certainly belonged to a process that has exited */
  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
    await new Promise((r) => child.once('exit', r))
    return child.pid!
  }

  it("another store's live running run is left alone; once it ends, its lock is gone", async () => {
    const writer = new RunStore(dir)
    const other = new RunStore(dir)
    await writer.save(running('live-run'), { writer: true })
    expect(await fs.readdir(join(dir, 'live-run'))).toEqual(expect.arrayContaining([RUN_FILE, LOCK_FILE]))
    expect(await readLock(join(dir, 'live-run'))).toMatchObject({ pid: process.pid, host: os.hostname() })
    expect(await other.markInterrupted()).toEqual([])
    expect((await other.get('live-run')).status).toBe('running')
    // the run ends: status saved, lock removed
    await writer.save({ ...running('live-run'), status: 'ok' }, { writer: true })
    expect(await fs.readdir(join(dir, 'live-run'))).toEqual([RUN_FILE])
    expect(await other.markInterrupted()).toEqual([])
    expect((await other.get('live-run')).status).toBe('ok')
  })

  it('a writer in another process: left alone while it lives, marked interrupted as soon as it is killed', async () => {
    const script = join(__dirname, '..', 'testing', 'live-writer.ts')
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, 'child-run'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (err += c.toString()))
    const deadline = Date.now() + 60_000
    while (!out.includes('writing') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 20))
    try {
      expect(out, `writer did not start: ${err}`).toContain('writing')
      const other = new RunStore(dir)
      expect(await other.markInterrupted()).toEqual([])
      expect((await other.get('child-run')).status).toBe('running')
      expect((await readLock(join(dir, 'child-run')))?.pid).toBe(child.pid)
    } finally {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGKILL')
      await exited
    }
    const other = new RunStore(dir)
    expect(await other.markInterrupted()).toEqual(['child-run'])
    const run = await other.get('child-run')
    expect(run.status).toBe('interrupted')
    expect(run.error).toMatch(new RegExp(`stopped before it finished \\(pid ${child.pid} is no longer running\\)`))
    expect(await fs.readdir(join(dir, 'child-run'))).toEqual([RUN_FILE])
  })

  it('a lock naming a dead pid, a stale heartbeat, or no lock at all: marked', async () => {
    const now = Date.now()
    const seed = new RunStore(dir)
    for (const id of ['dead-pid', 'stale-heartbeat', 'no-lock', 'fresh', 'other-host-fresh', 'other-host-stale']) await seed.save(running(id))
    await writeLock(join(dir, 'dead-pid'), { pid: await deadPid(), host: os.hostname(), startedAt: now, heartbeatAt: now })
    // this very process is alive, but its "lock" has not been refreshed for 10 minutes (a reused pid, a wedged writer)
    await writeLock(join(dir, 'stale-heartbeat'), { pid: process.pid, host: os.hostname(), startedAt: now - 600_000, heartbeatAt: now - 600_000 })
    await writeLock(join(dir, 'fresh'), { pid: process.pid, host: os.hostname(), startedAt: now, heartbeatAt: now })
    // another host: the pid means nothing here, the heartbeat decides
    await writeLock(join(dir, 'other-host-fresh'), { pid: 1, host: `not-${os.hostname()}`, startedAt: now, heartbeatAt: now })
    await writeLock(join(dir, 'other-host-stale'), { pid: 1, host: `not-${os.hostname()}`, startedAt: now - 600_000, heartbeatAt: now - 600_000 })
    const marked = await new RunStore(dir).markInterrupted()
    expect(marked.sort()).toEqual(['dead-pid', 'no-lock', 'other-host-stale', 'stale-heartbeat'])
    expect((await seed.get('stale-heartbeat')).error).toMatch(/last refreshed its lock 60\d s ago/)
    expect((await seed.get('fresh')).status).toBe('running')
    expect((await seed.get('other-host-fresh')).status).toBe('running')
    // the dead writers' locks are cleaned up with the marking
    expect(await fs.readdir(join(dir, 'dead-pid'))).toEqual([RUN_FILE])
  })

  it('the writer refreshes its heartbeat while the run is live, so a long measurement never looks stale', async () => {
    const writer = new RunStore(dir, { heartbeatMs: 40 })
    const strict = new RunStore(dir, { staleAfterMs: 150 })
    await writer.save(running('long-run'), { writer: true })
    const first = (await readLock(join(dir, 'long-run')))!
    await new Promise((r) => setTimeout(r, 400)) // no save for longer than staleAfterMs
    const later = (await readLock(join(dir, 'long-run')))!
    expect(later.heartbeatAt).toBeGreaterThan(first.heartbeatAt)
    expect(later.startedAt).toBe(first.startedAt)
    expect(await strict.markInterrupted()).toEqual([])
    await writer.save({ ...running('long-run'), status: 'cancelled' }, { writer: true })
    // no refresh brings the lock back after the end
    await new Promise((r) => setTimeout(r, 120))
    expect(await fs.readdir(join(dir, 'long-run'))).toEqual([RUN_FILE])
  })

  it('a rename or tag from another process does not take over a live run', async () => {
    const writer = new RunStore(dir)
    const other = new RunStore(dir)
    await writer.save(running('renamed-live'), { writer: true })
    await other.rename('renamed-live', 'from the other process')
    expect(await readLock(join(dir, 'renamed-live'))).toMatchObject({ pid: process.pid })
    await writer.save({ ...running('renamed-live'), status: 'ok' }, { writer: true })
    expect(await fs.readdir(join(dir, 'renamed-live'))).toEqual([RUN_FILE])
  })

  it("saves of one run land in call order: a measurement's save cannot overwrite the final one", async () => {
    const writer = new RunStore(dir)
    const base = running('ordered')
    const saves = [writer.save(base, { writer: true }), writer.save({ ...base, measurements: base.measurements.slice(0, 1) }, { writer: true })]
    saves.push(writer.save({ ...base, status: 'ok' }, { writer: true }))
    await Promise.all(saves)
    expect((await writer.get('ordered')).status).toBe('ok')
    expect(await fs.readdir(join(dir, 'ordered'))).toEqual([RUN_FILE])
  })

  it('the final save failing still releases the lock (the run is then interrupted, not held forever)', async () => {
    const writer = new RunStore(dir)
    await writer.save(running('final-fails'), { writer: true })
    const broken = {
      ...running('final-fails'),
      status: 'ok' as const,
      measurements: [
        {
          toJSON: () => {
            throw new Error('boom')
          },
        },
      ],
    } as never
    await expect(writer.save(broken, { writer: true })).rejects.toThrow('boom')
    expect(await fs.readdir(join(dir, 'final-fails'))).toEqual([RUN_FILE])
    expect(await new RunStore(dir).markInterrupted()).toEqual(['final-fails'])
  })
})
