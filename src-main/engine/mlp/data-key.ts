// Which data set an MLP worker holds: two workloads with the same key train on the same rows, so a
// worker keeps its placed data across jobs (the family's worker half, and each MLP engine's upload:
// tfjs, the WGSL kernels, ONNX Runtime). One key for all three, so none re-places what another would keep.
import type { Workload } from '@shared/contract'
import type { MlpParams } from '@shared/families/mlp'
import { taskKey } from '../datasets/dataset'
import { userDataKey } from '../datasets/user-data'

export function dataKey(w: Workload<MlpParams>): string {
  return `${w.size}:${w.features}:${w.seed}:${w.target}:${w.testSplit}${taskKey(w)}${userDataKey(w)}`
}
