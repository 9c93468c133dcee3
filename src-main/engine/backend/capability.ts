// A started backend as the probe and `auto` see it: a worker family reports it (families/seam.ts), and
// a backend that probes several runtimes of its own (mlp-tfjs/tfjs-backends.ts) says each the same way.
import type { BackendCapability } from '@shared/contract'
import type { WorkerRuntime } from './types'

/** The capability of a started backend: what `auto` judges (structured fields, never the detail text). */
export function capabilityOf(runtime: WorkerRuntime): BackendCapability {
  return { name: runtime.backend as BackendCapability['name'], available: true, gpu: runtime.hardware, detail: runtime.device }
}
