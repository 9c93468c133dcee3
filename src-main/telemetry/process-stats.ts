// Per-process CPU% and RSS, sampled asynchronously. Linux: /proc/<pid>/stat (utime + stime, in
// clock ticks) and /proc/<pid>/status (VmRSS). Elsewhere: `ps -o pid=,%cpu=,rss= -p …`. CPU% is
// CPU time over wall time since this sampler's previous look at the pid, in % of one core (so a
// process busy on 2 cores reads 200 %); the first look at a pid has no interval and gives null.
// Processes that exited (or never existed) are simply left out.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import type { WorkerSample } from '@shared/contract/telemetry'

export type ProcessStatsMode = 'proc' | 'ps' | 'none'

export interface ProcessStatsOptions {
  /** default: 'proc' on Linux, 'none' on Windows, else 'ps' */
  mode?: ProcessStatsMode
  /** clock ticks per second for /proc (default: `getconf CLK_TCK`, else 100) */
  clockTicks?: number
  now?: () => number
}

/** utime + stime (fields 14 and 15) from a /proc/<pid>/stat line; comm may hold spaces and parens. */
export function parseProcStatCpuTicks(stat: string): number | null {
  const close = stat.lastIndexOf(')')
  if (close < 0) return null
  // after "pid (comm) ": field 3 (state) is index 0, so utime (14) is index 11, stime (15) index 12
  const rest = stat
    .slice(close + 2)
    .trim()
    .split(/\s+/)
  const utime = Number(rest[11])
  const stime = Number(rest[12])
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : null
}

/** VmRSS from /proc/<pid>/status, in bytes. */
export function parseProcStatusRss(status: string): number | null {
  const m = /^VmRSS:\s+(\d+)\s*kB/m.exec(status)
  return m ? Number(m[1]) * 1024 : null
}

/** Lines of `ps -o pid=,%cpu=,rss=` → pid → { cpu %, rss bytes }. */
export function parsePsOutput(out: string): Map<number, { cpuPercent: number | null; rssBytes: number | null }> {
  const map = new Map<number, { cpuPercent: number | null; rssBytes: number | null }>()
  for (const line of out.split('\n')) {
    const [pid, cpu, rss] = line.trim().split(/\s+/)
    const p = Number(pid)
    if (!Number.isInteger(p) || p <= 0) continue
    const c = Number.parseFloat(cpu)
    const r = Number.parseFloat(rss)
    map.set(p, { cpuPercent: Number.isFinite(c) ? c : null, rssBytes: Number.isFinite(r) ? r * 1024 : null })
  }
  return map
}

let clockTicksCache: Promise<number> | null = null
function systemClockTicks(): Promise<number> {
  clockTicksCache ??= new Promise((resolve) => {
    execFile('getconf', ['CLK_TCK'], { timeout: 2000 }, (err, stdout) => {
      const n = Number(String(stdout).trim())
      resolve(!err && Number.isInteger(n) && n > 0 ? n : 100)
    })
  })
  return clockTicksCache
}

export class ProcessStats {
  readonly mode: ProcessStatsMode
  private last = new Map<number, { ticks: number; at: number }>()
  private readonly now: () => number

  constructor(private readonly options: ProcessStatsOptions = {}) {
    this.mode = options.mode ?? (process.platform === 'linux' ? 'proc' : process.platform === 'win32' ? 'none' : 'ps')
    this.now = options.now ?? (() => performance.now())
  }

  async sample(pids: readonly number[]): Promise<WorkerSample[]> {
    const unique = [...new Set(pids.filter((p) => Number.isInteger(p) && p > 0))]
    let out: WorkerSample[]
    if (this.mode === 'proc') out = await this.sampleProc(unique)
    else if (this.mode === 'ps') out = await samplePs(unique)
    else out = []
    // forget processes no longer asked about
    for (const pid of [...this.last.keys()]) if (!unique.includes(pid)) this.last.delete(pid)
    return out
  }

  private async sampleProc(pids: number[]): Promise<WorkerSample[]> {
    const hz = this.options.clockTicks ?? (await systemClockTicks())
    const rows = await Promise.all(
      pids.map(async (pid): Promise<WorkerSample | null> => {
        let stat: string
        let status: string
        try {
          ;[stat, status] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/status`, 'utf8')])
        } catch {
          this.last.delete(pid)
          return null // exited
        }
        const at = this.now()
        const ticks = parseProcStatCpuTicks(stat)
        const rssBytes = parseProcStatusRss(status)
        let cpuPercent: number | null = null
        const prev = this.last.get(pid)
        if (ticks != null) {
          if (prev && at > prev.at && ticks >= prev.ticks) cpuPercent = (((ticks - prev.ticks) / hz) * 1000 * 100) / (at - prev.at)
          this.last.set(pid, { ticks, at })
        }
        // a zombie (exited, not yet reaped) has no VmRSS line
        if (rssBytes == null && /^State:\s+Z/m.test(status)) return null
        return { pid, cpuPercent: cpuPercent == null ? null : round1(cpuPercent), rssBytes }
      }),
    )
    return rows.filter((r): r is WorkerSample => r != null)
  }
}

function samplePs(pids: number[]): Promise<WorkerSample[]> {
  if (!pids.length) return Promise.resolve([])
  return new Promise((resolve) => {
    // ps exits 1 when some pid is gone: its stdout still lists the others
    execFile('ps', ['-o', 'pid=,%cpu=,rss=', '-p', pids.join(',')], { timeout: 5000 }, (_err, stdout) => {
      const map = parsePsOutput(String(stdout ?? ''))
      resolve(
        pids.flatMap((pid) => {
          const r = map.get(pid)
          return r ? [{ pid, cpuPercent: r.cpuPercent, rssBytes: r.rssBytes }] : []
        }),
      )
    })
  })
}

function round1(x: number): number {
  return Math.round(x * 10) / 10
}
