import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { expandPlan } from '@shared/plan'
import { measurementFor, resultFor } from '@shared/testing/fixtures'
import { setResult } from '@shared/testing/model-set-fixtures'
import RunCompare from './RunCompare.vue'

function run(models: number, runId: string, startedAt: string, extra: { preset?: 'quick' | 'custom'; name?: string } = {}) {
  const config = { ...presetConfig('quick', { models: [models], workers: [2], repeats: 1 }), preset: extra.preset ?? 'quick' }
  const r = resultFor(
    config,
    expandPlan(config).map((k) => measurementFor(k, false, config)),
    { runId },
  )
  return { ...r, startedAt, ...(extra.name ? { name: extra.name } : {}) }
}

describe('RunCompare', () => {
  it('runs with different settings: says what differs and that they share no measurement; labels are names or presets, not ids', () => {
    const a = run(8, '20261202-090000-aaaaaa', '2026-12-02T09:00:00.000Z', { preset: 'custom' })
    const b = run(16, '20261202-100000-bbbbbb', '2026-12-02T10:00:00.000Z', { name: 'after the driver update' })
    const w = mount(RunCompare, { props: { a, b } })
    expect(w.get('[data-test=compare-differ]').text()).toBe('Settings that differ: models (8 vs 16).')
    expect(w.get('[data-test=compare-models]').classes()).toContain('differs')
    expect(w.get('[data-test=compare-shared]').text()).toMatch(/^These runs share no measurement: they differ in models, so there is no Δ to show/)
    const la = w.get('[data-test=compare-label-a]').text()
    expect(la).toMatch(/^A: Custom run of /)
    expect(w.get('[data-test=compare-label-b]').text()).toBe('B: after the driver update')
    expect(w.text()).not.toContain('aaaaaa')
  })

  it('runs of the same settings: every measurement has a Δ, and the settings are the same', () => {
    const a = run(8, '20261202-090000-aaaaaa', '2026-12-02T09:00:00.000Z')
    const b = run(8, '20261202-100000-bbbbbb', '2026-12-02T10:00:00.000Z')
    const w = mount(RunCompare, { props: { a, b } })
    expect(w.get('[data-test=compare-differ]').text()).toBe('Same settings in both runs.')
    expect(w.get('[data-test=compare-shared]').text()).toMatch(/^6 of 6 measurements are in both runs/)
    expect(w.get('[data-test=compare-label-a]').text()).toMatch(/^A: Quick run of /)
  })

  it('two runs of the same minute are told apart by the second, then by id', () => {
    const a = run(8, '20261202-090000-aaaaaa', '2026-12-02T09:00:01.000Z')
    const b = run(8, '20261202-090000-bbbbbb', '2026-12-02T09:00:41.000Z')
    const w = mount(RunCompare, { props: { a, b } })
    expect(w.get('[data-test=compare-label-a]').text()).not.toBe(w.get('[data-test=compare-label-b]').text().replace(/^B/, 'A'))
    expect(w.text()).not.toContain('aaaaaa')
  })
})

describe('RunCompare: model sets', () => {
  it('two runs of the same set compare per configuration: score and time per model, with Δ', () => {
    const a = setResult({ runId: '20260101-120000-aaaaaa' })
    const b = setResult({ runId: '20260101-130000-bbbbbb' })
    for (const m of b.measurements) m.perModel = m.perModel.map((p) => ({ ...p, testMse: p.testMse * 1.1, trainMs: p.trainMs === null ? null : p.trainMs / 2 }))
    const w = mount(RunCompare, { props: { a, b } })
    const rows = w.findAll('[data-test=compare-configurations] tbody tr').map((r) => r.findAll('td').map((td) => td.text()))
    expect(rows[0]).toEqual(['max-depth 5 · eta 0.3', '0.6500', '0.7150', '+10.0%', '200 ms', '100 ms', '−50.0%'])
    expect(rows).toHaveLength(4)
    const plain = run(8, '20261202-090000-aaaaaa', '2026-12-02T09:00:00.000Z')
    expect(
      mount(RunCompare, { props: { a: plain, b: plain } })
        .find('[data-test=compare-configurations]')
        .exists(),
    ).toBe(false)
  })
})

describe("RunCompare: classifiers' model sets", () => {
  it('scores compare in the same metric only; accuracy going up is B scoring better', () => {
    const a = setResult({ runId: '20260101-120000-aaaaaa', objective: 'binary', folds: 3, metric: 'accuracy' })
    const b = setResult({ runId: '20260101-130000-bbbbbb', objective: 'binary', folds: 3, metric: 'accuracy' })
    for (const m of b.measurements)
      m.perModel = m.perModel.map((p) => ({ ...p, validationMetrics: { ...p.validationMetrics, accuracy: p.validationMetrics!.accuracy! * 1.05 } }))
    const w = mount(RunCompare, { props: { a, b } })
    const best = w.get('[data-test=compare-configurations] tbody tr').findAll('td')
    expect(best[0].text()).toBe('max-depth 5 · eta 0.1')
    expect(best[3].text()).toBe('+5.0%')
    expect(best[3].classes()).toContain('delta-faster')
    expect(w.get('[data-test=compare-score-note]').text()).toMatch(
      /^Score: the leaderboard's validation accuracy \(higher is better\); Δ = \(B − A\) \/ A: positive means B scored better/,
    )
    const settings = w.text()
    expect(settings).toContain('binary (2 classes: 0, 1), ranked by accuracy')
    // the same set ranked by log loss in B: not comparable score for score
    const c = setResult({ runId: '20260101-140000-cccccc', objective: 'binary', folds: 3 })
    expect(
      mount(RunCompare, { props: { a, b: c } })
        .find('[data-test=compare-configurations]')
        .exists(),
    ).toBe(false)
  })
})
