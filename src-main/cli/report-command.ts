// `trainpool report RUN_ID|FILE.json [--pdf out.pdf] [--md] [--json FILE] [--csv FILE] [--leaderboard FILE] [--store DIR]`:
// a stored run (by id) or an exported result file, as a PDF report (headless Chromium), the
// Markdown summary table on stdout, or JSON/CSV files. Without an output flag: the verdict and the table.
// Every output path is checked before anything is rendered and written as output-files.ts writes.
import { existsSync, promises as fs } from 'node:fs'
import { RUN_ID_PATTERN, TrainpoolError, type RunResult } from '@shared/contract'
import { formatDuration } from '@shared/format'
import { exportRun, toMarkdownDocument } from '../bench/export'
import { renderReportPdf } from '../report/render-pdf'
import { RunStore, defaultStoreDir, parseRun } from '../store/run-store'
import { verdictFor, verdictText } from '@shared/verdict'
import { EXIT } from './bench-command'
import { OutputError, checkOutputFile, writeOutputFile } from './output-files'

export interface ReportFlags {
  pdf?: string
  md?: boolean
  json?: string
  csv?: string
  /** a model set's leaderboard as CSV (one row per configuration) */
  leaderboard?: string
  store?: string
}

/** A path to a result file (exists, or looks like one), else a run id in the store. */
export async function loadRun(target: string, storeDir?: string): Promise<RunResult> {
  const looksLikeFile = target.endsWith('.json') || target.includes('/') || target.includes('\\') || !RUN_ID_PATTERN.test(target)
  if (looksLikeFile || existsSync(target)) {
    let text: string
    try {
      text = await fs.readFile(target, 'utf8')
    } catch (err) {
      throw new TrainpoolError('not-found', `cannot read ${target}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    return parseRun(text, target)
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
  try {
    // every path checked before anything is written or rendered
    for (const key of outputs) await checkOutputFile(`--${key}`, flags[key]!)
    if (flags.md) process.stdout.write(toMarkdownDocument(run))
    if (!any) process.stdout.write(`${verdictText(verdictFor(run))}\n\n${toMarkdownDocument(run)}`)
    if (flags.json) await writeOutputFile('--json', flags.json, exportRun(run, 'json').content)
    if (flags.csv) await writeOutputFile('--csv', flags.csv, exportRun(run, 'csv').content)
    if (flags.leaderboard) {
      let content: string
      try {
        content = exportRun(run, 'leaderboard').content
      } catch (err) {
        if (!(err instanceof TrainpoolError)) throw err
        process.stderr.write(`trainpool report: --leaderboard: ${err.message}\n`)
        return EXIT.usage
      }
      await writeOutputFile('--leaderboard', flags.leaderboard, content)
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
      await writeOutputFile('--pdf', flags.pdf, pdf)
      process.stderr.write(`wrote ${flags.pdf} (${Math.max(1, Math.round(pdf.length / 1024))} KiB, ${formatDuration(performance.now() - started)})\n`)
    }
  } catch (err) {
    if (!(err instanceof OutputError)) throw err
    process.stderr.write(`trainpool report: ${err.message}\n`)
    return EXIT[err.exit]
  }
  return EXIT.ok
}
