// A trained MLP as an ONNX inference model: input `features` [N, F] (raw values, in the run's
// order), output `prediction` [N, 1], the data set's preprocessing in the graph (missing → the
// training mean, then standardised), then one Gemm per layer with ReLU between. IR 8, opset 13, with
// the training graphs' builder (onnx-graph/builder.ts).
import type { ModelArtifact } from '@shared/contract'
import { Builder } from '../onnx-graph/builder'
import { onnx } from 'onnx-proto'

type MlpArtifact = Extract<ModelArtifact, { format: 'mlp' }>

/** `metadata`: the model's metadata_props (its run, index, configuration: modelAttributes). */
export function onnxModel(artifact: MlpArtifact, metadata: Record<string, string> = {}): Uint8Array {
  const g = new Builder(onnx.TensorProto.DataType.FLOAT)
  const F = artifact.features
  let x = g.input('features', ['N', F])
  const p = artifact.preprocess
  if (p?.impute) x = g.op('Where', [g.op('IsNaN', [x]), g.weights([F], p.mean), x])
  if (p?.standardise) x = g.op('Div', [g.op('Sub', [x, g.weights([F], p.mean)]), g.weights([F], p.std)])
  artifact.layers.forEach((layer, k) => {
    const last = k === artifact.layers.length - 1
    const z = g.op('Gemm', [x, g.weights([layer.inputs, layer.outputs], layer.w), g.weights([layer.outputs], layer.b)], {}, last ? 'prediction' : undefined)
    x = last ? z : g.op('Relu', [z])
  })
  g.output('prediction', ['N', 1])
  return g.encode('trainpool_mlp', metadata)
}
