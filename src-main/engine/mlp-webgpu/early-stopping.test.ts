// Early stopping on the WGSL MLP engine (issue 39), tiny shapes for lavapipe: each model stops at the
// same epoch alone and fused, and as on the onnxruntime engine; the model kept is its best epoch's (a
// run of that many epochs without early stopping); a compacted program trains the survivors exactly
// as the uncompacted one would; no buffer is left behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { validationRows, type Workload } from '@shared/contract'
import type { MlpParams } from '@shared/families'
import { skipWithout } from '../../testing/capability'
import { BackendUnavailableError, type TrainedModel, type TrainOptions } from '../backend/types'
import { datasetFor, epochOrder } from '../datasets/generated'
import { ADAM_DEFAULTS } from '../mlp/adam'
import { dataKey } from '../mlp/data-key'
import { survivorsState } from '../mlp/early-stopping'
import { selectModels } from '../mlp/fused-layout'
import { prepareOrtData, trainOrt } from '../mlp-onnx/onnx-training'
import { type OnnxRuntime, startOnnxRuntime } from '../mlp-onnx/ort-runtime'
import { openWgslDevice, type WgslDevice } from '../webgpu/device'
import { WgslMlp } from './wgsl-mlp'
import { disposeMlpData, trainWgsl, uploadMlpData } from './wgsl-training'

type W = Workload<MlpParams>

/** Small data, a high learning rate: the models overfit within a few epochs, at different ones. */
const EPOCHS = 20
const workload: W = {
  size: 300,
  features: 6,
  seed: 3,
  target: 'teacher',
  testSplit: 0.2,
  validation: 0.25,
  earlyStopping: { rounds: 2, metric: 'mse' },
  model: { kind: 'mlp', epochs: EPOCHS, batchSize: 32, hidden: [8], lr: 0.1 },
}
/** the engine's batched = one at a time bound (parity.test.ts) */
const SAME_ENGINE = 1e-6
/** against ONNX Runtime (parity.test.ts) */
const CROSS_BACKEND = 1e-5

let dev: WgslDevice | null = null
let why = ''
let ort: OnnxRuntime | null = null
beforeAll(async () => {
  try {
    dev = await openWgslDevice('trainpool-mlp-early-stopping-tests')
  } catch (err) {
    if (!(err instanceof BackendUnavailableError)) throw err
    why = err.reason
  }
  ort = await startOnnxRuntime().catch(() => null)
})
afterAll(() => dev?.release())
const noDevice = () => skipWithout('webgpu', dev !== null, `no WebGPU adapter: ${why}`)

/** As the seam tells a backend that holds rows out itself: the validation fraction's rows for every model. */
const heldOut = (w: W): TrainOptions['heldOutOf'] => (w.validation !== undefined ? () => validationRows(datasetFor(w).train, w.validation!) : undefined)
const hooks = (done: TrainedModel[]) => ({ onProgress: () => {}, onModelDone: (m: TrainedModel) => done.push(m), shouldStop: () => false })

async function wgsl(w: W, indices: number[], options: TrainOptions): Promise<TrainedModel[]> {
  const data = uploadMlpData(dev!, dataKey(w), datasetFor(w))
  const done: TrainedModel[] = []
  const heldOutOf = heldOut(w)
  try {
    await trainWgsl(dev!, data, w, indices, { ...options, ...(heldOutOf ? { heldOutOf } : {}) }, hooks(done))
  } finally {
    disposeMlpData(dev!, data)
  }
  return done
}

const rounds = (models: readonly TrainedModel[]) => models.map((m) => [m.index, m.roundsTrained, m.bestRound])
const relative = (a: number, b: number) => Math.abs(a - b) / Math.abs(b)

describe('early stopping on the WGSL engine', () => {
  it('stops each model at the same epoch alone, fused and on onnxruntime, and keeps its best epoch', async (ctx) => {
    if (noDevice()) return ctx.skip()
    const live = dev!.bufferStats().live
    const indices = [0, 1, 2]
    const alone = await wgsl(workload, indices, { fused: false })
    const fused = await wgsl(workload, indices, { fused: true, keep: true })
    expect(rounds(fused)).toEqual(rounds(alone))
    const trained = alone.map((m) => m.roundsTrained!)
    expect(Math.max(...trained)).toBeLessThan(EPOCHS)
    expect(new Set(trained).size).toBeGreaterThan(1)
    for (const m of alone) {
      const f = fused.find((x) => x.index === m.index)!
      expect(relative(f.testMse, m.testMse), `model ${m.index}`).toBeLessThan(SAME_ENGINE)
      // the kept model is its best epoch's: a run of bestRound epochs without early stopping
      const { earlyStopping: _off, ...plain } = workload
      const best = (await wgsl({ ...plain, model: { ...plain.model, epochs: m.bestRound! } }, [m.index], { fused: false, keep: true }))[0]
      expect(best.roundsTrained).toBeUndefined()
      expect(relative(f.testMse, best.testMse), `model ${m.index}`).toBeLessThan(SAME_ENGINE)
      expect(relative(f.validationMse!, best.validationMse!), `model ${m.index}`).toBeLessThan(SAME_ENGINE)
    }
    expect(dev!.bufferStats().live).toBe(live)
    if (skipWithout('onnxruntime', ort !== null, 'onnxruntime-node did not start')) return ctx.skip()
    const onnx: TrainedModel[] = []
    await trainOrt(ort!, prepareOrtData('test', datasetFor(workload), workload), workload, indices, { fused: true, heldOutOf: heldOut(workload)! }, hooks(onnx))
    expect(rounds(onnx)).toEqual(rounds(alone))
    for (const m of alone) expect(relative(onnx.find((x) => x.index === m.index)!.testMse, m.testMse), `model ${m.index}`).toBeLessThan(CROSS_BACKEND)
  })

  it('a compacted program trains the survivors exactly as the uncompacted one: weights, Adam moments and step carried over', async (ctx) => {
    if (noDevice()) return ctx.skip()
    const w: W = { ...workload, model: { ...workload.model, hidden: [8, 4] } }
    const data = uploadMlpData(dev!, dataKey(w), datasetFor(w))
    const shape = (n: number) => ({ n, features: w.features, hidden: w.model.hidden, batchRows: 32, trainRows: data.dataset.train })
    const full = new WgslMlp(dev!, shape(4), data.train, ADAM_DEFAULTS)
    const smaller = new WgslMlp(dev!, shape(2), data.train, ADAM_DEFAULTS)
    try {
      const lr = [0.01, 0.02, 0.03, 0.04]
      const keep = [3, 1]
      const epoch = async (model: WgslMlp, e: number, rates: number[]) => {
        const rows = model.beginEpoch(epochOrder(data.dataset.train, w.seed, e), rates)
        const encoder = dev!.device.createCommandEncoder()
        model.encodeSteps(encoder, 0, model.stepsPerEpoch, rows)
        model.encodeLossCopy(encoder)
        dev!.submit([encoder.finish()])
        return Array.from(await model.readLoss())
      }
      full.reset([1, 2, 3, 4], null)
      await epoch(full, 0, lr)
      smaller.reset([4, 2], null, survivorsState(await full.state(), 4, w.model.hidden[0], keep))
      const fullLoss = await epoch(full, 1, lr)
      expect(await epoch(smaller, 1, [lr[3], lr[1]])).toEqual(keep.map((i) => fullLoss[i]))
      const [a, c] = [await full.state(), await smaller.state()]
      const select = (params: Float32Array[]) => selectModels(params, 4, w.model.hidden[0], keep)
      expect(c.values).toEqual(select(a.values))
      expect(c.adam.m).toEqual(select(a.adam.m))
      expect(c.adam.v).toEqual(select(a.adam.v))
      expect(c.adam.step).toBe(a.adam.step)
    } finally {
      full.destroy()
      smaller.destroy()
      disposeMlpData(dev!, data)
    }
  })
})
