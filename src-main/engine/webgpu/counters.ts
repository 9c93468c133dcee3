// The device work a WGSL engine does, counted where it happens: every dispatch, submit and
// readback goes through one DeviceWork per device, so the run can say why a GPU sat idle.
// "Host ms between submits" is time the device had provably finished everything (a readback or
// onSubmittedWorkDone came back with nothing else queued) until the host's next submit.
//
// Reads and drains are paced. While a map or onSubmittedWorkDone is pending, Dawn's node binding
// polls for it in a setImmediate loop that never sleeps and makes a new function every turn
// (crbug.com/dawn/1127): a core at 100 % and a collection every ~70 ms, whose pauses land between
// submits. A wait on a staging buffer (or the queue) that took long last time first sleeps a share
// of that with nothing pending, then maps (or asks). One ready at once may have been ready at any
// moment of the sleep: that sleep is kept apart (ReadPacing.overshotMs, an upper bound on idle time
// the pacing hid; host ms between submits stays what was proven) and the share halves; each wait
// that still had to wait raises it a little. The wait slept on is the shorter of the last two: one
// long wait alone (a collection, a deeper tree) is no pace, and on a GPU whose rounds take ~4 ms an
// H100 showed each such outlier followed by a sleep that outlasted the next round.
import { type DeviceCounters, NO_DEVICE_WORK } from '@shared/contract'

/** GPUMapMode.READ (the global exists only where Dawn's globals were installed) */
const MAP_MODE_READ = 0x1

/** A wait shorter than this is not paced: a timer's own lateness (≈ 1 ms) would be a good part of it. */
export const PACE_FROM_MS = 8
/** the share of the last wait a buffer's first paced read sleeps, and the most it grows to (rounds of a chunk take about the same time) */
export const PACE_SHARE = { first: 0.5, most: 0.85, least: 1 / 16, step: 0.05 }
/** a map that resolves within this of being asked was ready before it: the sleep overshot */
export const READY_AT_ONCE_MS = 1

/** A staging buffer's last reads: the last one's wait, the shorter of the last two (0 after one), and the share of that the next read sleeps. */
interface Pace {
  lastMs: number
  waitMs: number
  share: number
}

/** How long a read sleeps before mapping (0: not paced). */
export function pacedSleepMs(pace: Pace | undefined): number {
  return pace && pace.waitMs >= PACE_FROM_MS ? Math.floor(pace.waitMs * pace.share) : 0
}

/** The pace after a read that slept `sleptMs` (0: not paced) and waited `waitedMs` in all. */
export function nextPace(pace: Pace | undefined, sleptMs: number, waitedMs: number, overshot: boolean): Pace {
  const share = pace?.share ?? PACE_SHARE.first
  if (overshot) return { ...pace!, share: Math.max(PACE_SHARE.least, share / 2) }
  return {
    lastMs: waitedMs,
    waitMs: pace ? Math.min(pace.lastMs, waitedMs) : 0,
    share: sleptMs > 0 ? Math.min(PACE_SHARE.most, share + PACE_SHARE.step) : share,
  }
}

/** Reads that slept before mapping; those whose map was ready at once, and their sleeps (idle they may hide). */
export interface ReadPacing {
  paced: number
  sleptMs: number
  overshot: number
  overshotMs: number
}

export class DeviceWork {
  private counts: DeviceCounters = { ...NO_DEVICE_WORK }
  /** when the device was last seen idle with nothing queued (null: busy, or unknown) */
  private idleSince: number | null = null
  /** per staging buffer (its reads) and queue (its drains): the last wait and the share of it to sleep */
  private readonly paces = new WeakMap<GPUBuffer | GPUQueue, Pace>()
  private readonly pacing: ReadPacing = { paced: 0, sleptMs: 0, overshot: 0, overshotMs: 0 }

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
    await this.paced(buffer, () => buffer.mapAsync(MAP_MODE_READ, offset, size))
    this.counts.readbacks += 1
    this.counts.bytesReadBack += size
    this.doneUpTo(submitted, performance.now())
  }

  /** Waits until the device has done everything submitted (not a readback: nothing crosses the bus). */
  async drained(queue: GPUQueue): Promise<void> {
    const submitted = this.counts.submits
    await this.paced(queue, () => queue.onSubmittedWorkDone())
    this.doneUpTo(submitted, performance.now())
  }

  /** One wait on the device (a map, or the queue drained), paced by how long the last wait on `key` took. */
  private async paced(key: GPUBuffer | GPUQueue, wait: () => Promise<unknown>): Promise<void> {
    const asked = performance.now()
    const pace = this.paces.get(key)
    const sleep = pacedSleepMs(pace)
    if (sleep > 0) await new Promise((resolve) => setTimeout(resolve, sleep))
    const waited = performance.now()
    await wait()
    const now = performance.now()
    const slept = sleep > 0 ? waited - asked : 0
    const overshot = sleep > 0 && now - waited < READY_AT_ONCE_MS
    this.paces.set(key, nextPace(pace, slept, now - asked, overshot))
    if (sleep > 0) {
      this.pacing.paced++
      this.pacing.sleptMs += slept
    }
    if (overshot) {
      this.pacing.overshot++
      this.pacing.overshotMs += slept
    }
  }

  /** The device finished the first `submitted` submits by `at`: idle since then unless more were queued meanwhile. */
  private doneUpTo(submitted: number, at: number): void {
    if (this.counts.submits === submitted) this.idleSince = at
  }

  /** How the reads were paced so far (cumulative). */
  readPacing(): ReadPacing {
    return { ...this.pacing }
  }

  /** Cumulative counts (the worker loop sends a job's difference). */
  snapshot(): DeviceCounters {
    return { ...this.counts }
  }
}
