import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import type { RunResult } from '@shared/contract/result'
import { estimateRun } from '@shared/estimate'
import { expandPlan } from '@shared/plan'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { measurementFor, resultFor } from '@shared/testing/fixtures'
import { setBridge } from '../bridge'
import ConfigPanel from '../components/ConfigPanel.vue'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useConfigStore } from '../stores/config'
import { useRunStore } from '../stores/run'
import { calibrationFrom } from './calibration'

const config = presetConfig('quick', { backend: 'wasm' })
/** a finished quick run on wasm that took `factor` times what the estimator assumes */
function tookTimes(factor: number, status: RunResult['status'] = 'ok'): RunResult {
  const r = resultFor(
    config,
    expandPlan(config).map((k) => measurementFor(k, false, config)),
    { status },
  )
  const environment = { ...r.environment!, backend: 'wasm' as const, cpuCount: 16 }
  const estimated = estimateRun(config, 'wasm', { cpuCount: 16 }).totalMs!
  return { ...r, environment, finishedAt: new Date(Date.parse(r.startedAt) + estimated * factor).toISOString() }
}

describe('calibrationFrom', () => {
  it('measured / estimated wall time of a finished run, on its backend and family', () => {
    const c = calibrationFrom(tookTimes(3))!
    expect(c.backend).toBe('wasm')
    expect(c.kind).toBe('mlp')
    expect(c.factor).toBeCloseTo(3, 3)
  })

  it('none from a run that did not finish, and bounded for a disturbed one', () => {
    expect(calibrationFrom(tookTimes(3, 'cancelled'))).toBeNull()
    expect(calibrationFrom(null)).toBeNull()
    expect(calibrationFrom(tookTimes(40))!.factor).toBe(20)
  })
})

describe("the config panel's time estimate", () => {
  let service: FakeService
  beforeEach(() => {
    localStorage.clear()
    service = new FakeService({ capabilities: { cpuCount: 16 } })
    setBridge(fakeBridge(service))
  })
  afterEach(() => setBridge(null))

  it('is scaled by the last finished run on the same backend, and says so', async () => {
    service.addRun(tookTimes(2))
    setActivePinia(createPinia())
    const w = mount(ConfigPanel)
    const cfg = useConfigStore()
    cfg.replace(config)
    await useCapabilitiesStore().load()
    await flushPromises()
    const assumed = estimateRun(config, 'wasm', { cpuCount: 16 }).totalMs!
    expect(cfg.estimate?.totalMs).toBe(assumed)
    expect(w.get('[data-test=estimate-basis]').text()).toMatch(/\(wasm, assumed speed\)/)
    await useRunStore().connect()
    await flushPromises()
    expect(cfg.estimate!.totalMs! / (assumed * 2)).toBeCloseTo(1, 3)
    expect(w.get('[data-test=estimate-basis]').text()).toMatch(/\(wasm, speed measured by your last run\)/)
    // another backend: nothing measured there yet
    cfg.draft.backend = 'cpu'
    await flushPromises()
    expect(w.get('[data-test=estimate-basis]').text()).toMatch(/\(cpu, assumed speed\)/)
    useRunStore().disconnect()
  })
})
