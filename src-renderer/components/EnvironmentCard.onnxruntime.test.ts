// The onnxruntime backend as the Environment card and the printable report show it: the backend's
// name, its version (onnxruntime-node) and its threads (backend flags) come from the result's
// environment, generically; the capabilities list it with the reason when it cannot load.
import { mount } from '@vue/test-utils'
import { expect, it } from 'vitest'
import type { RunResult } from '@shared/contract/result'
import { CAPABILITIES, ENVIRONMENT, scriptedRun } from '@shared/testing/fixtures'
import ReportApp from '../report/ReportApp.vue'
import EnvironmentCard from './EnvironmentCard.vue'

const environment = {
  ...ENVIRONMENT,
  backend: 'onnxruntime' as const,
  device: 'AMD EPYC (2 cores), ONNX Runtime CPU (MLAS), 1 thread per worker',
  versions: { trainpool: '0.1.0', 'onnxruntime-node': '1.30.0', 'onnx-proto': '8.0.1' },
  backendFlags: { executionProvider: 'cpu', intraOpThreads: 1, interOpThreads: 1, allowSpinning: false, graphOptimizationLevel: 'all' },
}

it('the Environment card names the backend, its version and its threads', () => {
  const w = mount(EnvironmentCard, { props: { environment, capabilities: null } })
  const text = w.text()
  expect(text).toContain('onnxruntime')
  expect(text).toContain('ONNX Runtime CPU (MLAS)')
  expect(text).toMatch(/onnxruntime-node\s*1\.30\.0/)
  expect(text).toMatch(/intraOpThreads\s*1/)
})

it('before a run, the card lists onnxruntime unavailable with the reason', () => {
  const capabilities = {
    ...CAPABILITIES,
    autoBackend: 'wasm' as const,
    backends: [
      ...CAPABILITIES.backends,
      {
        name: 'onnxruntime' as const,
        available: false,
        gpu: false,
        detail: 'onnxruntime-node failed to load its native library: libonnxruntime.so.1: cannot open shared object file',
      },
    ],
  }
  const text = mount(EnvironmentCard, { props: { environment: null, capabilities } }).text()
  expect(text).toContain('onnxruntime — unavailable: onnxruntime-node failed to load its native library')
})

it('the report names the backend and its version', () => {
  const run = (scriptedRun({ models: 4, workers: [2] }).at(-1) as { result: RunResult }).result
  const w = mount(ReportApp, { props: { run: { ...run, environment } }, global: { stubs: { ReportChart: true } } })
  expect(w.text()).toContain('Backendonnxruntime')
  expect(w.text()).toContain('ONNX Runtime CPU (MLAS)')
  expect(w.text()).toContain('onnxruntime-node 1.30.0')
  expect(w.text()).toContain('intraOpThreads=1')
})
