import { describe, expect, it, vi } from 'vitest'
import type { RunListEntry } from '@shared/contract/api'
import type { RunResult } from '@shared/contract/result'
import { DEFAULT_QUERY, compareRuns, filterRuns, formatDelta, parseTags } from './history'
import { deliverExport, deliverPdf } from './saveFile'

const entry = (runId: string, extra: Partial<RunListEntry> = {}): RunListEntry => ({
  runId,
  status: 'ok',
  startedAt: `2026-01-0${runId.length}T00:00:00Z`,
  preset: 'smoke',
  backend: 'wasm',
  device: 'cpu',
  sizes: [2000],
  models: [4],
  bestSpeedup: 1,
  ...extra,
})

describe('history helpers', () => {
  const runs = [
    entry('a', { bestSpeedup: 3, tags: ['laptop'] }),
    entry('bb', { status: 'failed', backend: 'webgpu', bestSpeedup: 5 }),
    entry('ccc', { name: 'Zeta', bestSpeedup: null }),
  ]

  it('filters by text (tags, backend, name) and status, sorts by date, speedup and name', () => {
    expect(filterRuns(runs, DEFAULT_QUERY).map((r) => r.runId)).toEqual(['ccc', 'bb', 'a'])
    expect(filterRuns(runs, { ...DEFAULT_QUERY, text: 'laptop' }).map((r) => r.runId)).toEqual(['a'])
    expect(filterRuns(runs, { ...DEFAULT_QUERY, text: 'WEBGPU' }).map((r) => r.runId)).toEqual(['bb'])
    expect(filterRuns(runs, { ...DEFAULT_QUERY, status: 'failed' }).map((r) => r.runId)).toEqual(['bb'])
    expect(filterRuns(runs, { ...DEFAULT_QUERY, sort: 'speedup' }).map((r) => r.runId)).toEqual(['bb', 'a', 'ccc'])
    expect(filterRuns(runs, { ...DEFAULT_QUERY, sort: 'name', descending: false }).map((r) => r.runId)).toEqual(['bb', 'a', 'ccc'])
  })

  it('finds a run by the name of the data set it trained on', () => {
    const withData = [...runs, entry('dddd', { data: 'plants.csv · 300 × 7' })]
    expect(filterRuns(withData, { ...DEFAULT_QUERY, text: 'plants' }).map((r) => r.runId)).toEqual(['dddd'])
  })

  it('compares two runs per measurement with Δ% (negative: B faster)', () => {
    const s = (strategy: 'sequential' | 'pool', medianMs: number, workers = 1) => ({
      size: 2000,
      models: 4,
      workers,
      strategy,
      repeats: 1,
      medianMs,
      minMs: medianMs,
      maxMs: medianMs,
      speedupVsSequential: null,
      efficiency: null,
      workRate: 0,
      warnings: [],
    })
    const a = { summary: [s('sequential', 200), s('pool', 100, 2)] } as unknown as RunResult
    const b = { summary: [s('sequential', 150), s('pool', 120, 2), s('pool', 90, 4)] } as unknown as RunResult
    const rows = compareRuns(a, b)
    expect(rows.map((r) => [r.strategy, r.workers, r.aMs, r.bMs, r.deltaPct])).toEqual([
      ['sequential', 1, 200, 150, -25],
      ['pool', 2, 100, 120, 20],
      ['pool', 4, null, 90, null],
    ])
    expect(rows.map((r) => formatDelta(r.deltaPct))).toEqual(['−25.0%', '+20.0%', '—'])
  })

  it('parses tags and delivers files: saved by Electron, downloaded in the browser', () => {
    expect(parseTags(' a, b,,a , c ')).toEqual(['a', 'b', 'c'])
    const download = vi.fn()
    expect(deliverExport({ fileName: 'x.csv', mimeType: 'text/csv', content: '1', savedPath: '/tmp/x.csv' }, download)).toBe('Saved /tmp/x.csv')
    expect(deliverExport({ fileName: 'x.csv', mimeType: 'text/csv', content: '1', savedPath: null }, download)).toBe('Export cancelled')
    expect(download).not.toHaveBeenCalled()
    expect(deliverExport({ fileName: 'x.csv', mimeType: 'text/csv', content: '1' }, download)).toBe('Downloaded x.csv')
    expect(deliverPdf({ fileName: 'r.pdf', sizeBytes: 4, base64: btoa('%PDF') }, download)).toBe('Downloaded r.pdf')
    expect(download).toHaveBeenCalledTimes(2)
    expect(download.mock.calls[1][0]).toBeInstanceOf(Blob)
  })
})

describe('compareRuns, backends side by side', () => {
  it('keys each row by its backend too: wasm pool and cpu pool are two rows, not one', async () => {
    const { sideBySideResult } = await import('@shared/testing/fixtures')
    const a = sideBySideResult({ runId: 'a' })
    const b = sideBySideResult({ runId: 'b', cpuFactor: 2 })
    const rows = compareRuns(a, b)
    expect(rows).toHaveLength(a.summary.length)
    expect(rows.filter((r) => r.strategy === 'pool').map((r) => r.backend)).toEqual(['wasm', 'cpu'])
    const cpuPool = rows.find((r) => r.backend === 'cpu' && r.strategy === 'pool')!
    expect(cpuPool.deltaPct).toBeCloseTo(((2 - 3) / 3) * 100)
    expect(rows.find((r) => r.backend === 'wasm' && r.strategy === 'pool')!.deltaPct).toBe(0)
  })
})
