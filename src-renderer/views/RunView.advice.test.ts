// The Run view's advice panel follows the run it advises: a finished sweep shows it; while its
// verification runs (the live view shows that run) and after, the panel stays on the source run and
// gains the check; a verification run opened on its own shows no advice of its own.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { adviseFrom, verificationConfig } from '@shared/advice'
import { expandPlan } from '@shared/plan'
import { sweepResult } from '@shared/testing/advice-fixtures'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { measurementFor, resultFor } from '@shared/testing/fixtures'
import { setBridge } from '../bridge'
import { useRunStore } from '../stores/run'
import RunView from './RunView.vue'

let service: FakeService
beforeEach(() => {
  localStorage.clear()
  service = new FakeService({ runId: 'verify-1' })
  setBridge(fakeBridge(service))
})
afterEach(() => {
  useRunStore().disconnect()
  setBridge(null)
})

describe('Run view: advice', () => {
  it('stays on the source run through its verification, then shows the check', async () => {
    const pinia = createPinia()
    setActivePinia(pinia)
    const source = sweepResult()
    service.addRun(source)
    const run = useRunStore()
    await run.connect()
    await run.showStored('sweep-1')
    const w = mount(RunView, { global: { plugins: [pinia] } })
    await flushPromises()
    expect(w.get('#advice-title').text()).toMatch(/from run sweep-1/)

    await w.get('[data-test=advice-verify]').trigger('click')
    await flushPromises()
    expect(run.runId).toBe('verify-1')
    expect(w.get('[data-test=live-run] [data-test=run-status]').text()).toBe('Running')
    expect(w.get('#advice-title').text()).toMatch(/from run sweep-1/)
    expect(w.find('[data-test=advice-verification]').exists()).toBe(true)

    const cfg = verificationConfig(source.config, adviseFrom(source, { models: 16, size: 2000 }))
    service.completeVerification(
      'verify-1',
      resultFor(
        cfg,
        expandPlan(cfg).map((k) => measurementFor(k, false, cfg)),
      ),
    )
    await flushPromises()
    expect(w.get('[data-test=live-run] [data-test=run-status]').text()).toBe('Finished')
    expect(w.get('#advice-title').text()).toMatch(/from run sweep-1/)
    expect(w.find('[data-test=advice-check] [data-test=advice-check-table]').exists()).toBe(true)
    w.unmount()
  })

  it('a verification run shown on its own has no advice panel', async () => {
    const pinia = createPinia()
    setActivePinia(pinia)
    const source = sweepResult()
    const cfg = verificationConfig(source.config, adviseFrom(source, { models: 16, size: 2000 }))
    service.addRun({
      ...resultFor(
        cfg,
        expandPlan(cfg).map((k) => measurementFor(k, false, cfg)),
        { runId: 'v-9' },
      ),
      verifies: 'sweep-1',
    })
    const run = useRunStore()
    await run.connect()
    await run.showStored('v-9')
    const w = mount(RunView, { global: { plugins: [pinia] } })
    await flushPromises()
    expect(w.find('[data-test=advice-panel]').exists()).toBe(false)
    w.unmount()
  })
})
