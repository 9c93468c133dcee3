// The MLP family's worker half: a tfjs backend as its runtime, the seeded data set placed once per
// worker (engine/trainer.ts), and training through FusedMlp (one model, or N fused for batched).
import type * as TF from '@tensorflow/tfjs-core'
import type { BackendName } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { releaseWebgpu, selectBackend } from '../backends'
import { type DataTensors, dataKey, disposeData, trainModels, uploadData, warmUp } from '../trainer'
import type { WorkerFamily, WorkerRuntime } from './types'

type Tf = typeof TF

export interface TfjsRuntime extends WorkerRuntime {
  tf: Tf
}

export async function tfjsRuntime(name: BackendName): Promise<TfjsRuntime> {
  const { tf, selected } = await selectBackend(name)
  return {
    tf,
    backend: selected.backend,
    device: selected.device,
    flags: selected.flags,
    versions: selected.versions,
    memory: () => {
      const m = tf.memory()
      return { numTensors: m.numTensors, numBytes: m.numBytes }
    },
    heapBytes: () => (tf.backend() as unknown as { wasm?: { HEAPU8?: Uint8Array } } | undefined)?.wasm?.HEAPU8?.byteLength ?? null,
    release: releaseWebgpu,
  }
}

export const mlpWorkerFamily: WorkerFamily<MlpParams, TfjsRuntime, DataTensors> = {
  kind: 'mlp',
  init: tfjsRuntime,
  dataKey,
  prepare: (rt, workload) => uploadData(rt.tf, workload),
  disposeData: (_rt, data) => disposeData(data),
  warmUp: (rt, data, workload, indices) => warmUp(rt.tf, data, workload, indices),
  train: (rt, data, workload, indices, { fused }, hooks) => trainModels(rt.tf, data, workload, indices, fused, hooks),
}
