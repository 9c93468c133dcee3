import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { presetConfig } from '../src-main/contract/config'
import type { MenuCommand } from '../src-main/contract/channels'
import App from './App.vue'
import { setBridge } from './bridge'
import { useRunStore } from './stores/run'
import { fakeBridge, resultFor, scriptedRun, type FakeBridge } from './test/fixtures'

let bridge: FakeBridge
function setup() {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(App, { global: { plugins: [pinia] }, attachTo: document.body })
}
beforeEach(() => {
  localStorage.clear()
  bridge = fakeBridge()
  setBridge(bridge)
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
    expect(bridge.calls.map((c) => c.method)).toEqual(expect.arrayContaining(['capabilities', 'currentRun']))
    expect(w.get('[data-test=environment]').text()).toMatch(/AMD EPYC 9654/)
    for (const e of scriptedRun({ models: 4, workers: [2] })) bridge.emit(e)
    await flushPromises()
    expect(w.get('[data-test=run-status]').text()).toBe('Finished')
    expect(w.get('[data-test=verification]').text()).toContain('same work: 4/4 models per strategy')
    expect(w.get('[data-test=chart-time] figcaption').text()).toMatch(/webgpu on NVIDIA H200/)
    expect(w.get('[data-test=summary]').findAll('tbody tr')).toHaveLength(3)
    expect(w.get('[data-test=environment]').text()).toMatch(/NVIDIA H200/)
    w.unmount()
  })

  it('History lists runs; opening one shows the same charts and the badge; damaged runs show why', async () => {
    bridge.runs = [
      { runId: 'r-ok', status: 'ok', startedAt: '2026-01-01T00:00:00Z', preset: 'smoke', backend: 'webgpu', device: 'H200', sizes: [2000], models: [4], bestSpeedup: 3.2 },
      { runId: 'r-bad', status: 'damaged', startedAt: null, preset: null, backend: null, device: null, sizes: [], models: [], bestSpeedup: null, problem: 'result.json: invalid JSON' },
    ]
    const finished = scriptedRun({ runId: 'r-ok' }).at(-1) as { result: ReturnType<typeof resultFor> }
    bridge.results.set('r-ok', finished.result)
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
    let menu: ((c: MenuCommand) => void) | undefined
    bridge.onMenuCommand = (l) => {
      menu = l
      return () => (menu = undefined)
    }
    const w = setup()
    await flushPromises()
    menu!('history')
    await flushPromises()
    expect(w.find('[data-test=history-table]').exists() || w.text().includes('No runs yet')).toBe(true)
    menu!('run')
    await flushPromises()
    expect(bridge.calls.filter((c) => c.method === 'start')).toHaveLength(1)
    expect((bridge.calls.find((c) => c.method === 'start')!.args[0] as { sizes: number[] }).sizes).toEqual(
      presetConfig('smoke', { preset: 'custom', sizes: [10_000] }).sizes,
    )
    w.unmount()
    expect(menu).toBeUndefined()
  })
})
