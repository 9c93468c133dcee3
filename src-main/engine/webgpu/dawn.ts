/// <reference types="@webgpu/types" />
// The one way Trainpool opens WebGPU in Node: Dawn (the `webgpu` package), loaded once, its
// high-performance adapter, and the adapter described the same way for every use — the MLP's tfjs
// webgpu backend (which wants navigator.gpu), the trees' WGSL engine (its own instance) and the
// probe. Why a backend cannot start is one BackendUnavailableError('webgpu', reason).
import { BackendUnavailableError } from '../backend/types'

interface DawnModule {
  create(flags: string[]): GPU
  globals: Record<string, unknown>
}

let dawn: Promise<DawnModule> | null = null

/** The `webgpu` package, imported once per process. */
export function loadDawn(): Promise<DawnModule> {
  dawn ??= import('webgpu').then(
    (m) => m as unknown as DawnModule,
    (err: Error) => {
      dawn = null
      throw new BackendUnavailableError('webgpu', `the webgpu package (Dawn) failed to load: ${err.message}`)
    },
  )
  return dawn
}

/** A Dawn instance's high-performance adapter, or BackendUnavailableError saying there is none. */
export async function requestAdapter(instance: GPU): Promise<GPUAdapter> {
  const adapter = await instance.requestAdapter({ powerPreference: 'high-performance' })
  if (!adapter) {
    throw new BackendUnavailableError(
      'webgpu',
      'Dawn found no WebGPU adapter (no Vulkan/Metal/D3D12 device; on Debian without a GPU, install mesa-vulkan-drivers from bookworm-backports for lavapipe)',
    )
  }
  return adapter
}

/** The adapter's name, and whether it is GPU hardware: lavapipe, SwiftShader and fallback adapters run on the CPU. */
export function describeAdapter(adapter: GPUAdapter): { description: string; hardware: boolean } {
  const info = (adapter.info ?? {}) as Partial<GPUAdapterInfo>
  const description = info.description || [info.vendor, info.architecture, info.device].filter(Boolean).join(' ') || 'unknown adapter'
  const fallback = Boolean((adapter as unknown as { isFallbackAdapter?: boolean }).isFallbackAdapter)
  const software = fallback || /llvmpipe|lavapipe|swiftshader|software|microsoft basic render/i.test(`${description} ${info.architecture ?? ''}`)
  return { description: software ? `${description} (software adapter, runs on the CPU)` : description, hardware: !software }
}

/** The probe's answer for webgpu: an adapter found (and whether it is hardware), or why not. The instance is dropped after. */
export async function probeWebgpu(): Promise<{ name: 'webgpu'; available: boolean; gpu: boolean; detail: string }> {
  try {
    const instance = (await loadDawn()).create([])
    const { description, hardware } = describeAdapter(await requestAdapter(instance))
    return { name: 'webgpu', available: true, gpu: hardware, detail: description }
  } catch (err) {
    return { name: 'webgpu', available: false, gpu: false, detail: err instanceof BackendUnavailableError ? err.reason : (err as Error).message }
  }
}

/**
 * The Dawn flag (for create(); dawn.node applies it to the instance and every device made from it)
 * that turns Dawn's timestamp quantisation off. By default Dawn rounds every timestamp query down to
 * a 65 536 ns grid (a browser's defence against timing side channels), so a kernel of tens of µs
 * reads as 0 or 65 µs. A profiler wants the raw ticks; whether it got them: benchmarks/gpu-check/timestamp-grid.ts.
 */
export const UNQUANTISED_TIMESTAMPS = 'disable-dawn-features=timestamp_quantization'
