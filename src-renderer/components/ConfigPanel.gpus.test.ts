// The config panel's GPU picker (shown when the capabilities list NVIDIA GPUs): pin the workers to
// every GPU, to some, or to none; the run sends the choice; the live lanes say each worker's GPU.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { scriptedRun } from '@shared/testing/fixtures'
import { setBridge } from '../bridge'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useRunStore } from '../stores/run'
import ConfigPanel from './ConfigPanel.vue'
import LiveRun from './LiveRun.vue'

const GPUS = [0, 1].map((index) => ({ index, uuid: `GPU-${index}`, name: 'NVIDIA H200', memoryMiB: 143771 }))
let service: FakeService
beforeEach(() => {
  localStorage.clear()
  setActivePinia(createPinia())
  service = new FakeService({ capabilities: { gpus: GPUS } })
  setBridge(fakeBridge(service))
})
afterEach(() => setBridge(null))

describe('ConfigPanel: GPUs', () => {
  it('pins the workers to every GPU, some, or none, and the run sends it', async () => {
    await useCapabilitiesStore().load()
    const w = mount(ConfigPanel)
    await flushPromises()
    expect(w.find('[data-test=gpu-1]').exists()).toBe(false)
    await w.get('[data-test=gpus-pin]').setValue(true)
    expect(w.get('[data-test=gpus-summary]').text()).toBe('the workers take GPUs 0, 1 in turn')
    await w.get('[data-test=gpu-0]').setValue(false)
    expect(w.get('[data-test=gpus-summary]').text()).toBe('every worker on GPU 1')
    await w.get('[data-test=gpu-1]').setValue(false)
    expect(w.get('[data-test=gpus-summary]').text()).toBe('no GPU: every worker sees none')
    await w.get('[data-test=gpu-1]').setValue(true)
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')[0].config).toMatchObject({ gpus: [1] })
  })

  it('a machine without NVIDIA GPUs shows no picker', async () => {
    service.capabilitiesValue = { ...service.capabilitiesValue, gpus: [] }
    await useCapabilitiesStore().load()
    const w = mount(ConfigPanel)
    await flushPromises()
    expect(w.find('[data-test=gpu-picker]').exists()).toBe(false)
  })

  it("a live lane says its worker's GPU", async () => {
    const run = useRunStore()
    await run.connect()
    const events = scriptedRun()
    const progress = events.find((e) => e.type === 'progress')!
    if (progress.type === 'progress') progress.lanes = progress.lanes.map((l) => ({ ...l, gpu: `GPU ${l.worker} · NVIDIA H200` }))
    service.play(events.slice(0, events.indexOf(progress) + 1))
    await flushPromises()
    const w = mount(LiveRun)
    expect(w.findAll('[data-test=lane-gpu]').map((e) => e.text())[0]).toBe('· GPU 0 · NVIDIA H200')
    run.disconnect()
  })
})
