// The model files carry their model's attributes (modelAttributes: run, index, configuration):
// XGBoost JSON as the learner's attributes — also in the xgboost backend's own JSON, whose text is
// kept as XGBoost wrote it — and ONNX as metadata_props.
import { onnx } from 'onnx-proto'
import { describe, expect, it } from 'vitest'
import type { ModelArtifact } from '@shared/contract'
import { onnxModel } from './onnx-model'
import { xgboostJson } from './xgboost-json'

const ATTRIBUTES = { trainpool_run: '20250101-120000-abcdef', trainpool_model: '7', trainpool_configuration: 'max-depth 5 · eta 0.3' }

describe("model files carry their model's attributes", () => {
  it("trees as XGBoost JSON: the learner's attributes", () => {
    const trees: Extract<ModelArtifact, { format: 'gbdt-trees' }> = {
      format: 'gbdt-trees',
      features: 1,
      baseScore: 0.5,
      trees: [{ feature: [-1], threshold: [0], defaultLeft: [0], left: [-1], leafValue: [0.25] }],
    }
    expect(JSON.parse(xgboostJson(trees, ATTRIBUTES)).learner.attributes).toEqual(ATTRIBUTES)
  })

  it("the xgboost backend's own JSON: the attributes added, the rest of its text as XGBoost wrote it", () => {
    const booster = '{"learner":{"attributes":{},"feature_names":[],"learner_model_param":{"base_score":"5E-1"}},"version":[1,7,4]}'
    const out = xgboostJson({ format: 'xgboost-json', json: booster }, ATTRIBUTES)
    expect(JSON.parse(out).learner.attributes).toEqual(ATTRIBUTES)
    expect(out).toContain('"base_score":"5E-1"}},"version":[1,7,4]}')
    const withOwn = xgboostJson({ format: 'xgboost-json', json: '{"learner":{"attributes":{"best_iteration":"3"},"x":1}}' }, ATTRIBUTES)
    expect(JSON.parse(withOwn).learner.attributes).toEqual({ ...ATTRIBUTES, best_iteration: '3' })
  })

  it('an MLP as ONNX: metadata_props', () => {
    const mlp: Extract<ModelArtifact, { format: 'mlp' }> = {
      format: 'mlp',
      features: 1,
      layers: [
        { inputs: 1, outputs: 2, w: [2, 1], b: [0, 0] },
        { inputs: 2, outputs: 1, w: [1, 1], b: [0] },
      ],
      preprocess: null,
    }
    const props = onnx.ModelProto.decode(onnxModel(mlp, ATTRIBUTES)).metadataProps
    expect(Object.fromEntries(props.map((p) => [p.key, p.value]))).toEqual(ATTRIBUTES)
  })
})
