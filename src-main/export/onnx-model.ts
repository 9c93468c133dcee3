// A trained MLP as an ONNX inference model: input `features` [N, F] (raw values, in the run's
// order), the data set's preprocessing in the graph (missing → the training mean, then
// standardised), then one Gemm per layer with ReLU between. A regressor's output is `prediction`
// [N, 1]; a classifier's is `probabilities`, what its loss was trained on: a Sigmoid after the last
// layer for binary ([N, 1], p(class 1)), a Softmax over the K outputs for multiclass ([N, K]). IR 8,
// opset 13, with the training graphs' builder (onnx-graph/builder.ts).
import type { ModelArtifact } from '@shared/contract'
import { Builder } from '../onnx-graph/builder'
import { onnx } from 'onnx-proto'

type MlpArtifact = Extract<ModelArtifact, { format: 'mlp' }>

/** The exported model's output: a classifier's probabilities, a regressor's prediction. */
export function onnxOutputName(artifact: Pick<MlpArtifact, 'objective'>): 'probabilities' | 'prediction' {
  return artifact.objective === 'binary' || artifact.objective === 'multiclass' ? 'probabilities' : 'prediction'
}

/** `metadata`: the model's metadata_props (its run, index, configuration, a classifier's classes: modelAttributes). */
export function onnxModel(artifact: MlpArtifact, metadata: Record<string, string> = {}): Uint8Array {
  const g = new Builder(onnx.TensorProto.DataType.FLOAT)
  const F = artifact.features
  let x = g.input('features', ['N', F])
  const p = artifact.preprocess
  if (p?.impute) x = g.op('Where', [g.op('IsNaN', [x]), g.weights([F], p.mean), x])
  if (p?.standardise) x = g.op('Div', [g.op('Sub', [x, g.weights([F], p.mean)]), g.weights([F], p.std)])
  const output = onnxOutputName(artifact)
  const outputs = artifact.layers[artifact.layers.length - 1].outputs
  artifact.layers.forEach((layer, k) => {
    const last = k === artifact.layers.length - 1
    const z = g.op(
      'Gemm',
      [x, g.weights([layer.inputs, layer.outputs], layer.w), g.weights([layer.outputs], layer.b)],
      {},
      last && output === 'prediction' ? output : undefined,
    )
    x = last ? z : g.op('Relu', [z])
  })
  if (artifact.objective === 'binary') g.op('Sigmoid', [x], {}, output)
  else if (artifact.objective === 'multiclass') g.op('Softmax', [x], { axis: 1 }, output)
  g.output(output, ['N', outputs])
  return g.encode('trainpool_mlp', metadata)
}
