// Paced reads (counters.ts): a staging buffer whose last read waited long sleeps a share of that
// wait before it maps, so Dawn's map polling (a core at 100 % while a map is pending) runs only for
// the rest; a map that was ready at once is an overshoot — kept apart, the share halved — and host
// ms between submits stays what was proven. Fake buffers stand in for the device, on a fake clock: a map resolves
// when the fake "device" finishes, at a time the test sets.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DeviceWork, nextPace, PACE_FROM_MS, PACE_SHARE, pacedSleepMs } from './counters'

/** A staging buffer whose work finishes `deviceMs` after each submit; counts the time its map is pending. */
function fakeDevice(deviceMs: () => number) {
  let readyAt = 0
  let pendingMs = 0
  const queue = { submit: () => void (readyAt = performance.now() + deviceMs()) } as unknown as GPUQueue
  const buffer = {
    size: 64,
    mapAsync: async () => {
      const from = performance.now()
      // a map of finished work resolves at once
      if (readyAt > from) await new Promise((r) => setTimeout(r, readyAt - from))
      pendingMs += performance.now() - from
    },
  } as unknown as GPUBuffer
  return { queue, buffer, pendingMs: () => pendingMs }
}

/** One read, run to its end on the fake clock (its sleep, then the device). */
async function read(work: DeviceWork, buffer: GPUBuffer): Promise<void> {
  const done = work.mapRead(buffer)
  await vi.runAllTimersAsync()
  await done
}

describe('paced reads', () => {
  // a fake clock: the sleeps and the device's time are exact, whatever the machine's load
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] }))
  afterEach(() => vi.useRealTimers())

  it('sleeps a share of the last wait, from the pacing threshold on', () => {
    expect(pacedSleepMs(undefined)).toBe(0)
    expect(pacedSleepMs({ lastMs: 100, waitMs: PACE_FROM_MS - 1, share: 0.5 })).toBe(0)
    expect(pacedSleepMs({ lastMs: 100, waitMs: 100, share: 0.5 })).toBe(50)
  })

  it('paces on the shorter of the last two waits: one long wait alone is no pace', () => {
    const first = nextPace(undefined, 0, 100, false)
    expect(pacedSleepMs(first)).toBe(0)
    const second = nextPace(first, 0, 100, false)
    expect(pacedSleepMs(second)).toBe(50)
    // rounds of 4 ms, one of 20 ms (an outlier): the read after it does not sleep
    let p = nextPace(nextPace(undefined, 0, 4, false), 0, 4, false)
    p = nextPace(p, 0, 20, false)
    expect(pacedSleepMs(p)).toBe(0)
    expect(pacedSleepMs(nextPace(p, 0, 20, false))).toBe(10)
  })

  it('halves the share after an overshoot, keeps the last true waits, and grows the share while reads still wait', () => {
    const first = nextPace(nextPace(undefined, 0, 100, false), 0, 100, false)
    expect(first).toEqual({ lastMs: 100, waitMs: 100, share: PACE_SHARE.first })
    const over = nextPace(first, 50, 51, true)
    expect(over).toEqual({ lastMs: 100, waitMs: 100, share: PACE_SHARE.first / 2 })
    const grown = nextPace(over, 25, 90, false)
    expect(grown.waitMs).toBe(90)
    expect(grown.share).toBeCloseTo(PACE_SHARE.first / 2 + PACE_SHARE.step)
    let p = grown
    for (let i = 0; i < 40; i++) p = nextPace(p, 10, 90, false)
    expect(p.share).toBe(PACE_SHARE.most)
    for (let i = 0; i < 40; i++) p = nextPace(p, 10, 11, true)
    expect(p.share).toBe(PACE_SHARE.least)
  })

  it('maps after sleeping, so the map is pending for less than the device time', async () => {
    const dev = fakeDevice(() => 150)
    const work = new DeviceWork()
    for (let i = 0; i < 5; i++) {
      work.submit(dev.queue, [])
      await read(work, dev.buffer)
    }
    // the first two reads' maps are pending the whole 150 ms; then sleeps of 150 ms × 0.5, 0.55, 0.6 and the rest pending
    const sleeps = [75, 82, 90]
    expect(work.readPacing()).toEqual({ paced: 3, sleptMs: 75 + 82 + 90, overshot: 0, overshotMs: 0 })
    expect(dev.pendingMs()).toBe(2 * 150 + sleeps.reduce((sum, s) => sum + 150 - s, 0))
    expect(work.snapshot().readbacks).toBe(5)
  })

  it('counts a map ready at once as an overshoot, apart from the proven host time', async () => {
    let device = 200
    const dev = fakeDevice(() => device)
    const work = new DeviceWork()
    for (let i = 0; i < 2; i++) {
      work.submit(dev.queue, [])
      await read(work, dev.buffer)
    }
    // the device gets much faster: the next paced sleep (half of 200 ms) outlasts it
    device = 2
    work.submit(dev.queue, [])
    await read(work, dev.buffer)
    expect(work.readPacing()).toEqual({ paced: 1, sleptMs: 100, overshot: 1, overshotMs: 100 })
    // host time between submits counts from the map's resolution, not from the sleep's start (nor the device's end)
    vi.advanceTimersByTime(5)
    work.submit(dev.queue, [])
    expect(work.snapshot().hostMsBetweenSubmits).toBe(5)
    // and the share halved: the next sleep is a quarter of the last true wait
    await read(work, dev.buffer)
    expect(work.readPacing().sleptMs).toBe(100 + 50)
  })
})
