// Files and folders written under a temporary name and renamed into place (a run.json, a writer
// lock, a data set's info.json or its whole cache folder) carry their writer's pid in that name,
// `.<what>.<pid>.<hex>.tmp`, so a process starting on the store can tell one abandoned by a writer
// killed mid-save (its pid gone from this machine) from one a live writer is still filling.
import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'

const TEMP_NAME = /^\.(.+)\.(\d+)\.[0-9a-f]+\.tmp$/

/** A fresh temporary name for `what`, owned by this process: `.<what>.<pid>.<hex>.tmp`. */
export function tempName(what: string): string {
  return `.${what}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
}

/** The pid of the process that wrote a temporary name; null when the name is not one. */
export function tempNameWriter(name: string): number | null {
  const match = TEMP_NAME.exec(name)
  return match ? Number(match[2]) : null
}

/**
 * Removes the temporary files and folders in `folder` whose writer is no longer running on this
 * machine (a live writer's are left alone); returns the names removed. A folder that cannot be
 * read removes nothing: leftovers never stop a start.
 */
export async function removeAbandonedTemps(folder: string): Promise<string[]> {
  const names = await fs.readdir(folder).catch(() => [] as string[])
  const removed: string[] = []
  for (const name of names) {
    const pid = tempNameWriter(name)
    if (pid === null || processAlive(pid)) continue
    try {
      await fs.rm(join(folder, name), { recursive: true, force: true })
      removed.push(name)
    } catch {
      /* not ours to remove (permissions): it stays, and is never read as data */
    }
  }
  return removed
}

/** Whether a process with this pid runs on this machine (EPERM: it does, as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
