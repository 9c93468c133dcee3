// The MLP's parameters are one storage binding for all n models: when they do not fit, the refusal
// says what helps. One model past the binding (4 × 4096 hidden: 203 MB = 194 MiB against WebGPU's 128 MiB
// default) is refused for its shape, at any model count; n models past it, for the count per worker.
// No GPU needed: the check runs before anything is allocated.
import { describe, expect, it } from 'vitest'
import type { WgslDevice } from '../webgpu/device'
import { WgslMlp, paramsBindingProblem } from './wgsl-mlp'

const BINDING = 128 * 2 ** 20
const constants = { beta1: 0.9, beta2: 0.999, epsilon: 1e-7 } as unknown as ConstructorParameters<typeof WgslMlp>[3]

/** a device that has only its limits: any allocation fails the test */
const limitsOnly = {
  limits: { maxStorageBufferBindingSize: BINDING, maxBufferSize: 2 ** 31, minUniformBufferOffsetAlignment: 256 },
  createBuffer: () => {
    throw new Error('allocated before the check')
  },
} as unknown as WgslDevice

function build(n: number, hidden: number[]): () => WgslMlp {
  return () => new WgslMlp(limitsOnly, { n, features: 100, hidden, batchRows: 512, trainRows: 1000 }, {} as never, constants)
}

describe('webgpu MLP parameters past one storage binding', () => {
  it('one model too large: smaller hidden layers, not fewer rows or models', () => {
    expect(build(1, [4096, 4096, 4096, 4096])).toThrow(
      /^webgpu: the parameters of one 100→4096→4096→4096→4096→1 model take 194 MiB, more than one storage binding on this device \(128 MiB\), at any model or row count: use smaller hidden layers/,
    )
    expect(build(1, [4096, 4096, 4096, 4096])).not.toThrow(/fewer rows/)
  })

  it('one model fits, n do not: fewer models per worker, and how many fit', () => {
    // 100→4096→1: 417 793 parameters, 1.6 MiB a model; 128 MiB holds 80
    expect(build(100, [4096])).toThrow(
      /^webgpu: the parameters of 100 100→4096→1 models take 159 MiB, .*: at most 80 models of this shape fit one worker; use fewer models per worker/,
    )
  })

  it('says nothing when they fit', () => {
    expect(paramsBindingProblem(417_793, 80, 100, [4096], 1, BINDING)).toBeNull()
  })
})
