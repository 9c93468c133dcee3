// A halving rung's booster continued (xgboost-train.ts resume), with the real libxgboost loaded in
// this process: trained r rounds, its JSON sent back and continued to R, it is the booster trained R
// rounds straight, byte for byte (regression and a 3-class softprob), and only R − r rounds are
// updated. Without sampling: with it XGBoost reseeds its global RNG on the loaded booster (see
// xgboost-train.ts). A state that is not this booster's is refused, saying why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { presetConfig, resolveTask, type Target, workloadFor } from '@shared/contract'
import { datasetFor } from '../datasets/generated'
import { skipWithout } from '../../testing/capability'
import { loadXgboost, type XgbLibrary } from './library'
import { boosterToContinue, createXgbData, freeXgbData, trainXgbModel, type XgbData, xgbParams } from './xgboost-train'

let lib: XgbLibrary | null = null
const datas: XgbData[] = []
beforeAll(() => {
  try {
    lib = loadXgboost()
  } catch {
    lib = null
  }
})
afterAll(() => {
  for (const d of datas.splice(0)) freeXgbData(lib!.api, d)
})

/** A booster's data and parameters: generated data of `target`, no sampling, depth 3. */
function setup(target: 'regression' | 'multiclass') {
  const config = presetConfig('smoke', {
    model: { kind: 'gbdt', rounds: 9, maxDepth: 3, eta: 0.3, subsample: 1, colsampleBytree: 1 } as never,
    backend: 'xgboost',
    strategies: ['sequential'],
    target: target as Target,
    features: 6,
    ...(target === 'multiclass' ? { classes: 3 } : {}),
  })
  const task = target === 'regression' ? undefined : resolveTask(config)
  const w = workloadFor(config, 600, undefined, task)
  const data = createXgbData(lib!.api, datasetFor(w), w.features, 1)
  datas.push(data)
  const { kind: _kind, rounds: _rounds, ...p } = w.model as never as Parameters<typeof xgbParams>[0] & { kind: string; rounds: number }
  return { data, params: xgbParams(p, 17, 1, { kind: 'cpu' }, lib!.major, w.task) }
}

describe('xgboost: a rung continues a booster', () => {
  const need = (ctx: { skip: (note?: string) => never }) => {
    if (skipWithout('xgboost', lib !== null, 'no libxgboost')) ctx.skip('no libxgboost')
  }

  for (const target of ['regression', 'multiclass'] as const) {
    it(`${target}: 3 rounds, sent back as its JSON and continued to 9, is the booster trained 9 rounds straight, growing only 6`, async (ctx) => {
      need(ctx)
      const { data, params } = setup(target)
      const straight = await trainXgbModel(lib!.api, data, params, 9, { keep: true })
      const first = await trainXgbModel(lib!.api, data, params, 3, { keep: true })
      const rounds: number[] = []
      const continued = await trainXgbModel(lib!.api, data, params, 9, {
        keep: true,
        resume: { json: first.json!, rounds: 3 },
        onRound: (done) => rounds.push(done),
      })
      expect(continued.json).toBe(straight.json)
      expect(continued.fingerprint).toBe(straight.fingerprint)
      expect(continued.testMse).toBe(straight.testMse)
      expect([straight.roundsGrown, first.roundsGrown, continued.roundsGrown]).toEqual([9, 3, 6])
      expect(rounds).toEqual([4, 5, 6, 7, 8, 9])
    })
  }

  it("refuses a state that is not this booster: Trainpool's trees, other rounds, another objective, nothing left to grow, beside early stopping", async (ctx) => {
    need(ctx)
    const { data, params } = setup('regression')
    const { data: classes, params: softprob } = setup('multiclass')
    const first = await trainXgbModel(lib!.api, data, params, 3, { keep: true })
    const resume = boosterToContinue({ index: 0, rounds: 3, artifact: { format: 'xgboost-json', json: first.json! } })
    expect(() => boosterToContinue({ index: 0, rounds: 3, artifact: { format: 'gbdt-trees', features: 6, baseScore: 0.5, trees: [] } })).toThrow(
      'resume: a gbdt-trees model is not an XGBoost booster to continue',
    )
    await expect(trainXgbModel(lib!.api, data, params, 9, { resume: { ...resume, rounds: 2 } })).rejects.toThrow(
      'resume: the model sent back has 3 rounds, its state says 2',
    )
    await expect(trainXgbModel(lib!.api, classes, softprob, 9, { resume })).rejects.toThrow(
      'resume: the model sent back is reg:squarederror, the job trains multi:softprob',
    )
    await expect(trainXgbModel(lib!.api, data, params, 3, { resume })).rejects.toThrow('resume: a model 3 rounds in has nothing left of its 3')
    await expect(trainXgbModel(lib!.api, data, params, 9, { resume, earlyStopping: { rounds: 2, metric: 'mse' } })).rejects.toThrow(
      'resume continues a model from its last round: not with earlyStopping',
    )
  })
})
