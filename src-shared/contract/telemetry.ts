// Telemetry recorded with a run: GPU utilisation/memory/temperature/power from `nvidia-smi -l 1`
// and per-worker CPU% / RSS, sampled at ≤ 1 Hz, tagged with the measurement running at the time.
// Pure: imported by the renderer too (the "GPU busy … in sequential, … in batched" line).
import { z } from 'zod'
import { STRATEGIES, type Strategy } from '../vocabulary/names'

/** One GPU at one tick. Fields nvidia-smi reports as [N/A] / [Not Supported] are null. */
export const GpuSampleSchema = z.object({
  index: z.number().int(),
  name: z.string(),
  /** utilization.gpu: % of the sample period during which any kernel ran (not SM occupancy) */
  util: z.number().nullable(),
  memUsedMiB: z.number().nullable(),
  memTotalMiB: z.number().nullable(),
  tempC: z.number().nullable(),
  powerW: z.number().nullable(),
  powerLimitW: z.number().nullable(),
})
export type GpuSample = z.infer<typeof GpuSampleSchema>

export const WorkerSampleSchema = z.object({
  pid: z.number().int(),
  /** CPU time over wall time since the previous sample, in % of one core (null on the first sample) */
  cpuPercent: z.number().nullable(),
  rssBytes: z.number().nullable(),
})
export type WorkerSample = z.infer<typeof WorkerSampleSchema>

export const TelemetrySampleSchema = z.object({
  /** ms since the run started */
  t: z.number(),
  gpus: z.array(GpuSampleSchema),
  workers: z.array(WorkerSampleSchema),
  /** the measurement (plan index) in progress at that time, and what it was doing */
  index: z.number().int().nullable(),
  strategy: z.enum(STRATEGIES).nullable(),
  /** W of that measurement */
  workerCount: z.number().int().nullable(),
  phase: z.enum(['starting', 'warming', 'measuring']).nullable(),
})
export type TelemetrySample = z.infer<typeof TelemetrySampleSchema>

export const GPU_TELEMETRY_STATES = ['starting', 'ok', 'absent', 'exited', 'failed', 'disabled'] as const
export type GpuTelemetryState = (typeof GPU_TELEMETRY_STATES)[number]

export const GpuTelemetryStatusSchema = z.object({
  state: z.enum(GPU_TELEMETRY_STATES),
  message: z.string(),
})
export type GpuTelemetryStatus = z.infer<typeof GpuTelemetryStatusSchema>

export const NVIDIA_SMI_ABSENT_MESSAGE = 'nvidia-smi not found: no NVIDIA GPU telemetry'

/** Stored with a run (RunResult.telemetry; optional so older files stay valid). */
export const RunTelemetrySchema = z.object({
  /** spacing of the stored samples (doubles each time the cap forces a thinning) */
  intervalMs: z.number().min(0),
  maxSamples: z.number().int().min(1),
  gpu: GpuTelemetryStatusSchema,
  samples: z.array(TelemetrySampleSchema),
})
export type RunTelemetry = z.infer<typeof RunTelemetrySchema>

export interface GpuBusy {
  strategy: Strategy
  /** mean utilization.gpu over the samples taken while this strategy was measuring (all GPUs) */
  meanUtil: number
  samples: number
  /** the same per GPU (by nvidia-smi index), so a spread over several GPUs shows whether each was used */
  perGpu: { index: number; meanUtil: number }[]
}

/**
 * Mean GPU utilisation per strategy, over the samples taken while that strategy's measurements
 * ran (start-up and warm-up excluded; GPUs that reported no utilisation ignored), in
 * STRATEGIES order. Strategies without such samples are left out.
 */
export function gpuBusyByStrategy(samples: readonly TelemetrySample[]): GpuBusy[] {
  const acc = new Map<Strategy, { sum: number; n: number; byGpu: Map<number, { sum: number; n: number }> }>()
  for (const s of samples) {
    if (s.phase !== 'measuring' || !s.strategy) continue
    const read = s.gpus.filter((g): g is typeof g & { util: number } => g.util != null && Number.isFinite(g.util))
    if (!read.length) continue
    const a = acc.get(s.strategy) ?? { sum: 0, n: 0, byGpu: new Map() }
    a.sum += read.reduce((x, g) => x + g.util, 0) / read.length
    a.n += 1
    for (const g of read) {
      const b = a.byGpu.get(g.index) ?? { sum: 0, n: 0 }
      b.sum += g.util
      b.n += 1
      a.byGpu.set(g.index, b)
    }
    acc.set(s.strategy, a)
  }
  return STRATEGIES.filter((st) => acc.has(st)).map((st) => {
    const a = acc.get(st)!
    const perGpu = [...a.byGpu].sort((x, y) => x[0] - y[0]).map(([index, b]) => ({ index, meanUtil: b.sum / b.n }))
    return { strategy: st, meanUtil: a.sum / a.n, samples: a.n, perGpu }
  })
}

/** "GPU busy 23 % in sequential, 96 % in batched (GPU 0 95 %, GPU 1 97 %)" — per GPU where several reported — or null when no sample had a utilisation. */
export function gpuBusyLine(samples: readonly TelemetrySample[]): string | null {
  const busy = gpuBusyByStrategy(samples)
  if (!busy.length) return null
  const perGpu = (b: GpuBusy) => (b.perGpu.length > 1 ? ` (${b.perGpu.map((g) => `GPU ${g.index} ${Math.round(g.meanUtil)} %`).join(', ')})` : '')
  return `GPU busy ${busy.map((b) => `${Math.round(b.meanUtil)} % in ${b.strategy}${perGpu(b)}`).join(', ')}`
}
