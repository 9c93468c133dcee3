// `auto`: one rule (autoAccepts) over the structured capability fields, applied by the capabilities'
// autoBackend (autoBackendFrom over the probe) and by a worker starting with 'auto' (selectBackend),
// so the backend the app announces is the backend the run gets.
import { afterAll, describe, expect, it } from 'vitest'
import type { BackendCapability, ConcreteBackend } from '@shared/contract'
import { NodeLauncher } from '../pool/node-launcher'
import { WorkerPool } from '../pool/worker-pool'
import { probeInWorker } from '../service/bench-service'
import { AUTO_ORDER, autoAccepts, autoBackendFrom } from '@shared/backends'
import { BackendUnavailableError, type SelectedBackend, capabilityOf, selectBackend } from './backends'

const cap = (name: ConcreteBackend, available: boolean, gpu: boolean, detail = 'test'): BackendCapability => ({ name, available, gpu, detail })

describe('autoBackendFrom (the capabilities card)', () => {
  it('tensorflow installed but without a GPU (tfjs-node-gpu on its CPU fallback) is not what auto picks', () => {
    const caps = [
      cap('tensorflow', true, false, 'Intel Xeon (4 cores) (libtensorflow CPU: no usable CUDA device)'),
      cap('webgpu', false, false, 'no adapter'),
      cap('wasm', true, false),
      cap('cpu', true, false),
    ]
    expect(autoBackendFrom(caps)).toBe('wasm')
  })

  it('decides from the gpu field, not from the detail text', () => {
    // a software adapter whose name does not say so, and a hardware one whose text sounds soft
    expect(autoBackendFrom([cap('tensorflow', false, false), cap('webgpu', true, false, 'Some Vulkan device'), cap('wasm', true, false), cap('cpu', true, false)])).toBe('wasm')
    expect(autoBackendFrom([cap('tensorflow', false, false), cap('webgpu', true, true, 'software adapter?'), cap('wasm', true, false), cap('cpu', true, false)])).toBe('webgpu')
    // a capability without the field (an older probe) counts as no GPU
    const legacy = { name: 'tensorflow', available: true, detail: 'CUDA GPU' } as BackendCapability
    expect(autoBackendFrom([legacy, cap('wasm', true, false), cap('cpu', true, false)])).toBe('wasm')
  })

  it('takes a GPU backend on GPU hardware, in AUTO_ORDER', () => {
    expect(autoBackendFrom([cap('tensorflow', true, true, 'CUDA GPU'), cap('webgpu', true, true), cap('wasm', true, false), cap('cpu', true, false)])).toBe('tensorflow')
    expect(autoBackendFrom([cap('tensorflow', true, false), cap('webgpu', true, true, 'NVIDIA H200'), cap('wasm', true, false), cap('cpu', true, false)])).toBe('webgpu')
    expect(autoBackendFrom([cap('tensorflow', false, false), cap('webgpu', false, false), cap('wasm', false, false), cap('cpu', true, false)])).toBe('cpu')
  })

  it('wasm and cpu need no GPU; nothing unavailable is accepted', () => {
    expect(autoAccepts(cap('wasm', true, false))).toBe(true)
    expect(autoAccepts(cap('cpu', true, false))).toBe(true)
    for (const name of AUTO_ORDER) expect(autoAccepts(cap(name, false, true))).toBe(false)
  })
})

/** A machine described by what each backend does when started (no tfjs backend is touched). */
type Machine = Partial<Record<ConcreteBackend, { gpu: boolean; device: string } | string>>

function fakeInit(machine: Machine) {
  return async (_tf: unknown, name: ConcreteBackend): Promise<SelectedBackend> => {
    const m = machine[name]
    if (m === undefined || typeof m === 'string') throw new BackendUnavailableError(name, m ?? 'not on this machine')
    return { backend: name, device: m.device, hardware: m.gpu, flags: {}, versions: {} }
  }
}

/** What the probe reports for the same machine (the capability of each started backend, or why not). */
async function probeOf(machine: Machine): Promise<BackendCapability[]> {
  const init = fakeInit(machine)
  const out: BackendCapability[] = []
  for (const name of AUTO_ORDER) {
    try {
      out.push(capabilityOf(await init(null, name)))
    } catch (err) {
      out.push({ name, available: false, gpu: false, detail: (err as BackendUnavailableError).reason })
    }
  }
  return out
}

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

describe("selectBackend('auto') (a worker starting) agrees with autoBackendFrom (the card)", () => {
  for (const [what, machine] of Object.entries(MACHINES)) {
    it(what, async () => {
      const announced = autoBackendFrom(await probeOf(machine))
      const { selected } = await selectBackend('auto', fakeInit(machine))
      expect(selected.backend).toBe(announced)
    })
  }

  it('says which GPU backend it passed over and why', async () => {
    const { selected } = await selectBackend('auto', fakeInit(MACHINES['tfjs-node-gpu installed, no CUDA device, lavapipe']))
    expect(selected.backend).toBe('wasm')
    expect(selected.flags.autoSkipped).toMatch(/tensorflow: .*no usable CUDA device\) is not a GPU/)
    expect(selected.flags.autoSkipped).toMatch(/webgpu: llvmpipe .* is not a GPU/)
  })

  it('picks onnxruntime before wasm without a GPU backend, and falls back to wasm saying why onnxruntime could not load', async () => {
    expect((await selectBackend('auto', fakeInit(MACHINES['no GPU backend, onnxruntime loads']))).selected.backend).toBe('onnxruntime')
    const { selected } = await selectBackend('auto', fakeInit(MACHINES["onnxruntime's native library cannot load"]))
    expect(selected.backend).toBe('wasm')
    expect(selected.flags.autoSkipped).toMatch(/onnxruntime: onnxruntime-node failed to load its native library: libonnxruntime\.so\.1/)
    expect(autoBackendFrom([cap('tensorflow', true, true, 'CUDA GPU'), cap('onnxruntime', true, false), cap('wasm', true, false)])).toBe('tensorflow')
  })

  it('a backend asked for by name is used even without a GPU', async () => {
    const { selected } = await selectBackend('tensorflow', fakeInit(MACHINES['tfjs-node-gpu installed, no CUDA device, lavapipe']))
    expect(selected).toMatchObject({ backend: 'tensorflow', hardware: false })
  })
})

describe('on this machine, in real worker processes', () => {
  const launcher = new NodeLauncher()
  const pools: WorkerPool[] = []
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.shutdown()))
  })

  it("the probe reports gpu for every backend, and a worker started with 'auto' gets the backend it announces", async () => {
    const caps = await probeInWorker(launcher)
    // the tfjs backends in the auto order, then the trees-only ones (xgboost)
    expect(caps.map((c) => c.name)).toEqual([...AUTO_ORDER, 'xgboost'])
    for (const c of caps) expect(typeof c.gpu, c.name).toBe('boolean')
    for (const c of caps) if (!c.available) expect(c.gpu, c.name).toBe(false)
    const announced = autoBackendFrom(caps)
    const pool = new WorkerPool(launcher, { family: 'mlp', size: 1, backend: 'auto' })
    pools.push(pool)
    await pool.start()
    expect(pool.workerInfo?.backend).toBe(announced)
  })
})
