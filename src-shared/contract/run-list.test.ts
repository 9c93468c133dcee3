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
  const one = resultFor(
    config,
    expandPlan(config).map((k) => measurementFor(k)),
  )
  expect(listEntry(one)).toMatchObject({ backend: 'webgpu', device: 'NVIDIA H200 (Vulkan)' })
})

it("a folder holding another run's run.json (copied by hand) is listed by its folder and marked a copy, so neither hides the other", () => {
  const config = presetConfig('smoke')
  const run = resultFor(
    config,
    expandPlan(config).map((k) => measurementFor(k)),
    { runId: '20250101-120000-first1' },
  )
  expect(listEntry(run)).not.toHaveProperty('copyOf')
  expect(listEntry(run, '20250101-120000-first1')).not.toHaveProperty('copyOf')
  const copy = listEntry(run, '20250102-090000-copy01')
  expect(copy).toMatchObject({ runId: '20250102-090000-copy01', copyOf: '20250101-120000-first1' })
  expect(copy.runId).not.toBe(listEntry(run).runId)
})
