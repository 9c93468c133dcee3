// `auto`'s calibration kept in the store: <store>/.calibration/<key>.json, one file per machine and
// Trainpool version (a store shared by machines keeps each one's own). Written atomically; read only
// as a regular file within a cap; a file that is damaged, of another version or of another machine
// is ignored (said as `damaged`), and the next calibration rewrites it. The folder is private like
// the rest of the store (0700, its files 0600, wider modes narrowed before use); a link in its place
// is never followed (it could lead anywhere: reading says so, writing replaces the link by a folder),
// and a file others may still write (not ours to narrow) is not trusted.
import { createHash } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { CALIBRATION_VERSION, type CalibrationFile, CalibrationFileSchema, type MachineKey } from '@shared/contract'
import { removeAbandonedTemps } from './leftovers'
import { makePrivateDir, narrowToPrivate } from './private-files'
import { describeFileType, describeLink, readRegularFile } from './regular-file'
import { writeAtomic } from './run-store'

export const CALIBRATION_DIR = '.calibration'
/** a calibration of every family is a few kilobytes */
const MAX_CALIBRATION_FILE_BYTES = 2 ** 20

export type CachedCalibration = { kind: 'found'; file: CalibrationFile; path: string } | { kind: 'none' } | { kind: 'damaged'; path: string; why: string }

/** The cache file of a machine and version: its name is a digest of both, so it holds nothing else. */
export function calibrationPath(storeDir: string, machine: MachineKey, trainpool: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify({ machine, trainpool, version: CALIBRATION_VERSION }))
    .digest('hex')
    .slice(0, 16)
  return join(storeDir, CALIBRATION_DIR, `${digest}.json`)
}

/** group's and others' write bits: a file or folder with either is not the user's alone */
const OTHERS_WRITE = 0o022

/** This machine's calibration for this version, if the store has a usable one. */
export async function readCalibration(storeDir: string, machine: MachineKey, trainpool: string): Promise<CachedCalibration> {
  const path = calibrationPath(storeDir, machine, trainpool)
  const dir = calibrationDir(storeDir)
  const folder = await fs.lstat(dir).catch(() => null)
  if (!folder) return { kind: 'none' }
  if (!folder.isDirectory()) return { kind: 'damaged', path, why: `lies in ${dir}, which is ${await describeEntry(dir)}, not a folder Trainpool made` }
  await narrowToPrivate(dir, 1)
  const narrowed = await fs.lstat(dir).catch(() => folder)
  if (narrowed.mode & OTHERS_WRITE)
    return { kind: 'damaged', path, why: `lies in ${dir}, which others can write (mode ${modeText(narrowed.mode)}) and could not be made private` }
  const read = await readRegularFile(path, MAX_CALIBRATION_FILE_BYTES)
  if (read.kind === 'missing') return { kind: 'none' }
  if (read.kind === 'unusable') return { kind: 'damaged', path, why: read.why }
  if (read.stats.mode & OTHERS_WRITE)
    return { kind: 'damaged', path, why: `can be written by others (mode ${modeText(read.stats.mode)}) and could not be made private` }
  let raw: unknown
  try {
    raw = JSON.parse(read.text)
  } catch (err) {
    return { kind: 'damaged', path, why: `is not JSON (${(err as Error).message})` }
  }
  const parsed = CalibrationFileSchema.safeParse(raw)
  if (!parsed.success)
    return {
      kind: 'damaged',
      path,
      why: `does not match the calibration schema (${parsed.error.issues[0]?.path.join('.') || 'top level'}: ${parsed.error.issues[0]?.message})`,
    }
  const file = parsed.data
  if (file.trainpool !== trainpool || JSON.stringify(file.machine) !== JSON.stringify(machine))
    return { kind: 'damaged', path, why: 'is of another machine or Trainpool version' }
  return { kind: 'found', file, path }
}

export function calibrationDir(storeDir: string): string {
  return join(storeDir, CALIBRATION_DIR)
}

/**
 * The calibration folder ready to write in: made private (0700) where missing, narrowed where wider
 * (with its files), a link in its place removed (never what it leads to) and a folder made instead;
 * anything else there is an error naming it.
 */
export async function privateCalibrationDir(storeDir: string): Promise<string> {
  const dir = calibrationDir(storeDir)
  const found = await fs.lstat(dir).catch(() => null)
  if (found?.isSymbolicLink()) await fs.unlink(dir)
  else if (found && !found.isDirectory()) throw new Error(`${dir} is ${describeFileType(found)}, not a folder`)
  await makePrivateDir(dir)
  await narrowToPrivate(dir, 1)
  return dir
}

/** Writes this machine's calibration (atomically: a reader sees the old file or the new one). */
export async function writeCalibration(storeDir: string, file: CalibrationFile): Promise<void> {
  const path = calibrationPath(storeDir, file.machine, file.trainpool)
  const dir = await privateCalibrationDir(storeDir)
  await removeAbandonedTemps(dir)
  await writeAtomic(dir, path.slice(dir.length + 1), JSON.stringify(file, null, 1))
}

const modeText = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0')

async function describeEntry(path: string): Promise<string> {
  const stats = await fs.lstat(path)
  return stats.isSymbolicLink() ? describeLink(path) : describeFileType(stats)
}
