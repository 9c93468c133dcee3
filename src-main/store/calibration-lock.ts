// Who is calibrating `auto` on a store right now: <store>/.calibration/writer.lock, the same
// {pid, host, heartbeatAt} a run's writer keeps (writer-lock.ts), refreshed while the calibration
// lasts and judged alive the same way. Two calibrations at once time each other, so the lock is
// created exclusively (a whole file linked into place: a reader never sees half of one, and of
// two at the same instant one gets EEXIST); a dead or silent holder's lock is taken over.
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { tempName } from './leftovers'
import { writePrivateFile } from './private-files'
import { HEARTBEAT_MS, LOCK_FILE, readLock, removeLock, STALE_AFTER_MS, type WriterLock, writeLock, writerState } from './writer-lock'

export interface CalibrationLockOptions {
  heartbeatMs?: number
  staleAfterMs?: number
}

/** A held lock: `stillOurs` tells whether no other calibration took it over meanwhile (its holder judged dead); `release` removes it if it is still ours. */
export interface HeldCalibrationLock {
  stillOurs(): Promise<boolean>
  release(): Promise<void>
}

export type CalibrationLockOutcome = { held: HeldCalibrationLock } | { busy: WriterLock }

/** The calibration lock of `calibrationDir` (a private folder the caller made), or the live lock of another calibration. */
export async function holdCalibrationLock(calibrationDir: string, options: CalibrationLockOptions = {}): Promise<CalibrationLockOutcome> {
  const staleAfterMs = options.staleAfterMs ?? STALE_AFTER_MS
  const now = Date.now()
  const lock: WriterLock = { pid: process.pid, host: os.hostname(), startedAt: now, heartbeatAt: now }
  // a dead holder's lock is removed and the creation tried again; twice more is plenty (another
  // process taking it over meanwhile is then the live holder)
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createLockExclusively(calibrationDir, lock)) return { held: heldLock(calibrationDir, lock, options.heartbeatMs ?? HEARTBEAT_MS) }
    const current = await readLock(calibrationDir)
    if (current && writerState(current, Date.now(), staleAfterMs).alive) return { busy: current }
    await removeLock(calibrationDir)
  }
  const current = await readLock(calibrationDir)
  if (current) return { busy: current }
  throw new Error(`could not take the calibration lock in ${calibrationDir}`)
}

/** The live calibration lock of another process in `calibrationDir` (a run started during a calibration says so); null when none. */
export async function liveCalibrationLock(calibrationDir: string, staleAfterMs = STALE_AFTER_MS): Promise<WriterLock | null> {
  const lock = await readLock(calibrationDir)
  if (!lock || lock.pid === process.pid) return null
  return writerState(lock, Date.now(), staleAfterMs).alive ? lock : null
}

/** true when the lock was created; false when one is there. */
async function createLockExclusively(dir: string, lock: WriterLock): Promise<boolean> {
  const temp = join(dir, tempName(LOCK_FILE))
  await writePrivateFile(temp, JSON.stringify(lock))
  try {
    await fs.link(temp, join(dir, LOCK_FILE))
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  } finally {
    await fs.rm(temp, { force: true })
  }
}

const sameLock = (a: WriterLock | null, b: WriterLock) => a !== null && a.pid === b.pid && a.host === b.host && a.startedAt === b.startedAt

function heldLock(dir: string, lock: WriterLock, heartbeatMs: number): HeldCalibrationLock {
  let refreshing: Promise<void> | null = null
  const timer = setInterval(() => {
    if (refreshing) return
    refreshing = (async () => {
      // refreshed only while ours: a lock another calibration took over is left to it
      if (sameLock(await readLock(dir), lock)) await writeLock(dir, { ...lock, heartbeatAt: Date.now() })
    })()
      .catch(() => undefined)
      .finally(() => (refreshing = null))
  }, heartbeatMs)
  // the heartbeat never keeps a process alive on its own
  timer.unref()
  return {
    stillOurs: async () => sameLock(await readLock(dir), lock),
    release: async () => {
      clearInterval(timer)
      await refreshing
      if (sameLock(await readLock(dir), lock)) await removeLock(dir).catch(() => undefined)
    },
  }
}
