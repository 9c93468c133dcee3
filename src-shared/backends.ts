// What `auto` resolves to, decided in one place over the structured fields of a BackendCapability
// (available, gpu), never over its detail text. The worker applies it when it starts with 'auto'
// (src-main/engine/backends.ts selectBackend); main applies it to the probe's results for the
// capabilities' autoBackend; so the backend the app announces is the backend a run gets.
import type { BackendCapability, ConcreteBackend } from './contract'

/**
 * `auto` preference: tensorflow → webgpu → onnxruntime → wasm → cpu. onnxruntime (ONNX Runtime's CPU
 * provider, native GEMMs) comes first on machines without a GPU backend; wasm is the fallback where
 * its native library cannot load (the probe says why).
 */
export const AUTO_ORDER: readonly ConcreteBackend[] = ['tensorflow', 'webgpu', 'onnxruntime', 'wasm', 'cpu']

/** Backends worth picking automatically only on GPU hardware (tfjs-node-gpu falls back to the CPU silently; WebGPU without a GPU is lavapipe). */
const GPU_BACKENDS: ReadonlySet<ConcreteBackend> = new Set<ConcreteBackend>(['tensorflow', 'webgpu'])

/** The one rule of `auto`: available and, for a GPU backend, on GPU hardware. */
export function autoAccepts(capability: BackendCapability): boolean {
  return capability.available && (!GPU_BACKENDS.has(capability.name) || capability.gpu === true)
}

/** The backend `auto` picks from probe results: the first of AUTO_ORDER that autoAccepts(). */
export function autoBackendFrom(capabilities: readonly BackendCapability[]): ConcreteBackend {
  for (const name of AUTO_ORDER) {
    const c = capabilities.find((b) => b.name === name)
    if (c && autoAccepts(c)) return name
  }
  return 'cpu'
}
