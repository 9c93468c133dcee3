// `trainpool report RUN_ID|FILE.json [--pdf out.pdf] [--md] [--json FILE] [--csv FILE] [--leaderboard FILE] [--store DIR]`:
// a stored run (by id) or an exported result file, as a PDF report (headless Chromium), the
// Markdown summary table on stdout, or JSON/CSV files. Without an output flag: the verdict and the table.
// Every output path is checked before anything is rendered and written as output-files.ts writes;
// each takes `-` for standard output. A result file is read as the store reads run.json.
import { existsSync } from 'node:fs'
import { RUN_ID_PATTERN, TrainpoolError, type RunResult } from '@shared/contract'
import { formatDuration } from '@shared/format'
import { exportRun, toMarkdownDocument } from '../bench/export'
import { renderReportPdf } from '../report/render-pdf'
import { readRegularFile } from '../store/regular-file'
import { MAX_RUN_FILE_BYTES, RunStore, defaultStoreDir, parseRun } from '../store/run-store'
import { verdictFor, verdictText } from '@shared/verdict'
import { EXIT } from './bench-command'
import { OutputError, STDOUT_PATH, checkOutputFile, writeOutputFile } from './output-files'

export interface ReportFlags {
  pdf?: string
  md?: boolean
  json?: string
  csv?: string
  /** a model set's leaderboard as CSV (one row per configuration) */
  leaderboard?: string
  store?: string
}

/**
 * A path to a result file (exists, or looks like one), else a run id in the store. The file is read
 * as the store reads run.json (store/regular-file.ts): a regular file only, judged on the opened
 * file before a byte is read, at most MAX_RUN_FILE_BYTES, opened without blocking (a FIFO, a device
 * such as /dev/zero, a folder are refused at once), though a link the user made is followed.
 */
export async function loadRun(target: string, storeDir?: string): Promise<RunResult> {
  const looksLikeFile = target.endsWith('.json') || target.includes('/') || target.includes('\\') || !RUN_ID_PATTERN.test(target)
  if (looksLikeFile || existsSync(target)) {
    const read = await readRegularFile(target, MAX_RUN_FILE_BYTES, { followLinks: true })
    if (read.kind === 'missing') throw new TrainpoolError('not-found', `cannot read ${target}: no such file`)
    if (read.kind === 'unusable') throw new TrainpoolError('invalid-input', `cannot read ${target}: it ${read.why}`)
    return parseRun(read.text, target)
  }
  return new RunStore(storeDir ?? defaultStoreDir()).get(target)
}

export async function reportCommand(target: string, flags: ReportFlags): Promise<number> {
  let run: RunResult
  try {
    run = await loadRun(target, flags.store)
  } catch (err) {
    if (err instanceof TrainpoolError) {
      process.stderr.write(`trainpool report: ${err.message}\n`)
      return EXIT.usage
    }
    throw err
  }
  const any = flags.pdf || flags.md || flags.json || flags.csv || flags.leaderboard
  const outputs = (['json', 'csv', 'leaderboard', 'pdf'] as const).filter((key) => flags[key])
  // each output flag takes `-` for standard output; one thing at a time goes there
  const toStdout = [...outputs.filter((key) => flags[key] === STDOUT_PATH).map((key) => `--${key} -`), ...(flags.md ? ['--md'] : [])]
  if (toStdout.length > 1) {
    process.stderr.write(`trainpool report: ${toStdout.join(' and ')} would all write to standard output: give one of them, the others a file\n`)
    return EXIT.usage
  }
  const stdoutToo = { dashIsStdout: true }
  try {
    // every path checked before anything is written or rendered
    for (const key of outputs) await checkOutputFile(`--${key}`, flags[key]!, stdoutToo)
    if (flags.md) process.stdout.write(toMarkdownDocument(run))
    if (!any) process.stdout.write(`${verdictText(verdictFor(run))}\n\n${toMarkdownDocument(run)}`)
    if (flags.json) await writeOutputFile('--json', flags.json, exportRun(run, 'json').content, stdoutToo)
    if (flags.csv) await writeOutputFile('--csv', flags.csv, exportRun(run, 'csv').content, stdoutToo)
    if (flags.leaderboard) {
      let content: string
      try {
        content = exportRun(run, 'leaderboard').content
      } catch (err) {
        if (!(err instanceof TrainpoolError)) throw err
        process.stderr.write(`trainpool report: --leaderboard: ${err.message}\n`)
        return EXIT.usage
      }
      await writeOutputFile('--leaderboard', flags.leaderboard, content, stdoutToo)
    }
    if (flags.pdf) {
      const started = performance.now()
      let pdf: Buffer
      try {
        pdf = await renderReportPdf(run)
      } catch (err) {
        process.stderr.write(`trainpool report: ${err instanceof Error ? err.message : String(err)}\n`)
        return EXIT.failed
      }
      const written = await writeOutputFile('--pdf', flags.pdf, pdf, stdoutToo)
      process.stderr.write(
        `wrote ${written === STDOUT_PATH ? 'the PDF to standard output' : flags.pdf} (${Math.max(1, Math.round(pdf.length / 1024))} KiB, ${formatDuration(performance.now() - started)})\n`,
      )
    }
  } catch (err) {
    if (!(err instanceof OutputError)) throw err
    process.stderr.write(`trainpool report: ${err.message}\n`)
    return EXIT[err.exit]
  }
  return EXIT.ok
}
