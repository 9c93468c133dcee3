// The backend's own large-GEMM throughput (1024³ float32 matmul), measured in a fresh process so
// it is comparable with a training worker (onnxruntime: one thread, as its workers run). Prints one JSON line.
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const backend = process.argv[2] ?? 'wasm'
const n = Number(process.argv[3] ?? 1024)
if (backend === 'webgpu') {
  // the WGSL engine's own tiled GEMM (the MLP's webgpu backend is not tfjs)
  const { execFileSync } = await import('node:child_process')
  const script = new URL('./webgpu-gemm.mts', import.meta.url).pathname
  process.stdout.write(execFileSync(process.execPath, ['--import', 'tsx', script, String(n)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
  process.exit(0)
}
if (backend === 'onnxruntime') {
  // ONNX Runtime's CPU provider, one intra-op thread and no spinning (what a training worker uses)
  const ort = require('onnxruntime-node')
  const { onnx } = require('onnx-proto')
  const vi = (name) => ({ name, type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: n }, { dimValue: n }] } } } })
  const model = onnx.ModelProto.encode(
    onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: '', version: 13 }],
      graph: { name: 'gemm', node: [{ opType: 'MatMul', input: ['a', 'b'], output: ['c'] }], input: [vi('a'), vi('b')], output: [vi('c')] },
    }),
  ).finish()
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  })
  const rand = () => Float32Array.from({ length: n * n }, () => Math.random())
  const feeds = { a: new ort.Tensor('float32', rand(), [n, n]), b: new ort.Tensor('float32', rand(), [n, n]) }
  const c = new ort.Tensor('float32', new Float32Array(n * n), [n, n])
  const times = []
  for (let i = 0; i < 7; i++) {
    const t = performance.now()
    await session.run(feeds, { c })
    times.push(performance.now() - t)
  }
  times.splice(0, 2)
  times.sort((x, y) => x - y)
  console.log(JSON.stringify({ backend, n, medianMs: times[2], gflops: (2 * n ** 3) / times[2] / 1e6, threads: 1 }))
  process.exit(0)
}
const tf = require('@tensorflow/tfjs-core')
if (backend === 'wasm') require('@tensorflow/tfjs-backend-wasm')
if (backend === 'cpu') require('@tensorflow/tfjs-backend-cpu')
await tf.setBackend(backend)
await tf.ready()
const a = tf.randomUniform([n, n], 0, 1, 'float32', 1)
const b = tf.randomUniform([n, n], 0, 1, 'float32', 2)
const once = async () => {
  const c = tf.matMul(a, b)
  await c.data()
  c.dispose()
}
await once()
await once()
const times = []
for (let i = 0; i < 5; i++) {
  const t = performance.now()
  await once()
  times.push(performance.now() - t)
}
times.sort((x, y) => x - y)
const ms = times[2]
console.log(JSON.stringify({ backend, n, medianMs: ms, gflops: (2 * n ** 3) / ms / 1e6 }))
if (globalThis.navigator?.gpu) delete globalThis.navigator.gpu
process.exit(0)
