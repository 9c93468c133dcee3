// A trained MLP as a run keeps it (contract/model-artifact.ts), read out of the fused parameter
// layout every MLP engine shares (fused-layout.ts):
//   [W1[F+1, n·H1] (last row: the bias), (Wk[n, Hin, Hout], bk[n, 1, Hout])…, Wo[n, HL(, K)], bo[n(, K)]]
// Model i's layers are its slices, as plain dense layers, with the data set's preprocessing; a
// classifier's says so (objective, class count) and its last layer gives its logits (K for multiclass).
import type { ModelArtifact, Preprocess, WorkloadTask } from '@shared/contract'
import { outputUnits } from './objective'

export type MlpArtifact = Extract<ModelArtifact, { format: 'mlp' }>

export function mlpArtifacts(
  params: readonly Float32Array[],
  features: number,
  hidden: readonly number[],
  n: number,
  preprocess: Preprocess | undefined,
  task?: WorkloadTask,
): MlpArtifact[] {
  const L = hidden.length
  const h1 = hidden[0]
  const K = outputUnits(task)
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
    layers.push({
      inputs: hl,
      outputs: K,
      w: [...params[2 * L - 1].subarray(i * hl * K, (i + 1) * hl * K)],
      b: [...params[2 * L].subarray(i * K, (i + 1) * K)],
    })
    const classifier = task && task.objective !== 'regression' ? { objective: task.objective, classes: task.classes } : {}
    return { format: 'mlp', features, layers, preprocess: preprocess ?? null, ...classifier }
  })
}
