// A kept model's file says which model it is: its name and its own attributes name the run, the
// model and, in a model set, its configuration.
import { describe, expect, it } from 'vitest'
import { modelFileName } from './api'
import { type BenchConfig, presetConfig } from './config'
import { modelAttributes } from './model-artifact'

const setConfig: BenchConfig = presetConfig('smoke', {
  model: { kind: 'gbdt' } as never,
  models: [8],
  set: { grid: { maxDepth: [3, 5], eta: [0.1, 0.3] }, seeds: 2, folds: null },
})
const run = { runId: '20250101-120000-abcdef', config: setConfig }

describe("a kept model's name and attributes", () => {
  it("in a model set, name the model's configuration", () => {
    // model 7: configuration 3 (max-depth 5, eta 0.3), its second seed
    expect(modelFileName(run, 7, 'json')).toBe('trainpool-20250101-120000-abcdef-model-7-max-depth-5_eta-0.3.json')
    expect(modelFileName({ ...run, name: 'my grid' }, 0, 'json')).toBe('trainpool-my-grid-20250101-120000-abcdef-model-0-max-depth-3_eta-0.1.json')
    const attributes = modelAttributes(run, 7)
    expect(attributes).toMatchObject({ trainpool_run: run.runId, trainpool_model: '7', trainpool_configuration: 'max-depth 5 · eta 0.3' })
    expect(JSON.parse(attributes.trainpool_params)).toMatchObject({ kind: 'gbdt', maxDepth: 5, eta: 0.3, rounds: 10 })
  })

  it('outside a set, name the model and its parameters', () => {
    const plain = { runId: run.runId, config: presetConfig('smoke') }
    expect(modelFileName(plain, 2, 'onnx')).toBe('trainpool-20250101-120000-abcdef-model-2.onnx')
    const attributes = modelAttributes(plain, 2)
    expect(attributes).not.toHaveProperty('trainpool_configuration')
    expect(JSON.parse(attributes.trainpool_params)).toMatchObject({ kind: 'mlp', hidden: [64] })
  })
})
