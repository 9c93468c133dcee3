// Engine benchmark of the onnxruntime backend (no pool, no runner): ms per training step of n fused
// models at the MLP's default shape (median and min: on a shared machine the min is the closest to an
// idle one), its training GFLOP/s (the step's GEMM FLOPs over its time), and ORT's own 1024³ GEMM in
// the same process and session options (1 thread), so the ratio is from one run.
// `npx tsx benchmarks/onnx/step-bench.mts [--n 50] [--steps 40] [--hidden 64] [--rows 512]`.
import { parseArgs } from 'node:util'
import { stepFlops } from '../../src-shared/families/mlp'
import onnxProto from 'onnx-proto'
import { SESSION_OPTIONS, startOnnxRuntime } from '../../src-main/engine/mlp-onnx/ort-runtime'
import { OrtMlp } from '../../src-main/engine/mlp-onnx/onnx-training'
import { ADAM_DEFAULTS } from '../../src-main/engine/mlp/adam'

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '50' },
    steps: { type: 'string', default: '40' },
    hidden: { type: 'string', default: '64' },
    rows: { type: 'string', default: '512' },
  },
})
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
const { onnx } = onnxProto // a CommonJS package: named exports only through the default one here (ESM)

/** ORT's own 1024³ MatMul, same session options: median and best GFLOP/s of 9 runs after 2. */
async function gemmReference(size = 1024): Promise<{ median: number; best: number }> {
  const vi = (name: string) => ({
    name,
    type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: size }, { dimValue: size }] } } },
  })
  const bytes = onnx.ModelProto.encode(
    onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: '', version: 13 }],
      graph: { name: 'gemm', node: [{ opType: 'MatMul', input: ['a', 'b'], output: ['c'] }], input: [vi('a'), vi('b')], output: [vi('c')] },
    }),
  ).finish()
  const session = await rt.ort.InferenceSession.create(bytes, SESSION_OPTIONS)
  const t = (seed: number) =>
    new rt.ort.Tensor(
      'float32',
      Float32Array.from({ length: size * size }, (_, i) => ((i * 7919 + seed) % 1000) / 1000),
      [size, size],
    )
  const feeds = { a: t(1), b: t(2) }
  const c = new rt.ort.Tensor('float32', new Float32Array(size * size), [size, size])
  const ms: number[] = []
  for (let i = 0; i < 11; i++) {
    const s0 = performance.now()
    await session.run(feeds, { c })
    if (i >= 2) ms.push(performance.now() - s0)
  }
  ms.sort((a, b) => a - b)
  await session.release()
  const gf = (m: number) => (2 * size ** 3) / m / 1e6
  return { median: gf(ms[Math.floor(ms.length / 2)]), best: gf(ms[0]) }
}

const gemm = await gemmReference()
const trainMedian = flops / ms / 1e6
const trainBest = flops / times[0] / 1e6
console.log(
  JSON.stringify({
    n,
    rows,
    hidden,
    msPerStep: ms,
    minMs: times[0],
    trainGflops: { median: trainMedian, best: trainBest },
    gemm1024Gflops: gemm,
    shareOfGemm: { median: trainMedian / gemm.median, best: trainBest / gemm.best },
  }),
)
rt.release()
