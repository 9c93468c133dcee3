// The MLP's `onnxruntime` backend entry: the same math as the tfjs trainer, as a generated ONNX graph
// on ONNX Runtime's CPU provider (ort-runtime.ts, onnx-training.ts). Its shared entry (gpu, batched, speed) is
// in src-shared/families/mlp.ts.
import type { MlpParams } from '@shared/families/mlp'
import type { WorkerBackend } from '../backend/types'
import { dataKey } from '../mlp/data-key'
import { type OnnxRuntime, probeOnnxRuntime, startOnnxRuntime } from './ort-runtime'
import { type OrtData, prepareOrtData, trainOrt, warmUpOrt } from './onnx-training'

export const onnxRuntimeBackend: WorkerBackend<MlpParams, OnnxRuntime, OrtData> = {
  name: 'onnxruntime',
  probe: probeOnnxRuntime,
  start: startOnnxRuntime,
  prepare: (_rt, dataset, workload) => prepareOrtData(dataKey(workload), dataset, workload),
  dispose: () => {},
  warmUp: warmUpOrt,
  /** a per-model learning rate is a vector in the fused step (graph input lr_c1 [n]) */
  perModel: ['lr'],
  /** a fold is its rows held out of the shared batch order (the step graph's row_weights input): a set's folds fuse */
  foldsHeldOut: true,
  /** each model stops when its held-out metric stops improving, and leaves the fused program (onnx-training.ts, ../mlp/early-stopping.ts) */
  earlyStopping: true,
  train: trainOrt,
}
