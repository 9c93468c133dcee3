// The backend's own large-GEMM throughput (1024³ float32 matmul), measured in a fresh process so
// it is comparable with a training worker. Prints one JSON line.
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const backend = process.argv[2] ?? 'wasm'
const n = Number(process.argv[3] ?? 1024)
const tf = require('@tensorflow/tfjs-core')
if (backend === 'wasm') require('@tensorflow/tfjs-backend-wasm')
if (backend === 'cpu') require('@tensorflow/tfjs-backend-cpu')
if (backend === 'webgpu') {
  const { create, globals } = await import('webgpu')
  Object.assign(globalThis, globals)
  if (!globalThis.navigator) globalThis.navigator = {}
  globalThis.navigator.gpu = create([])
  await import('@tensorflow/tfjs-backend-webgpu')
}
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
