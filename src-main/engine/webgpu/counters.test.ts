// Paced reads (counters.ts): a staging buffer whose last read waited long sleeps a share of that
// wait before it maps, so Dawn's map polling (a core at 100 % while a map is pending) runs only for
// the rest; a map that was ready at once is an overshoot — kept apart, the share halved — and host
// ms between submits stays what was proven. Fake buffers stand in for the device: a map resolves
// when the fake "device" finishes, at a time the test sets.
import { describe, expect, it } from 'vitest'
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
      // a map of finished work resolves on the next turn, as Dawn's does
      await (readyAt > from ? new Promise((r) => setTimeout(r, readyAt - from)) : new Promise((r) => setImmediate(r)))
      pendingMs += performance.now() - from
    },
  } as unknown as GPUBuffer
  return { queue, buffer, pendingMs: () => pendingMs }
}

describe('paced reads', () => {
  it('sleeps a share of the last wait, from the pacing threshold on', () => {
    expect(pacedSleepMs(undefined)).toBe(0)
    expect(pacedSleepMs({ waitMs: PACE_FROM_MS - 1, share: 0.5 })).toBe(0)
    expect(pacedSleepMs({ waitMs: 100, share: 0.5 })).toBe(50)
  })

  it('halves the share after an overshoot, keeps the last true wait, and grows the share while reads still wait', () => {
    const first = nextPace(undefined, 0, 100, false)
    expect(first).toEqual({ waitMs: 100, share: PACE_SHARE.first })
    const over = nextPace(first, 50, 51, true)
    expect(over).toEqual({ waitMs: 100, share: PACE_SHARE.first / 2 })
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
    for (let i = 0; i < 4; i++) {
      work.submit(dev.queue, [])
      await work.mapRead(dev.buffer)
    }
    const pacing = work.readPacing()
    expect(pacing.paced).toBe(3)
    // the first read's map is pending the whole 150 ms; the paced ones about half of it (a late timer only makes a sleep longer)
    expect(dev.pendingMs()).toBeLessThan(150 + 3 * 110)
    expect(pacing.sleptMs).toBeGreaterThan(3 * 70)
    expect(work.snapshot().readbacks).toBe(4)
  })

  it('counts a map ready at once as an overshoot, apart from the proven host time', async () => {
    let device = 200
    const dev = fakeDevice(() => device)
    const work = new DeviceWork()
    work.submit(dev.queue, [])
    await work.mapRead(dev.buffer)
    // the device gets much faster: the next paced sleep (half of 200 ms) outlasts it
    device = 2
    work.submit(dev.queue, [])
    await work.mapRead(dev.buffer)
    const pacing = work.readPacing()
    expect(pacing.overshot).toBe(1)
    expect(pacing.overshotMs).toBeGreaterThanOrEqual(95)
    // host time between submits counts from the map's resolution, not from the sleep's start
    await new Promise((r) => setTimeout(r, 5))
    work.submit(dev.queue, [])
    expect(work.snapshot().hostMsBetweenSubmits).toBeLessThan(90)
    expect(work.snapshot().hostMsBetweenSubmits).toBeGreaterThanOrEqual(4)
  })
})
