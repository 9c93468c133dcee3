import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { RunResult } from '@shared/contract/result'
import App from '../App.vue'
import { setBridge } from '../bridge'
import { useConfigStore } from '../stores/config'
import { useRunStore } from '../stores/run'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { scriptedRun } from '@shared/testing/fixtures'

let service: FakeService
function setup() {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(App, { global: { plugins: [pinia] }, attachTo: document.body })
}
function resultOf(runId: string, scale = 1): RunResult {
  const r = (scriptedRun({ runId }).at(-1) as { result: RunResult }).result
  return { ...r, runId, summary: r.summary.map((s) => ({ ...s, medianMs: s.medianMs * scale })) }
}
beforeEach(() => {
  localStorage.clear()
  service = new FakeService()
  setBridge(fakeBridge(service))
  service.runs = [
    {
      runId: 'r-a',
      status: 'ok',
      startedAt: '2026-01-02T00:00:00Z',
      preset: 'smoke',
      backend: 'wasm',
      device: 'cpu',
      sizes: [2000],
      models: [4],
      bestSpeedup: 2,
      tags: ['laptop'],
    },
    {
      runId: 'r-b',
      status: 'ok',
      startedAt: '2026-01-03T00:00:00Z',
      preset: 'quick',
      backend: 'webgpu',
      device: 'H200',
      sizes: [5000],
      models: [16],
      bestSpeedup: 7,
      model: 'GBDT · 100 rounds, depth 6, eta 0.1',
    },
  ]
  service.results.set('r-a', resultOf('r-a'))
  service.results.set('r-b', resultOf('r-b', 0.5))
})
afterEach(() => {
  useRunStore().disconnect()
  setBridge(null)
  document.body.innerHTML = ''
})

async function toHistory(w: ReturnType<typeof setup>) {
  await flushPromises()
  await w.get('[data-test=nav-history]').trigger('click')
  await flushPromises()
}

describe('History view', () => {
  it('filters and sorts the list', async () => {
    const w = setup()
    await toHistory(w)
    const ids = () => w.findAll('[data-test=history-table] tbody tr').map((tr) => tr.attributes('data-test'))
    expect(ids()).toEqual(['history-r-b', 'history-r-a'])
    await w.get('[data-test=history-filter]').setValue('laptop')
    expect(ids()).toEqual(['history-r-a'])
    await w.get('[data-test=history-filter]').setValue('')
    await w.get('[data-test=history-sort]').setValue('speedup')
    expect(ids()).toEqual(['history-r-b', 'history-r-a'])
    w.unmount()
  })

  it('compares two runs with Δ% per measurement', async () => {
    const w = setup()
    await toHistory(w)
    await w.get('[data-test=pick-r-a]').setValue(true)
    await w.get('[data-test=pick-r-b]').setValue(true)
    await w.get('[data-test=compare]').trigger('click')
    await flushPromises()
    const table = w.get('[data-test=compare-table]')
    const rows = table.findAll('tbody tr')
    expect(rows.length).toBe(service.results.get('r-a')!.summary.length)
    for (const r of rows) expect(r.text()).toContain('−50.0%')
    // each run names its model family and parameters
    const model = w
      .get('[data-test=compare-model]')
      .findAll('td')
      .map((td) => td.text())
    expect(model).toEqual(['MLP · 100→64→1, Adam lr 0.01, batch 512, 2 epochs', 'MLP · 100→64→1, Adam lr 0.01, batch 512, 2 epochs'])
    await w.get('[data-test=close-compare]').trigger('click')
    expect(w.find('[data-test=history-table]').exists()).toBe(true)
    w.unmount()
  })

  it('opens a run: rename, tag, export (download in the browser), Save PDF, run again, delete', async () => {
    const w = setup()
    await toHistory(w)
    await w.get('[data-test=history-r-a] button').trigger('click')
    await flushPromises()
    expect(w.find('[data-test=run-report]').exists()).toBe(true)
    expect(w.get('[data-test=run-model]').text()).toBe('Model: MLP · 100→64→1, Adam lr 0.01, batch 512, 2 epochs')
    expect(w.get('[data-test=run-report] [data-test=rate-header]').text()).toBe('GFLOP/s')

    await w.get('[data-test=run-name]').setValue('baseline')
    await (w.get('[data-test=run-name]').element as HTMLInputElement).form!.dispatchEvent(new Event('submit'))
    await flushPromises()
    expect(service.callsTo('renameRun')).toEqual([{ runId: 'r-a', name: 'baseline' }])
    await w.get('[data-test=run-tags]').setValue('wasm, laptop, wasm')
    await (w.get('[data-test=run-tags]').element as HTMLInputElement).form!.dispatchEvent(new Event('submit'))
    await flushPromises()
    expect(service.callsTo('tagRun')).toEqual([{ runId: 'r-a', tags: ['wasm', 'laptop'] }])

    const createObjectURL = vi.fn(() => 'blob:x')
    Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() })
    await w.get('[data-test=export-csv]').trigger('click')
    await flushPromises()
    expect(service.callsTo('exportRun')).toEqual([{ runId: 'r-a', format: 'csv' }])
    expect(createObjectURL).toHaveBeenCalled()
    expect(w.get('[data-test=action-message]').text()).toBe('Downloaded trainpool-baseline-r-a.csv')

    await w.get('[data-test=save-pdf]').trigger('click')
    await flushPromises()
    expect(service.callsTo('reportPdf')).toEqual([{ runId: 'r-a' }])

    await w.get('[data-test=delete]').trigger('click')
    await w.get('[data-test=confirm-delete]').trigger('click')
    await flushPromises()
    expect(service.callsTo('deleteRun')).toEqual([{ runId: 'r-a' }])
    expect(w.find('[data-test=history-table]').exists()).toBe(true)
    w.unmount()
  })

  it('"run again" loads the run\'s config into the form and shows the Run view', async () => {
    const w = setup()
    await toHistory(w)
    await w.get('[data-test=history-r-b] button').trigger('click')
    await flushPromises()
    await w.get('[data-test=run-again]').trigger('click')
    await flushPromises()
    expect(w.get('[data-test=nav-run]').attributes('aria-current')).toBe('page')
    expect(useConfigStore().draft.sizes).toEqual(service.results.get('r-b')!.config.sizes)
    w.unmount()
  })

  it("the menu's Save Report… prints the newest stored run when none is open", async () => {
    const bridge = fakeBridge(service, { menu: true })
    setBridge(bridge)
    service.respond('reportPdf', ({ runId }) => ({ fileName: `${runId}.pdf`, sizeBytes: 10, savedPath: `/home/u/${runId}.pdf` }))
    const w = setup()
    await flushPromises()
    bridge.sendMenuCommand('save-report')
    await flushPromises()
    expect(service.callsTo('reportPdf')).toEqual([{ runId: 'r-b' }])
    expect(w.get('[data-test=app-action-status]').text()).toBe('Saved PDF report /home/u/r-b.pdf')
    w.unmount()
  })

  it('the backend cell keeps backend and device apart (backend bold, device on its own line)', async () => {
    const w = setup()
    await toHistory(w)
    const cell = w.get('[data-test=history-r-b] [data-test=history-backend]')
    expect(cell.get('strong').text()).toBe('webgpu')
    expect(cell.get('.device').text()).toBe('H200')
    expect(cell.get('.device').attributes('title')).toBe('H200')
    w.unmount()
  })

  it("names each run's model family and parameters", async () => {
    const w = setup()
    await toHistory(w)
    expect(w.get('[data-test=history-r-b] [data-test=history-model]').text()).toBe('GBDT · 100 rounds, depth 6, eta 0.1')
    expect(w.find('[data-test=history-r-a] [data-test=history-model]').exists()).toBe(false)
    w.unmount()
  })

  it('an opened run shows its stored telemetry (GPU busy line), and none when the run has no telemetry', async () => {
    const withTelemetry: RunResult = {
      ...resultOf('r-b', 0.5),
      telemetry: {
        intervalMs: 1000,
        maxSamples: 3600,
        gpu: { state: 'ok', message: 'nvidia-smi: 1 GPU' },
        samples: (['sequential', 'batched'] as const).map((strategy, i) => ({
          t: i * 1000,
          gpus: [
            {
              index: 0,
              name: 'NVIDIA H200',
              util: strategy === 'batched' ? 95 : 30,
              memUsedMiB: 1000,
              memTotalMiB: 143771,
              tempC: 50,
              powerW: 300,
              powerLimitW: 700,
            },
          ],
          workers: [{ pid: 11, cpuPercent: 99, rssBytes: 2 ** 28 }],
          index: i,
          strategy,
          workerCount: 1,
          phase: 'measuring' as const,
        })),
      },
    }
    service.results.set('r-b', withTelemetry)
    const w = setup()
    await toHistory(w)
    await w.get('[data-test=history-r-b] button').trigger('click')
    await flushPromises()
    expect(w.get('[data-test=run-report] [data-test=gpu-busy]').text()).toBe('GPU busy 30 % in sequential, 95 % in batched')
    await w.get('[data-test=back]').trigger('click')
    await flushPromises()
    await w.get('[data-test=history-r-a] button').trigger('click')
    await flushPromises()
    expect(w.find('[data-test=run-report]').exists()).toBe(true)
    expect(w.find('[data-test=telemetry]').exists()).toBe(false)
    w.unmount()
  })
})
