// Every GPU of one machine: a fake nvidia-smi lists two GPUs; a run with gpus all spreads its real
// worker processes over them round-robin, each pinned by its own CUDA_VISIBLE_DEVICES (a UUID) —
// as every worker itself reports it, not as assumed — and the result records the placement. Bad
// choices (a GPU the machine lacks, too many workers per GPU, webgpu over identical GPUs) are
// refused naming the field, and nothing starts.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { chosenGpus, type GpuInfo, presetConfig, visibleDevicesFor, webgpuSpreadRefusal } from '@shared/contract'
import { configFromFlags } from '../cli/options'
import { BenchService } from '../service/bench-service'
import { dispatch } from '../service/dispatch'
import { FIXED_PROBE } from '../testing/service-harness'
import { RecordingLauncher } from '../testing/recording-launcher'
import { discoverGpus, parseGpuList } from './discover'

const dir = mkdtempSync(join(tmpdir(), 'trainpool-gpus-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const H200 = 'NVIDIA H200'
const FAKE = join(dir, 'nvidia-smi')
writeFileSync(FAKE, `#!/bin/sh\necho "0, GPU-aaaaaaaa-0000, ${H200}, 143771"\necho "1, GPU-bbbbbbbb-1111, ${H200}, 143771"\n`)
chmodSync(FAKE, 0o755)

describe('GPUs of one machine', () => {
  it('lists the GPUs nvidia-smi reports, and none without it', async () => {
    expect(await discoverGpus(FAKE)).toEqual([
      { index: 0, uuid: 'GPU-aaaaaaaa-0000', name: H200, memoryMiB: 143771 },
      { index: 1, uuid: 'GPU-bbbbbbbb-1111', name: H200, memoryMiB: 143771 },
    ])
    expect(await discoverGpus(join(dir, 'no-such-tool'))).toEqual([])
    expect(parseGpuList('garbage\n\n')).toEqual([])
  })

  it('places workers round-robin and refuses what cannot be placed', () => {
    const gpus: GpuInfo[] = parseGpuList(`0, GPU-a, ${H200}, 1\n1, GPU-b, ${H200}, 1\n2, GPU-c, Other, 1`)
    const two = chosenGpus([0, 2], gpus)
    expect('gpus' in two && two.gpus.map((g) => g.uuid)).toEqual(['GPU-a', 'GPU-c'])
    expect([0, 1, 2, 3].map((w) => visibleDevicesFor([gpus[0], gpus[1]], w))).toEqual(['GPU-a', 'GPU-b', 'GPU-a', 'GPU-b'])
    expect(visibleDevicesFor([], 0)).toBe('')
    expect(chosenGpus([7], gpus)).toEqual({ refusal: 'gpus 7: no GPU 7 on this machine; its GPUs: 0, 1, 2' })
    expect(chosenGpus('all', [])).toEqual({ refusal: expect.stringMatching(/no NVIDIA GPU/) })
    expect(webgpuSpreadRefusal([gpus[0], gpus[1]])).toMatch(/webgpu cannot choose among identical GPUs/)
    expect(webgpuSpreadRefusal([gpus[0]])).toBeNull()
  })

  it('a run on gpus all: each real worker reports its own GPU, distinct per worker; the result records the placement', async () => {
    const launcher = new RecordingLauncher()
    const service = new BenchService({ launcher, store: null, shell: 'cli', probe: FIXED_PROBE, telemetry: false, discoverGpus: () => discoverGpus(FAKE) })
    expect((await service.capabilities()).gpus.map((g) => g.index)).toEqual([0, 1])
    const lanes = new Set<string>()
    service.onEvent((e) => {
      if (e.type === 'progress') for (const l of e.lanes) if (l.gpu) lanes.add(`W${l.worker} ${l.gpu}`)
    })
    const config = configFromFlags({
      preset: 'smoke',
      backend: 'wasm',
      sizes: '300',
      models: '4',
      workers: '2',
      gpus: 'all',
      strategies: 'sequential,pool,batched',
    })
    expect(config.gpus).toBe('all')
    const { runId } = await service.start({ config })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.status).toBe('ok')
    expect(run.environment?.gpus?.map((g) => g.uuid)).toEqual(['GPU-aaaaaaaa-0000', 'GPU-bbbbbbbb-1111'])
    const placement = Object.fromEntries(run.measurements.map((m) => [`${m.strategy} W=${m.workers}`, m.workerGpus]))
    expect(placement).toEqual({
      'sequential W=1': ['GPU-aaaaaaaa-0000'],
      'pool W=2': ['GPU-aaaaaaaa-0000', 'GPU-bbbbbbbb-1111'],
      'batched W=2': ['GPU-aaaaaaaa-0000', 'GPU-bbbbbbbb-1111'],
    })
    // the live lanes say each worker's GPU, as the worker reported it
    expect([...lanes].sort()).toEqual([`W0 GPU 0 · ${H200}`, `W1 GPU 1 · ${H200}`])
  }, 120_000)

  it('gpus none hides every GPU from the workers', async () => {
    const service = new BenchService({
      launcher: new RecordingLauncher(),
      store: null,
      shell: 'cli',
      probe: FIXED_PROBE,
      telemetry: false,
      discoverGpus: () => discoverGpus(FAKE),
    })
    const { runId } = await service.start({
      config: presetConfig('smoke', { backend: 'wasm', sizes: [300], models: [2], workers: [2], strategies: ['pool'], gpus: 'none' }),
    })
    const run = await service.waitForRun(runId)
    await service.shutdown()
    expect(run.measurements[0].workerGpus).toEqual(['', ''])
  }, 120_000)

  it('refuses a GPU the machine lacks, too many workers per GPU, and webgpu spread over identical GPUs; nothing starts', async () => {
    const launcher = new RecordingLauncher()
    const service = new BenchService({
      launcher,
      store: null,
      shell: 'cli',
      probe: async () => (await FIXED_PROBE()).map((b) => (b.name === 'webgpu' ? { name: 'webgpu', available: true, gpu: true, detail: H200 } : b)),
      telemetry: false,
      discoverGpus: () => discoverGpus(FAKE),
    })
    const smoke = presetConfig('smoke', { backend: 'wasm', workers: [2] })
    for (const [config, field, message] of [
      [{ ...smoke, gpus: [7] }, 'gpus', /^gpus 7: no GPU 7 on this machine; its GPUs: 0, 1$/],
      [
        { ...smoke, gpus: 'all', workers: [3], models: [4], workersPerGpu: 1 },
        'workersPerGpu',
        /workers 3 would put more than 1 worker on a GPU: workersPerGpu 1 allows at most 2 on 2 GPUs/,
      ],
      [{ ...smoke, gpus: 'all', backend: 'webgpu' }, 'gpus', /webgpu cannot choose among identical GPUs/],
    ] as const) {
      const r = await dispatch(service, 'start', { config })
      expect(r.ok).toBe(false)
      if (!r.ok) {
        expect(r.error.issues?.map((i) => i.field)).toEqual([field])
        expect(r.error.message).toMatch(message)
      }
    }
    expect(launcher.launched).toEqual([])
    expect(() => configFromFlags({ gpus: 'x' })).toThrow(/--gpus "x"/)
    expect(() => configFromFlags({ gpus: 'all', workersPerGpu: '0' })).toThrow(/--workers-per-gpu must be an integer from 1 to 64/)
    await service.shutdown()
  })
})
