// A TelemetrySession lives as long as one run: it starts the nvidia-smi reader, samples the
// workers' CPU%/RSS, and once per interval combines the latest GPU tick, the worker stats and the
// measurement in progress into one sample. Samples are kept bounded: when the cap is reached,
// every other sample is dropped and the interval doubles, so a long run keeps its whole span.
import type { GpuSample, GpuTelemetryStatus, RunTelemetry, TelemetrySample } from '@shared/contract/telemetry'
import { NvidiaSmiReader, type NvidiaSmiReaderOptions } from './nvidia-smi'
import { ProcessStats, type ProcessStatsOptions } from './process-stats'

export const TELEMETRY_INTERVAL_MS = 1000
export const TELEMETRY_MAX_SAMPLES = 1800

export type TelemetryContext = Pick<TelemetrySample, 'index' | 'strategy' | 'workerCount' | 'phase'>

export interface TelemetrySessionOptions {
  /** worker process ids right now */
  pids: () => number[]
  /** the measurement in progress right now */
  context?: () => TelemetryContext
  intervalMs?: number
  maxSamples?: number
  /** false: no GPU telemetry (status 'disabled') */
  nvidiaSmi?: false | Omit<NvidiaSmiReaderOptions, 'onTick' | 'onStatus'>
  processStats?: ProcessStatsOptions
  /** a GPU tick older than this is not used (ms) */
  staleGpuMs?: number
  /** called after each new sample (the service turns it into a telemetry event) */
  onSample?: (sample: TelemetrySample, gpu: GpuTelemetryStatus) => void
}

const NO_CONTEXT: TelemetryContext = { index: null, strategy: null, workerCount: null, phase: null }

export class TelemetrySession {
  /** the stored record; the same object for the session's whole life (the service keeps it on the result) */
  readonly data: RunTelemetry
  private reader: NvidiaSmiReader | null
  private readonly stats: ProcessStats
  private timer: NodeJS.Timeout | null = null
  private t0 = 0
  private lastKept = -Infinity
  private busy: Promise<void> | null = null
  private running = false

  constructor(private readonly options: TelemetrySessionOptions) {
    const intervalMs = options.intervalMs ?? TELEMETRY_INTERVAL_MS
    this.data = {
      intervalMs,
      maxSamples: Math.max(2, options.maxSamples ?? TELEMETRY_MAX_SAMPLES),
      gpu: options.nvidiaSmi === false ? { state: 'disabled', message: 'GPU telemetry is off' } : { state: 'starting', message: 'starting nvidia-smi' },
      samples: [],
    }
    this.reader =
      options.nvidiaSmi === false
        ? null
        : new NvidiaSmiReader({
            ...options.nvidiaSmi,
            onStatus: (s) => {
              this.data.gpu = s
            },
          })
    this.stats = new ProcessStats(options.processStats)
  }

  get gpuStatus(): GpuTelemetryStatus {
    return this.data.gpu
  }

  /** pid of the nvidia-smi child while it runs */
  get readerPid(): number | null {
    return this.reader?.pid ?? null
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.t0 = performance.now()
    this.reader?.start()
    // a first look at the workers now, so the first sample already has a CPU% interval
    void this.stats.sample(this.options.pids()).catch(() => undefined)
    this.timer = setInterval(() => this.tick(), this.data.intervalMs)
    this.timer.unref?.()
  }

  private tick(): void {
    if (this.busy || !this.running) return // the previous sample is still being taken
    this.busy = this.takeSample()
      .catch(() => undefined)
      .finally(() => {
        this.busy = null
      })
  }

  private async takeSample(): Promise<void> {
    const t = Math.round(performance.now() - this.t0)
    const context = this.options.context?.() ?? NO_CONTEXT
    const workers = await this.stats.sample(this.options.pids())
    if (!this.running) return
    const sample: TelemetrySample = { t, gpus: this.freshGpus(), workers, ...context }
    if (this.keep(sample)) this.options.onSample?.(sample, this.data.gpu)
  }

  private freshGpus(): GpuSample[] {
    const tick = this.reader?.latest
    if (!tick || Date.now() - tick.at > (this.options.staleGpuMs ?? 3000)) return []
    return tick.gpus.map((g) => ({ ...g }))
  }

  /** Appends a sample, thinning the stored series (every other one, interval × 2) at the cap. */
  private keep(sample: TelemetrySample): boolean {
    if (sample.t - this.lastKept < this.data.intervalMs * 0.75) return false
    const d = this.data
    d.samples.push(sample)
    this.lastKept = sample.t
    if (d.samples.length > d.maxSamples) {
      d.samples = d.samples.filter((_, i) => i % 2 === 0)
      d.intervalMs *= 2
    }
    return true
  }

  /** Stops sampling and the nvidia-smi child (waits for it to exit); returns the stored record. */
  async stop(): Promise<RunTelemetry> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    this.running = false
    await this.busy
    await this.reader?.stop()
    return this.data
  }
}
