// Whether a device's timestamp queries are quantised, read from the timestamps themselves: the trees
// profiler (benchmarks/gbdt/webgpu-profile.mts) asks Dawn for raw ticks (UNQUANTISED_TIMESTAMPS) and
// says whether it got them, since an adapter may keep Dawn's 65 536 ns grid and nothing else tells.
import { USAGE, type WgslDevice } from '../../src-main/engine/webgpu/device'

/** a grid at least this coarse is quantisation, not a tick: a GPU's timestamp period is a few ns */
export const QUANTISED_AT_NS = 1000

const PASSES = 8

/** greatest common divisor of two tick counts */
function gcd(a: bigint, b: bigint): bigint {
  return b === 0n ? a : gcd(b, a % b)
}

/**
 * A few timed passes of a small kernel, and the coarsest grid all their readings lie on (their
 * greatest common divisor, ns): raw ticks share no grid coarser than the tick, Dawn's quantised ones
 * lie on 65 536 ns. null: the device has no 'timestamp-query', or the readings did not move.
 */
export async function timestampGrid(gpu: WgslDevice): Promise<{ quantised: boolean; gridNs: number } | null> {
  if (!gpu.timestamps) return null
  const { device } = gpu
  const bytes = 2 * PASSES * 8
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * PASSES, label: 'timestamp-grid' })
  const resolved = gpu.createBuffer(bytes, USAGE.QUERY_RESOLVE | USAGE.COPY_SRC, 'timestamp-grid.resolve')
  const staging = gpu.createBuffer(bytes, USAGE.MAP_READ | USAGE.COPY_DST, 'timestamp-grid.read')
  const scratch = gpu.createBuffer(4 * 64 * 16, USAGE.STORAGE, 'timestamp-grid.scratch')
  try {
    // a few µs of arithmetic a pass, so consecutive readings differ
    const code = `@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  var x = g.x;
  for (var i = 0u; i < 256u; i++) { x = x * 1664525u + 1013904223u; }
  out[g.x] = x;
}`
    const pipeline = gpu.pipeline('timestamp-grid', () => code)
    const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: scratch } }] })
    const encoder = device.createCommandEncoder()
    for (let i = 0; i < PASSES; i++) {
      const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } })
      pass.setPipeline(pipeline)
      pass.setBindGroup(0, bindGroup)
      pass.dispatchWorkgroups(16)
      pass.end()
    }
    encoder.resolveQuerySet(querySet, 0, 2 * PASSES, resolved, 0)
    encoder.copyBufferToBuffer(resolved, 0, staging, 0, bytes)
    gpu.submit([encoder.finish()])
    const readings = [...new BigUint64Array(await gpu.read(staging, bytes))].filter((t) => t > 0n)
    if (new Set(readings).size < 2) return null
    const grid = Number(readings.reduce(gcd))
    return { quantised: grid >= QUANTISED_AT_NS, gridNs: grid }
  } finally {
    querySet.destroy()
    for (const b of [resolved, staging, scratch]) gpu.destroyBuffer(b)
  }
}
