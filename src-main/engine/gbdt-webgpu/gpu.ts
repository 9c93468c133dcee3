/// <reference types="@webgpu/types" />
// The WebGPU device the trees engine runs on: Dawn (the `webgpu` package) with the adapter's real
// limits, every buffer created through one tracker (live count and bytes, for leak checks), every
// dispatch, submit and read-back counted (DeviceWork), device errors surfaced at the next read-back,
// and a release that lets the process exit.
//
// Its own Dawn instance (create([]) from the one loader, ../webgpu/dawn.ts), not navigator.gpu: the
// gbdt worker never loads tfjs, and a private instance is released by dropping it (Dawn keeps Node
// alive while one is referenced).
import { DeviceWork } from '../webgpu/counters'
import { describeAdapter, loadDawn, requestAdapter } from '../webgpu/dawn'

/** The limits the engine sizes its buffers, chunks and dispatches by (the device's, as granted). */
export interface GbdtGpuLimits {
  maxStorageBufferBindingSize: number
  maxBufferSize: number
  maxComputeWorkgroupStorageSize: number
  maxComputeWorkgroupsPerDimension: number
  maxStorageBuffersPerShaderStage: number
  maxComputeInvocationsPerWorkgroup: number
}

export interface BufferStats {
  created: number
  destroyed: number
  live: number
  liveBytes: number
}

/** GPUBufferUsage / GPUMapMode values (WebGPU constants, fixed by the spec). */
export const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80, QUERY_RESOLVE: 0x200 } as const

export class GbdtGpu {
  private live = new Map<GPUBuffer, number>()
  private stats = { created: 0, destroyed: 0 }
  private firstError: string | null = null
  private lost: string | null = null
  readonly pipelines = new Map<string, GPUComputePipeline>()
  private released = false
  /** every dispatch, submit and read-back of the engine (the runtime's deviceCounters) */
  readonly work = new DeviceWork()

  constructor(
    private instance: GPU | null,
    readonly device: GPUDevice,
    readonly limits: GbdtGpuLimits,
    /** adapter description; "(software adapter, runs on the CPU)" appended for lavapipe & co. */
    readonly description: string,
    /** false for a software adapter (lavapipe, SwiftShader) */
    readonly hardware: boolean,
    /** the device has 'timestamp-query' (per-kernel times when profiling) */
    readonly timestamps: boolean,
  ) {
    device.addEventListener('uncapturederror', (ev) => {
      const e = (ev as GPUUncapturedErrorEvent).error
      this.firstError ??= e?.message ?? String(e)
    })
    void device.lost.then((info) => {
      if (!this.released) this.lost = `${info.reason}: ${info.message}`
    })
  }

  createBuffer(size: number, usage: number, label: string): GPUBuffer {
    this.check()
    const padded = Math.max(16, Math.ceil(size / 16) * 16)
    if (padded > this.limits.maxBufferSize) throw new RangeError(`webgpu: buffer ${label} needs ${padded} bytes, the device allows ${this.limits.maxBufferSize}`)
    const buffer = this.device.createBuffer({ size: padded, usage, label })
    this.live.set(buffer, padded)
    this.stats.created++
    return buffer
  }

  destroyBuffer(buffer: GPUBuffer | null | undefined): void {
    if (!buffer || !this.live.has(buffer)) return
    this.live.delete(buffer)
    this.stats.destroyed++
    buffer.destroy()
  }

  bufferStats(): BufferStats {
    let liveBytes = 0
    for (const b of this.live.values()) liveBytes += b
    return { created: this.stats.created, destroyed: this.stats.destroyed, live: this.live.size, liveBytes }
  }

  pipeline(key: string, code: () => string): GPUComputePipeline {
    let p = this.pipelines.get(key)
    if (!p) {
      const module = this.device.createShaderModule({ code: code(), label: key })
      p = this.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' }, label: key })
      this.pipelines.set(key, p)
    }
    return p
  }

  /** Throws the first device error (validation, out of memory) or the loss of the device. */
  check(): void {
    if (this.lost) throw new Error(`webgpu: the device was lost (${this.lost})`)
    if (this.firstError) throw new Error(`webgpu: ${this.firstError}`)
  }

  submit(buffers: readonly GPUCommandBuffer[]): void {
    this.work.submit(this.device.queue, buffers)
  }

  /** Copies [0, bytes) of a MAP_READ buffer to the host (after the queue's work before it). */
  async read(staging: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
    await this.work.mapRead(staging, 0, bytes)
    const out = staging.getMappedRange(0, bytes).slice(0)
    staging.unmap()
    this.check()
    return out
  }

  release(): void {
    if (this.released) return
    this.released = true
    for (const b of this.live.keys()) b.destroy()
    this.stats.destroyed += this.live.size
    this.live.clear()
    this.pipelines.clear()
    this.device.destroy()
    this.instance = null
  }
}

const LIMIT_NAMES: (keyof GbdtGpuLimits)[] = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'maxComputeInvocationsPerWorkgroup',
]

/**
 * Opens Dawn's high-performance adapter and a device with all of the adapter's limits (not
 * WebGPU's defaults: 128 MiB storage bindings and 16 KiB workgroup memory would cut the chunks).
 * Throws BackendUnavailableError('webgpu') with the reason when there is no adapter.
 */
export async function openGbdtGpu(dawnFlags: string[] = []): Promise<GbdtGpu> {
  const instance = (await loadDawn()).create(dawnFlags)
  const adapter = await requestAdapter(instance)
  const all: Record<string, number> = {}
  const lim = adapter.limits as unknown as Record<string, unknown>
  for (const key in lim) if (typeof lim[key] === 'number') all[key] = lim[key] as number
  const requiredFeatures: GPUFeatureName[] = adapter.features.has('timestamp-query') ? ['timestamp-query'] : []
  let device: GPUDevice
  try {
    device = await adapter.requestDevice({ requiredLimits: all, requiredFeatures, label: 'trainpool-gbdt' })
  } catch {
    // some adapters reject a limit they list; ask for the ones the engine sizes by
    const some: Record<string, number> = {}
    for (const key of LIMIT_NAMES) if (typeof all[key] === 'number') some[key] = all[key]
    device = await adapter.requestDevice({ requiredLimits: some, label: 'trainpool-gbdt' })
  }
  const limits = {} as GbdtGpuLimits
  for (const key of LIMIT_NAMES) limits[key] = Number((device.limits as unknown as Record<string, number>)[key])
  const { description, hardware } = describeAdapter(adapter)
  return new GbdtGpu(instance, device, limits, description, hardware, device.features.has('timestamp-query'))
}
