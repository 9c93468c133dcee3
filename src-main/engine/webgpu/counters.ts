// The device work a WGSL engine does, counted where it happens: every dispatch, submit and
// readback goes through one DeviceWork per device, so the run can say why a GPU sat idle.
// "Host ms between submits" is time the device had provably finished everything (a readback or
// onSubmittedWorkDone came back with nothing else queued) until the host's next submit.
import { type DeviceCounters, NO_DEVICE_WORK } from '@shared/contract'

/** GPUMapMode.READ (the global exists only where Dawn's globals were installed) */
const MAP_MODE_READ = 0x1

export class DeviceWork {
  private counts: DeviceCounters = { ...NO_DEVICE_WORK }
  /** when the device was last seen idle with nothing queued (null: busy, or unknown) */
  private idleSince: number | null = null

  dispatched(n = 1): void {
    this.counts.dispatches += n
  }

  submit(queue: GPUQueue, buffers: readonly GPUCommandBuffer[]): void {
    if (this.idleSince !== null) this.counts.hostMsBetweenSubmits += performance.now() - this.idleSince
    this.idleSince = null
    queue.submit(buffers)
    this.counts.submits += 1
  }

  /** Maps a staging buffer for reading (the one way a WGSL engine reads the device) and counts it. */
  async mapRead(buffer: GPUBuffer, offset = 0, size = buffer.size - offset): Promise<void> {
    const submitted = this.counts.submits
    await buffer.mapAsync(MAP_MODE_READ, offset, size)
    this.counts.readbacks += 1
    this.counts.bytesReadBack += size
    this.doneUpTo(submitted)
  }

  /** Waits until the device has done everything submitted (not a readback: nothing crosses the bus). */
  async drained(queue: GPUQueue): Promise<void> {
    const submitted = this.counts.submits
    await queue.onSubmittedWorkDone()
    this.doneUpTo(submitted)
  }

  /** The device finished the first `submitted` submits: idle from now unless more were queued meanwhile. */
  private doneUpTo(submitted: number): void {
    if (this.counts.submits === submitted) this.idleSince = performance.now()
  }

  /** Cumulative counts (the worker loop sends a job's difference). */
  snapshot(): DeviceCounters {
    return { ...this.counts }
  }
}
