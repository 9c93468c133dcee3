// `trainpool report <stored smoke run> --pdf`: a real smoke run (wasm) is stored once, then printed
// through the CLI in headless Chromium; pdftotext must show the backend, every data size, every
// strategy's median (as the report formats it) and the verdict. Page 1 → test-artifacts/report/.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract'
import { RunStore } from '../store/run-store'
import { skipWithout } from '../testing/capability'
import { formatDuration } from '@shared/format'
import { reportRows, strategyLabel, verdictFor } from '@shared/verdict'
import { findChromium, pdfRenders, renderReportPdf } from './render-pdf'

const ROOT = resolve(__dirname, '..', '..')
const CLI = join(ROOT, 'src-main', 'cli', 'index.ts')
const ARTIFACTS = join(ROOT, 'test-artifacts', 'report')

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0
}
let chromium: string | null = null
try {
  chromium = findChromium()
} catch {
  chromium = null
}
const skip =
  skipWithout('chromium', chromium !== null, 'no Chromium/Chrome found (apt-get install chromium, or set TRAINPOOL_CHROMIUM)') ||
  skipWithout('poppler', has('pdftotext') && has('pdftoppm'), 'pdftotext/pdftoppm missing (apt-get install poppler-utils)')

function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 170_000 })
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim()

describe.skipIf(skip)('trainpool report --pdf', () => {
  let dir: string
  let run: RunResult

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'out', 'renderer', 'report.html'))) {
      execFileSync(process.execPath, [join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, stdio: 'ignore' })
    }
    dir = mkdtempSync(join(os.tmpdir(), 'trainpool-report-'))
    const bench = cli(['bench', '--preset', 'smoke', '--backend', 'wasm', '--workers', '1,2', '--store', dir])
    expect(bench.status, bench.stderr).toBe(0)
  }, 180_000)
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('prints a stored smoke run: backend, sizes, every median and the verdict are in the PDF text', async () => {
    const [runId] = readdirSync(dir)
    run = await new RunStore(dir).get(runId)
    const pdf = join(dir, 'report.pdf')
    const started = performance.now()
    const res = cli(['report', runId, '--store', dir, '--pdf', pdf])
    const seconds = (performance.now() - started) / 1000
    expect(res.status, res.stderr).toBe(0)
    expect(res.stderr).toMatch(/wrote .*report\.pdf \(\d+ KiB, [\d.]+ s\)/)
    const size = statSync(pdf).size
    expect(size).toBeGreaterThan(10_000)
    process.stderr.write(`[report pdf] ${Math.round(size / 1024)} KiB in ${seconds.toFixed(1)} s (CLI process, including Chromium start)\n`)

    const text = squash(execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' }))
    expect(text).toContain(run.environment!.backend)
    expect(text).toContain(run.environment!.device.split(',')[0])
    for (const size of run.config.sizes) expect(text).toContain(reportRows(size))
    expect(run.summary.length).toBeGreaterThanOrEqual(3)
    for (const s of run.summary) {
      // the summary table row: strategy label followed by its median
      expect(text).toContain(`${strategyLabel(s)} ${formatDuration(s.medianMs)}`)
    }
    const verdict = verdictFor(run)
    expect(text).toContain('Verdict'.toUpperCase())
    expect(text).toContain(squash(verdict.headline))
    for (const line of verdict.perSize) expect(text).toContain(squash(line))
    expect(text).toContain('Same work verified')

    mkdirSync(ARTIFACTS, { recursive: true })
    execFileSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '1', pdf, join(ARTIFACTS, 'page')])
    const png = readdirSync(ARTIFACTS).find((f) => /^page-0*1\.png$/.test(f))
    expect(png).toBeTruthy()
    expect(statSync(join(ARTIFACTS, png!)).size).toBeGreaterThan(5_000)
  })

  it('renders one PDF at a time: three at once all finish, never two Chromiums together', async () => {
    const [runId] = readdirSync(dir)
    const stored = await new RunStore(dir).get(runId)
    const pdfs = await Promise.all([0, 1, 2].map(() => renderReportPdf(stored)))
    for (const pdf of pdfs) expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
    expect(pdfRenders()).toEqual({ active: 0, peak: 1 })
  }, 120_000)

  it('reads an exported result file too, and --md prints the table', () => {
    const file = join(dir, 'result.json')
    const [runId] = readdirSync(dir).filter((f) => !f.includes('.'))
    expect(cli(['report', runId, '--store', dir, '--json', file]).status).toBe(0)
    const md = cli(['report', file, '--md'])
    expect(md.status, md.stderr).toBe(0)
    expect(md.stdout).toContain('| rows | models | strategy | workers | median [ms]')
    expect(
      md.stdout
        .trim()
        .split('\n')
        .filter((l) => /^\| \d/.test(l)),
    ).toHaveLength(run.summary.length)
  })

  it('says clearly when no browser is available (exit 1) and when the run does not exist (exit 2)', () => {
    const [runId] = readdirSync(dir).filter((f) => !f.includes('.'))
    const none = cli(['report', runId, '--store', dir, '--pdf', join(dir, 'x.pdf')], { ...process.env, TRAINPOOL_CHROMIUM: '/nonexistent/chromium' })
    expect(none.status).toBe(1)
    expect(none.stderr).toMatch(/cannot render the PDF: TRAINPOOL_CHROMIUM=\/nonexistent\/chromium does not exist.*apt-get install chromium/)
    expect(existsSync(join(dir, 'x.pdf'))).toBe(false)
    const missing = cli(['report', 'no-such-run', '--store', dir, '--md'])
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain('no run no-such-run')
  })
})
