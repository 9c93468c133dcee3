// The pieces every MLP engine takes from engine/mlp/ — Adam's constants, each model's learning rate
// (adam.ts) and the initial weights (fused-layout.ts) — checked against references that share none
// of them, since the engines' parity with each other cannot see a fault in what they share: three
// Adam steps of FusedMlp (tfjs on the cpu backend, the engines' reference program) from its initial
// weights against torch.optim.Adam 1.13 with the constants written here (betas 0.9, 0.999, ε 1e-7:
// Keras's, which FusedMlp follows), a different rate per fused model; and the initial weights
// against Glorot-uniform's definition (bounds, spread, zero biases), worked by hand.
import { spawnSync } from 'node:child_process'
import * as tf from '@tensorflow/tfjs-core'
import '@tensorflow/tfjs-backend-cpu'
import { beforeAll, describe, expect, it } from 'vitest'
import { skipWithout } from '../../testing/capability'
import { Rng } from '../random'
import { FusedMlp } from '../mlp-tfjs/fused-mlp'
import { ADAM_DEFAULTS, learningRates } from './adam'
import { type MlpArtifact, mlpArtifacts } from './artifact'
import { initialParams, initialWeights } from './fused-layout'

const PYTHON = '/usr/bin/python3'
let torchWhy = ''

beforeAll(async () => {
  await tf.setBackend('cpu')
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' })
  if (probe.status !== 0) torchWhy = `${PYTHON} cannot import torch: ${probe.stderr || probe.error?.message}`
})

/** PyTorch 1.13: each model's layers after `steps` Adam steps on the whole batch (MSE of its one output), in float64. */
function torchAdam(
  models: readonly MlpArtifact[],
  lrs: readonly number[],
  x: number[],
  y: number[],
  rows: number,
  steps: number,
): { w: number[]; b: number[] }[][] {
  const script = `
import json, sys, torch
d = json.load(sys.stdin)
x = torch.tensor(d['x'], dtype=torch.float64).reshape(d['rows'], -1)
y = torch.tensor(d['y'], dtype=torch.float64)
out = []
for m, lr in zip(d['models'], d['lrs']):
    layers = [(torch.tensor(l['w'], dtype=torch.float64).reshape(l['inputs'], l['outputs']).requires_grad_(),
               torch.tensor(l['b'], dtype=torch.float64).requires_grad_()) for l in m['layers']]
    opt = torch.optim.Adam([p for wb in layers for p in wb], lr=lr, betas=(0.9, 0.999), eps=1e-7)
    for _ in range(d['steps']):
        opt.zero_grad()
        a = x
        for k, (w, b) in enumerate(layers):
            a = a @ w + b
            if k < len(layers) - 1:
                a = torch.relu(a)
        loss = ((a[:, 0] - y) ** 2).mean()
        loss.backward()
        opt.step()
    out.append([{'w': w.detach().flatten().tolist(), 'b': b.detach().tolist()} for w, b in layers])
print(json.dumps(out))
`
  const run = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify({ x, y, rows, models, lrs, steps }), encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`torch failed: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

describe('Adam and the learning rates, against PyTorch', () => {
  it('three Adam steps of two fused models, each its own rate, = torch.optim.Adam (betas 0.9, 0.999, ε 1e-7)', async (ctx) => {
    if (skipWithout('torch', torchWhy === '', torchWhy)) return ctx.skip()
    const features = 3
    const hidden = [5]
    const rows = 8
    const steps = 3
    const rng = new Rng(21, 1)
    const x = Array.from({ length: rows * features }, () => rng.uniform() * 2 - 1)
    const y = Array.from({ length: rows }, (_, r) => x[r * features] - 0.5 * x[r * features + 1] + 0.1)
    // a model set's rate grid, as the engines read it
    const lrs = learningRates({ model: { lr: 0.01 } }, [0, 1], { paramsOf: (i) => ({ lr: [0.01, 0.05][i] }) }) as number[]
    expect(lrs).toEqual([0.01, 0.05])
    const mlp = new FusedMlp(tf, { features, hidden, seeds: [5, 6], adam: { lr: lrs, ...ADAM_DEFAULTS } })
    const before = mlpArtifacts(await mlp.parameters(), features, hidden, 2, undefined)
    const withOnes = Array.from({ length: rows }, (_, r) => [...x.slice(r * features, (r + 1) * features), 1])
    const xs = tf.tensor2d(withOnes)
    const xT = tf.transpose(xs) as tf.Tensor2D
    const ys = tf.tensor2d(y, [rows, 1])
    for (let s = 0; s < steps; s++) mlp.trainStep(xs, xT, ys).dispose()
    const after = mlpArtifacts(await mlp.parameters(), features, hidden, 2, undefined)
    tf.dispose([xs, xT, ys])
    mlp.dispose()

    const reference = torchAdam(before, lrs, x, y, rows, steps)
    let checked = 0
    reference.forEach((layers, i) =>
      layers.forEach((layer, l) => {
        for (const part of ['w', 'b'] as const) {
          layer[part].forEach((expected, j) => {
            const actual = after[i].layers[l][part]![j]
            // float32 against float64: a step moves a parameter by about its rate; 6e-6 of it measured, 1e-4 leaves room
            // (Adam's ε × 100 or β1 0.8 move some parameters by over 1e-3 of it)
            expect(Math.abs(actual - expected), `model ${i} layer ${l} ${part}[${j}]: ${actual} vs ${expected}`).toBeLessThan(1e-4 * lrs[i])
            checked++
          })
        }
      }),
    )
    expect(checked).toBe(2 * (features * hidden[0] + hidden[0] + hidden[0] + 1))
  })
})

describe('the initial weights, against Glorot-uniform worked by hand', () => {
  it('each layer uniform on ±√(6 / (fan-in + fan-out)): inside the bounds, reaching them, mean 0 and variance limit²/3; biases 0; one seed one draw', () => {
    const features = 100
    const hidden = [64]
    const [w1, wo] = initialWeights(features, hidden, 17)
    for (const [w, fanIn, fanOut] of [
      [w1, 100, 64],
      [wo, 64, 1],
    ] as const) {
      const limit = Math.sqrt(6 / (fanIn + fanOut))
      expect(w.length).toBe(fanIn * fanOut)
      const max = Math.max(...w.map(Math.abs))
      expect(max).toBeLessThanOrEqual(limit)
      // n uniform draws reach within limit/n or so of the bound
      expect(max).toBeGreaterThan(limit * (1 - 10 / w.length))
    }
    // 6 400 draws: the mean within 3 standard errors of 0, the variance within 5 % of limit²/3
    const limit = Math.sqrt(6 / (100 + 64))
    const mean = w1.reduce((a, v) => a + v, 0) / w1.length
    const variance = w1.reduce((a, v) => a + (v - mean) ** 2, 0) / w1.length
    expect(Math.abs(mean)).toBeLessThan((3 * limit) / Math.sqrt(3 * w1.length))
    expect(Math.abs(variance / (limit ** 2 / 3) - 1)).toBeLessThan(0.05)
    // the fused models: model i's weights are its seed's, every bias starts at 0
    const fused = initialParams(features, hidden, [17, 18])
    const [model0, model1] = mlpArtifacts(fused, features, hidden, 2, undefined)
    expect(model0.layers[0].w).toEqual([...w1])
    expect(model0.layers[1].w).toEqual([...wo])
    expect([...model0.layers[0].b!, ...model0.layers[1].b!, ...model1.layers[0].b!, ...model1.layers[1].b!].every((b) => b === 0)).toBe(true)
    expect(model1.layers[0].w).toEqual([...initialWeights(features, hidden, 18)[0]])
    expect(model1.layers[0].w).not.toEqual(model0.layers[0].w)
  })
})
