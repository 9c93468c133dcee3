import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract/result'
import { type ModelFamily, registerFamily } from '@shared/families'
import { formatDuration } from '@shared/format'
import { fakeDataSetRecord, HOUSES_SHA } from '@shared/testing/data-sets'
import { scriptedRun, toyFamily } from '@shared/testing/fixtures'
import { halvingResult, setResult } from '@shared/testing/model-set-fixtures'
import { slurmResult } from '@shared/testing/slurm-fixtures'
import ReportApp from './ReportApp.vue'

const result = () => (scriptedRun({ models: 4, workers: [2] }).at(-1) as { result: RunResult }).result

function render(run: RunResult) {
  return mount(ReportApp, { props: { run }, global: { stubs: { ReportChart: true } } })
}
const configRow = (w: ReturnType<typeof render>, key: string) =>
  w
    .findAll('.facts table.kv tr')
    .find((tr) => tr.find('th').text() === key)
    ?.find('td')
    .text()

describe('report page', () => {
  it('a run on Slurm has a Slurm section: job ids, what it asked for, queue waits and hosts; a local run has none', () => {
    const w = render(slurmResult())
    expect(w.get('[data-test=scheduler] [data-test=slurm-job-ids]').text()).toBe('4101, 4102')
    expect(w.get('[data-test=slurm-asked]').text()).toMatch(/^partition gpu · gres gpu:1 · time 1:00:00 · --qos=short · queue timeout 600 s$/)
    expect(w.get('[data-test=slurm-row-0] [data-test=slurm-queue]').text()).toBe(formatDuration(12_000))
    expect(w.get('[data-test=slurm-row-0] [data-test=slurm-hosts]').text()).toMatch(/^node01 \(W0\)/)
    expect(render(result()).find('[data-test=scheduler]').exists()).toBe(false)
  })

  it("a GPU engine's device work per measurement is in the environment table; a run without it has none", () => {
    const run = result()
    const device = { dispatches: 194, submits: 25, readbacks: 4, bytesReadBack: 64, hostMsBetweenSubmits: 0.5 }
    const measurements = run.measurements.map((m) => (m.strategy === 'batched' ? { ...m, device } : m))
    const rows = render({ ...run, measurements }).findAll('[data-test=device-work]')
    expect(rows.map((r) => r.text())).toEqual([
      `Device work, batched W=2 · 2000 rows194 dispatches · 25 submits · 4 readbacks (64 B) · host 0.5 ms between submits`,
    ])
    expect(render(run).findAll('[data-test=device-work]')).toHaveLength(0)
  })

  it('names the family with its parameters and heads the rate column with its unit', () => {
    const run = result()
    const w = render(run)
    expect(configRow(w, 'Model')).toBe('neural network (MLP): 100→64→1, Adam lr 0.01, batch 512, 2 epochs')
    expect(w.get('[data-test=summary-table] [data-test=rate-header]').text()).toBe('GFLOP/s')
    const first = w.get('[data-test=summary-table] tbody tr')
    const sorted = [...run.summary].sort((a, b) => a.models - b.models || a.size - b.size || a.medianMs - b.medianMs)
    expect(first.findAll('td').at(-1)!.text()).toBe(sorted[0].workRate.toFixed(2))
    expect(first.findAll('td')[3].text()).toBe(formatDuration(sorted[0].medianMs))
  })

  it('a toy family registered in the test gets its own words, with no change to the page', () => {
    const unregister = registerFamily(toyFamily as unknown as ModelFamily)
    try {
      const run = result()
      const w = render({ ...run, config: { ...run.config, model: { ...toyFamily.defaults } as never } })
      expect(configRow(w, 'Model')).toBe('toy rounds model: 100 rounds, shrinkage 0.1, leaves 8/4')
      expect(w.get('[data-test=summary-table] [data-test=rate-header]').text()).toBe('Mrow/s')
    } finally {
      unregister()
    }
  })

  it("a run on the user's data names the file, its size, the target's statistics and the columns used", () => {
    const w = render({ ...result(), dataset: fakeDataSetRecord() })
    expect(configRow(w, 'Data')).toBe('houses.csv: 3 feature columns → price, test split 0.2')
    expect(configRow(w, 'Target / seed')).toBeUndefined()
    const rows = w
      .get('[data-test=report-dataset]')
      .findAll('tr')
      .map((tr) => [tr.get('th').text(), tr.get('td').text()])
    expect(rows).toEqual([
      ['File', 'houses.csv'],
      ['sha256', HOUSES_SHA.slice(0, 12)],
      ['Rows × columns', '1,200 × 5'],
      ['Target', 'price: mean 412,300, std 98,770, range 52,000 … 1,900,000'],
      ['Features (3)', 'area, rooms, age'],
      ['Preparation', 'features standardised with the training rows; missing values imputed with the training mean (4 values)'],
      ['Row samples', 'seed 42 (the same rows for every strategy and model)'],
    ])
    // generated data: no data set section
    expect(render(result()).find('[data-test=report-dataset]').exists()).toBe(false)
  })
})

describe('the report of a model set', () => {
  it('has the leaderboard and a score chart per varied hyperparameter', () => {
    const w = render(setResult({ folds: 2 }))
    expect(configRow(w, 'Model set')).toBe('max-depth 3,5 × eta 0.1,0.3 · 2 seeds · 2 folds → 16 models')
    const section = w.get('[data-test=report-leaderboard]')
    expect(section.get('[data-test=leaderboard-best]').findAll('td')[1].text()).toBe('max-depth 5 · eta 0.3')
    const charts = section.findAllComponents({ name: 'ReportChart' }) as { props(name: string): unknown }[]
    expect(charts.map((c) => (c.props('input') as { title: string }).title)).toEqual(['Validation MSE vs max-depth', 'Validation MSE vs eta'])
    expect(w.find('[data-test=report-search]').exists()).toBe(false)
  })

  it("a halving search: the rungs line in the verdict, each configuration's last rung on the board, the rungs' chart with its cuts", () => {
    const w = render(halvingResult())
    expect(w.get('[data-test=report-search]').text()).toMatch(/^search halving: factor 2 .* · trained 45 % of the grid's rounds/)
    const section = w.get('[data-test=report-leaderboard]')
    expect(section.findAll('th').map((th) => th.text())).toContain('last rung')
    const charts = section.findAllComponents({ name: 'ReportChart' }) as { props(name: string): unknown }[]
    const rungs = charts[0].props('input') as { title: string; cuts: { x: number }[] }
    expect(rungs.title).toBe("Validation MSE vs rounds, by configuration: successive halving's rungs")
    expect(rungs.cuts.map((c) => c.x)).toEqual([2, 4])
  })
})

describe("a classifier's report", () => {
  it('says the objective and its classes, names the metric in the verdict, the leaderboard and the charts, and scores each measurement in every metric', () => {
    const w = render(setResult({ objective: 'binary', folds: 2 }))
    expect(configRow(w, 'Objective')).toBe('binary (2 classes: 0, 1), read from the target; ranked by log loss')
    expect(w.get('[data-test=report-task]').text()).toBe(
      'Objective: binary (2 classes: 0, 1), read from the target; the models are ranked and compared by log loss.',
    )
    expect(w.get('[data-test=verification]').text()).toContain("each model's test log loss agrees across strategies")
    expect(w.get('[data-test=report-leaderboard] [data-test=leaderboard-title]').text()).toMatch(/ranked by validation log loss over 2 folds × 2 seeds/)
    const charts = w.get('[data-test=report-leaderboard]').findAllComponents({ name: 'ReportChart' }) as { props(name: string): unknown }[]
    expect(charts.map((c) => (c.props('input') as { title: string }).title)).toEqual(['Validation log loss vs max-depth', 'Validation log loss vs eta'])
    expect(w.findAll('[data-test=score-header]').map((h) => h.text())).toEqual(['Mean test log loss', 'Mean test accuracy', 'Mean test ROC AUC'])
    const first = w.get('[data-test=measurements-table] tbody tr').findAll('td')
    // the means over the 16 models: the configurations' log loss 0.45, accuracy 0.8125 and AUC 0.8375 on average, 0.05 worse on the test rows, the folds' wobble 0.001
    expect(first.slice(-3).map((td) => td.text())).toEqual(['0.50100', '0.76150', '0.78650'])
  })

  it('a run from before classifiers (no task) reports test MSE and no objective, as before', () => {
    const w = render(result())
    expect(configRow(w, 'Objective')).toBeUndefined()
    expect(w.find('[data-test=report-task]').exists()).toBe(false)
    expect(w.findAll('[data-test=score-header]').map((h) => h.text())).toEqual(['Mean test MSE'])
  })
})
