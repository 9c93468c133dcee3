// Helpers for the telemetry panel: the live series kept in the run store (bounded, thinned like
// the stored one), per-GPU and per-worker series, and fixed-scale sparkline points.
import type { GpuSample, GpuTelemetryStatus, TelemetrySample, WorkerSample } from '@shared/contract/telemetry'

export interface TelemetryView {
  gpu: GpuTelemetryStatus
  samples: TelemetrySample[]
}

/** The most samples the store keeps live (the service keeps its own bounded copy on the result). */
export const TELEMETRY_VIEW_MAX = 1800

/** Appends new samples (ones at or before the last kept time are repeats: re-attach resends all). */
export function appendSamples(prev: readonly TelemetrySample[], next: readonly TelemetrySample[], max = TELEMETRY_VIEW_MAX): TelemetrySample[] {
  const lastT = prev.length ? prev[prev.length - 1].t : -Infinity
  let out = [...prev, ...next.filter((s) => s.t > lastT)]
  while (out.length > max) out = out.filter((_, i) => i % 2 === 0)
  return out
}

/** The GPUs seen, by index, with their latest reading. */
export function latestGpus(samples: readonly TelemetrySample[]): GpuSample[] {
  const byIndex = new Map<number, GpuSample>()
  for (const s of samples) for (const g of s.gpus) byIndex.set(g.index, g)
  return [...byIndex.values()].sort((a, b) => a.index - b.index)
}

export function gpuUtilSeries(samples: readonly TelemetrySample[], index: number): number[] {
  const out: number[] = []
  for (const s of samples) {
    const u = s.gpus.find((g) => g.index === index)?.util
    if (u != null) out.push(u)
  }
  return out
}

/**
 * The workers of the latest sample that had any, each with its last known CPU and RSS: a worker's
 * final sample (taken as it exits, or its first, before a CPU delta exists) has no reading, and the
 * table would say N/A once the run is over.
 */
export function latestWorkers(samples: readonly TelemetrySample[]): WorkerSample[] {
  let fallback: WorkerSample[] | null = null
  for (let i = samples.length - 1; i >= 0; i--) {
    if (!samples[i].workers.length) continue
    const filled = withLastReadings(samples, i)
    // a sample whose workers never got a CPU reading (a pool started and stopped within one
    // sample): the workers before it say more
    if (filled.some((w) => w.cpuPercent != null)) return filled
    fallback ??= filled
  }
  return fallback ?? []
}

function withLastReadings(samples: readonly TelemetrySample[], latest: number): WorkerSample[] {
  return samples[latest].workers.map((w) => {
    if (w.cpuPercent != null && w.rssBytes != null) return w
    let cpuPercent = w.cpuPercent
    let rssBytes = w.rssBytes
    for (let i = latest - 1; i >= 0 && (cpuPercent == null || rssBytes == null); i--) {
      const earlier = samples[i].workers.find((x) => x.pid === w.pid)
      if (!earlier) continue
      cpuPercent ??= earlier.cpuPercent
      rssBytes ??= earlier.rssBytes
    }
    return { ...w, cpuPercent, rssBytes }
  })
}

/** Sum of the workers' CPU% per sample (samples without workers are left out). */
export function workerCpuSeries(samples: readonly TelemetrySample[]): number[] {
  const out: number[] = []
  for (const s of samples) {
    const v = s.workers.map((w) => w.cpuPercent).filter((c): c is number => c != null)
    if (v.length) out.push(v.reduce((a, b) => a + b, 0))
  }
  return out
}

/** SVG polyline points for values on a fixed [lo, hi] scale in a w×h box; "" for < 2 values. */
export function fixedScalePoints(values: readonly number[], w: number, h: number, lo: number, hi: number, pad = 2): string {
  const v = values.filter((x) => Number.isFinite(x))
  if (v.length < 2) return ''
  const span = hi - lo || 1
  const dx = (w - 2 * pad) / (v.length - 1)
  return v
    .map((x, i) => {
      const y = Math.min(1, Math.max(0, (x - lo) / span))
      return `${(pad + i * dx).toFixed(1)},${(pad + (1 - y) * (h - 2 * pad)).toFixed(1)}`
    })
    .join(' ')
}

export function formatPercent(x: number | null | undefined): string {
  return x == null || !Number.isFinite(x) ? 'N/A' : `${Math.round(x)} %`
}

export function formatMiB(used: number | null, total: number | null): string {
  const gib = (m: number) => (m / 1024).toFixed(m >= 10240 ? 0 : 1)
  if (used == null && total == null) return 'N/A'
  return `${used == null ? 'N/A' : gib(used)} / ${total == null ? 'N/A' : gib(total)} GiB`
}

export function formatPower(draw: number | null, limit: number | null): string {
  if (draw == null && limit == null) return 'N/A'
  return `${draw == null ? 'N/A' : Math.round(draw)} / ${limit == null ? 'N/A' : Math.round(limit)} W`
}
