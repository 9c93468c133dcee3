// The fused parameter layout every MLP engine shares (FusedMlp, the ONNX training graph, the WGSL
// engine; mlp/artifact.ts reads models out of it): W1 [F+1, n·H1] with model i's columns
// i·H1 … (i+1)·H1 and the bias as its last row, then (Wk [n, Hin, Hout], bk [n, 1, Hout]) per later
// hidden layer, then the output layer: Wo [n, HL] and bo [n] for one output unit (a regressor, a
// binary classifier's logit), Wo [n, HL, K] and bo [n, K] for K (a multiclass model's logits).
// One output unit is the layout from before classifiers, byte for byte.
import { Rng } from '../random'

/** The shapes of the fused parameters, in layout order; `outputs` = the output layer's units (mlp/objective.ts outputUnits). */
export function paramShapes(features: number, hidden: readonly number[], n: number, outputs = 1): number[][] {
  const L = hidden.length
  const shapes: number[][] = [[features + 1, n * hidden[0]]]
  for (let k = 1; k < L; k++) shapes.push([n, hidden[k - 1], hidden[k]], [n, 1, hidden[k]])
  if (outputs === 1) shapes.push([n, hidden[L - 1]], [n])
  else shapes.push([n, hidden[L - 1], outputs], [n, outputs])
  return shapes
}

/** The initial parameters of n fused models (model i from initialWeights(seeds[i])), biases zero. */
export function initialParams(features: number, hidden: readonly number[], seeds: readonly number[], outputs = 1): Float32Array[] {
  const n = seeds.length
  const L = hidden.length
  const perModel = seeds.map((seed) => initialWeights(features, hidden, seed, outputs))
  const h1 = hidden[0]
  const w1 = new Float32Array((features + 1) * n * h1) // last row: the first layer's bias, zero
  for (let i = 0; i < n; i++) {
    const src = perModel[i][0]
    for (let f = 0; f < features; f++) w1.set(src.subarray(f * h1, (f + 1) * h1), f * n * h1 + i * h1)
  }
  const out = [w1]
  for (let k = 1; k < L; k++) {
    const w = new Float32Array(n * hidden[k - 1] * hidden[k])
    for (let i = 0; i < n; i++) w.set(perModel[i][k], i * hidden[k - 1] * hidden[k])
    out.push(w, new Float32Array(n * hidden[k]))
  }
  const wo = new Float32Array(n * hidden[L - 1] * outputs)
  for (let i = 0; i < n; i++) wo.set(perModel[i][L], i * hidden[L - 1] * outputs)
  out.push(wo, new Float32Array(n * outputs))
  return out
}

/**
 * Glorot-uniform weights of one model's layers from its own seed (row-major [fanIn, fanOut], drawn
 * layer after layer, so the hidden layers do not depend on the output units); biases start at zero.
 */
export function initialWeights(features: number, hidden: readonly number[], seed: number, outputs = 1): Float32Array[] {
  const rng = new Rng(seed, 6)
  const widths = [features, ...hidden, outputs]
  const layers: Float32Array[] = []
  for (let l = 0; l + 1 < widths.length; l++) {
    const fanIn = widths[l]
    const fanOut = widths[l + 1]
    const limit = Math.sqrt(6 / (fanIn + fanOut))
    const w = new Float32Array(fanIn * fanOut) // row-major [fanIn, fanOut]
    for (let i = 0; i < w.length; i++) w[i] = (rng.uniform() * 2 - 1) * limit
    layers.push(w)
  }
  return layers
}

/**
 * Models `positions` (in that order) of n fused ones, in the same layout for positions.length models:
 * a smaller program's parameters, or one model's (positions [i]). Works on anything shaped like the
 * parameters (Adam's moments too); H1 = the first hidden layer's width (W1's column block per model).
 */
export function selectModels(params: readonly Float32Array[], n: number, h1: number, positions: readonly number[]): Float32Array[] {
  const m = positions.length
  return params.map((p, s) => {
    const out = new Float32Array((p.length / n) * m)
    if (s === 0) {
      // W1 [F+1, n·H1]: each row holds every model's block of H1 columns
      const rows = p.length / (n * h1)
      for (let f = 0; f < rows; f++) positions.forEach((i, j) => out.set(p.subarray(f * n * h1 + i * h1, f * n * h1 + (i + 1) * h1), f * m * h1 + j * h1))
    } else {
      // model-major: one contiguous block per model
      const block = p.length / n
      positions.forEach((i, j) => out.set(p.subarray(i * block, (i + 1) * block), j * block))
    }
    return out
  })
}

/** One-model layouts (each as selectModels(…, [i]) gives) joined into one fused layout of models.length models, in order. */
export function joinModels(models: readonly (readonly Float32Array[])[], h1: number): Float32Array[] {
  const m = models.length
  return models[0].map((first, s) => {
    const out = new Float32Array(first.length * m)
    if (s === 0) {
      const rows = first.length / h1
      models.forEach((one, j) => {
        for (let f = 0; f < rows; f++) out.set(one[0].subarray(f * h1, (f + 1) * h1), f * m * h1 + j * h1)
      })
    } else {
      models.forEach((one, j) => out.set(one[s], j * first.length))
    }
    return out
  })
}
