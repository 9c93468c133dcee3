// `trainpool calibrate [--store DIR] [--family mlp|gbdt] [--json FILE]`: times the calibration
// workload on every backend `auto` may pick here (service/auto-calibration.ts) and keeps it in the
// store; progress on stderr, each family's table and what `auto` now picks on stdout (--json: the
// families' calibrations as the store keeps them; `--json -`: that JSON alone on stdout, the words on
// stderr). The --json path is checked before anything is timed, and written as bench writes its
// own (output-files.ts). Exit 0; 1 when a family has nothing `auto` could pick, or the calibration
// was not kept (the store could not be written, or a run competed with it: a save that failed is a
// failed command, as with bench), or the store is busy with another calibration or a run (refused
// before timing anything, naming it); 2 for bad input.
import { calibrationTable } from '@shared/calibration'
import { type FamilyCalibration, TrainpoolError } from '@shared/contract'
import type { CalibrationOutcome } from '../service/auto-calibration'
import { openService } from '../service/open-service'
import { CALIBRATION_DIR } from '../store/calibration-cache'
import { defaultStoreDir } from '../store/run-store'
import { EXIT } from './bench-command'
import { checkOutputFile, OutputError, STDOUT_PATH, writeOutputFile } from './output-files'

export interface CalibrateFlags {
  store?: string
  family?: string
  json?: string
}

export async function calibrateCommand(flags: CalibrateFlags, version: string): Promise<number> {
  const say = (line: string) => process.stderr.write(`trainpool calibrate: ${line}\n`)
  const stdoutToo = { dashIsStdout: true }
  try {
    if (flags.json) await checkOutputFile('--json', flags.json, stdoutToo)
  } catch (err) {
    if (!(err instanceof OutputError)) throw err
    say(err.message)
    return EXIT[err.exit]
  }
  const storeDir = flags.store ?? defaultStoreDir()
  // only the calibration's own cache is written (no run): the store's folder names where it lives
  const { service } = await openService({ storeDir, keepRuns: false, shell: 'cli', appVersion: version, telemetry: false, autoRule: 'calibrated' })
  let outcome: CalibrationOutcome
  try {
    outcome = await service.calibrateFamilies(flags.family, { say: (line) => process.stderr.write(`${line}\n`) })
  } catch (err) {
    if (err instanceof TrainpoolError && err.code !== 'internal') {
      const field = err.issues?.[0]?.field
      say(field === 'family' ? `--${err.message}` : err.message)
      return err.code === 'busy' ? EXIT.failed : EXIT.usage
    }
    throw err
  }
  const calibrated = outcome.families
  const out: string[] = []
  for (const calibration of calibrated) out.push(...tableLines(calibration), calibration.reason, '')
  const where = `${storeDir}/${CALIBRATION_DIR}/`
  out.push(
    outcome.notKept
      ? `not kept in ${where}: ${outcome.notKept}; runs with --backend auto do not use it (calibrate again)`
      : `kept in ${where} for this machine and Trainpool ${version}; runs with --backend auto use it`,
  )
  const words = flags.json === STDOUT_PATH ? process.stderr : process.stdout
  words.write(`${out.join('\n')}\n`)
  if (flags.json) {
    try {
      await writeOutputFile('--json', flags.json, JSON.stringify(calibrated, null, 2) + '\n', stdoutToo)
    } catch (err) {
      if (!(err instanceof OutputError)) throw err
      say(err.message)
      return EXIT[err.exit]
    }
  }
  return !outcome.notKept && calibrated.every((c) => c.auto !== null) ? EXIT.ok : EXIT.failed
}

function tableLines(calibration: FamilyCalibration): string[] {
  const { title, header, rows } = calibrationTable(calibration)
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  // the last column (device, or why) runs on unpadded; the timings are right-aligned
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  return [title, line(header), widths.map((w, i) => '-'.repeat(i === widths.length - 1 ? header[i].length : w)).join('  '), ...rows.map(line)]
}
