// The advice panel of a finished run: the card's states (the recommendation with its interval and
// the next best, an extrapolation, a refusal, a bad target refused inline, a verification from its
// live progress to the check table), and the fits it stands on (worker chart, cost models).
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { adviseFrom, checkAdvice, formatRange, verificationConfig } from '@shared/advice'
import type { RunResult } from '@shared/contract/result'
import { formatDuration } from '@shared/format'
import { expandPlan } from '@shared/plan'
import { sweepResult } from '@shared/testing/advice-fixtures'
import { setResult } from '@shared/testing/model-set-fixtures'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { measurementFor, resultFor } from '@shared/testing/fixtures'
import { setBridge } from '../bridge'
import { useRunStore } from '../stores/run'
import AdvicePanel from './AdvicePanel.vue'

let service: FakeService
let pinia: ReturnType<typeof createPinia>
beforeEach(async () => {
  pinia = createPinia()
  setActivePinia(pinia)
  service = new FakeService({ runId: 'verify-1' })
  setBridge(fakeBridge(service))
  await useRunStore().connect()
})
afterEach(() => {
  useRunStore().disconnect()
  setBridge(null)
})

function panel(result: RunResult) {
  service.addRun(result)
  return mount(AdvicePanel, { props: { result }, global: { plugins: [pinia] } })
}
async function ask(w: ReturnType<typeof panel>, models: string, size: string) {
  await w.get('[data-test=advice-models]').setValue(models)
  await w.get('[data-test=advice-size]').setValue(size)
  await w.get('form.advice-target').trigger('submit')
  await flushPromises()
}

describe('advice card', () => {
  it('recommends at the run’s own sweep first: the pick with its interval, the next best and how much slower', () => {
    const run = sweepResult()
    const w = panel(run)
    const advice = adviseFrom(run, { models: 16, size: 2000 })
    const [best, next] = advice.options
    expect(next.lowMs).toBeLessThanOrEqual(best.highMs) // the fixture's two batched options overlap: a tie, said so
    expect(w.get<HTMLInputElement>('[data-test=advice-models]').element.value).toBe('16')
    expect(w.get<HTMLInputElement>('[data-test=advice-size]').element.value).toBe('2000')
    expect(w.get('[data-test=advice-pick]').text()).toBe(
      `batched, W=${best.workers} ≈ ${formatDuration(best.predictedMs)} (95 % interval ${formatRange(best.lowMs, best.highMs)})`,
    )
    expect(w.get('[data-test=advice-next]').text()).toBe(
      `Next best: ${next.strategy}, W=${next.workers} ≈ ${formatDuration(next.predictedMs)}, ${(next.predictedMs / best.predictedMs).toFixed(1)}× slower (the intervals overlap: as good as a tie).`,
    )
    expect(w.find('[data-test=advice-extrapolation]').exists()).toBe(false)
    expect(service.callsTo('advise')).toEqual([])
  })

  it('asks the service for the typed target; beyond 4× the largest N measured it says extrapolation', async () => {
    const w = panel(sweepResult())
    await ask(w, '500', '2,000')
    expect(service.callsTo('advise')).toEqual([{ runId: 'sweep-1', models: 500, size: 2000 }])
    expect(w.get('[data-test=advice-answer]').text()).toMatch(/^For 500 models at 2,000 rows:/)
    expect(w.get('[data-test=advice-extrapolation]').text()).toBe(
      'extrapolation Extrapolation: 500 models is 31× the largest N measured (16); the interval widens with the distance, but the line may not hold that far.',
    )
    // 64 = 4 × 16 is still inside
    await ask(w, '64', '2000')
    expect(w.find('[data-test=advice-extrapolation]').exists()).toBe(false)
  })

  it('a bad target is refused inline, naming the field and its range; nothing is asked', async () => {
    const w = panel(sweepResult())
    await ask(w, '0', 'lots')
    expect(w.get('#err-advice-models').text()).toBe('models must be a whole number from 1 to 1000000')
    expect(w.get('#err-advice-size').text()).toBe('size must be a whole number from 2 to 1000000')
    expect(w.get('[data-test=advice-models]').attributes('aria-invalid')).toBe('true')
    expect(w.get('[data-test=advice-models]').attributes('aria-describedby')).toBe('err-advice-models')
    await ask(w, '2.5', '2000')
    expect(w.get('#err-advice-models').text()).toBe('models must be a whole number from 1 to 1000000')
    expect(w.find('#err-advice-size').exists()).toBe(false)
    expect(service.callsTo('advise')).toEqual([])
  })

  it('refuses when the fits cannot be trusted, says why, and offers nothing to verify', async () => {
    const w = panel(sweepResult({ counts: [1, 2] }))
    // at N = 2, measured: ranked by the measurements; at N = 16 two counts cannot carry a line
    expect(w.get('[data-test=advice-pick]').text()).toMatch(/ measured /)
    await ask(w, '16', '2000')
    expect(w.get('[data-test=advice-refusal]').text()).toMatch(/^⚠ No advice: no fit can be trusted — .*only 2 model counts measured/)
    expect(w.find('[data-test=advice-pick]').exists()).toBe(false)
    expect(w.get('[data-test=advice-verify]').attributes('disabled')).toBeDefined()
    // an unmeasured size: the service's refusal names the sizes that were
    const ok = panel(sweepResult({ runId: 'sweep-2' }))
    await ask(ok, '16', '5000')
    expect(ok.get('[data-test=advice-refusal]').text()).toMatch(/5 000 rows was not measured \(measured: 2 000\)/)
  })

  it('verify: the verification run’s progress on the card, then predicted against measured from the stored check', async () => {
    const source = sweepResult()
    const w = panel(source)
    await w.get('[data-test=advice-verify]').trigger('click')
    await flushPromises()
    expect(service.callsTo('verifyAdvice')).toEqual([{ runId: 'sweep-1', models: 16, size: 2000 }])
    const run = useRunStore()
    expect(run.runId).toBe('verify-1')
    expect(run.busy).toBe(true)
    expect(run.joined).toBe(false)
    expect(w.get('[data-test=advice-verification]').text()).toMatch(/^Verifying 16 models at 2,000 rows:/)
    expect(w.get('[role=progressbar]').attributes('aria-valuenow')).toBe('0')
    // a second press while it runs starts nothing
    await w.get('[data-test=advice-verify]').trigger('click')
    expect(service.callsTo('verifyAdvice')).toHaveLength(1)

    const advice = adviseFrom(source, { models: 16, size: 2000 })
    const cfg = verificationConfig(source.config, advice)
    const measured = resultFor(
      cfg,
      expandPlan(cfg).map((k) => measurementFor(k, false, cfg)),
    )
    const check = service.completeVerification('verify-1', measured)
    await flushPromises()
    const table = w.get('[data-test=advice-check] [data-test=advice-check-table]')
    const rows = table.findAll('tbody tr').map((tr) => tr.findAll('th,td').map((c) => c.text()))
    expect(rows).toHaveLength(check.rows.length)
    const first = check.rows[0]
    expect(rows[0]).toEqual([
      `batched, W=${first.workers} (recommended)`,
      formatDuration(first.predictedMs),
      formatRange(first.lowMs, first.highMs),
      formatDuration(first.measuredMs),
      expect.stringMatching(/^[+−±]\d+ %$/),
      first.measuredMs! >= first.lowMs && first.measuredMs! <= first.highMs ? 'yes' : 'no',
    ])
    expect(w.get('[data-test=advice-check-verdict]').text()).toMatch(check.pickRight ? /the pick was right/ : /the pick was wrong|could not be judged/)
    expect(w.find('[role=progressbar]').exists()).toBe(false)
  })

  it('lists the checks already stored with the run, newest first', () => {
    const source = sweepResult()
    const advice = adviseFrom(source, { models: 8, size: 2000 })
    const verify = (id: string, factor: number) => ({
      runId: id,
      summary: advice.options
        .slice(0, 2)
        .map((o) => ({ ...source.summary[0], strategy: o.strategy, workers: o.workers, models: 8, size: 2000, medianMs: o.predictedMs * factor })),
    })
    const checks = [checkAdvice(advice, verify('v-old', 3), '2026-12-01T00:00:00Z'), checkAdvice(advice, verify('v-new', 1), '2026-12-02T00:00:00Z')]
    const w = panel({ ...source, adviceChecks: checks })
    expect(w.get('[data-test=advice-check] h4').text()).toMatch(/^Verified: 8 models at 2,000 rows\s+run v-new$/)
    expect(w.get('[data-test=advice-check] [data-test=advice-check-verdict]').text()).toMatch(
      /the pick was right\. 2 of 2 measured times inside the predicted interval\./,
    )
    expect(w.findAll('[data-test=advice-check-older]')).toHaveLength(1)
    // the card opens on the last verified advice, as the report does
    expect(w.get<HTMLInputElement>('[data-test=advice-models]').element.value).toBe('8')
    expect(w.get('.advice-for').text()).toBe('Last verified advice, for 8 models at 2,000 rows:')
    expect(w.get('[data-test=advice-check-older] tbody td:nth-of-type(4)').text()).toBe('−67 %')
  })
})

describe('a run without a sweep', () => {
  it('one line on how to get advice, no card and no fits', () => {
    const w = panel(sweepResult({ runId: 'single', counts: [4] }))
    expect(w.get('[data-test=advice-needs-sweep]').text()).toMatch(/^Advice .* needs times at several model counts: tick “sweep model counts”/)
    expect(w.find('[data-test=advice-card]').exists()).toBe(false)
    expect(w.find('[data-test=advice-fits]').exists()).toBe(false)
  })
})

describe('the fits behind the advice', () => {
  it('worker chart: measured points and the fitted curve per strategy, fastest W and knee in words', () => {
    const run = sweepResult()
    const w = panel(run)
    const scaling = adviseFrom(run, { models: 16, size: 2000 }).scaling.filter((s) => s.models === 16)
    const headers = w.findAll('[data-test=chart-worker-fit] thead th').map((t) => t.text())
    expect(headers).toEqual(['workers', 'pool measured', 'batched measured', 'pool Amdahl fit', `batched ${scaling[1].law === 'usl' ? 'USL' : 'Amdahl'} fit`])
    const fits = w.findAll('[data-test=ws-fits] li').map((li) => li.text())
    expect(fits[0]).toBe(
      `pool: Amdahl fit (serial fraction σ ${scaling[0].sigma.toFixed(2)}), R² ${scaling[0].r2!.toFixed(2)}; fastest at W = ${scaling[0].fastestWorkers}${scaling[0].fastestWorkers > 4 ? ' (read off the curve past the largest W measured, 4)' : ''}; knee at W = ${scaling[0].kneeWorkers} (past it one more worker saves < 10 %).`,
    )
    // a model-count choice when several N have fits
    expect(w.findAll('[data-test=ws-models] option').map((o) => o.text())).toEqual(['2', '4', '8', '16'])
  })

  it('cost models: the line, R² and each N’s residual; a refused fit says why in its row', () => {
    const good = panel(sweepResult())
    const seq = good
      .get('[data-test=cm-row-sequential-1]')
      .findAll('th,td')
      .map((c) => c.text())
    const cm = adviseFrom(sweepResult(), { models: 16, size: 2000 }).costModels[0]
    expect(seq.slice(0, 3)).toEqual(['sequential', `${formatDuration(cm.fit.a)} + ${formatDuration(cm.fit.b)} × N`, cm.fit.r2!.toFixed(3)])
    const r1 = cm.fit.points[0].ms - cm.fit.points[0].predictedMs
    expect(seq[3]).toMatch(new RegExp(`^${r1 > 0 ? '\\+' : '−'}${formatDuration(Math.abs(r1)).replace('.', '\\.')} \\(.\\d+ %\\)$`))
    expect(good.find('[data-test=cm-refusal]').exists()).toBe(false)

    const poor = panel(sweepResult({ runId: 'poor', poor: true }))
    const refusals = poor.findAll('[data-test=cm-refusal]').map((c) => c.text())
    expect(refusals).toHaveLength(6)
    expect(refusals[0]).toMatch(/^⚠ Not used to predict: the line fits poorly \(R² 0\.\d\d < 0\.9\)/)
    // sequential still fits, but the refused options measured faster than it: no pick, and the card says why
    expect(poor.find('[data-test=advice-pick]').exists()).toBe(false)
    expect(poor.get('[data-test=advice-refusal]').text()).toMatch(/measured faster than sequential at N = \d+ .* but its fit cannot be trusted/)
  })
})

describe('a model set (one N, which cannot be swept)', () => {
  it('is advised at its own N from what was measured, and can be verified', () => {
    const w = panel(setResult({ runId: 'set-advice' }))
    expect(w.find('[data-test=advice-needs-sweep]').exists()).toBe(false)
    expect(w.get('.advice-for').text()).toBe('For the run’s model set, 8 models at 2,000 rows:')
    expect(w.get('[data-test=advice-pick]').text()).toMatch(/^batched, W=2 measured .+ \(repeats .+\)$/)
    expect(w.get('[data-test=advice-next]').text()).toMatch(/^Next best: sequential measured .+, 2\.0× slower/)
    expect(w.get('[data-test=advice-verify]').attributes('disabled')).toBeUndefined()
  })
})
