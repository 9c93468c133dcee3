// `trainpool calibrate [--store DIR] [--family mlp|gbdt] [--json FILE]`: times the calibration
// workload on every backend `auto` may pick here (service/auto-calibration.ts) and keeps it in the
// store; progress on stderr, each family's table and what `auto` now picks on stdout (--json: the
// families' calibrations as the store keeps them). Exit 0; 1 when a family has nothing `auto` could
// pick; 2 for bad input.
import { writeFileSync } from 'node:fs'
import { calibrationTable } from '@shared/calibration'
import { type FamilyCalibration, TrainpoolError } from '@shared/contract'
import { openService } from '../service/open-service'
import { CALIBRATION_DIR } from '../store/calibration-cache'
import { defaultStoreDir } from '../store/run-store'
import { EXIT } from './bench-command'

export interface CalibrateFlags {
  store?: string
  family?: string
  json?: string
}

export async function calibrateCommand(flags: CalibrateFlags, version: string): Promise<number> {
  const storeDir = flags.store ?? defaultStoreDir()
  // only the calibration's own cache is written (no run): the store's folder names where it lives
  const { service } = await openService({ storeDir, keepRuns: false, shell: 'cli', appVersion: version, telemetry: false, autoRule: 'calibrated' })
  let calibrated: FamilyCalibration[]
  try {
    calibrated = await service.calibrateFamilies(flags.family, { say: (line) => process.stderr.write(`${line}\n`) })
  } catch (err) {
    if (err instanceof TrainpoolError && err.code !== 'internal') {
      const field = err.issues?.[0]?.field
      process.stderr.write(`trainpool calibrate: ${field === 'family' ? `--${err.message}` : err.message}\n`)
      return EXIT.usage
    }
    throw err
  }
  const out: string[] = []
  for (const calibration of calibrated) out.push(...tableLines(calibration), calibration.reason, '')
  out.push(`kept in ${storeDir}/${CALIBRATION_DIR}/ for this machine and Trainpool ${version}; runs with --backend auto use it`)
  process.stdout.write(`${out.join('\n')}\n`)
  if (flags.json) writeFileSync(flags.json, JSON.stringify(calibrated, null, 2))
  return calibrated.every((c) => c.auto !== null) ? EXIT.ok : EXIT.failed
}

function tableLines(calibration: FamilyCalibration): string[] {
  const { title, header, rows } = calibrationTable(calibration)
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  // the last column (device, or why) runs on unpadded; the timings are right-aligned
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  return [title, line(header), widths.map((w, i) => '-'.repeat(i === widths.length - 1 ? header[i].length : w)).join('  '), ...rows.map(line)]
}
