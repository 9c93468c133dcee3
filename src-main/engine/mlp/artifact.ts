// A trained MLP as a run keeps it (contract/model-artifact.ts), read out of the fused parameter
// layout both MLP engines share (FusedMlp's and the ONNX training graph's):
//   [W1[F+1, n·H1] (last row: the bias), (Wk[n, Hin, Hout], bk[n, 1, Hout])…, Wo[n, HL], bo[n]]
// Model i's layers are its slices, as plain dense layers, with the data set's preprocessing.
import type { ModelArtifact, Preprocess } from '@shared/contract'

export type MlpArtifact = Extract<ModelArtifact, { format: 'mlp' }>

export function mlpArtifacts(
  params: readonly Float32Array[],
  features: number,
  hidden: readonly number[],
  n: number,
  preprocess: Preprocess | undefined,
): MlpArtifact[] {
  const L = hidden.length
  const h1 = hidden[0]
  return Array.from({ length: n }, (_, i): MlpArtifact => {
    const layers: MlpArtifact['layers'] = []
    // first layer: model i's columns of W1; its last row is the bias
    const w1 = new Array<number>(features * h1)
    const b1 = new Array<number>(h1)
    for (let f = 0; f <= features; f++) {
      for (let h = 0; h < h1; h++) {
        const v = params[0][f * n * h1 + i * h1 + h]
        if (f < features) w1[f * h1 + h] = v
        else b1[h] = v
      }
    }
    layers.push({ inputs: features, outputs: h1, w: w1, b: b1 })
    for (let k = 1; k < L; k++) {
      const hin = hidden[k - 1]
      const hout = hidden[k]
      layers.push({
        inputs: hin,
        outputs: hout,
        w: [...params[2 * k - 1].subarray(i * hin * hout, (i + 1) * hin * hout)],
        b: [...params[2 * k].subarray(i * hout, (i + 1) * hout)],
      })
    }
    const hl = hidden[L - 1]
    layers.push({ inputs: hl, outputs: 1, w: [...params[2 * L - 1].subarray(i * hl, (i + 1) * hl)], b: [params[2 * L][i]] })
    return { format: 'mlp', features, layers, preprocess: preprocess ?? null }
  })
}
