// The live lanes say where each worker runs: its GPU and, for a scheduler's task, its host, as the
// runner's onStart reported them; both stay on the lane through its progress.
import { describe, expect, it } from 'vitest'
import type { RunEvent } from '@shared/contract'
import { LiveProgress } from './live-progress'

describe('LiveProgress: where each worker runs', () => {
  it("keeps each lane's host and GPU through its progress", () => {
    const sent: RunEvent[] = []
    const live = new LiveProgress('run-1', (e) => sent.push(e))
    live.measuring(0, { size: 100, models: 2, workers: 2, strategy: 'pool', repeat: 0 })
    live.running(0, [0], { host: 'node01', gpu: 'GPU 0' })
    live.running(1, [1], { host: 'node02' })
    live.progressed(0, [0], { done: 1, total: 4, unit: 'batch', loss: 0.5 })
    live.flush()
    const last = sent.at(-1)
    expect(last?.type).toBe('progress')
    if (last?.type !== 'progress') return
    expect(last.lanes.map((l) => [l.worker, l.host, l.gpu])).toEqual([
      [0, 'node01', 'GPU 0'],
      [1, 'node02', undefined],
    ])
    live.stop()
  })
})
