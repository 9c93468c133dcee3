// What a Slurm run shows: its job ids, what it asked Slurm for, each measurement's queue wait apart
// from start-up and each worker's host (SchedulerCard, in the Run view and on History's run page),
// and the live lanes name each worker's host beside its GPU.
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { RunResult } from '@shared/contract/result'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { scriptedRun } from '@shared/testing/fixtures'
import { slurmResult } from '@shared/testing/slurm-fixtures'
import { setBridge } from '../bridge'
import { useRunStore } from '../stores/run'
import LiveRun from './LiveRun.vue'
import RunReport from './RunReport.vue'
import SchedulerCard from './SchedulerCard.vue'

let service: FakeService
beforeEach(() => {
  setActivePinia(createPinia())
  service = new FakeService()
  setBridge(fakeBridge(service))
})
afterEach(() => setBridge(null))

describe('a Slurm run', () => {
  it('shows its job ids, what it asked for, and per measurement the queue wait apart from start-up and the hosts', () => {
    const r = slurmResult()
    const w = mount(SchedulerCard, { props: { config: r.config, measurements: r.measurements, scheduler: r.scheduler } })
    expect(w.get('[data-test=slurm-job-ids]').text()).toBe('4101, 4102')
    expect(w.get('[data-test=slurm-asked]').text()).toBe('partition gpu · gres gpu:1 · time 1:00:00 · --qos=short · queue timeout 600 s')
    const first = w.get('[data-test=slurm-row-0]')
    expect(first.get('[data-test=slurm-queue]').text()).toBe('12.0 s')
    expect(first.get('[data-test=slurm-startup]').text()).toBe('1.50 s')
    expect(first.get('[data-test=slurm-hosts]').text()).toBe('node01 (W0)')
    expect(w.get('[data-test=slurm-row-1] [data-test=slurm-hosts]').text()).toBe('node01 (W0) · node02 (W1)')
  })

  it('before its first job is submitted it says so; one host for several workers is said once', () => {
    const r = slurmResult()
    const measurements = [{ ...r.measurements[1], workerHosts: ['node01', 'node01'] }]
    const w = mount(SchedulerCard, { props: { config: r.config, measurements, scheduler: null } })
    expect(w.get('[data-test=slurm-job-ids]').text()).toBe('none submitted yet')
    expect(w.get('[data-test=slurm-hosts]').text()).toBe('node01 (W0, W1)')
  })

  it("while it runs, each job id is shown as it is submitted (the scheduler event), then the result's", async () => {
    const run = useRunStore()
    await run.connect()
    const events = scriptedRun()
    const started = events[0]
    if (started.type !== 'run-started') throw new Error('scripted run starts with run-started')
    started.config = { ...started.config, launcher: slurmResult().config.launcher }
    service.play([started, { type: 'scheduler', runId: started.runId, scheduler: { engine: 'slurm', jobIds: ['4101'] } }])
    await flushPromises()
    expect(run.scheduler?.jobIds).toEqual(['4101'])
    service.emit({ type: 'scheduler', runId: started.runId, scheduler: { engine: 'slurm', jobIds: ['4101', '4102'] } })
    // another run's jobs are not this one's
    service.emit({ type: 'scheduler', runId: 'other-run', scheduler: { engine: 'slurm', jobIds: ['9'] } })
    await flushPromises()
    const w = mount(SchedulerCard, { props: { config: run.config!, measurements: [], scheduler: run.scheduler } })
    expect(w.get('[data-test=slurm-job-ids]').text()).toBe('4101, 4102')
    run.disconnect()
  })

  it("History's run page shows the card for a Slurm run only", async () => {
    const slurm = mount(RunReport, { props: { result: slurmResult() } })
    await flushPromises()
    expect(slurm.find('[data-test=scheduler]').exists()).toBe(true)
    const plain = mount(RunReport, { props: { result: (scriptedRun().at(-1) as { result: RunResult }).result } })
    await flushPromises()
    expect(plain.find('[data-test=scheduler]').exists()).toBe(false)
  })

  it("a live lane says its worker's host beside its GPU", async () => {
    const run = useRunStore()
    await run.connect()
    const events = scriptedRun()
    const progress = events.find((e) => e.type === 'progress')!
    if (progress.type === 'progress') progress.lanes = progress.lanes.map((l) => ({ ...l, host: `node0${l.worker + 1}`, gpu: 'GPU 0' }))
    service.play(events.slice(0, events.indexOf(progress) + 1))
    await flushPromises()
    const w = mount(LiveRun)
    expect(w.findAll('[data-test=lane-host]').map((e) => e.text())[0]).toBe('· node01')
    expect(w.get('[data-test=lane-0] th').text()).toBe('W0 · node01 · GPU 0')
    run.disconnect()
  })
})
