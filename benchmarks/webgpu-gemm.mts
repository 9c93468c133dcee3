// The WGSL engine's own GEMM throughput: its first-layer kernel (engine/mlp-webgpu/mlp-kernels.ts, the
// tiled product every fused MLP step runs) on an n×n·n×n float32 product, the device's work only
// (one submit of many products, timed to onSubmittedWorkDone). Prints one JSON line, as
// gemm-reference.mjs does for the tfjs and onnxruntime backends. Run: node --import tsx this.mts [n]
import { firstLayer, CALL_BYTES, STEP_RECORD_BYTES } from '../src-main/engine/mlp-webgpu/mlp-kernels'
import { openWgslDevice, USAGE } from '../src-main/engine/webgpu/device'

const n = Number(process.argv[2] ?? 1024)
const dev = await openWgslDevice('trainpool-gemm-bench')
const storage = USAGE.STORAGE | USAGE.COPY_DST
const x = dev.createBuffer(n * n * 4, storage, 'x')
const order = dev.createBuffer(n * 4, storage, 'order')
const w = dev.createBuffer(n * n * 4, storage, 'w')
const z = dev.createBuffer(n * n * 4, storage, 'z')
const step = dev.createBuffer(STEP_RECORD_BYTES, USAGE.UNIFORM | USAGE.COPY_DST, 'step')
const call = dev.createBuffer(CALL_BYTES, USAGE.UNIFORM | USAGE.COPY_DST, 'call')
const q = dev.device.queue
q.writeBuffer(
  x,
  0,
  Float32Array.from({ length: n * n }, () => Math.random()),
)
q.writeBuffer(
  w,
  0,
  Float32Array.from({ length: n * n }, () => Math.random()),
)
q.writeBuffer(
  order,
  0,
  Uint32Array.from({ length: n }, (_, i) => i),
)
q.writeBuffer(step, 0, new Uint32Array([0, n, 0, 0]))
const fields = new Uint32Array(CALL_BYTES / 4)
fields.set([1, n, 0, n]) // one model, K = n, H = n
q.writeBuffer(call, 0, fields)
const entries = firstLayer.bindings.map((b, i) => ({
  binding: i,
  visibility: 0x4,
  buffer: {
    type: (b.kind === 'step' || b.kind === 'uniform' ? 'uniform' : b.kind === 'read' ? 'read-only-storage' : 'storage') as GPUBufferBindingType,
    hasDynamicOffset: b.kind === 'step',
  },
}))
const { pipeline, layout } = dev.explicitPipeline(firstLayer.key, firstLayer.code, entries)
const buffers: Record<string, GPUBuffer> = { step, call, x, order, params: w, zOut: z }
const group = dev.device.createBindGroup({
  layout,
  entries: firstLayer.bindings.map((b, i) => ({
    binding: i,
    resource: b.kind === 'step' ? { buffer: buffers[b.name], size: STEP_RECORD_BYTES } : { buffer: buffers[b.name] },
  })),
})
const run = async (times: number) => {
  const encoder = dev.device.createCommandEncoder()
  const pass = encoder.beginComputePass()
  pass.setPipeline(pipeline)
  for (let i = 0; i < times; i++) {
    pass.setBindGroup(0, group, [0])
    pass.dispatchWorkgroups(Math.ceil(n / 64), Math.ceil(n / 64), 1)
  }
  pass.end()
  const t = performance.now()
  dev.submit([encoder.finish()])
  await dev.drained()
  return performance.now() - t
}
await run(2)
const reps = dev.hardware ? 50 : 2
const times = [await run(reps), await run(reps), await run(reps)].map((ms) => ms / reps).sort((a, b) => a - b)
console.log(JSON.stringify({ backend: 'webgpu', device: dev.description, n, medianMs: times[1], gflops: (2 * n ** 3) / times[1] / 1e6 }))
dev.release()
process.exit(0)
