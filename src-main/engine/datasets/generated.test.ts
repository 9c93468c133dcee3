import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { modelSeed } from '@shared/contract'
import { initialWeights } from '../mlp/fused-layout'
import { epochOrder, generateDataset } from './generated'

const spec = { size: 1000, features: 20, seed: 7, target: 'teacher' as const, testSplit: 0.2 }
const digest = (a: Float32Array | Int32Array) =>
  createHash('sha256')
    .update(Buffer.from(a.buffer, a.byteOffset, a.byteLength))
    .digest('hex')

describe('synthetic data', () => {
  it('is the same bytes for the same seed, and different for another seed', () => {
    const a = generateDataset(spec)
    const b = generateDataset(spec)
    expect(digest(a.xTrain)).toBe(digest(b.xTrain))
    expect(digest(a.yTest)).toBe(digest(b.yTest))
    expect(digest(generateDataset({ ...spec, seed: 8 }).xTrain)).not.toBe(digest(a.xTrain))
  })

  it('splits rows into train and test and keeps X in [0, 1)', () => {
    const d = generateDataset(spec)
    expect([d.train, d.test]).toEqual([800, 200])
    expect(d.xTrain.length).toBe(800 * 20)
    expect(Math.min(...d.xTrain)).toBeGreaterThanOrEqual(0)
    expect(Math.max(...d.xTrain)).toBeLessThan(1)
  })

  it('teacher target is standardised and learnable; noise target is U(0,1) like the article', () => {
    const t = generateDataset(spec)
    const y = [...t.yTrain, ...t.yTest]
    const mean = y.reduce((s, v) => s + v, 0) / y.length
    expect(Math.abs(mean)).toBeLessThan(0.1)
    const noise = generateDataset({ ...spec, target: 'noise' })
    expect(Math.min(...noise.yTrain)).toBeGreaterThanOrEqual(0)
    expect(Math.max(...noise.yTrain)).toBeLessThan(1)
  })

  it('batch order depends on (seed, epoch) only and is a permutation', () => {
    const o = epochOrder(800, 7, 0)
    expect(digest(o)).toBe(digest(epochOrder(800, 7, 0)))
    expect(digest(o)).not.toBe(digest(epochOrder(800, 7, 1)))
    expect([...o].sort((a, b) => a - b)).toEqual(Array.from({ length: 800 }, (_, i) => i))
  })

  it('model seeds are ≥ 1 (seed 0 means "unseeded" in tfjs) and give distinct initial weights', () => {
    for (const dataSeed of [0, 1, 42]) for (const i of [0, 1, 49]) expect(modelSeed(dataSeed, i)).toBeGreaterThanOrEqual(1)
    expect(modelSeed(0, 0)).toBe(1)
    const w0 = initialWeights(20, [8], modelSeed(0, 0))
    const w0again = initialWeights(20, [8], modelSeed(0, 0))
    const w1 = initialWeights(20, [8], modelSeed(0, 1))
    expect(digest(w0[0])).toBe(digest(w0again[0]))
    expect(digest(w0[0])).not.toBe(digest(w1[0]))
    const limit = Math.sqrt(6 / 28)
    expect(Math.max(...w0[0].map(Math.abs))).toBeLessThanOrEqual(limit)
  })
})
