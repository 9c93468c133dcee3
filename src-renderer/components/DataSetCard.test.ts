// A run's data set in History (RunReport, which History shows for a stored run): the file, sha256
// short, rows × columns, the target's statistics and the columns used; nothing for generated data.
import { mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract/result'
import { fakeDataSetRecord, HOUSES_SHA } from '@shared/testing/data-sets'
import { scriptedRun } from '@shared/testing/fixtures'
import RunReport from './RunReport.vue'

const result = () => (scriptedRun({ models: 4, workers: [2] }).at(-1) as { result: RunResult }).result

function render(run: RunResult) {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(RunReport, { props: { result: run }, global: { plugins: [pinia], stubs: { ResultCharts: true, TelemetryPanel: true } } })
}

describe('the data set card in a run report', () => {
  it('names the file, its sha256 (short, the full one on hover), size, target statistics and features', () => {
    const w = render({ ...result(), dataset: fakeDataSetRecord({ impute: 'none', imputed: undefined, standardised: false }) })
    const card = w.get('[data-test=dataset]')
    expect(card.get('h2').text()).toBe('Data set')
    const rows = Object.fromEntries(card.findAll('dt').map((dt, i) => [dt.text(), card.findAll('dd')[i].text()]))
    expect(rows).toMatchObject({
      File: 'houses.csv',
      sha256: HOUSES_SHA.slice(0, 12),
      'Rows × columns': '1,200 × 5',
      Target: 'price: mean 412,300, std 98,770, range 52,000 … 1,900,000',
      'Features (3)': 'area, rooms, age',
      Preparation: 'features used as they are',
    })
    expect(card.findAll('dd')[1].attributes('title')).toBe(HOUSES_SHA)
  })

  it('shows no card for a run on generated data', () => {
    expect(render(result()).find('[data-test=dataset]').exists()).toBe(false)
  })
})
