// The config panel's search (issue 39): beside a model set of several configurations, a "Search"
// dropdown (grid / halving) with halving's factor and first rung, the rungs it will run said in
// words; an early-stopping box with a validation fraction when there are no folds. The refusals are
// the shared schema's (contract/halving.ts, contract/config.ts), shown as red boxes under their
// fields; the choice round-trips through the schema into Run's config and back from a stored draft.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { setBridge } from '../bridge'
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

/** a trees grid of 6 configurations × 3 folds, 20 rounds, on the CPU engine */
async function treesGrid(w: ReturnType<typeof setup>) {
  await w.get('[data-test=family]').setValue('gbdt')
  await w.get('[data-test=backend]').setValue('cpu')
  await w.get('[data-test=model-rounds]').setValue('20')
  await w.get('[data-test=model-eta]').setValue('0.1, 0.3')
  await w.get('[data-test=model-maxDepth]').setValue('2, 3, 4')
  await w.get('[data-test=set-folds]').setValue('3')
}

describe('ConfigPanel: search and early stopping', () => {
  it('offers halving beside a set of several configurations, says its rungs, and Run sends it', async () => {
    const w = setup()
    const cfg = useConfigStore()
    await w.get('[data-test=family]').setValue('gbdt')
    // one configuration: nothing to search
    expect(w.find('[data-test=search-method]').exists()).toBe(false)
    await treesGrid(w)
    expect(w.get<HTMLSelectElement>('[data-test=search-method]').element.value).toBe('grid')
    expect(w.find('[data-test=search-factor]').exists()).toBe(false)
    await w.get('[data-test=search-method]').setValue('halving')
    expect(cfg.draft.search).toEqual({ method: 'halving', factor: 3 })
    expect(w.get<HTMLInputElement>('[data-test=search-factor]').element.value).toBe('3')
    // the longest first rung within a third of the grid's rounds: 6 × 2 → 2 × 6 → 1 × 20 trains 34 of 120 (3 would train 41)
    expect(w.get<HTMLInputElement>('[data-test=search-min-rounds]').element.placeholder).toBe('auto (2)')
    expect(w.get('[data-test=search-rungs]').text()).toBe('Rungs: 6 configurations × 2 rounds → 2 × 6 rounds → 1 × 20 rounds')
    await w.get('[data-test=search-min-rounds]').setValue('6')
    expect(w.get('[data-test=search-rungs]').text()).toBe('Rungs: 6 configurations × 6 rounds → 2 × 18 rounds → 1 × 20 rounds')
    expect(cfg.issues).toEqual([])
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')[0].config).toMatchObject({ search: { method: 'halving', factor: 3, minRounds: 6 }, set: { folds: 3 } })
    // back to grid: the search leaves the config (a config without one is a grid)
    await w.get('[data-test=search-method]').setValue('grid')
    expect(cfg.draft.search).toBeUndefined()
    expect(w.find('[data-test=search-rungs]').exists()).toBe(false)
  })

  it("shows the schema's refusals as red boxes under their fields, and nothing starts", async () => {
    const w = setup()
    const cfg = useConfigStore()
    await treesGrid(w)
    await w.get('[data-test=search-method]').setValue('halving')
    await w.get('[data-test=search-factor]').setValue('1')
    expect(w.get('#err-search-factor').text()).toMatch(/Halving factor must be an integer from 2 to 10/)
    expect(w.get('[data-test=search-factor]').attributes('aria-invalid')).toBe('true')
    await w.get('[data-test=search-factor]').setValue('3')
    await w.get('[data-test=search-min-rounds]').setValue('30')
    expect(w.get('#err-search-min-rounds').text()).toBe(
      "First rung (rounds) 30 is above the model's 20 rounds; accepted: 1 to 20 (the last rung ends at the full rounds)",
    )
    await w.get('[data-test=search-min-rounds]').setValue('')
    // halving ranks on held-out rows: without folds or a validation fraction it is refused on the search
    await w.get('[data-test=set-folds]').setValue('')
    expect(w.get('#err-search-method').text()).toMatch(/ranks configurations by their validation metric on held-out rows, and this run holds none out/)
    // the validation fraction box appears without folds, and holds rows out
    await w.get('[data-test=validation]').setValue('0.2')
    expect(cfg.issues).toEqual([])
    // early stopping beside halving: refused, naming both
    await w.get('[data-test=early-stopping]').setValue('5')
    expect(w.get('#err-search-method').text()).toMatch(/no --early-stopping with --search halving/)
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')).toEqual([])
    // halving on one configuration: the dropdown stays while halving is asked, so its refusal shows
    await w.get('[data-test=early-stopping]').setValue('')
    await w.get('[data-test=model-eta]').setValue('0.1')
    await w.get('[data-test=model-maxDepth]').setValue('3')
    expect(w.get('#err-search-method').text()).toMatch(/ranks configurations and this run has 1/)
    expect(w.findAll('[data-test=invalid-hint]')).toHaveLength(1)
    // said under the dropdown, not again among the others at the end of the form
    expect(w.find('#err-other').exists() ? w.get('#err-other').text() : '').toBe('')
  })

  it('early stopping: patience with a validation fraction, refused without held-out rows, and restored from a saved draft', async () => {
    const w = setup()
    const cfg = useConfigStore()
    await w.get('[data-test=family]').setValue('gbdt')
    await w.get('[data-test=backend]').setValue('cpu')
    await w.get('[data-test=early-stopping]').setValue('4')
    expect(w.get('#err-early-stopping').text()).toMatch(/^Early stopping \(patience\) 4 watches each model's validation metric on held-out rows/)
    await w.get('[data-test=validation]').setValue('0.6')
    expect(w.get('#err-validation').text()).toMatch(/Validation fraction/)
    await w.get('[data-test=validation]').setValue('0.25')
    expect(cfg.issues).toEqual([])
    expect(cfg.config).toMatchObject({ earlyStopping: 4, validation: 0.25 })
    // a validation fraction beside folds: the box stays to say so
    await w.get('[data-test=set-folds]').setValue('3')
    expect(w.get('#err-validation').text()).toMatch(/accepted: folds or validation, not both/)
    await w.get('[data-test=validation]').setValue('')
    expect(w.find('[data-test=validation]').exists()).toBe(false)
    expect(cfg.issues).toEqual([])
    // a valid draft is kept: a new page shows the same boxes
    await flushPromises()
    w.unmount()
    const again = setup()
    expect(useConfigStore().draft).toMatchObject({ earlyStopping: 4, set: { folds: 3 } })
    expect(again.get<HTMLInputElement>('[data-test=early-stopping]').element.value).toBe('4')
    // a preset replaces the workload: early stopping goes with it
    await again.get('[data-test=preset]').setValue('smoke')
    expect(useConfigStore().draft.earlyStopping).toBeUndefined()
    expect(again.get<HTMLInputElement>('[data-test=early-stopping]').element.value).toBe('')
  })
})
