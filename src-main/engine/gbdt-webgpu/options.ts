// What a caller of the WebGPU trees trainer passes in and gets back besides the models: the
// options (progress and cancel hooks, the chunk's histogram budget, the histogram kernel, test and
// profiling switches) and the counters filled in while training. Kept apart from trainer.ts so the
// device side (commands.ts) and the host side (decide.ts) can count into the same stats without
// importing the round loop; trainer.ts re-exports everything here.
import type { GbdtEarlyStopping } from '../gbdt/early-stopping'
import type { GbdtTask } from '../gbdt/objective'
import type { HeldOutRows } from '../gbdt/rules'
import type { GbdtPerModelParams } from '../gbdt/train'
import type { GbdtModel, GbdtTree } from '../gbdt/tree'

/**
 * Histogram kernels: auto (workgroup memory where the level's built nodes fit and rows outnumber
 * slots, 32-bit slots where exact), or one forced: global atomics, workgroup memory (32-bit where
 * exact), 32-bit or 64-bit workgroup slots.
 */
export type HistogramMode = 'auto' | 'global' | 'shared' | 'shared32' | 'shared64'

export interface WebgpuTrainOptions {
  /** after every round of a chunk: the chunk's model indices (within the group), 1-based round of the chunk's most */
  onRound?: (indices: readonly number[], round: number, rounds: number) => void
  shouldStop?: () => boolean
  cancelError?: () => Error
  /** when model `index` (of the group) has all its trees */
  onModelDone?: (index: number, model: GbdtModel) => void
  /** cap on one chunk's histogram buffer (default 512 MiB; the device's binding size caps it too) */
  histogramBudgetBytes?: number
  histogramMode?: HistogramMode
  /**
   * tests: host-planned levels, and every evaluated node's histogram read back and decided by the
   * CPU engine's scan, which must be the device's choice
   */
  checkFilter?: boolean
  /** host-planned levels (one read-back a level) even where the device could plan a whole round */
  hostPlanned?: boolean
  /** filled in while training */
  stats?: WebgpuTrainStats
  /** per-kernel device time in stats.kernelMs (timestamp queries; one extra read-back per submit) */
  profile?: boolean
  /**
   * A model set fused across configurations: model i's own GBDT_PER_MODEL_PARAMS over the group's,
   * as the CPU engine's option of the same name (same checks, same trees).
   */
  perModel?: readonly GbdtPerModelParams[]
  /** a model set's folds fused: model i's held-out rows, as the CPU engine's option of the same name */
  heldOut?: readonly (HeldOutRows | null)[]
  /**
   * What the models learn, as the CPU engine's option of the same name (labels are class indices 0 …
   * K−1): binary:logistic or multi:softprob, K trees a round, per-row hessians; absent or regression:
   * squared error.
   */
  task?: GbdtTask
  /**
   * Early stopping, as the CPU engine's option of the same name (every model then needs `heldOut`):
   * after each round its held-out rows' margins are read back and fed to its watch; a stopped model
   * leaves the chunk (compacted) and keeps its best round's trees (GbdtModel.stoppedRounds).
   */
  earlyStopping?: GbdtEarlyStopping
  /**
   * A successive-halving rung, as the CPU engine's option of the same name: the trees model i has
   * from earlier rungs (null: none), continued rather than grown again — its training rows' margins
   * and column sampler from the CPU engine's ModelState.resume, uploaded as the device's start; each
   * model then records the rounds it grew here (GbdtModel.roundsGrown). Not with earlyStopping.
   */
  resume?: readonly (readonly GbdtTree[] | null)[]
  /**
   * tests: squared error through the classifiers' kernels (each row's hessian 1, quantised per tree as
   * a classifier's): the same trees as without, checked against the CPU engine's regression
   */
  squaredErrorHessians?: boolean
}

export interface WebgpuTrainStats {
  chunks: number
  /** chunks trained at once (2: one runs on the device while the host handles the other's read-back) */
  lanes: number
  modelsPerChunk: number
  nodeSlots: number
  histogramBytes: number
  /** levels encoded (a device round: all of its levels) or passes of a host-planned level */
  passes: number
  /** rounds of a chunk planned on the device (one submit, one read-back) and on the host (one read-back a pass) */
  deviceRounds: number
  hostRounds: number
  /** levels by histogram kernel (histShared32, histShared64, histGlobal); shared = the first two */
  histogramKernels: Record<string, number>
  sharedPasses: number
  globalPasses: number
  /** nodes split, in the trees read back */
  splits: number
  /** histogram updates: (row, sampled feature) pairs added into node histograms built from rows */
  histogramUpdates: number
  /** device-planned rounds: histogram updates by tree level, and the kernel each level used (updates per second per kernel) */
  histogramUpdatesByLevel: number[]
  histogramKernelByLevel: string[]
  /** nodes searched for a split (level nodes with enough rows above the depth) */
  evaluatedNodes: number
  /** model-rounds the host decided (gains could overflow float32, or α·2^k is not an integer): whole histograms read back */
  exactHostRounds: number
  /** nodes decided on the host from their histogram (those model-rounds' nodes) */
  hostDecidedNodes: number
  /** checkFilter: nodes whose device choice was compared with the CPU engine's scan of their histogram */
  filterChecks: number
  readbacks: number
  /** bytes the host wrote to the chunks' buffers (tables, samples, uniforms, the start margins; not the data's upload) */
  bytesUploaded: number
  /** ms spent waiting for read-backs (the device's work before each, plus the transfer) */
  waitMs: number
  /** profile: device ms per kernel (timestamp queries) */
  kernelMs: Record<string, number>
  /** early stopping: chunks compacted after models stopped (each one gradient again, one read-back) */
  compactions: number
  /** early stopping: model-rounds the device grew past a model's stop (pipelined before it left) and discarded */
  roundsPastStop: number
}

export function emptyStats(): WebgpuTrainStats {
  return {
    chunks: 0,
    lanes: 0,
    modelsPerChunk: 0,
    nodeSlots: 0,
    histogramBytes: 0,
    passes: 0,
    deviceRounds: 0,
    hostRounds: 0,
    histogramKernels: {},
    sharedPasses: 0,
    globalPasses: 0,
    splits: 0,
    histogramUpdates: 0,
    histogramUpdatesByLevel: [],
    histogramKernelByLevel: [],
    evaluatedNodes: 0,
    exactHostRounds: 0,
    hostDecidedNodes: 0,
    filterChecks: 0,
    readbacks: 0,
    bytesUploaded: 0,
    waitMs: 0,
    kernelMs: {},
    compactions: 0,
    roundsPastStop: 0,
  }
}
