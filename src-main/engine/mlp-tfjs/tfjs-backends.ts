// The MLP's tfjs backends — tensorflow (tfjs-node-gpu), wasm (XNNPACK) and cpu (plain JavaScript) —
// as entries of the MLP family's backend table: each starts its tfjs backend in the worker and
// trains through FusedMlp (tfjs-training.ts). tfjs-node-gpu falls back to the CPU silently: it says so.
// (The MLP's webgpu backend is Trainpool's own WGSL engine, ../mlp-webgpu/.)
import { createRequire } from 'node:module'
import type * as TF from '@tensorflow/tfjs-core'
import type { BackendCapability } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { capabilityOf } from '../backend/capability'
import { BackendUnavailableError, type WorkerBackend, type WorkerRuntime } from '../backend/types'
import { cpuModel, packageVersion } from '../machine'
import { type DataTensors, disposeData, type Placement, trainModels, uploadData, warmUp } from './tfjs-training'

type Tf = typeof TF
const require = createRequire(__filename)

export type TfjsBackendName = 'tensorflow' | 'wasm' | 'cpu'

interface SelectedBackend {
  backend: TfjsBackendName
  device: string
  /** GPU backends: true on real GPU hardware */
  hardware: boolean
  flags: Record<string, string | number | boolean>
  versions: Record<string, string>
}

export interface TfjsRuntime extends WorkerRuntime {
  tf: Tf
}

async function initBackend(tf: Tf, name: TfjsBackendName): Promise<SelectedBackend> {
  const versions: Record<string, string> = { 'tfjs-core': tf.version_core }
  switch (name) {
    case 'tensorflow':
      return initTensorflow(tf, versions)
    case 'wasm': {
      await loadOptional('@tensorflow/tfjs-backend-wasm', 'wasm')
      await activate(tf, 'wasm')
      const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')
      const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT')
      return {
        backend: 'wasm',
        device: `${cpuModel()}, wasm${simd ? ' SIMD' : ''}, ${threads ? 'multi-threaded' : '1 thread'}`,
        hardware: false,
        flags: { WASM_HAS_SIMD_SUPPORT: Boolean(simd), WASM_HAS_MULTITHREAD_SUPPORT: Boolean(threads) },
        versions: { ...versions, 'tfjs-backend-wasm': packageVersion('@tensorflow/tfjs-backend-wasm') },
      }
    }
    case 'cpu': {
      await loadOptional('@tensorflow/tfjs-backend-cpu', 'cpu')
      await activate(tf, 'cpu')
      return {
        backend: 'cpu',
        device: `${cpuModel()}, plain JavaScript`,
        hardware: false,
        flags: {},
        versions: { ...versions, 'tfjs-backend-cpu': packageVersion('@tensorflow/tfjs-backend-cpu') },
      }
    }
  }
}

async function initTensorflow(tf: Tf, versions: Record<string, string>): Promise<SelectedBackend> {
  polyfillNodeUtilForTfjsNode()
  try {
    require.resolve('@tensorflow/tfjs-node-gpu')
  } catch {
    throw new BackendUnavailableError(
      'tensorflow',
      '@tensorflow/tfjs-node-gpu is not installed (an optional dependency: it needs Linux x64, CUDA 11.2 + cuDNN 8.1, and network access during npm install to fetch libtensorflow)',
    )
  }
  try {
    require('@tensorflow/tfjs-node-gpu')
  } catch (err) {
    throw new BackendUnavailableError('tensorflow', `@tensorflow/tfjs-node-gpu failed to load: ${(err as Error).message}`)
  }
  await activate(tf, 'tensorflow')
  const binding = (tf.backend() as unknown as { binding?: { isUsingGpuDevice?: () => boolean } }).binding
  const gpu = Boolean(binding?.isUsingGpuDevice?.())
  return {
    backend: 'tensorflow',
    device: gpu
      ? `CUDA GPU ${process.env.CUDA_VISIBLE_DEVICES ? `(CUDA_VISIBLE_DEVICES=${process.env.CUDA_VISIBLE_DEVICES})` : ''}`.trim()
      : `${cpuModel()} (libtensorflow CPU: no usable CUDA device)`,
    hardware: gpu,
    flags: { TF_FORCE_GPU_ALLOW_GROWTH: process.env.TF_FORCE_GPU_ALLOW_GROWTH ?? '' },
    versions: { ...versions, 'tfjs-node-gpu': packageVersion('@tensorflow/tfjs-node-gpu') },
  }
}

/** tfjs-node 4.22 calls util.isNullOrUndefined, removed in Node 23 (Electron 45 runs Node 24). */
function polyfillNodeUtilForTfjsNode(): void {
  const util = require('node:util') as Record<string, unknown>
  if (typeof util.isNullOrUndefined !== 'function') util.isNullOrUndefined = (v: unknown) => v === null || v === undefined
  if (typeof util.isArray !== 'function') util.isArray = Array.isArray
}

async function loadOptional(pkg: string, name: TfjsBackendName): Promise<void> {
  try {
    require(pkg)
  } catch (err) {
    throw new BackendUnavailableError(name, `${pkg} failed to load: ${(err as Error).message}`)
  }
}

async function activate(tf: Tf, name: string): Promise<void> {
  let ok = false
  try {
    ok = await tf.setBackend(name)
  } catch (err) {
    throw new BackendUnavailableError(name, `initialisation failed: ${(err as Error).message}`)
  }
  if (!ok) throw new BackendUnavailableError(name, 'initialisation failed (tf.setBackend returned false)')
  await tf.ready()
}

/** Starts the named tfjs backend in this process (tfjs-core loaded on first use). */
export async function startTfjs(name: TfjsBackendName, init: (tf: Tf, name: TfjsBackendName) => Promise<SelectedBackend> = initBackend): Promise<TfjsRuntime> {
  const tf: Tf = require('@tensorflow/tfjs-core')
  const selected = await init(tf, name)
  return {
    tf,
    backend: selected.backend,
    device: selected.device,
    hardware: selected.hardware,
    flags: selected.flags,
    versions: selected.versions,
    memory: () => {
      const m = tf.memory()
      return { numTensors: m.numTensors, numBytes: m.numBytes }
    },
    heapBytes: () => (tf.backend() as unknown as { wasm?: { HEAPU8?: Uint8Array } } | undefined)?.wasm?.HEAPU8?.byteLength ?? null,
    release: () => {},
  }
}

/**
 * What each tfjs backend offers here, without training. tensorflow is started for real (loading
 * libtensorflow is the only way to learn whether it found a CUDA device), the way a worker starts
 * it, so `gpu` is what a run would get.
 */
const PROBES: Record<TfjsBackendName, () => Promise<BackendCapability>> = {
  tensorflow: async () => capabilityOf(await startTfjs('tensorflow')),
  wasm: async () => ({
    name: 'wasm',
    available: typeof (globalThis as Record<string, unknown>).WebAssembly === 'object',
    gpu: false,
    detail: `${cpuModel()}, WebAssembly (XNNPACK)`,
  }),
  cpu: async () => ({ name: 'cpu', available: true, gpu: false, detail: `${cpuModel()}, plain JavaScript` }),
}

/**
 * Where each backend keeps the training rows (../trainer.ts Placement): on the device for CUDA
 * (host copies cost a transfer), on the host for wasm and cpu (their memory is host memory and
 * their gather/slice kernels are far slower than a memcpy).
 */
const PLACEMENT: Record<TfjsBackendName, Placement> = { tensorflow: 'device', wasm: 'host', cpu: 'host' }

/** The table entry of one tfjs backend. */
export function tfjsBackend(name: TfjsBackendName): WorkerBackend<MlpParams, TfjsRuntime, DataTensors> {
  return {
    name,
    probe: PROBES[name],
    start: () => startTfjs(name),
    prepare: (rt, dataset, workload) => uploadData(rt.tf, dataset, workload, PLACEMENT[name]),
    dispose: (_rt, data) => disposeData(data),
    warmUp: (rt, data, workload, indices) => warmUp(rt.tf, data, workload, indices),
    /** a per-model learning rate is a vector in the fused Adam step (FusedMlp) */
    perModel: ['lr'],
    /** a fold is its rows held out of the shared batch order (per-model row weights in FusedMlp's step): a set's folds fuse */
    foldsHeldOut: true,
    /** each model stops when its held-out metric stops improving, and leaves the fused program (tfjs-training.ts, ../mlp/early-stopping.ts) */
    earlyStopping: true,
    train: (rt, data, workload, indices, options, hooks) => trainModels(rt.tf, data, workload, indices, options, hooks),
  }
}
