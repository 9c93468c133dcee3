// The bench command's stdout summary: table, verification line, and the GPU telemetry line.
import { describe, expect, it } from 'vitest'
import { DEFAULT_CONFIG, NVIDIA_SMI_ABSENT_MESSAGE, type RunResult, type TelemetrySample } from '@shared/contract'
import { summaryTable, telemetryLine } from './bench-command'

const sample = (t: number, strategy: TelemetrySample['strategy'], util: number | null, phase: TelemetrySample['phase'] = 'measuring'): TelemetrySample => ({
  t,
  gpus: [{ index: 0, name: 'NVIDIA H200', util, memUsedMiB: 2048, memTotalMiB: 143771, tempC: 40, powerW: 120, powerLimitW: 700 }],
  workers: [{ pid: 100, cpuPercent: 97, rssBytes: 3e8 }],
  index: 0,
  strategy,
  workerCount: 1,
  phase,
})

function fixtureRun(over: Partial<RunResult> = {}): RunResult {
  const config = { ...DEFAULT_CONFIG, preset: 'smoke' as const, sizes: [2000], models: [4], workers: [2], epochs: 1, repeats: 1, backend: 'webgpu' as const }
  const entry = (strategy: 'sequential' | 'pool' | 'batched', medianMs: number, speedup: number | null) => ({
    size: 2000,
    models: 4,
    workers: strategy === 'sequential' ? 1 : 2,
    strategy,
    repeats: 1,
    medianMs,
    minMs: medianMs,
    maxMs: medianMs,
    speedupVsSequential: speedup,
    efficiency: speedup == null ? null : speedup / 2,
    workRate: 1.5,
    warnings: [],
  })
  return {
    schemaVersion: 2,
    runId: 'run-fixture',
    status: 'ok',
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:10.000Z',
    config,
    environment: {
      backend: 'webgpu',
      device: 'NVIDIA H200',
      cpu: 'AMD EPYC 9654',
      cpuCount: 16,
      memoryBytes: 2 ** 37,
      os: 'Linux',
      node: 'v20',
      versions: {},
      backendFlags: {},
    },
    measurements: [],
    summary: [entry('sequential', 800, null), entry('pool', 450, 1.78), entry('batched', 120, 6.67)],
    verification: { sameWork: true, maxRelMseDiff: 2e-7, tolerance: 1e-4, modelsTrained: { sequential: 4, pool: 4, batched: 4 }, problems: [] },
    warnings: [],
    error: null,
    ...over,
  }
}

describe('summaryTable', () => {
  it('prints the table, the same-work line and, with GPU samples, the GPU busy line', () => {
    const run = fixtureRun({
      telemetry: {
        intervalMs: 1000,
        maxSamples: 3600,
        gpu: { state: 'ok', message: 'nvidia-smi: 1 GPU' },
        samples: [sample(0, 'sequential', 50, 'warming'), sample(1000, 'sequential', 20), sample(2000, 'sequential', 26), sample(3000, 'batched', 96)],
      },
    })
    const lines = summaryTable(run).trimEnd().split('\n')
    expect(lines[0]).toBe('Trainpool run-fixture · webgpu on NVIDIA H200 · status OK · MLP 100→64→1, Adam lr 0.01, batch 512, 3 epochs')
    expect(lines[1]).toMatch(/^rows\s+models\s+strategy\s+W\s+median/)
    expect(lines.some((l) => /^2000\s+4\s+batched\s+2\s/.test(l) && l.includes('6.67×'))).toBe(true)
    expect(lines.some((l) => l.startsWith('same work: sequential 4/4'))).toBe(true)
    // warm-up samples are left out of the mean
    expect(lines).toContain('GPU busy 23 % in sequential, 96 % in batched')
    expect(lines.some((l) => l.startsWith('GPU telemetry:'))).toBe(false)
  })

  it('telemetry without GPU samples: "GPU telemetry: <status>"', () => {
    const run = fixtureRun({
      telemetry: { intervalMs: 1000, maxSamples: 3600, gpu: { state: 'absent', message: NVIDIA_SMI_ABSENT_MESSAGE }, samples: [sample(0, 'sequential', null)] },
    })
    expect(summaryTable(run)).toContain(`\nGPU telemetry: ${NVIDIA_SMI_ABSENT_MESSAGE}\n`)
    expect(summaryTable(run)).not.toContain('GPU busy')
    const blank = fixtureRun({ telemetry: { intervalMs: 1000, maxSamples: 3600, gpu: { state: 'disabled', message: '' }, samples: [] } })
    expect(telemetryLine(blank)).toBe('GPU telemetry: disabled')
  })

  it('no telemetry (an older run): no GPU line at all', () => {
    const out = summaryTable(fixtureRun())
    expect(out).not.toMatch(/GPU busy|GPU telemetry/)
    expect(telemetryLine(fixtureRun())).toBeNull()
  })

  it('a cancelled run reads "not verified", a finished run that disagrees reads FAILED', () => {
    const partial = {
      sameWork: false,
      maxRelMseDiff: 0,
      tolerance: 1e-4,
      modelsTrained: { sequential: 4, pool: 1, batched: 0 },
      problems: ['pool trained 1 of 4 models'],
    }
    const cancelled = summaryTable(fixtureRun({ status: 'cancelled', verification: partial }))
    expect(cancelled).toContain('not verified: run cancelled before every strategy finished')
    expect(cancelled).not.toContain('FAILED')
    const failed = summaryTable(fixtureRun({ status: 'failed', verification: partial }))
    expect(failed).toContain('SAME-WORK CHECK FAILED:\n  - pool trained 1 of 4 models')
  })

  it("a GPU engine's device work per measurement, after the verification", () => {
    const device = { dispatches: 194, submits: 25, readbacks: 4, bytesReadBack: 64, hostMsBetweenSubmits: 0.5 }
    const m = {
      size: 2000,
      models: 4,
      workers: 2,
      strategy: 'batched' as const,
      repeat: 0,
      status: 'ok' as const,
      wallMs: 120,
      startupMs: 0,
      warmupMs: 0,
      modelsTrained: 4,
      work: 1,
      perModel: [],
      failures: [],
      peakRssBytes: [],
      device,
    }
    const lines = summaryTable(fixtureRun({ measurements: [m] }))
      .trim()
      .split('\n')
    const at = lines.indexOf('device work (what the GPU engine asked of its device):')
    expect(at).toBeGreaterThan(0)
    expect(lines[at + 1]).toBe('  batched W=2 · 2000 rows: 194 dispatches · 25 submits · 4 readbacks (64 B) · host 0.5 ms between submits')
    expect(summaryTable(fixtureRun())).not.toContain('device work')
  })
})
