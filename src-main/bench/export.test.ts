import { describe, expect, it } from 'vitest'
import { adviseFrom, checkAdvice, optionLabel } from '@shared/advice'
import { exportFileName, RunResultSchema } from '@shared/contract'
import { modelSweep } from '@shared/plan'
import { fakeRun } from '../testing/run-fixtures'
import { setResult } from '@shared/testing/model-set-fixtures'
import { CSV_COLUMNS, MARKDOWN_HEADER, exportRun, meanTestMse, mdMs, parseCsv, summaryGroups, toCsv, toMarkdown } from './export'

describe('exports', () => {
  const run = fakeRun({ sizes: [2000, 5000], models: [4, 8], workers: [1, 2] })
  run.environment!.device = 'GPU "Fancy", rev 2\nsecond line'

  it('JSON round-trips the whole run exactly', () => {
    const file = exportRun(run, 'json')
    expect(file.mimeType).toBe('application/json')
    const back = RunResultSchema.parse(JSON.parse(file.content))
    expect(back).toEqual(run)
  })

  it('CSV: the documented header, one row per measurement, numbers round-trip exactly', () => {
    const rows = parseCsv(toCsv(run))
    expect(rows[0]).toEqual([...CSV_COLUMNS])
    expect(rows.length - 1).toBe(run.measurements.length)
    const col = (name: (typeof CSV_COLUMNS)[number]) => CSV_COLUMNS.indexOf(name)
    run.measurements.forEach((m, i) => {
      const r = rows[i + 1]
      expect(r).toHaveLength(CSV_COLUMNS.length)
      expect(r[col('runId')]).toBe(run.runId)
      expect(r[col('device')]).toBe(run.environment!.device) // quotes, commas and newlines survive
      expect(Number(r[col('size')])).toBe(m.size)
      expect(Number(r[col('models')])).toBe(m.models)
      expect(Number(r[col('workers')])).toBe(m.workers)
      expect(r[col('strategy')]).toBe(m.strategy)
      expect(Number(r[col('repeat')])).toBe(m.repeat)
      expect(r[col('status')]).toBe(m.status)
      expect(Number(r[col('wallMs')])).toBe(m.wallMs)
      expect(Number(r[col('startupMs')])).toBe(m.startupMs)
      expect(Number(r[col('warmupMs')])).toBe(m.warmupMs)
      expect(Number(r[col('modelsTrained')])).toBe(m.modelsTrained)
      expect(Number(r[col('work')])).toBe(m.work)
      expect(Number(r[col('workRate')])).toBe(m.work / (m.wallMs / 1000) / 1e9)
      expect(r[col('workRateUnit')]).toBe('GFLOP/s')
      expect(Number(r[col('meanTestMse')])).toBe(meanTestMse(m.perModel))
    })
  })

  it('docs/guide-command-line.md documents exactly the CSV columns', async () => {
    const { readFileSync } = await import('node:fs')
    const readme = readFileSync(new URL('../../docs/guide-command-line.md', import.meta.url), 'utf8')
    const documented = /One row per measurement: `([^`]+)`/.exec(readme.replace(/\n/g, ' '))?.[1].split(/,\s*/)
    expect(documented).toEqual([...CSV_COLUMNS])
  })

  it('Markdown table matches the summary: one row per entry, fastest first, relative and speedup', () => {
    const md = toMarkdown(run)
    const lines = md.trim().split('\n')
    expect(lines[0]).toBe(`| ${MARKDOWN_HEADER.join(' | ')} |`)
    const rows = lines.slice(2).map((l) => l.slice(2, -2).split(' | '))
    expect(rows).toHaveLength(run.summary.length)
    const expected = summaryGroups(run.summary).flat()
    rows.forEach((r, i) => {
      const s = expected[i]
      const fastest = Math.min(...run.summary.filter((x) => x.size === s.size && x.models === s.models).map((x) => x.medianMs))
      expect(Number(r[0].replace(/,/g, ''))).toBe(s.size)
      expect(Number(r[1])).toBe(s.models)
      expect(r[2]).toBe(s.strategy)
      expect(Number(r[3])).toBe(s.workers)
      expect(r[4]).toBe(mdMs(s.medianMs))
      expect(Number(r[4].replace(/,/g, ''))).toBeCloseTo(s.medianMs, 1)
      expect(Number(r[5].replace(/,/g, ''))).toBeCloseTo(s.minMs, 1)
      expect(Number(r[6].replace(/,/g, ''))).toBeCloseTo(s.maxMs, 1)
      expect(Number(r[7])).toBeCloseTo(s.medianMs / fastest, 2)
      expect(r[8]).toBe(s.speedupVsSequential === null ? '–' : `${s.speedupVsSequential.toFixed(2)}×`)
    })
    // each group starts with its fastest entry at relative 1.00
    for (const g of summaryGroups(run.summary))
      expect(rows.find((r) => Number(r[0].replace(/,/g, '')) === g[0].size && Number(r[1]) === g[0].models)?.[7]).toBe('1.00')
  })

  it('export files are named safely after the run', () => {
    expect(exportFileName({ runId: 'abc', name: '../my run: wasm/cpu' }, 'csv')).toBe('trainpool-my-run-wasm-cpu-abc.csv')
    expect(exportRun(run, 'md').content).toContain(toMarkdown(run))
    expect(exportRun(run, 'csv').mimeType).toBe('text/csv')
  })
})

describe('the Markdown Advice section', () => {
  it('is there only when the run has advice checks: the advice line, predicted (interval) vs measured with the error, the pick', () => {
    const sweep = fakeRun({ sizes: [2000], models: modelSweep(16), workers: [1, 2], repeats: 1 }, 'sweep-run')
    expect(exportRun(sweep, 'md').content).not.toMatch(/## Advice/)
    const advice = adviseFrom(sweep, { models: 64, size: 2000 })
    const [best, next] = advice.options
    const summary = [
      { ...sweep.summary[0], models: 64, strategy: best.strategy, workers: best.workers, medianMs: best.predictedMs * 1.05 },
      { ...sweep.summary[0], models: 64, strategy: next.strategy, workers: next.workers, medianMs: next.predictedMs * 1.1 },
    ]
    const check = checkAdvice(advice, { runId: 'verify-run', summary }, '2026-12-02T21:00:00.000Z')
    const md = exportRun({ ...sweep, adviceChecks: [check] }, 'md').content
    expect(md).toContain('## Advice')
    expect(md).toContain(`**64 models at 2,000 rows**, checked 2026-12-02 21:00 UTC by run verify-run: ${advice.text}`)
    expect(md).toContain(
      `| ${optionLabel(best, ' ')} | ${mdMs(best.predictedMs)} | ${mdMs(best.lowMs)}–${mdMs(best.highMs)} | ${mdMs(best.predictedMs * 1.05)} | −4.8 % |`,
    )
    expect(md).toMatch(/The recommended option was the fastest measured: yes\./)
    expect(exportRun({ ...sweep, runId: 'verify-run', verifies: 'sweep-run' }, 'md').content).toMatch(/checks the advice of run sweep-run/)
  })
})

describe('the Markdown Leaderboard section', () => {
  it("a model set's export ranks its configurations; the JSON keeps each model's configuration and fold", () => {
    const run = setResult({ folds: 3 })
    const md = exportRun(run, 'md').content
    expect(md).toContain('## Leaderboard')
    expect(md).toContain('ranked by validation MSE over 3 folds × 2 seeds, best first')
    expect(md).toMatch(/\| 1 \(best\) \| max-depth 5 · eta 0\.3 \| 0\.6020 ± /)
    expect(md).toContain('set: max-depth 3,5 × eta 0.1,0.3 · 2 seeds · 3 folds → 24 models')
    const json = RunResultSchema.parse(JSON.parse(exportRun(run, 'json').content))
    expect(json.measurements[0].perModel[5]).toMatchObject({ configuration: 0, fold: 2 })
    expect(exportRun(fakeRun(), 'md').content).not.toContain('## Leaderboard')
  })
})

describe('the leaderboard CSV', () => {
  it('one row per configuration, best first, a column per varied field; refused for a plain run', () => {
    const file = exportRun(setResult({ folds: 3 }), 'leaderboard')
    expect(file.fileName).toBe('trainpool-set-1.leaderboard.csv')
    expect(file.mimeType).toBe('text/csv')
    const rows = parseCsv(file.content)
    expect(rows[0]).toEqual([
      'rank',
      'configuration',
      'maxDepth',
      'eta',
      'score',
      'score_mean',
      'score_std',
      'test_mse_mean',
      'test_mse_std',
      'train_ms_per_model',
      'models',
      'rows',
    ])
    expect(rows.slice(1).map((r) => r.slice(0, 5))).toEqual([
      ['1', 'max-depth 5 · eta 0.3', '5', '0.3', 'validation_mse'],
      ['2', 'max-depth 5 · eta 0.1', '5', '0.1', 'validation_mse'],
      ['3', 'max-depth 3 · eta 0.3', '3', '0.3', 'validation_mse'],
      ['4', 'max-depth 3 · eta 0.1', '3', '0.1', 'validation_mse'],
    ])
    expect(Number(rows[1][5])).toBeCloseTo(0.602, 10)
    expect(() => exportRun(fakeRun(), 'leaderboard')).toThrow(/has no leaderboard: only a model set/)
  })
})
