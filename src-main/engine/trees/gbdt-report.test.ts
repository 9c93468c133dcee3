// What the trees' worker half reports per model, through the family as a worker runs it (the cpu
// backend): a classifier's metrics on its probabilities (@shared/metrics) with testMse their `mse`,
// validation metrics on a fold's held-out rows, the same numbers and trees fused or one at a time;
// a regressor's MSE alone, as before; the test margins an engine computed while training (the WGSL
// engine's, kept on the device) scored instead of the host's predictions. The WGSL backend refuses a classifier, naming it.
import { describe, expect, it } from 'vitest'
import type { Workload, WorkloadTask } from '@shared/contract'
import { GBDT_DEFAULTS, type GbdtParams } from '@shared/families/gbdt'
import { scoreOutputs } from '@shared/metrics'
import { generateDataset } from '../datasets/generated'
import { meanSquaredError, outputsOfMargins, predictGbdt, predictGbdtOutputs, prepareGbdtData, trainGbdt } from '../gbdt'
import { gbdtWorkerFamily } from '../families/gbdt'
import type { TrainedModel, TrainOptions } from '../backend/types'
import { type GbdtModelWithTestMargins, trainTreesAndReport } from './gbdt-report'

const model: GbdtParams = { ...GBDT_DEFAULTS, rounds: 6, maxDepth: 4 }
const workloadOf = (task?: WorkloadTask): Workload<GbdtParams> => ({
  size: 600,
  features: 6,
  seed: 3,
  target: 'teacher',
  testSplit: 0.25,
  model,
  ...(task ? { task } : {}),
})

async function report(w: Workload<GbdtParams>, options: TrainOptions): Promise<TrainedModel[]> {
  const started = await gbdtWorkerFamily.init('cpu')
  const data = gbdtWorkerFamily.prepare(started, w)
  const out: TrainedModel[] = []
  await gbdtWorkerFamily.train(started, data, w, [0, 1, 2], options, { onProgress: () => {}, onModelDone: (m) => out.push(m), shouldStop: () => false })
  gbdtWorkerFamily.disposeData(started, data)
  return out.sort((a, b) => a.index - b.index)
}

describe("the trees' per-model report", () => {
  for (const task of [
    { objective: 'binary', classes: 2 },
    { objective: 'multiclass', classes: 4 },
  ] as WorkloadTask[]) {
    it(`${task.objective}: metrics on the probabilities, testMse their mse, validation metrics on a fold; fused = one at a time`, async () => {
      const w = workloadOf(task)
      const heldOutOf = (i: number) => (i === 1 ? { begin: 0, end: 150 } : null)
      const alone = await report(w, { fused: false, heldOutOf })
      const fused = await report(w, { fused: true, heldOutOf })
      expect(fused.map((m) => [m.fingerprint, m.metrics, m.validationMetrics])).toEqual(alone.map((m) => [m.fingerprint, m.metrics, m.validationMetrics]))
      // model 0 again, by hand: the data set the family builds, the engine, @shared/metrics
      const d = generateDataset(w)
      const trained = trainGbdt(prepareGbdtData(d.xTrain, d.yTrain, d.train, w.features, model.maxBin), model, alone[0].seed, { task })
      const metrics = scoreOutputs(task, predictGbdtOutputs(trained, d.xTest, d.test), d.yTest)
      expect(alone[0].metrics).toEqual(metrics)
      expect(alone[0].testMse).toBe(metrics.mse)
      expect(Object.keys(metrics).sort()).toEqual(task.objective === 'binary' ? ['accuracy', 'auc', 'logloss', 'mse'] : ['accuracy', 'logloss', 'mse'])
      expect(metrics.logloss!).toBeLessThan(Math.log(task.classes))
      // only the fold model has validation scores
      expect(alone[1].validationMetrics?.logloss).toBeGreaterThan(0)
      expect(alone[1].validationMse).toBe(alone[1].validationMetrics!.mse)
      expect(alone[0].validationMetrics).toBeUndefined()
    })
  }

  it('regression: the MSE of the predictions alone, as before (no metrics)', async () => {
    const w = workloadOf()
    const [m0] = await report(w, { fused: false })
    const d = generateDataset(w)
    const trained = trainGbdt(prepareGbdtData(d.xTrain, d.yTrain, d.train, w.features, model.maxBin), model, m0.seed)
    expect(m0.testMse).toBe(meanSquaredError(predictGbdt(trained, d.xTest, d.test), d.yTest))
    expect(m0.metrics).toBeUndefined()
  })

  for (const task of [undefined, { objective: 'binary', classes: 2 } as WorkloadTask]) {
    it(`${task?.objective ?? 'regression'}: an engine's test margins are what the report scores (the host does not predict them)`, async () => {
      const w = workloadOf(task)
      const d = generateDataset(w)
      const binned = prepareGbdtData(d.xTrain, d.yTrain, d.train, w.features, model.maxBin)
      const given: Float32Array[] = []
      // the engine's margins: here the host's shifted, so the scores tell whose they are
      const train = async (seeds: readonly number[]): Promise<GbdtModelWithTestMargins[]> =>
        seeds.map((s) => {
          const trained = trainGbdt(binned, model, s, task ? { task } : {})
          const testMargins = predictGbdt(trained, d.xTest, d.test).map((v) => v + 0.25)
          given.push(testMargins.slice())
          return { ...trained, testMargins }
        })
      const out: TrainedModel[] = []
      await trainTreesAndReport(train, d, w, [0, 1], { fused: true }, { onProgress: () => {}, onModelDone: (m) => out.push(m), shouldStop: () => false })
      expect(out).toHaveLength(2)
      out.forEach((m, k) => {
        if (!task) {
          expect(m.testMse).toBe(meanSquaredError(given[k], d.yTest))
          return
        }
        const metrics = scoreOutputs(task, outputsOfMargins({ objective: 'binary', classes: 2 }, given[k].slice(), d.test), d.yTest)
        expect(m.metrics).toEqual(metrics)
        expect(m.testMse).toBe(metrics.mse)
      })
    })
  }
})
