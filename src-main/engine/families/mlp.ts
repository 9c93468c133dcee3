// The MLP family's worker half: its backend table. The tfjs backends train through FusedMlp (one
// model, or N fused for batched; ../mlp-tfjs/tfjs-backends.ts); `webgpu` is Trainpool's WGSL engine
// (../mlp-webgpu/); `onnxruntime` a generated ONNX graph on ONNX Runtime's CPU provider (../mlp-onnx/).
// The order, the `auto` rule and what each backend can do are the shared family's (MLP_BACKENDS);
// this table has one entry per name there (the compiler checks it).
import { mlpFamily } from '@shared/families/mlp'
import { wgslMlpBackend } from '../mlp-webgpu/webgpu-backend'
import { onnxRuntimeBackend } from '../mlp-onnx/onnx-backend'
import { tfjsBackend } from '../mlp-tfjs/tfjs-backends'
import { dataKey } from '../mlp/data-key'
import { defineBackend } from './define-backend'
import { workerFamily } from './seam'

export const mlpWorkerFamily = workerFamily(mlpFamily, {
  dataKey,
  backends: {
    tensorflow: defineBackend(tfjsBackend('tensorflow')),
    webgpu: defineBackend(wgslMlpBackend),
    onnxruntime: defineBackend(onnxRuntimeBackend),
    wasm: defineBackend(tfjsBackend('wasm')),
    cpu: defineBackend(tfjsBackend('cpu')),
  },
})
