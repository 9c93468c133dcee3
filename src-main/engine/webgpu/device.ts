/// <reference types="@webgpu/types" />
// A WGSL engine's device: Dawn's high-performance adapter with its real limits (not WebGPU's small
// defaults), every buffer created through one tracker (leak checks), every submit and readback
// counted (DeviceWork), device errors surfaced at the next readback, and a release that lets the
// process exit (a private Dawn instance is released by dropping it).
import { DeviceWork } from './counters'
import { describeAdapter, loadDawn, requestAdapter } from './dawn'

/** The limits an engine sizes its buffers and dispatches by (the device's, as granted). */
export interface WgslLimits {
  maxStorageBufferBindingSize: number
  maxBufferSize: number
  maxComputeWorkgroupStorageSize: number
  maxComputeWorkgroupsPerDimension: number
  maxStorageBuffersPerShaderStage: number
  maxComputeInvocationsPerWorkgroup: number
  minUniformBufferOffsetAlignment: number
}

export interface BufferStats {
  created: number
  destroyed: number
  live: number
  liveBytes: number
}

/** GPUBufferUsage values (fixed by the WebGPU spec; the globals exist only once Dawn is loaded). */
export const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80, QUERY_RESOLVE: 0x200 } as const

export class WgslDevice {
  private live = new Map<GPUBuffer, number>()
  private stats = { created: 0, destroyed: 0 }
  private firstError: string | null = null
  private lost: string | null = null
  private readonly pipelines = new Map<string, GPUComputePipeline>()
  private readonly explicit = new Map<string, { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout }>()
  private released = false
  readonly work = new DeviceWork()

  constructor(
    private instance: GPU | null,
    readonly device: GPUDevice,
    readonly limits: WgslLimits,
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
    if (padded > this.limits.maxBufferSize)
      throw new RangeError(`webgpu: buffer ${label} needs ${padded} bytes, the device allows ${this.limits.maxBufferSize}`)
    if (usage & USAGE.STORAGE && padded > this.limits.maxStorageBufferBindingSize) {
      throw new RangeError(
        `webgpu: buffer ${label} needs ${padded} bytes, more than one storage binding on this device (${this.limits.maxStorageBufferBindingSize}): use fewer rows or models per worker`,
      )
    }
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

  /** A pipeline with an explicit bind group layout (needed for dynamic uniform offsets), made once per key. */
  explicitPipeline(key: string, code: string, entries: GPUBindGroupLayoutEntry[]): { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout } {
    let p = this.explicit.get(key)
    if (!p) {
      const layout = this.device.createBindGroupLayout({ entries, label: key })
      const module = this.device.createShaderModule({ code, label: key })
      const pipeline = this.device.createComputePipeline({
        layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module, entryPoint: 'main' },
        label: key,
      })
      p = { pipeline, layout }
      this.explicit.set(key, p)
    }
    return p
  }

  submit(buffers: readonly GPUCommandBuffer[]): void {
    this.work.submit(this.device.queue, buffers)
  }

  /** Resolves when everything submitted so far is done (no data crosses the bus). */
  async drained(): Promise<void> {
    await this.work.drained(this.device.queue)
    this.check()
  }

  /** Throws the first device error (validation, out of memory) or the loss of the device. */
  check(): void {
    if (this.lost) throw new Error(`webgpu: the device was lost (${this.lost})`)
    if (this.firstError) throw new Error(`webgpu: ${this.firstError}`)
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
    this.explicit.clear()
    this.device.destroy()
    this.instance = null
  }
}

const LIMIT_NAMES: (keyof WgslLimits)[] = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'maxComputeInvocationsPerWorkgroup',
  'minUniformBufferOffsetAlignment',
]

/** Opens Dawn's high-performance adapter and a device with all its limits; BackendUnavailableError('webgpu') when there is none. */
export async function openWgslDevice(label: string, dawnFlags: string[] = []): Promise<WgslDevice> {
  const instance = (await loadDawn()).create(dawnFlags)
  const adapter = await requestAdapter(instance)
  const all: Record<string, number> = {}
  const lim = adapter.limits as unknown as Record<string, unknown>
  for (const key in lim) if (typeof lim[key] === 'number') all[key] = lim[key] as number
  const requiredFeatures: GPUFeatureName[] = adapter.features.has('timestamp-query') ? ['timestamp-query'] : []
  let device: GPUDevice
  try {
    device = await adapter.requestDevice({ requiredLimits: all, requiredFeatures, label })
  } catch {
    // some adapters reject a limit they list; ask for the ones the engine sizes by
    const some: Record<string, number> = {}
    for (const key of LIMIT_NAMES) if (typeof all[key] === 'number') some[key] = all[key]
    device = await adapter.requestDevice({ requiredLimits: some, label })
  }
  const limits = {} as WgslLimits
  for (const key of LIMIT_NAMES) limits[key] = Number((device.limits as unknown as Record<string, number>)[key])
  const { description, hardware } = describeAdapter(adapter)
  return new WgslDevice(instance, device, limits, description, hardware, device.features.has('timestamp-query'))
}
