// `auto`'s calibration kept in the store: <store>/.calibration/<key>.json, one file per machine and
// Trainpool version (a store shared by machines keeps each one's own). Written atomically; read only
// as a regular file within a cap; a file that is damaged, of another version or of another machine
// is ignored (said as `damaged`), and the next calibration rewrites it.
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { CALIBRATION_VERSION, type CalibrationFile, CalibrationFileSchema, type MachineKey } from '@shared/contract'
import { removeAbandonedTemps } from './leftovers'
import { readRegularFile } from './regular-file'
import { writeAtomic } from './run-store'

export const CALIBRATION_DIR = '.calibration'
/** a calibration of every family is a few kilobytes */
const MAX_CALIBRATION_FILE_BYTES = 2 ** 20

export type CachedCalibration = { kind: 'found'; file: CalibrationFile } | { kind: 'none' } | { kind: 'damaged'; path: string; why: string }

/** The cache file of a machine and version: its name is a digest of both, so it holds nothing else. */
export function calibrationPath(storeDir: string, machine: MachineKey, trainpool: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify({ machine, trainpool, version: CALIBRATION_VERSION }))
    .digest('hex')
    .slice(0, 16)
  return join(storeDir, CALIBRATION_DIR, `${digest}.json`)
}

/** This machine's calibration for this version, if the store has a usable one. */
export async function readCalibration(storeDir: string, machine: MachineKey, trainpool: string): Promise<CachedCalibration> {
  const path = calibrationPath(storeDir, machine, trainpool)
  const read = await readRegularFile(path, MAX_CALIBRATION_FILE_BYTES)
  if (read.kind === 'missing') return { kind: 'none' }
  if (read.kind === 'unusable') return { kind: 'damaged', path, why: read.why }
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
  return { kind: 'found', file }
}

/** Writes this machine's calibration (atomically: a reader sees the old file or the new one). */
export async function writeCalibration(storeDir: string, file: CalibrationFile): Promise<void> {
  const path = calibrationPath(storeDir, file.machine, file.trainpool)
  const dir = join(storeDir, CALIBRATION_DIR)
  await removeAbandonedTemps(dir)
  await writeAtomic(dir, path.slice(dir.length + 1), JSON.stringify(file, null, 1))
}
