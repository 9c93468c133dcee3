// Who is writing a `running` run. The desktop app, `trainpool bench` and `trainpool serve` share one
// run store, and each marks runs left `running` as interrupted when it starts; a run another live
// process is writing right now must be left alone. So the process writing a run keeps a small lock
// file in the run's folder, {pid, host, heartbeatAt}, refreshed every few seconds while the run is
// live and removed when it ends. A `running` run is interrupted when its lock is missing, names a
// process that is gone (same host), or has not been refreshed for staleAfterMs (a wedged process, a
// reused pid, a writer on another host).
import { promises as fs } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { processAlive, tempName } from './leftovers'
import { writePrivateFile } from './private-files'
import { readRegularFile } from './regular-file'

export const LOCK_FILE = 'writer.lock'
/** how often a live writer refreshes its lock */
export const HEARTBEAT_MS = 5_000
/** a lock not refreshed for this long no longer proves a live writer */
export const STALE_AFTER_MS = 60_000
/** a lock is a few dozen bytes: anything larger is not one (and is not read) */
const MAX_LOCK_BYTES = 4096

export interface WriterLock {
  pid: number
  host: string
  /** ms since the epoch: when the lock was first written, and last refreshed */
  startedAt: number
  heartbeatAt: number
}

export type WriterState = { alive: true } | { alive: false; why: string }

/** Writes the lock atomically (temp file + rename), so a reader never sees half of it. */
export async function writeLock(runDir: string, lock: WriterLock): Promise<void> {
  const temp = join(runDir, tempName(LOCK_FILE))
  try {
    await writePrivateFile(temp, JSON.stringify(lock))
    await fs.rename(temp, join(runDir, LOCK_FILE))
  } catch (err) {
    await fs.rm(temp, { force: true })
    throw err
  }
}

/** The lock of a run's folder; null when there is none or it cannot be read (or is no regular file: a FIFO never blocks). */
export async function readLock(runDir: string): Promise<WriterLock | null> {
  const read = await readRegularFile(join(runDir, LOCK_FILE), MAX_LOCK_BYTES)
  if (read.kind !== 'file') return null
  try {
    const raw = JSON.parse(read.text) as Partial<WriterLock> | null
    if (!raw || typeof raw.pid !== 'number' || typeof raw.heartbeatAt !== 'number' || typeof raw.host !== 'string') return null
    return { pid: raw.pid, host: raw.host, startedAt: typeof raw.startedAt === 'number' ? raw.startedAt : raw.heartbeatAt, heartbeatAt: raw.heartbeatAt }
  } catch {
    return null
  }
}

export async function removeLock(runDir: string): Promise<void> {
  await fs.rm(join(runDir, LOCK_FILE), { force: true })
}

/** Whether a lock still proves a live writer. */
export function writerState(lock: WriterLock | null, now: number, staleAfterMs: number, host = os.hostname()): WriterState {
  if (!lock) return { alive: false, why: 'no writer lock' }
  const where = lock.host === host ? `pid ${lock.pid}` : `pid ${lock.pid} on ${lock.host}`
  const silentMs = now - lock.heartbeatAt
  if (silentMs > staleAfterMs) return { alive: false, why: `${where} last refreshed its lock ${Math.round(silentMs / 1000)} s ago` }
  // another host: its pids mean nothing here, the heartbeat alone decides
  if (lock.host === host && !processAlive(lock.pid)) return { alive: false, why: `${where} is no longer running` }
  return { alive: true }
}
