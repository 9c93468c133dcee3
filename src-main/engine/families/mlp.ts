// The MLP family's worker half. Its runtime is a tfjs backend (training through FusedMlp: one model,
// or N fused for batched; data placed once per worker by engine/trainer.ts) or `onnxruntime` (the
// same math as a generated ONNX graph on ONNX Runtime's CPU provider: engine/onnx/). `auto` starts
// the family's backends in AUTO_ORDER and keeps the first the `auto` rule accepts.
import type * as TF from '@tensorflow/tfjs-core'
import type { BackendName } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { releaseWebgpu, selectBackend, startAuto } from '../backends'
import { isOnnxRuntime, type OnnxRuntime, startOnnxRuntime } from '../onnx/runtime'
import { type OrtData, prepareOrtData, trainOrt, warmUpOrt } from '../onnx/trainer'
import { type DataTensors, dataKey, disposeData, trainModels, uploadData, warmUp } from '../trainer'
import type { WorkerFamily, WorkerRuntime } from './types'

type Tf = typeof TF

export interface TfjsRuntime extends WorkerRuntime {
  tf: Tf
  /** GPU backends: true on real GPU hardware */
  hardware: boolean
}

export type MlpRuntime = TfjsRuntime | OnnxRuntime
type MlpData = DataTensors | OrtData

export async function tfjsRuntime(name: BackendName): Promise<TfjsRuntime> {
  const { tf, selected } = await selectBackend(name)
  return {
    tf,
    backend: selected.backend,
    device: selected.device,
    hardware: selected.hardware,
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

/** Starts the named backend, or applies the `auto` rule over tfjs's backends and onnxruntime. */
export function mlpRuntime(name: BackendName): Promise<MlpRuntime> {
  if (name === 'onnxruntime') return startOnnxRuntime()
  if (name !== 'auto') return tfjsRuntime(name)
  // a tfjs GPU backend passed over (webgpu on lavapipe) is left as it is, not released: dropping Dawn's
  // navigator.gpu while its device lives crashed the worker (SIGSEGV) in about 1 start in 5; the
  // worker ends with process.exit, so the instance cannot keep it alive
  return startAuto<MlpRuntime>(
    (candidate) => (candidate === 'onnxruntime' ? startOnnxRuntime() : tfjsRuntime(candidate)),
    (rt) => ({ name: rt.backend, available: true, gpu: !isOnnxRuntime(rt) && rt.hardware, detail: rt.device }),
  )
}

const isOrtData = (d: MlpData): d is OrtData => !('placement' in d)

export const mlpWorkerFamily: WorkerFamily<MlpParams, MlpRuntime, MlpData> = {
  kind: 'mlp',
  init: mlpRuntime,
  dataKey,
  prepare: (rt, workload) => (isOnnxRuntime(rt) ? prepareOrtData(dataKey(workload), workload) : uploadData(rt.tf, workload)),
  disposeData: (_rt, data) => {
    if (!isOrtData(data)) disposeData(data)
  },
  warmUp: (rt, data, workload, indices) =>
    isOnnxRuntime(rt) ? warmUpOrt(rt, data as OrtData, workload, indices) : warmUp(rt.tf, data as DataTensors, workload, indices),
  train: (rt, data, workload, indices, { fused }, hooks) =>
    isOnnxRuntime(rt)
      ? trainOrt(rt, data as OrtData, workload, indices, fused, hooks)
      : trainModels(rt.tf, data as DataTensors, workload, indices, fused, hooks),
}
