// The MLP family's worker half: its backend table. The tfjs backends train through FusedMlp (one
// model, or N fused for batched; ../tfjs/backends.ts); `onnxruntime` trains the same math as a
// generated ONNX graph on ONNX Runtime's CPU provider (../onnx/). The order, the `auto` rule and
// what each backend can do are the shared family's (src-shared/families/mlp.ts MLP_BACKENDS).
import type { MlpParams } from '@shared/families/mlp'
import { onnxRuntimeBackend } from '../onnx/backend'
import { tfjsBackend } from '../tfjs/backends'
import { dataKey } from '../trainer'
import { backendEntry, workerFamily } from './seam'

export const mlpWorkerFamily = workerFamily<MlpParams>({
  kind: 'mlp',
  dataKey,
  backends: [
    backendEntry(tfjsBackend('tensorflow')),
    backendEntry(tfjsBackend('webgpu')),
    backendEntry(onnxRuntimeBackend),
    backendEntry(tfjsBackend('wasm')),
    backendEntry(tfjsBackend('cpu')),
  ],
})
