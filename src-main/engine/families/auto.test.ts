// `auto`, per model family: one rule (autoAccepts, src-shared/families/define-backend.ts) over the
// structured capability fields and the family's own order, applied by the capabilities
// (autoBackendsFrom over the probe) and by a worker starting with 'auto' (the seam's init), so the
// backend the app announces for a family is the backend that family's run gets.
import { afterAll, describe, expect, it } from 'vitest'
import type { BackendCapability, ConcreteBackend } from '@shared/contract'
import { autoAccepts, autoBackendFor, autoBackendsFrom, gbdtFamily, mlpFamily } from '@shared/families'
import type { MlpParams } from '@shared/families/mlp'
import { NodeLauncher } from '../../pool/node-launcher'
import { WorkerPool } from '../../pool/worker-pool'
import { probeInWorker } from '../../service/bench-service'
import { defineBackend } from './define-backend'
import { capabilityOf } from '../backend/capability'
import { probeFamilies, workerFamily } from './seam'
import { BackendUnavailableError, type WorkerBackend, type WorkerRuntime } from '../backend/types'

const cap = (name: ConcreteBackend, available: boolean, gpu: boolean, detail = 'test'): BackendCapability => ({ name, available, gpu, detail })
const mlpAuto = (caps: BackendCapability[]) => autoBackendFor(mlpFamily.backends, caps)

describe("autoBackendFor (the capabilities' announcement)", () => {
  it('tensorflow installed but without a GPU (tfjs-node-gpu on its CPU fallback) is not what auto picks', () => {
    const caps = [
      cap('tensorflow', true, false, 'Intel Xeon (4 cores) (libtensorflow CPU: no usable CUDA device)'),
      cap('webgpu', false, false, 'no adapter'),
      cap('wasm', true, false),
      cap('cpu', true, false),
    ]
    expect(mlpAuto(caps)).toBe('wasm')
  })

  it('decides from the gpu field, not from the detail text', () => {
    // a software adapter whose name does not say so, and a hardware one whose text sounds soft
    expect(
      mlpAuto([cap('tensorflow', false, false), cap('webgpu', true, false, 'Some Vulkan device'), cap('wasm', true, false), cap('cpu', true, false)]),
    ).toBe('wasm')
    expect(mlpAuto([cap('tensorflow', false, false), cap('webgpu', true, true, 'software adapter?'), cap('wasm', true, false), cap('cpu', true, false)])).toBe(
      'webgpu',
    )
    // a capability without the field (an older probe) counts as no GPU
    const legacy = { name: 'tensorflow', available: true, detail: 'CUDA GPU' } as BackendCapability
    expect(mlpAuto([legacy, cap('wasm', true, false), cap('cpu', true, false)])).toBe('wasm')
  })

  it("takes a GPU backend on GPU hardware, in the family's order; null when nothing is available", () => {
    expect(mlpAuto([cap('tensorflow', true, true, 'CUDA GPU'), cap('webgpu', true, true), cap('wasm', true, false), cap('cpu', true, false)])).toBe(
      'tensorflow',
    )
    expect(mlpAuto([cap('tensorflow', true, false), cap('webgpu', true, true, 'NVIDIA H200'), cap('wasm', true, false), cap('cpu', true, false)])).toBe(
      'webgpu',
    )
    expect(mlpAuto([cap('tensorflow', false, false), cap('webgpu', false, false), cap('wasm', false, false), cap('cpu', true, false)])).toBe('cpu')
    expect(mlpAuto([cap('cpu', false, false)])).toBeNull()
  })

  it('wasm and cpu need no GPU; nothing unavailable is accepted; a backend outside the order never is', () => {
    const spec = (name: string) => mlpFamily.backends.find((b) => b.name === name)!
    expect(autoAccepts(spec('wasm'), cap('wasm', true, false))).toBe(true)
    expect(autoAccepts(spec('cpu'), cap('cpu', true, false))).toBe(true)
    for (const s of mlpFamily.backends) expect(autoAccepts(s, cap(s.name as ConcreteBackend, false, true))).toBe(false)
    const xgboost = gbdtFamily.backends.find((b) => b.name === 'xgboost')!
    expect(autoAccepts(xgboost, cap('xgboost', true, false))).toBe(false)
  })

  it('is announced per family: on a GPU machine the MLP takes the GPU, the trees their own CPU engine', () => {
    const caps = [
      cap('tensorflow', false, false),
      cap('webgpu', true, true, 'NVIDIA H200'),
      cap('onnxruntime', true, false),
      cap('wasm', true, false),
      cap('cpu', true, false),
      cap('xgboost', true, true),
    ]
    expect(autoBackendsFrom(caps)).toEqual({ mlp: 'webgpu', gbdt: 'cpu' })
    expect(autoBackendsFrom(caps.filter((c) => c.name !== 'webgpu'))).toEqual({ mlp: 'onnxruntime', gbdt: 'cpu' })
  })
})

/** A machine described by what each MLP backend does when started (nothing real is touched). */
type Machine = Partial<Record<ConcreteBackend, { gpu: boolean; device: string } | string>>

function fakeBackend(name: ConcreteBackend, machine: Machine) {
  const start = async (): Promise<WorkerRuntime> => {
    const m = machine[name]
    if (m === undefined || typeof m === 'string') throw new BackendUnavailableError(name, m ?? 'not on this machine')
    return {
      backend: name,
      hardware: m.gpu,
      device: m.device,
      flags: {},
      versions: {},
      memory: () => ({ numTensors: 0, numBytes: 0 }),
      heapBytes: () => null,
      release: () => {},
    }
  }
  const entry: WorkerBackend<MlpParams, WorkerRuntime, null> = {
    name,
    start,
    // the probe reports what a start would: the started backend's capability, or why not
    probe: () => start().then(capabilityOf, (err: BackendUnavailableError) => cap(name, false, false, err.reason)),
    prepare: () => null,
    dispose: () => {},
    warmUp: async () => {},
    train: async () => {},
  }
  return defineBackend(entry)
}

const fakeMlp = (machine: Machine) =>
  workerFamily(mlpFamily, {
    dataKey: () => 'k',
    backends: {
      tensorflow: fakeBackend('tensorflow', machine),
      webgpu: fakeBackend('webgpu', machine),
      onnxruntime: fakeBackend('onnxruntime', machine),
      wasm: fakeBackend('wasm', machine),
      cpu: fakeBackend('cpu', machine),
    },
  })

const MACHINES: Record<string, Machine> = {
  'tfjs-node-gpu installed, no CUDA device, lavapipe': {
    tensorflow: { gpu: false, device: 'Xeon (libtensorflow CPU: no usable CUDA device)' },
    webgpu: { gpu: false, device: 'llvmpipe (software adapter, runs on the CPU)' },
    wasm: { gpu: false, device: 'Xeon, wasm SIMD' },
    cpu: { gpu: false, device: 'Xeon, plain JavaScript' },
  },
  'tfjs-node-gpu on a CUDA GPU': {
    tensorflow: { gpu: true, device: 'CUDA GPU' },
    webgpu: { gpu: true, device: 'NVIDIA H200' },
    wasm: { gpu: false, device: 'wasm' },
    cpu: { gpu: false, device: 'cpu' },
  },
  'no tfjs-node-gpu, a hardware WebGPU adapter': {
    tensorflow: '@tensorflow/tfjs-node-gpu is not installed',
    webgpu: { gpu: true, device: 'NVIDIA H200' },
    wasm: { gpu: false, device: 'wasm' },
    cpu: { gpu: false, device: 'cpu' },
  },
  'nothing but plain JavaScript': { cpu: { gpu: false, device: 'cpu' } },
  'no GPU backend, onnxruntime loads': {
    tensorflow: '@tensorflow/tfjs-node-gpu is not installed',
    webgpu: { gpu: false, device: 'llvmpipe (software adapter, runs on the CPU)' },
    onnxruntime: { gpu: false, device: 'Xeon, ONNX Runtime CPU (MLAS), 1 thread per worker' },
    wasm: { gpu: false, device: 'wasm' },
    cpu: { gpu: false, device: 'cpu' },
  },
  "onnxruntime's native library cannot load": {
    tensorflow: '@tensorflow/tfjs-node-gpu is not installed',
    onnxruntime: 'onnxruntime-node failed to load its native library: libonnxruntime.so.1: cannot open shared object file',
    wasm: { gpu: false, device: 'wasm' },
    cpu: { gpu: false, device: 'cpu' },
  },
}

describe("a worker starting with 'auto' agrees with the announcement", () => {
  for (const [what, machine] of Object.entries(MACHINES)) {
    it(what, async () => {
      const family = fakeMlp(machine)
      const announced = mlpAuto(await probeFamilies([family]))
      expect((await family.init('auto')).runtime.backend).toBe(announced)
    })
  }

  it('says which GPU backend it passed over and why', async () => {
    const { runtime: started } = await fakeMlp(MACHINES['tfjs-node-gpu installed, no CUDA device, lavapipe']).init('auto')
    expect(started.backend).toBe('wasm')
    expect(started.flags.autoSkipped).toMatch(/tensorflow: .*no usable CUDA device\) is not a GPU/)
    expect(started.flags.autoSkipped).toMatch(/webgpu: llvmpipe .* is not a GPU/)
  })

  it('picks onnxruntime before wasm without a GPU backend, and falls back to wasm saying why onnxruntime could not load', async () => {
    expect((await fakeMlp(MACHINES['no GPU backend, onnxruntime loads']).init('auto')).runtime.backend).toBe('onnxruntime')
    const { runtime: started } = await fakeMlp(MACHINES["onnxruntime's native library cannot load"]).init('auto')
    expect(started.backend).toBe('wasm')
    expect(started.flags.autoSkipped).toMatch(/onnxruntime: onnxruntime-node failed to load its native library: libonnxruntime\.so\.1/)
  })

  it('a backend asked for by name is used even without a GPU; one the family lacks is refused naming what it accepts', async () => {
    const family = fakeMlp(MACHINES['tfjs-node-gpu installed, no CUDA device, lavapipe'])
    expect((await family.init('tensorflow')).runtime).toMatchObject({ backend: 'tensorflow', hardware: false })
    await expect(family.init('xgboost')).rejects.toThrow(
      'backend xgboost is not available here: it cannot train the neural network (MLP) family; accepted: tensorflow, webgpu, onnxruntime, wasm, cpu',
    )
    await expect(fakeMlp({}).init('auto')).rejects.toBeInstanceOf(BackendUnavailableError)
  })
})

describe('on this machine, in real worker processes', () => {
  const launcher = new NodeLauncher()
  const pools: WorkerPool[] = []
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.shutdown()))
  })

  it("the probe reports every family's backends once, with gpu; a worker of each family started with 'auto' gets the backend announced for it", async () => {
    const caps = await probeInWorker(launcher)
    // the MLP's backends in its auto order, then the trees' that the MLP lacks (xgboost)
    expect(caps.map((c) => c.name)).toEqual(['tensorflow', 'webgpu', 'onnxruntime', 'wasm', 'cpu', 'xgboost'])
    for (const c of caps) expect(typeof c.gpu, c.name).toBe('boolean')
    for (const c of caps) if (!c.available) expect(c.gpu, c.name).toBe(false)
    const announced = autoBackendsFrom(caps)
    for (const family of ['mlp', 'gbdt']) {
      const pool = new WorkerPool(launcher, { family, size: 1, backend: 'auto' })
      pools.push(pool)
      await pool.start()
      expect(pool.workerInfo?.backend, family).toBe(announced[family])
    }
  })
})
