import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import type { MlpParams } from '@shared/families'
import App from './App.vue'
import { setBridge } from './bridge'
import { useRunStore } from './stores/run'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { resultFor, scriptedRun } from '@shared/testing/fixtures'

let service: FakeService
function setup() {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(App, { global: { plugins: [pinia] }, attachTo: document.body })
}
beforeEach(() => {
  localStorage.clear()
  service = new FakeService()
  setBridge(fakeBridge(service))
})
afterEach(() => {
  useRunStore().disconnect()
  setBridge(null)
  document.body.innerHTML = ''
})

describe('App', () => {
  it('without any bridge says so instead of crashing', async () => {
    setBridge(null)
    const w = setup()
    await flushPromises()
    expect(w.get('[data-test=fatal]').text()).toMatch(/not connected/)
    w.unmount()
  })

  it('loads capabilities, runs the whole scripted stream and shows result, verification and environment', async () => {
    const w = setup()
    await flushPromises()
    expect(service.calls.map((c) => c.method)).toEqual(expect.arrayContaining(['capabilities', 'currentRun']))
    expect(w.get('[data-test=environment]').text()).toMatch(/AMD EPYC 9654/)
    service.play(scriptedRun({ models: 4, workers: [2] }))
    await flushPromises()
    expect(w.get('[data-test=run-status]').text()).toBe('Finished')
    expect(w.get('[data-test=verification]').text()).toContain('same work: 4/4 models per strategy')
    expect(w.get('[data-test=chart-time] figcaption').text()).toMatch(/webgpu on NVIDIA H200/)
    expect(w.get('[data-test=summary]').findAll('tbody tr')).toHaveLength(3)
    expect(w.get('[data-test=environment]').text()).toMatch(/NVIDIA H200/)
    w.unmount()
  })

  it("a tab that joins mid-run shows the running run's config in the config panel, with a note", async () => {
    const events = scriptedRun({ runId: 'r-live', sizes: [3000, 6000], models: 6, workers: [3], epochs: 2 })
    const started = events[0] as Extract<(typeof events)[number], { type: 'run-started' }>
    const firstProgress = events.findIndex((e) => e.type === 'progress')
    service.current = { runId: 'r-live', events: events.slice(0, firstProgress + 1) }
    const w = setup()
    await flushPromises()
    expect(w.get('[data-test=run-status]').text()).toBe('Running')
    const value = (sel: string) => (w.get(sel).element as HTMLInputElement).value
    expect(value('[data-test=size-0]')).toBe('3000')
    expect(value('[data-test=size-1]')).toBe('6000')
    expect(value('[data-test=models]')).toBe('6')
    expect(value('[data-test=workers]')).toBe('3')
    expect(value('[data-test=model-epochs]')).toBe(String((started.config.model as MlpParams).epochs))
    expect(value('[data-test=backend]')).toBe(started.config.backend)
    expect(w.get('[data-test=joined-config]').text()).toMatch(/configuration of the run in progress/)
    expect(w.get('[data-test=run]').attributes('aria-disabled')).toBe('true')
    // the note goes once the run ends; the config stays for a re-run
    service.play(events.slice(firstProgress + 1))
    await flushPromises()
    expect(w.find('[data-test=joined-config]').exists()).toBe(false)
    expect(value('[data-test=models]')).toBe('6')
    w.unmount()
  })

  it('a run started from this tab keeps the draft as is and shows no joined note', async () => {
    const w = setup()
    await flushPromises()
    await w.get('[data-test=models]').setValue('4')
    await w.get('[data-test=workers]').setValue('2')
    service.respond('start', () => {
      service.play(scriptedRun({ runId: 'mine', models: 4, workers: [2] }).slice(0, 3))
      return { runId: 'mine' }
    })
    await w.get('[data-test=run]').trigger('click')
    await flushPromises()
    expect(useRunStore().runId).toBe('mine')
    expect(w.find('[data-test=joined-config]').exists()).toBe(false)
    w.unmount()
  })

  it('History lists runs; opening one shows the same charts and the badge; damaged runs show why', async () => {
    service.runs = [
      {
        runId: 'r-ok',
        status: 'ok',
        startedAt: '2026-01-01T00:00:00Z',
        preset: 'smoke',
        backend: 'webgpu',
        device: 'H200',
        sizes: [2000],
        models: [4],
        bestSpeedup: 3.2,
      },
      {
        runId: 'r-bad',
        status: 'damaged',
        startedAt: null,
        preset: null,
        backend: null,
        device: null,
        sizes: [],
        models: [],
        bestSpeedup: null,
        problem: 'result.json: invalid JSON',
      },
    ]
    const finished = scriptedRun({ runId: 'r-ok' }).at(-1) as { result: ReturnType<typeof resultFor> }
    service.results.set('r-ok', finished.result)
    const w = setup()
    await flushPromises()
    await w.get('[data-test=nav-history]').trigger('click')
    await flushPromises()
    expect(w.get('[data-test=history-r-bad]').text()).toMatch(/damaged.*invalid JSON/)
    expect(w.get('[data-test=history-r-ok]').text()).toMatch(/3\.20×/)
    await w.get('[data-test=history-r-ok] button').trigger('click')
    await flushPromises()
    const report = w.get('[data-test=run-report]')
    expect(report.get('[data-test=verification]').classes()).toContain('verify-ok')
    expect(report.findAll('figure.chart-panel').length).toBeGreaterThanOrEqual(2)
    await w.get('[data-test=back]').trigger('click')
    expect(w.find('[data-test=history-table]').exists()).toBe(true)
    w.unmount()
  })

  it('menu commands switch views and start a run', async () => {
    const bridge = fakeBridge(service, { menu: true })
    setBridge(bridge)
    const w = setup()
    await flushPromises()
    expect(bridge.menuListenerCount()).toBe(1)
    bridge.sendMenuCommand('history')
    await flushPromises()
    expect(w.find('[data-test=history-table]').exists() || w.text().includes('No runs yet')).toBe(true)
    bridge.sendMenuCommand('run')
    await flushPromises()
    expect(service.callsTo('start')).toHaveLength(1)
    expect(service.callsTo('start')[0].config.sizes).toEqual(presetConfig('smoke', { preset: 'custom', sizes: [10_000] }).sizes)
    w.unmount()
    expect(bridge.menuListenerCount()).toBe(0)
  })
})
