// The MLP's early-stopping watches (early-stopping.ts) on scripted epochs, and the fused layout's
// model selection they and a compacted program rely on (fused-layout.ts selectModels/joinModels, survivorsState).
import { describe, expect, it } from 'vitest'
import { EpochWatches, survivorsState } from './early-stopping'
import { initialParams, joinModels, selectModels } from './fused-layout'
import type { ModelScores } from './objective'

const FEATURES = 3
const HIDDEN = [4, 2]

describe('the fused layout: models selected and joined', () => {
  it('selecting models of a fused layout gives the layout of those models alone, in the order asked (every tensor kind: W1 blocks, hidden layers, K outputs)', () => {
    for (const outputs of [1, 3]) {
      const fused = initialParams(FEATURES, HIDDEN, [11, 12, 13], outputs)
      // biases start at zero: mark them so a mixed-up block shows
      fused.forEach((p, s) => p.forEach((_, j) => (p[j] += s * 1000 + j * 1e-3)))
      const alone = (seeds: number[], order: number[]) =>
        initialParams(FEATURES, HIDDEN, seeds, outputs).map((p, s) => {
          const block = p.length / seeds.length
          return p.map((v, j) => {
            // the mark each value had in the 3-model layout
            if (s === 0) {
              const row = Math.floor(j / (seeds.length * HIDDEN[0]))
              const col = j % (seeds.length * HIDDEN[0])
              const from = order[Math.floor(col / HIDDEN[0])] * HIDDEN[0] + (col % HIDDEN[0])
              return v + s * 1000 + (row * 3 * HIDDEN[0] + from) * 1e-3
            }
            return v + s * 1000 + (order[Math.floor(j / block)] * block + (j % block)) * 1e-3
          })
        })
      expect(selectModels(fused, 3, HIDDEN[0], [2, 0])).toEqual(alone([13, 11], [2, 0]))
      expect(selectModels(fused, 3, HIDDEN[0], [1])).toEqual(alone([12], [1]))
      // joining each model's own layout gives the fused one back
      expect(
        joinModels(
          [0, 1, 2].map((i) => selectModels(fused, 3, HIDDEN[0], [i])),
          HIDDEN[0],
        ),
      ).toEqual(fused)
    }
  })
})

/** A model's validation scores (a regressor's: its MSE). */
const mse = (value: number): ModelScores => ({ mse: value })

describe('EpochWatches', () => {
  it('stops each model after `patience` epochs without a strict improvement, keeps its best epoch (the first of ties) and reads parameters only when one improved', async () => {
    // three models, patience 2; MSE per epoch (program order is the group's while all live)
    const values = [
      [5, 4, 4, 4.5], // best epoch 2 (the tie at 3 is no improvement): stops after epoch 4
      [5, 3, 2, 1], // improves every epoch: never stops
      [1, 2, 3], // best epoch 1: stops after epoch 3
    ]
    const watches = new EpochWatches({ rounds: 2, metric: 'mse' }, 3, HIDDEN[0])
    let reads = 0
    /** the live program's parameters after epoch e: each model's values are 100·(its group position) + e */
    const paramsAt = (epoch: number) => async () => {
      reads++
      const live = watches.live
      const one = (i: number) => initialParams(FEATURES, HIDDEN, [1]).map((p) => p.fill(100 * i + epoch))
      return joinModels(
        live.map((i) => one(i)),
        HIDDEN[0],
      )
    }
    const verdicts = []
    for (let epoch = 1; epoch <= 4; epoch++) {
      const live = [...watches.live]
      const scores = live.map((i) => mse(values[i][epoch - 1]))
      const loss = live.map((i) => 10 * i + epoch)
      verdicts.push({ live, ...(await watches.afterEpoch(scores, loss, paramsAt(epoch))) })
    }
    expect(verdicts).toEqual([
      { live: [0, 1, 2], stopped: [], continuing: [0, 1, 2] },
      { live: [0, 1, 2], stopped: [], continuing: [0, 1, 2] },
      { live: [0, 1, 2], stopped: [2], continuing: [0, 1] },
      { live: [0, 1], stopped: [0], continuing: [1] },
    ])
    expect(watches.live).toEqual([1])
    // epochs 1, 2, 3 and 4 each had an improvement (epoch 3 and 4: model 1's only)
    expect(reads).toBe(4)
    const kept = watches.kept()
    expect(kept.rounds).toEqual([
      { roundsTrained: 4, bestRound: 2 },
      { roundsTrained: 4, bestRound: 4 },
      { roundsTrained: 3, bestRound: 1 },
    ])
    expect(kept.validation.map((s) => s.mse)).toEqual([4, 1, 1])
    expect(kept.loss).toEqual([2, 14, 21])
    // each model's kept parameters are those the program held at its best epoch
    const perModel = [0, 1, 2].map((i) => selectModels(kept.params, 3, HIDDEN[0], [i]))
    expect(perModel.map((p) => p.every((t) => t.every((v) => v === p[0][0])))).toEqual([true, true, true])
    expect(perModel.map((p) => p[0][0])).toEqual([2, 104, 201])
  })

  it("watches a classifier's metric in its direction (ROC AUC: higher is better), and refuses a model without held-out rows", async () => {
    const watches = new EpochWatches({ rounds: 1, metric: 'auc' }, 1, HIDDEN[0])
    const auc = (value: number): ModelScores => ({ mse: 0.2, metrics: { mse: 0.2, auc: value } })
    const params = async () => initialParams(FEATURES, HIDDEN, [1])
    expect((await watches.afterEpoch([auc(0.7)], [1], params)).stopped).toEqual([])
    expect((await watches.afterEpoch([auc(0.8)], [1], params)).stopped).toEqual([])
    expect((await watches.afterEpoch([auc(0.75)], [1], params)).stopped).toEqual([0])
    expect(watches.kept().rounds).toEqual([{ roundsTrained: 3, bestRound: 2 }])
    await expect(new EpochWatches({ rounds: 1, metric: 'mse' }, 1, HIDDEN[0]).afterEpoch([null], [1], params)).rejects.toThrow(
      /earlyStopping needs every model's held-out rows/,
    )
    expect(() => new EpochWatches({ rounds: 1, metric: 'mse' }, 1, HIDDEN[0]).kept()).toThrow(/never watched/)
  })
})

describe('survivorsState', () => {
  it("gives the survivors' parameters and both Adam moments in their order, and the program's step", () => {
    const n = 3
    const marked = (base: number) => initialParams(FEATURES, HIDDEN, [1, 2, 3]).map((p, s) => p.map((_, j) => base + s * 1000 + j))
    const state = { values: marked(0), adam: { m: marked(1e5), v: marked(2e5), step: 17 } }
    const kept = survivorsState(state, n, HIDDEN[0], [2, 0])
    const select = (params: Float32Array[]) => selectModels(params, n, HIDDEN[0], [2, 0])
    expect(kept).toEqual({ values: select(state.values), adam: { m: select(state.adam.m), v: select(state.adam.v), step: 17 } })
  })
})
