import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunEvent } from '@shared/contract/events'
import type { GpuSample, TelemetrySample, WorkerSample } from '@shared/contract/telemetry'
import { registerBackend } from '@shared/families'
import { setBridge } from '../bridge'
import { appendSamples, fixedScalePoints, formatMiB, formatPower } from '../lib/telemetry'
import { useRunStore } from '../stores/run'
import { fakeBridge } from '@shared/testing/fake-service'
import TelemetryPanel from './TelemetryPanel.vue'

const gpu = (index: number, util: number | null, extra: Partial<GpuSample> = {}): GpuSample => ({
  index,
  name: index ? 'Tesla T4' : 'NVIDIA H200',
  util,
  memUsedMiB: 30720,
  memTotalMiB: 143771,
  tempC: 55,
  powerW: 512.4,
  powerLimitW: 700,
  ...extra,
})
const sample = (
  t: number,
  strategy: TelemetrySample['strategy'],
  util: number | null,
  workers = [{ pid: 4242, cpuPercent: 98.5, rssBytes: 300 * 2 ** 20 }],
): TelemetrySample => ({
  t,
  gpus: [gpu(0, util), gpu(1, null, { tempC: null, powerW: null, powerLimitW: null })],
  workers,
  index: 0,
  strategy,
  workerCount: 1,
  phase: 'measuring',
})

afterEach(() => setBridge(null))

describe('TelemetryPanel', () => {
  it('with nvidia-smi: the GPU busy line per strategy, GPUs with N/A fields, workers', () => {
    const samples = [sample(0, 'sequential', 20), sample(1000, 'sequential', 26), sample(2000, 'batched', 96), sample(3000, 'batched', 96)]
    const w = mount(TelemetryPanel, { props: { telemetry: { gpu: { state: 'ok', message: 'nvidia-smi: 2 GPUs' }, samples } } })
    expect(w.get('[data-test=gpu-busy]').text()).toBe('GPU busy 23 % in sequential, 96 % in batched')
    expect(w.find('[data-test=gpu-status]').exists()).toBe(false)
    const rows = w.findAll('[data-test=gpus] tbody tr')
    expect(rows).toHaveLength(2)
    expect(rows[0].text()).toContain('NVIDIA H200')
    expect(rows[0].text()).toContain('96 %')
    expect(rows[0].text()).toContain('30 / 140 GiB')
    expect(rows[0].text()).toContain('55 °C')
    expect(rows[0].text()).toContain('512 / 700 W')
    expect(rows[0].find('polyline').exists()).toBe(true)
    expect(rows[1].text()).toContain('Tesla T4')
    expect(rows[1].text()).toContain('N/A')
    expect(rows[1].find('polyline').exists()).toBe(false) // no utilisation reported
    const workers = w.findAll('[data-test=telemetry-workers] tbody tr')
    expect(workers).toHaveLength(1)
    expect(workers[0].text()).toContain('4242')
    expect(workers[0].text()).toContain('99 %') // 98.5 rounds up
    expect(workers[0].text()).toContain('300 MiB')
    expect(w.find('[data-test=cpu-sparkline]').exists()).toBe(true)
  })

  it('a GPU backend without nvidia-smi: says so, and still shows the workers', () => {
    const samples = [0, 1000, 2000].map((t) => ({ ...sample(t, 'pool', null), gpus: [] }))
    const w = mount(TelemetryPanel, {
      props: { telemetry: { gpu: { state: 'absent', message: 'nvidia-smi not found: no NVIDIA GPU telemetry' }, samples }, live: true, backend: 'webgpu' },
    })
    expect(w.get('[data-test=gpu-status]').text()).toBe('nvidia-smi not found: no NVIDIA GPU telemetry')
    expect(w.get('[data-test=gpu-status]').classes()).toContain('absent')
    expect(w.find('[data-test=gpu-busy]').exists()).toBe(false)
    expect(w.find('[data-test=gpus]').exists()).toBe(false)
    expect(w.findAll('[data-test=telemetry-workers] tbody tr')).toHaveLength(1)
  })

  it('before any sample of a live run: waiting, no workers yet', () => {
    const w = mount(TelemetryPanel, {
      props: { telemetry: { gpu: { state: 'starting', message: 'starting nvidia-smi' }, samples: [] }, live: true, backend: 'tensorflow' },
    })
    expect(w.get('[data-test=gpu-status]').text()).toBe('waiting for nvidia-smi…')
    expect(w.get('[data-test=no-workers]').text()).toBe('no worker running right now')
  })

  it('a CPU backend (wasm): no GPU telemetry at all, said neutrally — no orange "nvidia-smi not found"', () => {
    const samples = [0, 1000].map((t) => ({ ...sample(t, 'pool', null), gpus: [] }))
    const w = mount(TelemetryPanel, {
      props: { telemetry: { gpu: { state: 'absent', message: 'nvidia-smi not found: no NVIDIA GPU telemetry' }, samples }, backend: 'wasm' },
    })
    expect(w.find('[data-test=gpu-status]').exists()).toBe(false)
    expect(w.find('.absent').exists()).toBe(false)
    expect(w.text()).not.toMatch(/nvidia-smi/)
    expect(w.get('#telemetry-title').text()).toBe('Workers')
    expect(w.get('[data-test=no-gpu]').classes()).toContain('muted')
    expect(w.get('[data-test=no-gpu]').text()).toBe('wasm trains on the CPU: no GPU telemetry for this run.')
    // GPU rows nvidia-smi did read are not this run's business either
    const withGpus = mount(TelemetryPanel, {
      props: { telemetry: { gpu: { state: 'ok', message: 'ok' }, samples: [sample(0, 'pool', 90), sample(1000, 'pool', 95)] }, backend: 'cpu' },
    })
    expect(withGpus.find('[data-test=gpus]').exists()).toBe(false)
    expect(withGpus.find('[data-test=gpu-busy]').exists()).toBe(false)
  })

  it('backends side by side: CPU backends together say so; a GPU backend among them keeps the GPU rows', () => {
    const samples = [sample(0, 'pool', 90), sample(1000, 'pool', 95)]
    const cpus = mount(TelemetryPanel, { props: { telemetry: { gpu: { state: 'ok', message: 'ok' }, samples }, backend: ['wasm', 'cpu'] } })
    expect(cpus.get('[data-test=no-gpu]').text()).toBe('wasm and cpu train on the CPU: no GPU telemetry for this run.')
    expect(cpus.find('[data-test=gpus]').exists()).toBe(false)
    const withGpu = mount(TelemetryPanel, { props: { telemetry: { gpu: { state: 'ok', message: 'ok' }, samples }, backend: ['wasm', 'webgpu'] } })
    expect(withGpu.find('[data-test=no-gpu]').exists()).toBe(false)
    expect(withGpu.find('[data-test=gpus]').exists()).toBe(true)
  })

  it("a GPU backend is what the family's backend table says (gpu: true), not a list of its own", () => {
    const samples = [sample(0, 'pool', 90), sample(1000, 'pool', 95)]
    const undo = registerBackend('mlp', {
      name: 'toy-gpu',
      gpu: true,
      auto: false,
      batched: true,
      speed: { workPerSecond: 1e9, stepMs: 1, jobMs: 1, poolStartMs: 1, sharedDevice: true },
    })
    try {
      const toy = mount(TelemetryPanel, { props: { telemetry: { gpu: { state: 'ok', message: 'ok' }, samples }, backend: 'toy-gpu', family: 'mlp' } })
      expect(toy.find('[data-test=gpus]').exists()).toBe(true)
    } finally {
      undo()
    }
    // the trees' webgpu engine is a GPU backend; their cpu engine is not
    const trees = (backend: string) =>
      mount(TelemetryPanel, { props: { telemetry: { gpu: { state: 'ok', message: 'ok' }, samples }, backend, family: 'gbdt' } })
    expect(trees('webgpu').find('[data-test=gpus]').exists()).toBe(true)
    expect(trees('cpu').get('[data-test=no-gpu]').text()).toBe('cpu trains on the CPU: no GPU telemetry for this run.')
  })

  it('after a run, each worker keeps its last CPU and memory reading (no N/A from its exit sample)', () => {
    const reading = (cpuPercent: number | null, rssBytes: number | null): WorkerSample[] => [{ pid: 7, cpuPercent, rssBytes }]
    const samples = [
      { ...sample(0, 'pool', null), workers: reading(null, 150 * 2 ** 20) },
      { ...sample(1000, 'pool', null), workers: reading(64, 200 * 2 ** 20) },
      // the last sample, taken as the worker exits: no reading
      { ...sample(2000, 'pool', null), workers: reading(null, null) },
    ]
    const w = mount(TelemetryPanel, { props: { telemetry: { gpu: { state: 'absent', message: '' }, samples }, backend: 'wasm' } })
    const row = w.get('[data-test=telemetry-workers] tbody tr')
    expect(row.text()).toContain('64 %')
    expect(row.text()).toContain('200 MiB')
    expect(row.text()).not.toContain('N/A')
    expect(w.text()).toMatch(/last values seen/)
  })
})

describe('telemetry in the run store', () => {
  it('appends telemetry events (re-sent samples once), and takes the stored series at the end', async () => {
    const pinia = createPinia()
    setActivePinia(pinia)
    const bridge = fakeBridge()
    setBridge(bridge)
    const run = useRunStore()
    await run.connect()
    const ev = (samples: TelemetrySample[]): RunEvent => ({ type: 'telemetry', runId: 'r1', gpu: { state: 'ok', message: 'ok' }, samples })
    run.applyEvent({ type: 'run-started', runId: 'r1', config: {} as never, plan: [], startedAt: new Date().toISOString() })
    run.applyEvent(ev([sample(0, 'sequential', 10)]))
    run.applyEvent(ev([sample(1000, 'sequential', 20)]))
    run.applyEvent(ev([sample(0, 'sequential', 10), sample(1000, 'sequential', 20), sample(2000, 'batched', 90)])) // re-attach
    expect(run.telemetry?.samples.map((s) => s.t)).toEqual([0, 1000, 2000])
    run.applyEvent({ type: 'telemetry', runId: 'other', gpu: { state: 'ok', message: '' }, samples: [sample(5000, 'pool', 1)] })
    expect(run.telemetry?.samples).toHaveLength(3)
    await flushPromises()
    run.disconnect()
  })

  it('keeps the live series bounded by thinning', () => {
    let s: TelemetrySample[] = []
    for (let t = 0; t < 50; t++) s = appendSamples(s, [sample(t * 1000, 'batched', t)], 10)
    expect(s.length).toBeLessThanOrEqual(10)
    expect(s[0].t).toBe(0)
    for (let i = 1; i < s.length; i++) expect(s[i].t).toBeGreaterThan(s[i - 1].t)
  })

  it('formats and scales', () => {
    expect(fixedScalePoints([0, 100], 100, 20, 0, 100, 0)).toBe('0.0,20.0 100.0,0.0')
    expect(fixedScalePoints([5], 100, 20, 0, 100)).toBe('')
    expect(formatMiB(null, 16384)).toBe('N/A / 16 GiB')
    expect(formatPower(null, null)).toBe('N/A')
  })
})
