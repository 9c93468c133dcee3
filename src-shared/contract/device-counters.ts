// What a GPU engine asked of its device during a measurement: the numbers that say why a GPU sat
// idle (many small dispatches, a submit per op, a readback per level, the host thinking between
// submits). Counted by the engines (src-main/engine/webgpu/counters.ts), sent with each job-done,
// summed per measurement by the runner, shown in the report and the CLI summary.
import { z } from 'zod'

export const DeviceCountersSchema = z.object({
  dispatches: z.number().int().min(0),
  submits: z.number().int().min(0),
  readbacks: z.number().int().min(0),
  bytesReadBack: z.number().int().min(0),
  /** ms the device had finished everything and waited for the host's next submit */
  hostMsBetweenSubmits: z.number().min(0),
})
export type DeviceCounters = z.infer<typeof DeviceCountersSchema>

export const NO_DEVICE_WORK: DeviceCounters = { dispatches: 0, submits: 0, readbacks: 0, bytesReadBack: 0, hostMsBetweenSubmits: 0 }

export function addDeviceCounters(a: DeviceCounters, b: DeviceCounters): DeviceCounters {
  return {
    dispatches: a.dispatches + b.dispatches,
    submits: a.submits + b.submits,
    readbacks: a.readbacks + b.readbacks,
    bytesReadBack: a.bytesReadBack + b.bytesReadBack,
    hostMsBetweenSubmits: a.hostMsBetweenSubmits + b.hostMsBetweenSubmits,
  }
}

export function subtractDeviceCounters(after: DeviceCounters, before: DeviceCounters): DeviceCounters {
  return {
    dispatches: after.dispatches - before.dispatches,
    submits: after.submits - before.submits,
    readbacks: after.readbacks - before.readbacks,
    bytesReadBack: after.bytesReadBack - before.bytesReadBack,
    hostMsBetweenSubmits: Math.max(0, after.hostMsBetweenSubmits - before.hostMsBetweenSubmits),
  }
}

/** One line for people: "1 536 dispatches · 48 submits · 3 readbacks (600 B) · host 2.1 ms between submits". */
export function describeDeviceCounters(c: DeviceCounters): string {
  const bytes =
    c.bytesReadBack < 10_000
      ? `${c.bytesReadBack} B`
      : c.bytesReadBack < 10_000_000
        ? `${(c.bytesReadBack / 1e3).toFixed(1)} kB`
        : `${(c.bytesReadBack / 1e6).toFixed(1)} MB`
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`
  return `${count(c.dispatches, 'dispatch', 'dispatches')} · ${count(c.submits, 'submit', 'submits')} · ${count(c.readbacks, 'readback', 'readbacks')} (${bytes}) · host ${c.hostMsBetweenSubmits.toFixed(1)} ms between submits`
}

/** The device work of a run's measurements as [label, text] rows (the first repeat of each option and size), for the CLI, the Run view and the report. */
export function deviceWorkRows(
  measurements: readonly { size: number; strategy: string; workers: number; repeat: number; backend?: string; device?: DeviceCounters }[],
): [string, string][] {
  return measurements
    .filter((m) => m.device && m.repeat === 0)
    .map((m) => [`${m.backend ? `${m.backend} ` : ''}${m.strategy} W=${m.workers} · ${m.size} rows`, describeDeviceCounters(m.device!)])
}
