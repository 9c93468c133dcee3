// The counter-based generator's WGSL (../gbdt/counter-random.ts COUNTER_RANDOM_WGSL) against its JS,
// bit for bit on the device: the device draws the rows the CPU engine draws only while these agree.
// 2^18 (seed, stream, counter, index) tuples: seeds and indices over the whole u32 range (edges
// included), the row stream and others, counters of deep runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COUNTER_RANDOM_WGSL, counterBits, mix32 } from '../gbdt/counter-random'
import { ROW_STREAM } from '../gbdt/rules'
import { Rng } from '../random'
import { USAGE } from '../webgpu/device'
import { type DeviceHolder, noDevice, openForTests } from '../../testing/webgpu-trees'

let dev: DeviceHolder = { gpu: null, why: 'not opened' }
beforeAll(async () => {
  dev = await openForTests()
})
afterAll(() => dev.gpu?.release())

const KERNEL = /* wgsl */ `${COUNTER_RANDOM_WGSL}
@group(0) @binding(0) var<storage, read> tuples: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = id.y * nwg.x * 64u + id.x;
  if (i >= arrayLength(&out)) { return; }
  let t = tuples[i];
  out[2u * i] = counterBits(t.x, t.y, t.z, t.w);
  out[2u * i + 1u] = mix32(t.w);
}`

/** out = [counterBits(tuple), mix32(tuple's index)] per tuple, on the device */
async function deviceBits(tuples: Uint32Array): Promise<Uint32Array> {
  const gpu = dev.gpu!
  const count = tuples.length / 4
  const input = gpu.createBuffer(tuples.byteLength, USAGE.STORAGE | USAGE.COPY_DST, 'counter-in')
  const output = gpu.createBuffer(count * 8, USAGE.STORAGE | USAGE.COPY_SRC, 'counter-out')
  const staging = gpu.createBuffer(count * 8, USAGE.MAP_READ | USAGE.COPY_DST, 'counter-staging')
  try {
    gpu.device.queue.writeBuffer(input, 0, tuples)
    const pipeline = gpu.pipeline('counter-random-test', () => KERNEL)
    const enc = gpu.device.createCommandEncoder()
    const pass = enc.beginComputePass()
    pass.setPipeline(pipeline)
    pass.setBindGroup(
      0,
      gpu.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [input, output].map((buffer, binding) => ({ binding, resource: { buffer } })),
      }),
    )
    const groups = Math.ceil(count / 64)
    pass.dispatchWorkgroups(Math.min(groups, 1024), Math.ceil(groups / 1024))
    pass.end()
    enc.copyBufferToBuffer(output, 0, staging, 0, count * 8)
    gpu.submit([enc.finish()])
    return new Uint32Array(await gpu.read(staging, count * 8))
  } finally {
    for (const b of [input, output, staging]) gpu.destroyBuffer(b)
  }
}

describe('the counter-based generator on the device', () => {
  it('computes the bits the CPU engine computes, for 2^18 (seed, stream, counter, index) tuples', async (ctx) => {
    if (noDevice(dev)) return ctx.skip()
    const count = 2 ** 18
    const rng = new Rng(42)
    const edges = [0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]
    const tuples = new Uint32Array(4 * count)
    for (let i = 0; i < count; i++) {
      const seed = i < 4096 ? edges[i % edges.length] : rng.nextUint32()
      const stream = i % 3 === 0 ? ROW_STREAM : rng.nextUint32() & 7
      const counter = i % 5 === 0 ? edges[(i >>> 3) % edges.length] : rng.nextUint32() % 5000
      // consecutive rows of one tree, as a model's rows are drawn, and scattered ones
      const index = i % 2 === 0 ? i >>> 1 : i % 7 === 1 ? edges[(i >>> 4) % edges.length] : rng.nextUint32()
      tuples.set([seed, stream, counter, index], 4 * i)
    }
    const got = await deviceBits(tuples)
    const bad: string[] = []
    for (let i = 0; i < count && bad.length < 10; i++) {
      const [seed, stream, counter, index] = tuples.subarray(4 * i, 4 * i + 4)
      const want = counterBits(seed, stream, counter, index)
      if (got[2 * i] !== want || got[2 * i + 1] !== mix32(index)) bad.push(`(${seed}, ${stream}, ${counter}, ${index}): device ${got[2 * i]}, CPU ${want}`)
    }
    expect(bad).toEqual([])
  })
})
