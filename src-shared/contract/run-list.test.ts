import { expect, it } from 'vitest'
import { presetConfig } from './config'
import { backendLine, listEntry } from './run-list'
import { expandPlan } from '../plan'
import { measurementFor, resultFor, sideBySideResult } from '../testing/fixtures'

it('a side-by-side run is listed with every backend compared and their devices; a one-backend run as before', () => {
  const run = sideBySideResult()
  expect(listEntry(run)).toMatchObject({ backend: 'wasm, cpu', device: 'AMD EPYC 9654 (SIMD, 16 threads); AMD EPYC 9654' })
  expect(backendLine(run)).toBe('wasm · AMD EPYC 9654 (SIMD, 16 threads); cpu · AMD EPYC 9654')
  const config = presetConfig('smoke')
  const one = resultFor(config, expandPlan(config).map((k) => measurementFor(k)))
  expect(listEntry(one)).toMatchObject({ backend: 'webgpu', device: 'NVIDIA H200 (Vulkan)' })
})
