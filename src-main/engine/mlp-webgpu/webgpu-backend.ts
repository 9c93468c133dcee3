// The MLP's `webgpu` backend entry: Trainpool's own WGSL engine (wgsl-mlp.ts, wgsl-training.ts) on a
// private Dawn device — the fused step as a few kernels over all models, the epoch on the device.
// Its shared entry (gpu, batched, assumed speed) is in src-shared/families/mlp.ts.
import type { MlpParams } from '@shared/families/mlp'
import type { WorkerBackend, WorkerRuntime } from '../backend/types'
import { packageVersion } from '../machine'
import { dataKey } from '../mlp/data-key'
import { probeWebgpu } from '../webgpu/dawn'
import { openWgslDevice, type WgslDevice } from '../webgpu/device'
import { disposeMlpData, trainWgsl, uploadMlpData, warmUpWgsl, type WgslMlpData } from './wgsl-training'

export interface WgslMlpRuntime extends WorkerRuntime {
  dev: WgslDevice
}

async function startWgslMlp(): Promise<WgslMlpRuntime> {
  const dev = await openWgslDevice('trainpool-mlp')
  return {
    dev,
    backend: 'webgpu',
    device: dev.description,
    hardware: dev.hardware,
    flags: {
      engine: 'Trainpool WGSL (fused MLP kernels)',
      maxStorageBufferBindingSize: dev.limits.maxStorageBufferBindingSize,
      maxComputeWorkgroupStorageSize: dev.limits.maxComputeWorkgroupStorageSize,
    },
    versions: { webgpu: packageVersion('webgpu') },
    memory: () => {
      const b = dev.bufferStats()
      return { numTensors: b.live, numBytes: b.liveBytes }
    },
    heapBytes: () => null,
    deviceCounters: () => dev.work.snapshot(),
    release: () => dev.release(),
  }
}

export const wgslMlpBackend: WorkerBackend<MlpParams, WgslMlpRuntime, WgslMlpData> = {
  name: 'webgpu',
  probe: probeWebgpu,
  start: startWgslMlp,
  prepare: (rt, dataset, workload) => uploadMlpData(rt.dev, dataKey(workload), dataset),
  dispose: (rt, data) => disposeMlpData(rt.dev, data),
  warmUp: (rt, data, workload, indices) => warmUpWgsl(rt.dev, data, workload, indices),
  /** a per-model learning rate is a row of the Adam scalar table (lr/c1 per model) */
  perModel: ['lr'],
  /** a fold is its rows held out of the shared batch order (per-model fold ranges in the output kernel): a set's folds fuse */
  foldsHeldOut: true,
  /** each model stops when its held-out metric stops improving, and leaves the fused program (wgsl-training.ts, ../mlp/early-stopping.ts) */
  earlyStopping: true,
  train: (rt, data, workload, indices, options, hooks) => trainWgsl(rt.dev, data, workload, indices, options, hooks),
}
