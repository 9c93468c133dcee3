// The backend select follows the model family: auto and the backends the family lists, so the
// user's own XGBoost (`xgboost`) is offered for trees when the capabilities report it, and never for the MLP.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, expect, it } from 'vitest'
import { setBridge } from '../bridge'
import { presetConfig } from '@shared/contract/config'
import { expandPlan } from '@shared/plan'
import { CAPABILITIES } from '@shared/testing/fixtures'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useConfigStore } from '../stores/config'
import { restoreDraft, STORAGE_KEY } from '../stores/draft/persistence'
import ConfigPanel from './ConfigPanel.vue'

afterEach(() => setBridge(null))

async function setup(xgboost: { available: boolean; detail: string }) {
  localStorage.clear()
  setBridge(fakeBridge(new FakeService({ capabilities: { backends: [...CAPABILITIES.backends, { name: 'xgboost', gpu: false, ...xgboost }] } })))
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(ConfigPanel, { global: { plugins: [pinia] } })
  await useCapabilitiesStore().load() // App loads them at start
  await flushPromises()
  return w
}

const options = (w: Awaited<ReturnType<typeof setup>>) => w.findAll('[data-test=backend] option').map((o) => (o.element as HTMLOptionElement).value)

it('trees offer auto and their backends, xgboost among them with its library; the MLP does not offer xgboost', async () => {
  const w = await setup({ available: true, detail: 'AMD EPYC (2 cores), XGBoost 1.7.4 (CPU build) from /usr/lib/x86_64-linux-gnu/libxgboost.so.0' })
  expect(options(w)).toEqual(['auto', 'tensorflow', 'webgpu', 'onnxruntime', 'wasm', 'cpu'])
  // each family's own auto: the capabilities announce webgpu for the MLP and the CPU engine for trees
  const autoLabel = () => w.get('[data-test=backend] option[value=auto]').text()
  expect(autoLabel()).toMatch(/^auto → webgpu/)
  await w.get('[data-test=family]').setValue('gbdt')
  // the family's backends in its own order
  expect(options(w)).toEqual(['auto', 'cpu', 'webgpu', 'xgboost'])
  expect(autoLabel()).toMatch(/^auto → cpu/)
  expect(options(w)).toContain('xgboost')
  await w.get('[data-test=backend]').setValue('xgboost')
  expect(w.get('[data-test=backend-detail]').text()).toMatch(/XGBoost 1\.7\.4 \(CPU build\) from \/usr\/lib/)
  // batched is refused on xgboost with the reason, until it is unticked
  expect(w.get('#err-strategies').text()).toMatch(/XGBoost trains one booster at a time/)
  await w.get('[data-test=strategy-batched]').setValue(false)
  expect(useConfigStore().config?.backend).toBe('xgboost')
})

it('an absent xgboost is listed for trees as unavailable, with how to get it', async () => {
  const w = await setup({ available: false, detail: 'no XGBoost library found (…); install it: `apt-get install libxgboost0`' })
  await w.get('[data-test=family]').setValue('gbdt')
  const opt = w.get('[data-test=backend] option[value=xgboost]')
  expect(opt.text()).toMatch(/xgboost \(unavailable\)/)
  expect(opt.attributes('title')).toMatch(/apt-get install libxgboost0/)
})

// ---- backends side by side (issue 25) ----

const compareBoxes = (w: Awaited<ReturnType<typeof setup>>) =>
  w.findAll('[data-test=compare-backends] input[type=checkbox]').map((i) => {
    const el = i.element as HTMLInputElement
    return {
      name: i.attributes('data-test')!.replace('compare-', ''),
      checked: el.checked,
      disabled: el.disabled,
      title: i.element.parentElement!.getAttribute('title'),
    }
  })

it('Compare backends: two ticked make the draft a list in the family order; one ticked is that backend alone; none is auto', async () => {
  const w = await setup({ available: false, detail: 'no XGBoost library found' })
  const cfg = useConfigStore()
  await w.get('[data-test=backend]').setValue('wasm')
  // the MLP's backends; the unavailable ones disabled, their reason as the title; the chosen backend ticked
  const boxes = compareBoxes(w)
  expect(boxes.map((b) => b.name)).toEqual(['tensorflow', 'webgpu', 'onnxruntime', 'wasm', 'cpu'])
  expect(boxes.find((b) => b.name === 'tensorflow')).toMatchObject({ disabled: true, checked: false, title: expect.stringMatching(/libcudnn/) })
  expect(boxes.find((b) => b.name === 'wasm')).toMatchObject({ disabled: false, checked: true })
  // tick cpu, then webgpu: the family's order, whatever the order ticked
  await w.get('[data-test=compare-cpu]').setValue(true)
  expect(cfg.draft.backend).toEqual(['wasm', 'cpu'])
  await w.get('[data-test=compare-webgpu]').setValue(true)
  expect(cfg.draft.backend).toEqual(['webgpu', 'wasm', 'cpu'])
  expect(cfg.valid).toBe(true)
  expect(cfg.config?.backend).toEqual(['webgpu', 'wasm', 'cpu'])
  expect(w.get('[data-test=compare-help]').text()).toBe('measures every strategy and W on webgpu, then wasm, then cpu, compared side by side')
  // the estimate counts every backend's measurements, its time at the first backend's speed
  expect(cfg.estimate?.measurements).toBe(3 * expandPlan({ ...cfg.config!, backend: 'wasm' }).length)
  expect(w.get('[data-test=estimate-basis]').text()).toMatch(/\(webgpu: first backend's speed for every backend, assumed speed\):/)
  // back to one, then none
  await w.get('[data-test=compare-webgpu]').setValue(false)
  await w.get('[data-test=compare-wasm]').setValue(false)
  expect(cfg.draft.backend).toBe('cpu')
  expect((w.get('[data-test=backend]').element as HTMLSelectElement).value).toBe('cpu')
  expect(w.get('[data-test=estimate-basis]').text()).not.toMatch(/first backend/)
  await w.get('[data-test=compare-cpu]').setValue(false)
  expect(cfg.draft.backend).toBe('auto')
})

it("a compared backend that is unavailable or not the family's has its error on its own box, and the draft is saved and restored as a list", async () => {
  const w = await setup({ available: true, detail: 'XGBoost 1.7.4' })
  const cfg = useConfigStore()
  cfg.draft.backend = ['wasm', 'tensorflow']
  await flushPromises()
  expect(cfg.valid).toBe(false)
  expect(cfg.issues).toContainEqual({ field: 'backend.1', message: expect.stringMatching(/^Backend tensorflow is not available here: libcudnn/) })
  expect(w.get('[data-test=compare-tensorflow]').attributes('aria-invalid')).toBe('true')
  expect((w.get('[data-test=compare-tensorflow]').element as HTMLInputElement).disabled).toBe(false) // ticked: it can be unticked
  expect(w.get('[data-test=compare-wasm]').attributes('aria-invalid')).toBeUndefined()
  expect(w.get('#err-backend').text()).toMatch(/tensorflow is not available here/)
  // trees cannot train on wasm: the schema's backend.0 lands on the wasm box
  await w.get('[data-test=family]').setValue('gbdt')
  cfg.draft.backend = ['wasm', 'cpu']
  await flushPromises()
  expect(cfg.issues.find((i) => i.field === 'backend.0')?.message).toMatch(/wasm cannot train/)
  expect(w.get('[data-test=compare-wasm]').attributes('aria-invalid')).toBe('true')
  // a valid list is persisted and restored
  cfg.draft.backend = ['cpu', 'xgboost']
  await w.get('[data-test=strategy-batched]').setValue(false)
  await flushPromises()
  expect(cfg.valid).toBe(true)
  expect(JSON.parse(localStorage.getItem(STORAGE_KEY)!).backend).toEqual(['cpu', 'xgboost'])
  expect(restoreDraft()?.backend).toEqual(['cpu', 'xgboost'])
})

it('an old draft with one backend still loads; Compare backends is not offered with fewer than two available', async () => {
  localStorage.clear()
  localStorage.setItem(STORAGE_KEY, JSON.stringify({ ...presetConfig('smoke'), backend: 'wasm' }))
  expect(restoreDraft()?.backend).toBe('wasm')
  setBridge(fakeBridge(new FakeService({ capabilities: { backends: CAPABILITIES.backends.map((b) => ({ ...b, available: b.name === 'wasm' })) } })))
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(ConfigPanel, { global: { plugins: [pinia] } })
  await useCapabilitiesStore().load()
  await flushPromises()
  expect(useConfigStore().draft.backend).toBe('wasm')
  expect(w.find('[data-test=compare-backends]').exists()).toBe(false)
})
