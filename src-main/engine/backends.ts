// Backend selection inside a worker process. `auto` = tensorflow → webgpu → onnxruntime → wasm → cpu, where the
// GPU backends count only on real GPU hardware (tfjs-node-gpu silently falls back to the CPU, and
// WebGPU on Linux without a GPU is Mesa's lavapipe); those stay reachable by asking for them by name.
// Asking for a backend that is not available is an error with the reason, never a silent fallback.
// What `auto` picks is decided in one place, autoAccepts() in src-shared/backends.ts, over a
// BackendCapability's structured fields (available, gpu): by selectBackend('auto') when a worker
// starts and by autoBackendFrom() over the probe's results (the capabilities card), so both agree.
import { createRequire } from 'node:module'
import os from 'node:os'
import type * as TF from '@tensorflow/tfjs-core'
import { AUTO_ORDER, autoAccepts } from '@shared/backends'
import type { BackendCapability, BackendName, ConcreteBackend } from '@shared/contract'
import { probeOnnxRuntime } from './onnx/runtime'
import { probeXgboost } from './xgboost'

type Tf = typeof TF
const require = createRequire(__filename)

export interface SelectedBackend {
  backend: ConcreteBackend
  device: string
  /** GPU backends: true on real GPU hardware */
  hardware: boolean
  flags: Record<string, string | number | boolean>
  versions: Record<string, string>
}

export class BackendUnavailableError extends Error {
  constructor(
    readonly backend: BackendName,
    readonly reason: string,
  ) {
    super(`backend ${backend} is not available here: ${reason}`)
    this.name = 'BackendUnavailableError'
  }
}

export function cpuModel(): string {
  const cpus = os.cpus()
  return `${cpus[0]?.model?.trim() || os.arch()} (${cpus.length} cores)`
}

export { AUTO_ORDER, autoAccepts, autoBackendFrom } from '@shared/backends'

/** Why autoAccepts() passed a backend by (for the autoSkipped flag and the error text). */
function autoSkipReason(capability: BackendCapability): string {
  return capability.available ? `${capability.name}: ${capability.detail} is not a GPU` : `${capability.name}: ${capability.detail}`
}

/** A started backend as a capability: what the probe reports for it, and what `auto` judges. */
export function capabilityOf(selected: SelectedBackend): BackendCapability {
  return { name: selected.backend, available: true, gpu: selected.hardware, detail: selected.device }
}

function unavailable(name: ConcreteBackend, err: unknown): BackendCapability {
  const reason = (err as { reason?: unknown } | null)?.reason
  return { name, available: false, gpu: false, detail: typeof reason === 'string' ? reason : err instanceof Error ? err.message : String(err) }
}

/**
 * The `auto` rule applied while starting backends: the candidates in AUTO_ORDER are started one by
 * one and the first that autoAccepts() is kept (the rule autoBackendFrom() applies to the probe), so
 * the backend a run gets is the one the capabilities card announced. What was passed over, and why,
 * goes in the kept one's flags.autoSkipped. A started candidate that is passed over stays as it is
 * (see engine/families/mlp.ts: releasing Dawn's instance under a live device can crash the process).
 */
export async function startAuto<T extends { flags: Record<string, string | number | boolean> }>(
  start: (candidate: ConcreteBackend) => Promise<T>,
  capability: (started: T) => BackendCapability,
): Promise<T> {
  const reasons: string[] = []
  for (const candidate of AUTO_ORDER) {
    let started: T
    try {
      started = await start(candidate)
    } catch (err) {
      reasons.push(autoSkipReason(unavailable(candidate, err)))
      continue
    }
    const c = capability(started)
    if (!autoAccepts(c)) {
      reasons.push(autoSkipReason(c))
      continue
    }
    started.flags.autoSkipped = reasons.join('; ')
    return started
  }
  throw new BackendUnavailableError('auto', reasons.join('; '))
}

/**
 * Loads tfjs-core and initialises the requested tfjs backend in this process (`auto`: startAuto over
 * the tfjs backends; onnxruntime, not a tfjs backend, counts as unavailable here — the MLP family
 * applies startAuto over all its backends itself).
 */
export async function selectBackend(
  name: BackendName,
  init: (tf: Tf, name: ConcreteBackend) => Promise<SelectedBackend> = initBackend,
): Promise<{ tf: Tf; selected: SelectedBackend }> {
  const tf: Tf = require('@tensorflow/tfjs-core')
  if (name !== 'auto') return { tf, selected: await init(tf, name) }
  return { tf, selected: await startAuto((candidate) => init(tf, candidate), capabilityOf) }
}

export async function initBackend(tf: Tf, name: ConcreteBackend): Promise<SelectedBackend> {
  const versions: Record<string, string> = { 'tfjs-core': tf.version_core }
  switch (name) {
    case 'tensorflow':
      return initTensorflow(tf, versions)
    case 'webgpu':
      return initWebgpu(tf, versions)
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
    case 'onnxruntime':
      throw new BackendUnavailableError('onnxruntime', 'onnxruntime is not a tfjs backend: the MLP family starts it itself (engine/onnx/)')
    case 'xgboost':
      throw new BackendUnavailableError('xgboost', 'xgboost is not a tfjs backend: it trains gradient-boosted trees only (--model gbdt)')
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

interface GpuAdapterLike {
  info?: { vendor?: string; architecture?: string; device?: string; description?: string }
  isFallbackAdapter?: boolean
}

let webgpuGlobalsInstalled = false

/** Installs navigator.gpu from Dawn (the `webgpu` package) — must happen before tfjs-backend-webgpu loads. */
async function installWebgpuGlobals(): Promise<void> {
  if (webgpuGlobalsInstalled) return
  let dawn: { create: (flags: string[]) => unknown; globals: Record<string, unknown> }
  try {
    dawn = (await import('webgpu')) as unknown as typeof dawn
  } catch (err) {
    throw new BackendUnavailableError('webgpu', `the webgpu package (Dawn) failed to load: ${(err as Error).message}`)
  }
  Object.assign(globalThis, dawn.globals)
  const g = globalThis as unknown as { navigator?: Record<string, unknown> }
  if (!g.navigator) (globalThis as Record<string, unknown>).navigator = {}
  g.navigator!.gpu = dawn.create([])
  webgpuGlobalsInstalled = true
}

/** Lets the process exit: Dawn keeps Node alive while navigator.gpu exists. */
export function releaseWebgpu(): void {
  const g = globalThis as unknown as { navigator?: Record<string, unknown> }
  if (g.navigator && 'gpu' in g.navigator) delete g.navigator.gpu
}

function describeAdapter(adapter: GpuAdapterLike): { device: string; hardware: boolean } {
  const info = adapter.info ?? {}
  const description = info.description || [info.vendor, info.architecture, info.device].filter(Boolean).join(' ') || 'unknown adapter'
  const software =
    Boolean(adapter.isFallbackAdapter) ||
    /llvmpipe|lavapipe|swiftshader|software|microsoft basic render/i.test(`${description} ${info.architecture ?? ''}`)
  return { device: software ? `${description} (software adapter, runs on the CPU)` : description, hardware: !software }
}

async function requestAdapter(): Promise<GpuAdapterLike> {
  await installWebgpuGlobals()
  const gpu = (globalThis as unknown as { navigator: { gpu: { requestAdapter: (o?: object) => Promise<GpuAdapterLike | null> } } })
    .navigator.gpu
  const adapter = (await gpu.requestAdapter({ powerPreference: 'high-performance' })) ?? null
  if (!adapter) {
    throw new BackendUnavailableError(
      'webgpu',
      'Dawn found no WebGPU adapter (no Vulkan/Metal/D3D12 device; on Debian without a GPU, install mesa-vulkan-drivers from bookworm-backports for lavapipe)',
    )
  }
  return adapter
}

async function initWebgpu(tf: Tf, versions: Record<string, string>): Promise<SelectedBackend> {
  const adapter = await requestAdapter()
  await import('@tensorflow/tfjs-backend-webgpu')
  await activate(tf, 'webgpu')
  const { device, hardware } = describeAdapter(adapter)
  const flags: Record<string, string | number | boolean> = {}
  for (const flag of ['WEBGPU_CPU_FORWARD', 'WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD', 'WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE']) {
    try {
      flags[flag] = tf.env().get(flag) as string | number | boolean
    } catch {
      /* flag unknown in this tfjs version */
    }
  }
  return {
    backend: 'webgpu',
    device,
    hardware,
    flags,
    versions: {
      ...versions,
      'tfjs-backend-webgpu': packageVersion('@tensorflow/tfjs-backend-webgpu'),
      webgpu: packageVersion('webgpu'),
    },
  }
}

async function loadOptional(pkg: string, name: ConcreteBackend): Promise<void> {
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
    throw new BackendUnavailableError(name as ConcreteBackend, `initialisation failed: ${(err as Error).message}`)
  }
  if (!ok) throw new BackendUnavailableError(name as ConcreteBackend, 'initialisation failed (tf.setBackend returned false)')
  await tf.ready()
}

export function packageVersion(pkg: string): string {
  try {
    return (require(`${pkg}/package.json`) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

/**
 * What this machine offers, checked without training (the capabilities card and its `auto`). Runs
 * in a short-lived worker process. tensorflow is started for real (loading libtensorflow is the only
 * way to learn whether it found a CUDA device), the way a worker starts it, so `gpu` is what a run
 * would get; webgpu asks Dawn for its adapter.
 */
export async function probeBackends(): Promise<BackendCapability[]> {
  const out: BackendCapability[] = []
  try {
    const tf: Tf = require('@tensorflow/tfjs-core')
    out.push(capabilityOf(await initTensorflow(tf, { 'tfjs-core': tf.version_core })))
  } catch (err) {
    out.push(unavailable('tensorflow', err))
  }
  try {
    const { device, hardware } = describeAdapter(await requestAdapter())
    out.push({ name: 'webgpu', available: true, gpu: hardware, detail: device })
  } catch (err) {
    out.push(unavailable('webgpu', err))
  } finally {
    releaseWebgpu()
    webgpuGlobalsInstalled = false
  }
  // ONNX Runtime's CPU provider (the MLP only): the addon loaded and a session run, or why not
  out.push(await probeOnnxRuntime())
  out.push({ name: 'wasm', available: typeof (globalThis as Record<string, unknown>).WebAssembly === 'object', gpu: false, detail: `${cpuModel()}, WebAssembly (XNNPACK)` })
  out.push({ name: 'cpu', available: true, gpu: false, detail: `${cpuModel()}, plain JavaScript` })
  // the user's own libxgboost (gbdt family only): loaded here, in the probe's worker, never in main
  out.push(probeXgboost())
  return out
}
