// The calibration folder is private like the rest of the store: made 0700 with its file 0600 whatever
// the umask, a 0777 folder and a 0666 cache narrowed before they are used, and a link in the folder's
// place never followed — reading says what it is, writing replaces the link by a folder and leaves
// what it led to untouched. The calibration lock: one holder at a time, a dead holder's lock taken over.
import { spawn } from 'node:child_process'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CALIBRATION_VERSION, type CalibrationFile, type MachineKey } from '@shared/contract'
import { CALIBRATION_DIR, calibrationPath, readCalibration, writeCalibration } from './calibration-cache'
import { holdCalibrationLock } from './calibration-lock'
import { LOCK_FILE, readLock, writeLock } from './writer-lock'

const machine: MachineKey = { host: 'test-host', cpu: 'Test CPU', cpuCount: 2, adapters: [], backends: ['cpu'] }
const file: CalibrationFile = { version: CALIBRATION_VERSION, trainpool: 'test', machine, families: {} }

let root: string
let store: string
let previousUmask: number
beforeEach(async () => {
  root = await fs.mkdtemp(join(os.tmpdir(), 'trainpool-calibration-cache-'))
  store = join(root, 'store')
  // the most permissive umask: every mode below is Trainpool's own choice
  previousUmask = process.umask(0o000)
})
afterEach(async () => {
  process.umask(previousUmask)
  await fs.rm(root, { recursive: true, force: true })
})

const mode = async (path: string) => (await fs.lstat(path)).mode & 0o777
const folder = () => join(store, CALIBRATION_DIR)

describe.runIf(process.platform !== 'win32')('the calibration folder is private', () => {
  it('written new: the folder 0700, the cache 0600, whatever the umask', async () => {
    await writeCalibration(store, file)
    expect(await mode(folder())).toBe(0o700)
    expect(await mode(calibrationPath(store, machine, 'test'))).toBe(0o600)
    expect(await readCalibration(store, machine, 'test')).toMatchObject({ kind: 'found', file })
  })

  it('a 0777 folder and a 0666 cache are narrowed to 0700 and 0600 before the cache is read, and when it is written', async () => {
    await writeCalibration(store, file)
    const path = calibrationPath(store, machine, 'test')
    await fs.chmod(folder(), 0o777)
    await fs.chmod(path, 0o666)
    expect(await readCalibration(store, machine, 'test')).toMatchObject({ kind: 'found' })
    expect(await mode(folder())).toBe(0o700)
    expect(await mode(path)).toBe(0o600)
    await fs.chmod(folder(), 0o777)
    await fs.chmod(path, 0o666)
    await writeCalibration(store, file)
    expect(await mode(folder())).toBe(0o700)
    expect(await mode(path)).toBe(0o600)
  })

  it("a link in the folder's place is not followed: read, it is said; written, it is replaced by a private folder and what it led to is left as it was", async () => {
    const elsewhere = join(root, 'elsewhere')
    await fs.mkdir(elsewhere)
    // what a calibration would read there, and a name a killed writer's temp file would have (pid 2^22: none)
    const cacheName = calibrationPath(store, machine, 'test').slice(folder().length + 1)
    await fs.writeFile(join(elsewhere, cacheName), JSON.stringify(file))
    await fs.writeFile(join(elsewhere, `.${cacheName}.4194304.abcd.tmp`), 'the user’s')
    await fs.mkdir(store, { mode: 0o700 })
    await fs.symlink(elsewhere, folder())
    const read = await readCalibration(store, machine, 'test')
    expect(read).toMatchObject({ kind: 'damaged', why: `lies in ${folder()}, which is a symbolic link to ${elsewhere}, not a folder Trainpool made` })

    await writeCalibration(store, file)
    const made = await fs.lstat(folder())
    expect(made.isDirectory()).toBe(true)
    expect(made.mode & 0o777).toBe(0o700)
    expect((await fs.readdir(elsewhere)).sort()).toEqual([`.${cacheName}.4194304.abcd.tmp`, cacheName].sort())
    // nor narrowed: it is not the store's
    expect(await mode(elsewhere)).toBe(0o777)
    expect(await readCalibration(store, machine, 'test')).toMatchObject({ kind: 'found' })
  })
})

describe.runIf(process.platform !== 'win32')('the calibration lock', () => {
  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
    await new Promise((r) => child.once('exit', r))
    return child.pid!
  }

  it('one holder at a time: a second is told the first; released, the lock is gone and can be taken again', async () => {
    await fs.mkdir(folder(), { recursive: true, mode: 0o700 })
    const first = await holdCalibrationLock(folder())
    if (!('held' in first)) throw new Error('the first calibration did not get the lock')
    const second = await holdCalibrationLock(folder())
    expect(second).toMatchObject({ busy: { pid: process.pid, host: os.hostname() } })
    expect(await first.held.stillOurs()).toBe(true)
    await first.held.release()
    await expect(fs.access(join(folder(), LOCK_FILE))).rejects.toThrow()
    const third = await holdCalibrationLock(folder())
    expect('held' in third).toBe(true)
    if ('held' in third) await third.held.release()
  })

  it("a dead holder's lock, or one silent past the stale limit, is taken over; the first holder then knows it is no longer its own", async () => {
    await fs.mkdir(folder(), { recursive: true, mode: 0o700 })
    const now = Date.now()
    await writeLock(folder(), { pid: await deadPid(), host: os.hostname(), startedAt: now, heartbeatAt: now })
    const taken = await holdCalibrationLock(folder())
    if (!('held' in taken)) throw new Error("a dead process's lock was not taken over")
    expect((await readLock(folder()))?.pid).toBe(process.pid)
    // silent for longer than the stale limit: taken over, though this process is alive
    const later = await holdCalibrationLock(folder(), { staleAfterMs: -1 })
    if (!('held' in later)) throw new Error('a stale lock was not taken over')
    expect(await taken.held.stillOurs()).toBe(false)
    // the first holder's release leaves the one who took it over alone
    await taken.held.release()
    expect(await later.held.stillOurs()).toBe(true)
    await later.held.release()
  })
})
