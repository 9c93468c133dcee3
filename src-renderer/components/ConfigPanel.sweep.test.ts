// The config panel's "sweep model counts": the models box holds one N and the run measures
// N = 1, 2, 4, … up to N (plan.ts modelSweep, the CLI's --sweep models), so the advice has fits.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { expandPlan, modelSweep } from '@shared/plan'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { setBridge } from '../bridge'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useConfigStore } from '../stores/config'
import ConfigPanel from './ConfigPanel.vue'

let service: FakeService
function setup() {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(ConfigPanel, { global: { plugins: [pinia] } })
}
beforeEach(() => {
  localStorage.clear()
  service = new FakeService()
  setBridge(fakeBridge(service))
})
afterEach(() => setBridge(null))

describe('ConfigPanel: sweep model counts', () => {
  it('turns the models box into "up to N" and the run into a models sweep', async () => {
    const w = setup()
    await w.get('[data-test=models]').setValue('16')
    expect(w.find('[data-test=sweep-counts]').exists()).toBe(false)
    await w.get('[data-test=sweep-models]').setValue(true)
    expect(w.get('label[for=config-models]').text()).toBe('Models up to (N)')
    expect(w.get<HTMLInputElement>('[data-test=models]').element.value).toBe('16')
    expect(w.get('[data-test=sweep-counts]').text()).toBe("measures N = 1, 2, 4, 8, 16 (for the advice's fits)")
    const cfg = useConfigStore()
    expect(cfg.config?.models).toEqual(modelSweep(16))
    // typing another N re-expands it; W larger than a small N is skipped there, not refused
    await w.get('[data-test=models]').setValue('6')
    await w.get('[data-test=workers]').setValue('1, 2')
    expect(cfg.config?.models).toEqual([1, 2, 4, 6])
    expect(cfg.valid).toBe(true)
    const plan = expandPlan(cfg.config!)
    expect(plan.filter((k) => k.models === 1 && k.workers === 2)).toEqual([])
    expect(new Set(plan.map((k) => k.models))).toEqual(new Set([1, 2, 4, 6]))

    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')[0].config.models).toEqual([1, 2, 4, 6])
  })

  it('a bad N names the field and its range; off goes back to that one N', async () => {
    const w = setup()
    await w.get('[data-test=sweep-models]').setValue(true)
    await w.get('[data-test=models]').setValue('0')
    expect(w.get('#err-models').text()).toMatch(/^Models \(N\) must be an integer from 1 to 1,?000/)
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
    await w.get('[data-test=models]').setValue('8')
    await w.get('[data-test=sweep-models]').setValue(false)
    expect(w.get('label[for=config-models]').text()).toBe('Models (N)')
    expect(useConfigStore().config?.models).toEqual([8])
  })

  it("a config with a sweep's counts (run again, a restored draft) shows as a sweep", async () => {
    const w = setup()
    useConfigStore().replace(presetConfig('smoke', { models: [1, 2, 4, 8], workers: [1, 2] }))
    await flushPromises()
    expect(w.get<HTMLInputElement>('[data-test=sweep-models]').element.checked).toBe(true)
    expect(w.get<HTMLInputElement>('[data-test=models]').element.value).toBe('8')
    useConfigStore().replace(presetConfig('smoke', { models: [2, 4] }))
    await flushPromises()
    expect(w.get<HTMLInputElement>('[data-test=sweep-models]').element.checked).toBe(false)
    expect(w.get<HTMLInputElement>('[data-test=models]').element.value).toBe('2, 4')
  })
})

describe('ConfigPanel: measurements too short for a sweep (issue 25)', () => {
  it('says so under the estimate, with what happens and what to change; a single model count does not', async () => {
    const w = setup()
    await useCapabilitiesStore().load() // App loads them at start: the estimate's time needs the backend
    await flushPromises()
    expect(w.find('[data-test=short-measurements]').exists()).toBe(false)
    await w.get('[data-test=models]').setValue('16')
    await w.get('[data-test=sweep-models]').setValue(true)
    await flushPromises()
    expect(w.get('[data-test=short-measurements]').text()).toMatch(
      /measurements are estimated under 250 ms: each runs again until .*more rows or more epochs\/rounds/,
    )
  })
})
