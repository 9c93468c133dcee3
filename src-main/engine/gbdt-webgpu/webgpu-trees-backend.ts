// The trees' `webgpu` backend entry: the same trees as the CPU engine, bit for bit, in WGSL on the
// device (webgpu-trees-runtime.ts). Its shared entry (gpu, batched, speed; not in `auto`) is in
// src-shared/families/gbdt.ts.
import type { GbdtParams } from '@shared/families/gbdt'
import { GBDT_PER_MODEL_PARAMS } from '../gbdt'
import type { WorkerBackend } from '../backend/types'
import { probeWebgpu } from '../webgpu/dawn'
import {
  disposeWebgpu,
  prepareWebgpu,
  startWebgpuGbdtRuntime,
  trainWebgpu,
  warmUpWebgpu,
  type WebgpuGbdtRuntime,
  type WebgpuPrepared,
} from './webgpu-trees-runtime'

export const webgpuTreesBackend: WorkerBackend<GbdtParams, WebgpuGbdtRuntime, WebgpuPrepared> = {
  name: 'webgpu',
  probe: probeWebgpu,
  start: startWebgpuGbdtRuntime,
  prepare: prepareWebgpu,
  dispose: disposeWebgpu,
  warmUp: warmUpWebgpu,
  /** each model of a dispatch reads its own depth, rounds, coefficients and samplers: all but maxBin (the bins) and baseScore differ per model */
  perModel: GBDT_PER_MODEL_PARAMS,
  /** a fold is its rows held out of the one binned training set, as on the CPU engine: a set's folds fuse */
  foldsHeldOut: true,
  /** each model's held-out margins are read back after every round; a stopped one leaves the chunk (trainer.ts) */
  earlyStopping: true,
  /** a halving rung's models continue from the trees the earlier rung sent back (trainer.ts resume: the CPU engine's margins and sampler, uploaded) */
  halving: true,
  train: trainWebgpu,
}
