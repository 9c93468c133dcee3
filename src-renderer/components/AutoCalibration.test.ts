// `auto` by calibration in the app (issue 32): before any calibration the backend picker says the
// first run will calibrate; Calibrate (beside the picker) says "Calibrating…" while the service times
// the backends, then auto names the new pick with its reason and the estimate says its speed is
// calibrated; the button waits while a run is live. A run's Environment card and its report say
// why auto ran where it did.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, expect, it } from 'vitest'
import type { FamilyCalibration } from '@shared/contract/calibration'
import type { RunResult } from '@shared/contract/result'
import { ENVIRONMENT, scriptedRun } from '@shared/testing/fixtures'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { setBridge } from '../bridge'
import ReportApp from '../report/ReportApp.vue'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useRunStore } from '../stores/run'
import ConfigPanel from './ConfigPanel.vue'
import EnvironmentCard from './EnvironmentCard.vue'

afterEach(() => setBridge(null))

async function setup(service = new FakeService()) {
  localStorage.clear()
  setBridge(fakeBridge(service))
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(ConfigPanel, { global: { plugins: [pinia] } })
  await useCapabilitiesStore().load()
  await flushPromises()
  return { w, service }
}

it('Calibrate says so while it runs, then auto names the calibrated pick with its reason', async () => {
  const { w, service } = await setup()
  expect(w.get('[data-test=backend-detail]').text()).toMatch(/not calibrated on this machine yet: the first run with auto \(or Calibrate\) times each backend/)
  expect(w.get('[data-test=estimate-basis]').text()).toMatch(/assumed speed/)
  let finish!: () => void
  const gate = new Promise<void>((resolve) => (finish = resolve))
  // held until the test opens the gate, then the fake's own calibration (on a twin with the same capabilities)
  service.respond('calibrate', async (request) => {
    await gate
    const twin = new FakeService({ capabilities: service.capabilitiesValue })
    const calibrated = await twin.calibrate(request)
    service.capabilitiesValue = twin.capabilitiesValue
    return calibrated
  })
  await w.get('[data-test=calibrate]').trigger('click')
  await flushPromises()
  expect(w.get('[data-test=calibrate]').text()).toBe('Calibrating…')
  expect(w.get('[data-test=calibrate]').attributes('disabled')).toBeDefined()
  expect(w.get('[data-test=calibrating]').text()).toMatch(/calibrating auto: timing each backend it may pick here/)
  finish()
  await flushPromises()
  expect(service.callsTo('calibrate')).toEqual([{ family: 'mlp' }])
  expect(w.find('[data-test=calibrating]').exists()).toBe(false)
  expect(w.get('[data-test=calibrate]').text()).toBe('Calibrate')
  // the fake times every backend at its assumed speed: auto is the fastest of those it may pick
  const picked = service.capabilitiesValue.calibration.families.mlp as FamilyCalibration
  expect(w.get('[data-test=backend] option[value=auto]').text()).toBe(`auto → ${picked.auto}`)
  expect(w.get('[data-test=backend-detail]').text()).toContain(picked.reason)
  expect(w.get('[data-test=calibration-table]').text()).toMatch(/one model \/ step[\s\S]*tensorflow[\s\S]*not available here/)
  expect(w.get('[data-test=estimate-basis]').text()).toMatch(/speed calibrated on this machine/)
})

it('Calibrate waits while a run is live, and says why the service refused', async () => {
  const { w, service } = await setup()
  service.fail('calibrate', { code: 'busy', message: 'a calibration of auto is timing the backends: wait a few seconds for it to finish' })
  await w.get('[data-test=calibrate]').trigger('click')
  await flushPromises()
  expect(w.get('[data-test=calibration-error]').text()).toMatch(/wait a few seconds/)
  await useRunStore().connect()
  service.play(scriptedRun({ models: 2, workers: [1] }).slice(0, 2))
  await flushPromises()
  expect(useRunStore().busy).toBe(true)
  expect(w.get('[data-test=calibrate]').attributes('disabled')).toBeDefined()
  expect(w.get('[data-test=calibrate]').attributes('title')).toMatch(/not while a run is live/)
})

it('a run with auto: the Environment card and the report say where it ran and why', () => {
  const auto = {
    backend: 'onnxruntime' as const,
    reason: 'auto → onnxruntime: a batched step of 50 models in 1.2 ms (16 workers × 4), against webgpu 4.6 ms (calibrated 2026-12-04)',
    calibratedAt: '2026-12-04T10:00:00.000Z',
  }
  const environment = { ...ENVIRONMENT, backend: 'onnxruntime' as const, auto }
  expect(mount(EnvironmentCard, { props: { environment, capabilities: null } }).text()).toContain(`Auto${auto.reason}`)
  const run = (scriptedRun({ models: 4, workers: [2] }).at(-1) as { result: RunResult }).result
  const report = mount(ReportApp, { props: { run: { ...run, environment } }, global: { stubs: { ReportChart: true } } })
  expect(report.text()).toContain(`Auto${auto.reason}`)
})
