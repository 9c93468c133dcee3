import { describe, expect, it } from 'vitest'
import { addDeviceCounters, describeDeviceCounters, deviceWorkRows, NO_DEVICE_WORK, subtractDeviceCounters } from './device-counters'

const work = { dispatches: 1536, submits: 48, readbacks: 3, bytesReadBack: 600, hostMsBetweenSubmits: 2.14 }

describe('device counters', () => {
  it('add and subtract field by field (a job is the difference of two snapshots)', () => {
    expect(addDeviceCounters(work, work)).toEqual({ dispatches: 3072, submits: 96, readbacks: 6, bytesReadBack: 1200, hostMsBetweenSubmits: 4.28 })
    expect(subtractDeviceCounters(addDeviceCounters(work, work), work)).toEqual(work)
    expect(subtractDeviceCounters(work, work)).toEqual(NO_DEVICE_WORK)
  })

  it('say in one line what the device did', () => {
    expect(describeDeviceCounters(work)).toBe('1536 dispatches · 48 submits · 3 readbacks (600 B) · host 2.1 ms between submits')
    expect(describeDeviceCounters({ ...work, dispatches: 1, submits: 1, readbacks: 1, bytesReadBack: 2_500_000 })).toBe(
      '1 dispatch · 1 submit · 1 readback (2500.0 kB) · host 2.1 ms between submits',
    )
  })

  it('a row per measurement that counted, its first repeat only, named by option and size', () => {
    const m = (strategy: string, repeat: number, device?: typeof work, backend?: string) => ({
      size: 10000,
      strategy,
      workers: 1,
      repeat,
      ...(device ? { device } : {}),
      ...(backend ? { backend } : {}),
    })
    expect(deviceWorkRows([m('sequential', 0, work), m('sequential', 1, work), m('batched', 0), m('batched', 0, work, 'webgpu')])).toEqual([
      ['sequential W=1 · 10000 rows', describeDeviceCounters(work)],
      ['webgpu batched W=1 · 10000 rows', describeDeviceCounters(work)],
    ])
  })
})
