// GPU telemetry from one long-lived `nvidia-smi --query-gpu=… -l 1` child process, read line by
// line — never exec-per-second, never a native addon. Lines are grouped into ticks by the `index`
// field; [N/A], [Not Supported] and empty fields are null. A missing nvidia-smi or one that dies is
// a status, never a crash.
import { type ChildProcess, spawn } from 'node:child_process'
import { nvidiaSmiCommand } from '../gpus/discover'
import { createInterface } from 'node:readline'
import { type GpuSample, type GpuTelemetryStatus, NVIDIA_SMI_ABSENT_MESSAGE } from '@shared/contract/telemetry'

/** The fields asked for, in order; parsing goes by these positions. */
export const NVIDIA_SMI_FIELDS = ['index', 'name', 'utilization.gpu', 'memory.used', 'memory.total', 'temperature.gpu', 'power.draw', 'power.limit'] as const

export function nvidiaSmiArgs(intervalS = 1): string[] {
  return [`--query-gpu=${NVIDIA_SMI_FIELDS.join(',')}`, '--format=csv,noheader,nounits', '-l', String(intervalS)]
}

/** A numeric field: null for [N/A], [Not Supported], N/A, empty, NaN or anything unparsable. */
export function parseNumberField(raw: string | undefined): number | null {
  if (raw == null) return null
  const v = raw.trim()
  if (!v || /n\/a|not supported|unknown|err/i.test(v)) return null
  const n = Number.parseFloat(v)
  return Number.isFinite(n) ? n : null
}

/**
 * One CSV line of the query above → a GPU sample, or null for a line that is not one (a warning,
 * a header, a truncated line). Names may contain commas only in theory; the name is everything
 * between the first field and the last six.
 */
export function parseNvidiaSmiLine(line: string): GpuSample | null {
  const parts = line.split(',').map((p) => p.trim())
  const n = NVIDIA_SMI_FIELDS.length
  if (parts.length < n) return null
  const index = Number.parseInt(parts[0], 10)
  if (!Number.isInteger(index) || !/^\d+$/.test(parts[0])) return null
  const tail = parts.slice(parts.length - (n - 2))
  const name = parts.slice(1, parts.length - (n - 2)).join(', ')
  const [util, memUsed, memTotal, temp, power, powerLimit] = tail.map(parseNumberField)
  return {
    index,
    name: /^\[?(n\/a|not supported)\]?$/i.test(name) ? 'unknown GPU' : name,
    util,
    memUsedMiB: memUsed,
    memTotalMiB: memTotal,
    tempC: temp,
    powerW: power,
    powerLimitW: powerLimit,
  }
}

export interface NvidiaSmiTick {
  /** Date.now() when the tick's last line arrived */
  at: number
  gpus: GpuSample[]
}

export interface NvidiaSmiReaderOptions {
  /** the command to run (default: env TRAINPOOL_NVIDIA_SMI, else `nvidia-smi` on PATH) */
  command?: string
  /** environment of the child (PATH decides where the command is found) */
  env?: NodeJS.ProcessEnv
  intervalS?: number
  /** a tick ends after this quiet gap with no new line (ms) */
  tickGapMs?: number
  onTick?: (tick: NvidiaSmiTick) => void
  onStatus?: (status: GpuTelemetryStatus) => void
}

export class NvidiaSmiReader {
  private child: ChildProcess | null = null
  private pending: GpuSample[] = []
  private gapTimer: NodeJS.Timeout | null = null
  private stderrTail = ''
  private stopping = false
  private exited: Promise<void> = Promise.resolve()
  private _status: GpuTelemetryStatus = { state: 'starting', message: 'nvidia-smi not started' }
  private _latest: NvidiaSmiTick | null = null
  readonly command: string

  constructor(private readonly options: NvidiaSmiReaderOptions = {}) {
    this.command = options.command ?? nvidiaSmiCommand({ ...process.env, ...options.env })
  }

  get status(): GpuTelemetryStatus {
    return this._status
  }

  /** The last complete tick (null before the first). */
  get latest(): NvidiaSmiTick | null {
    return this._latest
  }

  /** The child's pid while it runs (tests check it is gone after stop). */
  get pid(): number | null {
    return this.child?.pid ?? null
  }

  private setStatus(status: GpuTelemetryStatus): void {
    this._status = status
    this.options.onStatus?.(status)
  }

  start(): void {
    if (this.child) return
    this.stopping = false
    this.setStatus({ state: 'starting', message: `starting ${this.command}` })
    let child: ChildProcess
    try {
      child = spawn(this.command, nvidiaSmiArgs(this.options.intervalS ?? 1), {
        env: this.options.env ?? process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        // own process group, so stop() ends the whole tree (a wrapper script and its children)
        detached: process.platform !== 'win32',
        windowsHide: true,
      })
    } catch (err) {
      this.setStatus(spawnFailure(err as NodeJS.ErrnoException, this.command))
      return
    }
    this.child = child
    this.exited = new Promise<void>((resolve) => {
      let settled = false
      const done = () => {
        if (!settled) {
          settled = true
          resolve()
        }
      }
      child.once('error', (err: NodeJS.ErrnoException) => {
        this.child = null
        this.setStatus(spawnFailure(err, this.command))
        done()
      })
      child.once('close', (code, signal) => {
        this.flush()
        this.child = null
        if (!this.stopping && this._status.state !== 'absent' && this._status.state !== 'failed') {
          const why = this.stderrTail.trim().split('\n').filter(Boolean).pop()
          this.setStatus({
            state: 'exited',
            message: `nvidia-smi exited (${signal ? `signal ${signal}` : `code ${code}`})${why ? `: ${why}` : ''}; no further GPU telemetry`,
          })
        }
        done()
      })
    })
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (c: string) => {
      this.stderrTail = (this.stderrTail + c).slice(-2000)
    })
    const rl = createInterface({ input: child.stdout!, crlfDelay: Infinity })
    rl.on('line', (line) => this.onLine(line))
  }

  private onLine(line: string): void {
    const gpu = parseNvidiaSmiLine(line)
    if (!gpu) {
      if (line.trim() && this._status.state === 'starting') this.stderrTail = (this.stderrTail + line + '\n').slice(-2000)
      return
    }
    if (this.pending.some((g) => g.index === gpu.index)) this.flush()
    this.pending.push(gpu)
    if (this.gapTimer) clearTimeout(this.gapTimer)
    this.gapTimer = setTimeout(() => this.flush(), this.options.tickGapMs ?? 100)
  }

  private flush(): void {
    if (this.gapTimer) clearTimeout(this.gapTimer)
    this.gapTimer = null
    if (!this.pending.length) return
    const gpus = this.pending.sort((a, b) => a.index - b.index)
    this.pending = []
    this._latest = { at: Date.now(), gpus }
    if (this._status.state !== 'ok') {
      this.setStatus({
        state: 'ok',
        message: `nvidia-smi: ${gpus.length} GPU${gpus.length === 1 ? '' : 's'} (${[...new Set(gpus.map((g) => g.name))].join(', ')})`,
      })
    }
    this.options.onTick?.(this._latest)
  }

  /** Kills the child (SIGTERM, then SIGKILL after graceMs) and waits for it to exit. */
  async stop(graceMs = 1500): Promise<void> {
    this.stopping = true
    const child = this.child
    if (!child) return
    const kill = (sig: NodeJS.Signals) => {
      try {
        if (process.platform !== 'win32' && child.pid) process.kill(-child.pid, sig)
        else child.kill(sig)
      } catch {
        try {
          child.kill(sig)
        } catch {
          /* already gone */
        }
      }
    }
    kill('SIGTERM')
    const timer = setTimeout(() => kill('SIGKILL'), graceMs)
    await this.exited
    clearTimeout(timer)
    if (this.gapTimer) clearTimeout(this.gapTimer)
    this.gapTimer = null
  }
}

function spawnFailure(err: NodeJS.ErrnoException, command: string): GpuTelemetryStatus {
  if (err.code === 'ENOENT') {
    return { state: 'absent', message: command === 'nvidia-smi' ? NVIDIA_SMI_ABSENT_MESSAGE : `${NVIDIA_SMI_ABSENT_MESSAGE} (${command})` }
  }
  return { state: 'failed', message: `could not run ${command}: ${err.message}; no GPU telemetry` }
}
