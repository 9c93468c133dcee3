// The backend select follows the model family: auto and the backends the family lists, so the
// user's own XGBoost (`xgboost`) is offered for trees when the capabilities report it, and never for the MLP.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, expect, it } from 'vitest'
import { setBridge } from '../bridge'
import { CAPABILITIES } from '@shared/testing/fixtures'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useConfigStore } from '../stores/config'
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
