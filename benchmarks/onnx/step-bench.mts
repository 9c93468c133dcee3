// Engine benchmark of the onnxruntime backend (no pool, no runner): ms per training step of n fused
// models at the MLP's default shape, and ORT's own GEMM throughput on the step's two big products,
// one thread, in this process. `npx tsx benchmarks/onnx/step-bench.mts [--n 50] [--steps 40]`.
import { parseArgs } from 'node:util'
import { stepFlops } from '../../src-shared/families/mlp'
import { startOnnxRuntime } from '../../src-main/engine/onnx/runtime'
import { OrtMlp } from '../../src-main/engine/onnx/trainer'
import { ADAM_DEFAULTS } from '../../src-main/engine/fused-mlp'

const { values } = parseArgs({ options: { n: { type: 'string', default: '50' }, steps: { type: 'string', default: '40' }, hidden: { type: 'string', default: '64' }, rows: { type: 'string', default: '512' } } })
const n = Number(values.n)
const steps = Number(values.steps)
const hidden = values.hidden!.split(',').map(Number)
const rows = Number(values.rows)
const F = 100
const rt = await startOnnxRuntime()
const model = await OrtMlp.create(rt, { features: F, hidden, seeds: Array.from({ length: n }, (_, i) => i + 1), adam: { lr: 0.01, ...ADAM_DEFAULTS } })
const b = model.batch(rows)
for (let i = 0; i < b.x.length; i++) b.x[i] = Math.random()
for (let i = 0; i < b.y.length; i++) b.y[i] = Math.random()
for (let i = 0; i < 5; i++) await model.trainStep(rows)
const times: number[] = []
for (let i = 0; i < steps; i++) {
  const t = performance.now()
  await model.trainStep(rows)
  times.push(performance.now() - t)
}
times.sort((a, c) => a - c)
const ms = times[Math.floor(times.length / 2)]
const flops = stepFlops(rows, n, F, hidden)
console.log(JSON.stringify({ n, rows, hidden, msPerStep: ms, minMs: times[0], gemmGflops: flops / ms / 1e6 }))
rt.release()
