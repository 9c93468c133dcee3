// The config panel's model set: several values typed into a field that can vary make a grid, with
// seeds and folds boxes; the models box becomes the set's N (read-only), the sweep is off, the
// estimate counts the set, and each bad input is said under its box; Run sends the set.
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

describe('ConfigPanel: model set', () => {
  it('builds a trees grid × seeds × folds; N is the product and Run sends the set', async () => {
    const w = setup()
    const cfg = useConfigStore()
    await w.get('[data-test=family]').setValue('gbdt')
    await w.get('[data-test=model-eta]').setValue('0.1, 0.3')
    await w.get('[data-test=model-maxDepth]').setValue('3, 5')
    await w.get('[data-test=set-seeds]').setValue('2')
    expect(cfg.draft.set).toEqual({ grid: { eta: [0.1, 0.3], maxDepth: [3, 5] }, seeds: 2, folds: null })
    expect(w.get<HTMLInputElement>('[data-test=models]').element.value).toBe('8')
    expect(w.get<HTMLInputElement>('[data-test=models]').element.readOnly).toBe(true)
    expect(w.get<HTMLInputElement>('[data-test=sweep-models]').element.disabled).toBe(true)
    expect(w.get('[data-test=set-summary]').text()).toBe('Model set: max-depth 3,5 × eta 0.1,0.3 · 2 seeds → 8 models')
    await w.get('[data-test=set-folds]').setValue('3')
    expect(w.get<HTMLInputElement>('[data-test=models]').element.value).toBe('24')
    await w.get('[data-test=workers]').setValue('2')
    expect(cfg.issues).toEqual([])
    expect(cfg.estimate?.work).toBeGreaterThan(0)
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')[0].config).toMatchObject({
      models: [24],
      set: { grid: { eta: [0.1, 0.3], maxDepth: [3, 5] }, seeds: 2, folds: 3 },
      model: { eta: 0.1, maxDepth: 3 },
    })
  })

  it('an MLP grid over hidden layers takes whole lists, separated by /', async () => {
    const w = setup()
    await w.get('[data-test=model-hidden]').setValue('32 / 64, 32')
    expect(useConfigStore().draft.set?.grid).toEqual({ hidden: [[32], [64, 32]] })
    expect(w.get<HTMLInputElement>('[data-test=models]').element.value).toBe('2')
  })

  it('says each bad input under its box, and nothing starts', async () => {
    const w = setup()
    await w.get('[data-test=family]').setValue('gbdt')
    await w.get('[data-test=model-eta]').setValue('0.1, 0.1')
    expect(w.get('[data-test=model-field-eta]').text()).toMatch(/Learning rate \(eta\) lists 0.1 twice/)
    await w.get('[data-test=model-eta]').setValue('0.1, x')
    expect(w.get('[data-test=model-field-eta]').text()).toMatch(/Learning rate \(eta\): "x" is not a number; enter a number above 0 and at most 1/)
    await w.get('[data-test=model-eta]').setValue('0.1')
    await w.get('[data-test=model-baseScore]').setValue('0.1, 0.5')
    expect(w.get('[data-test=model-field-baseScore]').text()).toMatch(/Base score: "0.1, 0.5" is not a number/)
    await w.get('[data-test=model-baseScore]').setValue('0.5')
    await w.get('[data-test=set-folds]').setValue('1')
    expect(w.get('[data-test=model-set]').text()).toMatch(/Cross-validation folds must be an integer from 2 to 10/)
    await w.get('[data-test=set-folds]').setValue('')
    await w.get('[data-test=set-seeds]').setValue('0')
    expect(w.get('[data-test=model-set]').text()).toMatch(/Seeds per configuration must be an integer from 1 to 100/)
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')).toEqual([])
    // back to one seed, no grid: today's run, no set
    await w.get('[data-test=set-seeds]').setValue('1')
    expect(useConfigStore().draft.set).toBeUndefined()
  })

  it('a repeated value marks its box invalid and says what is accepted', async () => {
    const w = setup()
    await w.get('[data-test=family]').setValue('gbdt')
    await w.get('[data-test=model-eta]').setValue('0.1, 0.1')
    expect(w.get('[data-test=model-eta]').attributes('aria-invalid')).toBe('true')
    expect(w.get('#err-model-eta').text()).toBe('Learning rate (eta) lists 0.1 twice; accepted: different values, each once (up to 16)')
  })

  it('an empty value between commas is refused under its box, not dropped', async () => {
    const w = setup()
    await w.get('[data-test=model-lr]').setValue('0.1,,0.3')
    expect(w.get('[data-test=model-lr]').attributes('aria-invalid')).toBe('true')
    expect(w.get('#err-model-lr').text()).toBe('Learning rate: value 2 is empty; enter a number from 0.000001 to 1')
    expect(w.get<HTMLButtonElement>('[data-test=run]').element.disabled).toBe(true)
  })

  it("the MLP's help says every field can vary; the trees' names the one that cannot", async () => {
    const w = setup()
    expect(w.get('[data-test=set-help]').text()).toMatch(/; every field above can take several values\.$/)
    await w.get('[data-test=family]').setValue('gbdt')
    expect(w.get('[data-test=set-help]').text()).toMatch(/; Base score takes one value\.$/)
  })

  it('the count of fields to fix matches the messages shown, even for a field no box shows', async () => {
    const w = setup()
    const cfg = useConfigStore()
    // a stored draft from elsewhere: an MLP with a trees grid (no box of the MLP shows eta or max depth)
    cfg.replace({ ...cfg.draft, set: { grid: { eta: [0.1, 0.3], maxDepth: [3, 5] }, seeds: 2, folds: null } })
    await flushPromises()
    const shown = w.findAll('.field-error li').map((li) => li.text())
    expect(w.get('[data-test=invalid-hint]').text()).toBe(`${shown.length} fields to fix`)
    expect(shown.length).toBe(cfg.issues.length)
    expect(w.get('#err-other').text()).toMatch(/eta cannot vary in a neural network \(MLP\) grid/)
  })
})
