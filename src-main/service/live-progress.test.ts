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

describe('LiveProgress: rounds trained (issue 39)', () => {
  it("keeps a model's rounds trained on its cell, so the lanes can show who stopped or left; absent when the model does not count them", () => {
    const sent: RunEvent[] = []
    const live = new LiveProgress('run-1', (e) => sent.push(e))
    live.measuring(0, { size: 100, models: 3, workers: 1, strategy: 'sequential', repeat: 0 })
    live.modelDone(0, 0.5, 7)
    live.modelDone(1, 0.4)
    live.flush()
    const last = sent.at(-1)
    if (last?.type !== 'progress') throw new Error('no progress event')
    expect(last.models).toEqual([
      { fraction: 1, loss: 0.5, done: true, roundsTrained: 7 },
      { fraction: 1, loss: 0.4, done: true },
      { fraction: 0, loss: null, done: false },
    ])
    live.stop()
  })
})
