// Who is writing a `running` run. The app, `bench` and `serve` share one store and each marks runs
// left `running` interrupted at start, so the writer keeps a lock file in the run's folder ({pid,
// host, heartbeatAt}, refreshed while the run is live). A run is interrupted when its lock is
// missing, names a process gone from this host, or is stale (README.md here).
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
