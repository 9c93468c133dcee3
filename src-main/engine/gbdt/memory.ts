// What training costs in memory, computed from the same quantities the trainer allocates, so the app
// can show it and refuse a batch that would not fit before starting one.
import { GBDT_DEFAULTS, type GbdtParams } from './params'
import { DEFAULT_HISTOGRAM_BUDGET_BYTES, defaultTreeGroup, featuresPerTree } from './train'

export interface GbdtMemoryQuery {
  /** training rows */
  rows: number
  features: number
  /** models trained together in one process (1 for sequential/pool jobs, the group size for batched) */
  models: number
  params?: Partial<GbdtParams>
  /** test rows the caller also holds (float32 features + label), 0 if not counted */
  testRows?: number
  histogramBudgetBytes?: number
  /** models growing their trees together (the trainer's treeGroup option; default as the trainer) */
  treeGroup?: number
}

export interface GbdtMemoryEstimate {
  /** float32 training (and test) features and labels the caller holds */
  inputBytes: number
  /** the binned matrix and cuts, shared by all models */
  binnedBytes: number
  /** per model: predictions, sampled rows, quantised gradients, flags, trees */
  perModelBytes: number
  /** scratch shared by the group (partition buffers, gradients) */
  scratchBytes: number
  /** histograms at their peak: min(budget, what the group's deepest stored level needs) */
  histogramBytes: number
  /** everything above, for all models */
  totalBytes: number
  /** histogram bytes the tree group would need without a budget (the budget then splits the level pass) */
  histogramUnboundedBytes: number
}

/** Upper-bound estimate; assumes every feature uses max_bin bins and no missing values. */
export function estimateGbdtBytes(q: GbdtMemoryQuery): GbdtMemoryEstimate {
  const p = { ...GBDT_DEFAULTS, ...q.params }
  const rows = q.rows
  const F = q.features
  const testRows = q.testRows ?? 0
  const inputBytes = (rows + testRows) * (F + 1) * 4
  const binnedBytes = rows * F + F * (p.maxBin + 1) * 4 + F * 16
  const maxLeaves = 2 ** p.maxDepth
  const nodesPerTree = 2 * maxLeaves - 1
  // pred f32 + rows i32 + q i32 + sampled u8; trees: 6 typed arrays ≈ 22 B per node, plus object overhead
  const perModelBytes = rows * 13 + F * 8 + p.rounds * (nodesPerTree * 22 + 400)
  // partition buffers, float32 gradients, the 1/(H+λ) table
  const scratchBytes = rows * 20
  const slots = featuresPerTree(p.colsampleBytree, F) * p.maxBin
  const bufBytes = slots * 16
  // Stored levels are 0 … maxDepth−2 (the last evaluated level keeps nothing). At stored level d a
  // model holds 2^(d−1) parents plus 2^(d−1) built children; at the last level the 2^(maxDepth−2)
  // parents. Nodes are also bounded by the rows: each needs ≥ max(2, 2·min_child_weight) of them.
  const sampledRows = Math.ceil(rows * p.subsample)
  const rowBound = Math.floor(sampledRows / Math.max(2, 2 * p.minChildWeight))
  const peakNodes = p.maxDepth < 2 ? 0 : Math.max(1, Math.min(2 ** (p.maxDepth - 2), rowBound))
  // the models that grow their trees together hold histograms at the same time
  const together = Math.min(q.models, q.treeGroup ?? defaultTreeGroup(p, slots))
  const histogramUnboundedBytes = together * peakNodes * bufBytes
  const budget = q.histogramBudgetBytes ?? DEFAULT_HISTOGRAM_BUDGET_BYTES
  const histogramBytes = Math.min(histogramUnboundedBytes, Math.max(2 * bufBytes, Math.floor(budget / bufBytes) * bufBytes))
  const totalBytes = inputBytes + binnedBytes + q.models * perModelBytes + scratchBytes + histogramBytes
  return { inputBytes, binnedBytes, perModelBytes, scratchBytes, histogramBytes, totalBytes, histogramUnboundedBytes }
}
