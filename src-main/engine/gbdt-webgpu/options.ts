// What a caller of the WebGPU trees trainer passes in and gets back besides the models: the
// options (progress and cancel hooks, the chunk's histogram budget, the histogram kernel, test and
// profiling switches) and the counters filled in while training. Kept apart from trainer.ts so the
// device side (commands.ts) and the host side (decide.ts) can count into the same stats without
// importing the round loop; trainer.ts re-exports everything here.
import type { HeldOutRows } from '../gbdt/rules'
import type { GbdtPerModelParams } from '../gbdt/train'
import type { GbdtModel } from '../gbdt/tree'

/** candidate records per node in the filter's output (more: that node's histogram is read back) */
export const DEFAULT_CANDIDATES_PER_NODE = 16

export type HistogramMode = 'auto' | 'global' | 'shared'

export interface WebgpuTrainOptions {
  /** after every round of a chunk: the chunk's model indices (within the group), 1-based round of the chunk's most */
  onRound?: (indices: readonly number[], round: number, rounds: number) => void
  shouldStop?: () => boolean
  cancelError?: () => Error
  /** when model `index` (of the group) has all its trees */
  onModelDone?: (index: number, model: GbdtModel) => void
  /** cap on one chunk's histogram buffer (default 512 MiB; the device's binding size caps it too) */
  histogramBudgetBytes?: number
  /** workgroup-memory histograms where they fit (auto), or always global atomics, or shared where possible */
  histogramMode?: HistogramMode
  candidatesPerNode?: number
  /** tests: read every evaluated node's histogram back and check the filter kept the CPU engine's choice */
  checkFilter?: boolean
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
}

export interface WebgpuTrainStats {
  chunks: number
  modelsPerChunk: number
  nodeSlots: number
  histogramBytes: number
  passes: number
  sharedPasses: number
  globalPasses: number
  evaluatedNodes: number
  candidates: number
  maxCandidatesPerNode: number
  /** nodes whose candidates overflowed K: decided from their histogram, read back */
  overflowNodes: number
  /** model-rounds decided from whole histograms (gradients too large for float32 gains) */
  exactHostRounds: number
  /** checkFilter: nodes whose filtered choice was compared with the whole-histogram choice */
  filterChecks: number
  readbacks: number
  /** ms spent waiting for read-backs (the device's work before each, plus the transfer) */
  waitMs: number
  /** profile: device ms per kernel (timestamp queries) */
  kernelMs: Record<string, number>
}

export function emptyStats(): WebgpuTrainStats {
  return {
    chunks: 0,
    modelsPerChunk: 0,
    nodeSlots: 0,
    histogramBytes: 0,
    passes: 0,
    sharedPasses: 0,
    globalPasses: 0,
    evaluatedNodes: 0,
    candidates: 0,
    maxCandidatesPerNode: 0,
    overflowNodes: 0,
    exactHostRounds: 0,
    filterChecks: 0,
    readbacks: 0,
    waitMs: 0,
    kernelMs: {},
  }
}
