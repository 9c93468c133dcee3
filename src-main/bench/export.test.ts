import { describe, expect, it } from 'vitest'
import { adviseFrom, checkAdvice, optionLabel } from '@shared/advice'
import { exportFileName, RunResultSchema } from '@shared/contract'
import { modelSweep } from '@shared/plan'
import { fakeRun } from '../testing/run-fixtures'
import { halvingResult, setResult } from '@shared/testing/model-set-fixtures'
import { meanMetric } from '@shared/leaderboard'
import { CLASSIFIER_CSV_COLUMNS, CSV_COLUMNS, MARKDOWN_HEADER, exportRun, meanTestMse, mdMs, parseCsv, summaryGroups, toCsv, toMarkdown } from './export'

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

describe("a classifier run's exports carry its task and its models' metrics", () => {
  const binary = setResult({ objective: 'binary', folds: 3 })

  it('CSV: the regression columns as they were, then the objective, the classes, the metric and the mean test score in each classifier metric', () => {
    const rows = parseCsv(toCsv(binary))
    expect(rows[0]).toEqual([...CSV_COLUMNS, ...CLASSIFIER_CSV_COLUMNS])
    expect(CLASSIFIER_CSV_COLUMNS).toEqual(['objective', 'classes', 'metric', 'meanTestLogloss', 'meanTestAccuracy', 'meanTestAuc'])
    const col = (name: string) => rows[0].indexOf(name)
    binary.measurements.forEach((m, i) => {
      const r = rows[i + 1]
      expect(r).toHaveLength(rows[0].length)
      expect([r[col('objective')], JSON.parse(r[col('classes')]), r[col('metric')]]).toEqual(['binary', ['0', '1'], 'logloss'])
      expect(Number(r[col('meanTestLogloss')])).toBe(meanMetric(m.perModel, 'logloss'))
      expect(Number(r[col('meanTestAccuracy')])).toBe(meanMetric(m.perModel, 'accuracy'))
      expect(Number(r[col('meanTestAuc')])).toBe(meanMetric(m.perModel, 'auc'))
      // a classifier's test MSE is its Brier score, still under its old name
      expect(Number(r[col('meanTestMse')])).toBe(meanTestMse(m.perModel))
    })
    // the mean log loss over the 24 models: the four configurations' 0.6 … 0.3, each 0.05 worse on the test rows, seeds and folds' wobble 0.002 on average
    expect(Number(rows[1][col('meanTestLogloss')])).toBeCloseTo(0.45 + 0.05 + 0.002, 10)
    // multiclass has no AUC: the column is there, empty
    const multi = parseCsv(toCsv(setResult({ objective: 'multiclass' })))
    expect(multi[1][multi[0].indexOf('meanTestAuc')]).toBe('')
    expect(JSON.parse(multi[1][multi[0].indexOf('classes')])).toEqual(['0', '1', '2', '3', '4'])
    // a regression run's CSV is exactly as before classifiers
    expect(parseCsv(toCsv(setResult()))[0]).toEqual([...CSV_COLUMNS])
  })

  it('Markdown: the objective and its classes, a Scores section in every metric, the leaderboard ranked by validation log loss', () => {
    const md = exportRun(binary, 'md').content
    expect(md).toContain('Objective: binary (2 classes: 0, 1), read from the target · primary metric: log loss')
    expect(md).toContain('## Scores')
    expect(md).toContain('| rows | models | strategy | workers | mean test log loss | mean test accuracy | mean test ROC AUC |')
    const sequential = binary.measurements.find((m) => m.strategy === 'sequential')!
    expect(md).toContain(`| 2,000 | 24 | sequential | ${sequential.workers} | ${meanMetric(sequential.perModel, 'logloss')!.toPrecision(5)} |`)
    expect(md).toContain('ranked by validation log loss over 3 folds × 2 seeds, best first')
    expect(md).toContain('| rank | configuration | validation log loss | validation accuracy | validation ROC AUC | test log loss | time/model |')
    // a regression run's Markdown has none of it
    const plain = exportRun(setResult({ folds: 3 }), 'md').content
    expect(plain).not.toMatch(/Objective|## Scores|log loss/)
  })

  it("the leaderboard CSV: the score names its metric and rows; each classifier metric's mean and spread after the regression columns", () => {
    const rows = parseCsv(exportRun(setResult({ objective: 'binary', folds: 3, metric: 'accuracy' }), 'leaderboard').content)
    expect(rows[0].slice(4, 13)).toEqual([
      'score',
      'score_mean',
      'score_std',
      'test_mse_mean',
      'test_mse_std',
      'train_ms_per_model',
      'models',
      'rows',
      'validation_logloss_mean',
    ])
    expect(rows[0].slice(12)).toEqual([
      'validation_logloss_mean',
      'validation_logloss_std',
      'validation_accuracy_mean',
      'validation_accuracy_std',
      'validation_auc_mean',
      'validation_auc_std',
      'test_logloss_mean',
      'test_logloss_std',
      'test_accuracy_mean',
      'test_accuracy_std',
      'test_auc_mean',
      'test_auc_std',
    ])
    // ranked by accuracy, highest first: configuration 2 (max-depth 3 · eta 0.3 … see model-set-fixtures), then 3
    expect(rows.slice(1).map((r) => [r[0], r[1], r[4]])).toEqual([
      ['1', 'max-depth 5 · eta 0.1', 'validation_accuracy'],
      ['2', 'max-depth 5 · eta 0.3', 'validation_accuracy'],
      ['3', 'max-depth 3 · eta 0.3', 'validation_accuracy'],
      ['4', 'max-depth 3 · eta 0.1', 'validation_accuracy'],
    ])
    const col = (name: string) => rows[0].indexOf(name)
    expect(Number(rows[1][col('score_mean')])).toBe(Number(rows[1][col('validation_accuracy_mean')]))
    expect(Number(rows[1][col('test_accuracy_mean')])).toBeCloseTo(0.9 - 0.05 - 0.002, 10)
  })

  it('docs/guide-command-line.md names the classifier CSV columns', async () => {
    const { readFileSync } = await import('node:fs')
    const guide = readFileSync(new URL('../../docs/guide-command-line.md', import.meta.url), 'utf8').replace(/\n/g, ' ')
    const documented = /A classifier run adds `([^`]+)`/.exec(guide)?.[1].split(/,\s*/)
    expect(documented).toEqual([...CLASSIFIER_CSV_COLUMNS])
  })
})

describe('Markdown export of a halving search (issue 39)', () => {
  it("carries the rungs line and each configuration's last rung and rounds on the board", () => {
    const md = exportRun(halvingResult(), 'md').content
    expect(md).toContain(
      "\n\nSearch halving: factor 2 on the validation MSE (3 folds) · rungs 4 configurations × 2 rounds → 2 × 4 rounds → 1 × 10 rounds · trained 45 % of the grid's rounds (108 of 240, sequential at 2000 rows)\n\n",
    )
    expect(md).toMatch(/\| last rung \| rounds \| time\/model \|/)
    expect(md).toMatch(/\| 1 \(best\) \| max-depth 5 · eta 0\.3 \| .* \| 3 of 3 \| 10 \|/)
    expect(exportRun(setResult({ folds: 3 }), 'md').content).not.toMatch(/search halving|last rung/i)
  })
})
