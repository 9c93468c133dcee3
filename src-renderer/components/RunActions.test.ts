// "Save best model" on a run that kept its trained models: the service's file is downloaded in the
// browser (Electron saves it through a dialog and says where); a run that kept none has no button.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { setResult } from '@shared/testing/model-set-fixtures'
import { setBridge } from '../bridge'
import RunActions from './RunActions.vue'

let service: FakeService
beforeEach(() => {
  setActivePinia(createPinia())
  service = new FakeService()
  setBridge(fakeBridge(service))
  Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:x'), revokeObjectURL: vi.fn() })
})
afterEach(() => setBridge(null))

describe('RunActions: Save best model', () => {
  it('downloads the best model of a run that kept its models', async () => {
    const run = {
      ...setResult({ runId: '20260101-120000-aaaaaa' }),
      keptModels: { size: 2000, strategy: 'sequential', workers: 1, count: 8, format: 'gbdt-trees' },
    }
    service.addRun(run)
    const w = mount(RunActions, { props: { run } })
    await w.get('[data-test=save-best-model]').trigger('click')
    await flushPromises()
    expect(service.callsTo('bestModel')).toEqual([{ runId: run.runId }])
    // the file names the model's configuration (the fake service's best is model 0)
    expect(w.get('[data-test=action-message]').text()).toBe(`Downloaded trainpool-${run.runId}-model-0-max-depth-3_eta-0.1.json`)
  })

  it('a run that kept no models offers none; a service refusal is said', async () => {
    const run = setResult({ runId: '20260101-120000-bbbbbb' })
    service.addRun(run)
    expect(mount(RunActions, { props: { run } }).find('[data-test=save-best-model]').exists()).toBe(false)
    const kept = { ...run, keptModels: { size: 2000, strategy: 'sequential', workers: 1, count: 8, format: 'mlp' } }
    service.addRun(run) // the service's copy kept none: it refuses
    const w = mount(RunActions, { props: { run: kept } })
    await w.get('[data-test=save-best-model]').trigger('click')
    await flushPromises()
    expect(w.get('[data-test=action-error]').text()).toMatch(/Save best model failed: run 20260101-120000-bbbbbb kept no trained models/)
  })
})
