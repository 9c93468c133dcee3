// What the classifier math's device checks share (engine/gbdt-webgpu/objective-wgsl.test.ts and the
// every-float32 check, benchmarks/gbdt/exp-every-f32.mts): float32 bits, the rounding-hard exp inputs,
// the ranges expF32 computes, and a one-kernel dispatch on a WebGPU device.
import { EXACT_WGSL } from '../engine/gbdt-webgpu/exact'
import { BINARY_OBJECTIVE_WGSL } from '../engine/gbdt-webgpu/objective-wgsl'
import { USAGE } from '../engine/webgpu/device'
import type { DeviceHolder } from './webgpu-trees'

type WebGpuDevice = NonNullable<DeviceHolder['gpu']>

const bits = new Float32Array(1)
const bitsU = new Uint32Array(bits.buffer)
export function toBits(v: number): number {
  bits[0] = v
  return bitsU[0]
}
export function fromBits(u: number): number {
  bitsU[0] = u
  return bits[0]
}

/** Every float32 x whose f32(Math.exp(x)) is not settled by Math.exp(x)·(1 ± 2^-50) (the whole float32 range scanned). */
export const HARD_EXP_INPUTS = [931069825, 969326171, 1073853001, 1076976435, 3003121664, 3135300188, 3153128945, 3244888781]

/** `code` after EXACT_WGSL, one thread per output group (workgroups of 64), inputs at bindings 0…, the output after them */
export async function runKernel(gpu: WebGpuDevice, key: string, code: string, inputs: Uint32Array[], outWords: number, threads: number): Promise<Uint32Array> {
  const inBufs = inputs.map((words, i) => {
    const b = gpu.createBuffer(Math.max(4, words.byteLength), USAGE.STORAGE | USAGE.COPY_DST, `objective-in-${i}`)
    gpu.device.queue.writeBuffer(b, 0, words)
    return b
  })
  const outBuf = gpu.createBuffer(outWords * 4, USAGE.STORAGE | USAGE.COPY_SRC, 'objective-out')
  const staging = gpu.createBuffer(outWords * 4, USAGE.MAP_READ | USAGE.COPY_DST, 'objective-staging')
  try {
    const pipeline = gpu.pipeline(key, () => `${EXACT_WGSL}${code}`)
    const enc = gpu.device.createCommandEncoder()
    const pass = enc.beginComputePass()
    pass.setPipeline(pipeline)
    pass.setBindGroup(
      0,
      gpu.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [...inBufs, outBuf].map((buffer, binding) => ({ binding, resource: { buffer } })),
      }),
    )
    pass.dispatchWorkgroups(Math.ceil(threads / 64))
    pass.end()
    enc.copyBufferToBuffer(outBuf, 0, staging, 0, outWords * 4)
    gpu.submit([enc.finish()])
    return new Uint32Array(await gpu.read(staging, outWords * 4))
  } finally {
    for (const b of [...inBufs, outBuf, staging]) gpu.destroyBuffer(b)
  }
}

/** out[i] = fn(in[i]) for a unary function of float32 bits (BINARY_OBJECTIVE_WGSL alone: no marginBits needed) */
export function unaryKernel(fn: string): string {
  return /* wgsl */ `${BINARY_OBJECTIVE_WGSL}
@group(0) @binding(0) var<storage, read> xs: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&out)) { out[id.x] = ${fn}(xs[id.x]); }
}`
}

/** differences between device bits and the CPU's as text (NaN = NaN: a NaN's payload is not arithmetic) */
export function differences(got: Uint32Array, want: Uint32Array, describe: (i: number) => string): string[] {
  const bad: string[] = []
  for (let i = 0; i < want.length && bad.length < 20; i++) {
    const bothNaN = Number.isNaN(fromBits(got[i])) && Number.isNaN(fromBits(want[i]))
    if (got[i] !== want[i] && !bothNaN) {
      bad.push(`${describe(i)}: device ${got[i].toString(16)} (${fromBits(got[i])}), CPU ${want[i].toString(16)} (${fromBits(want[i])})`)
    }
  }
  return bad
}

/** the float32 bit patterns whose exp expF32 computes (elsewhere it returns 1, ∞, 0 or NaN): 2^-25 ≤ x ≤ 100, −110 ≤ x ≤ −2^-25 */
export const EXP_COMPUTED_BITS = [
  [0x33000000, 0x42c80000],
  [0xb3000000, 0xc2dc0000],
]
