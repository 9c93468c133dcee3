// The gradient-boosted trees family's shared half: XGBoost 1.7 `hist` regression trees, the
// article's workload and defaults, subsample and colsample 0.8 drawn per model so N models differ.
// Progress in boosting rounds; work in histogram updates (a sampled row × feature added into a node
// histogram, per level). Training: src-main/engine/families/gbdt.ts over src-main/engine/gbdt/.
import { splitRows } from '../vocabulary/split'
import { type Objective, outputsOf } from '../vocabulary/task'
import type { BackendSpec } from './backend'
import { type ModelFamily, paramsSchemaFrom, type ParamField } from './family'

export interface GbdtParams {
  kind: 'gbdt'
  /** boosting rounds = trees per model */
  rounds: number
  maxDepth: number
  /** learning rate; the stored leaf value is eta·w */
  eta: number
  lambda: number
  alpha: number
  /** min_split_loss */
  gamma: number
  minChildWeight: number
  maxBin: number
  /** row subsample per tree (Bernoulli per row) */
  subsample: number
  /** features sampled per tree */
  colsampleBytree: number
  /** the initial prediction of every row (XGBoost 1.7's default 0.5, set explicitly); binary: a probability, its logit the initial margin */
  baseScore: number
}

const BIG = 1e6
const FIELDS = [
  { key: 'rounds', vary: true, label: 'Boosting rounds', flag: '--rounds', help: 'trees per model', type: 'int', range: { min: 1, max: 10_000 } },
  {
    key: 'maxDepth',
    vary: true,
    label: 'Max depth',
    flag: '--max-depth',
    help: 'depth of each tree (depth-wise growth)',
    type: 'int',
    range: { min: 1, max: 16 },
  },
  {
    key: 'eta',
    vary: true,
    label: 'Learning rate (eta)',
    flag: '--eta',
    help: 'shrinkage of each tree',
    type: 'real',
    range: { min: 0, max: 1, exclusiveMin: true },
  },
  { key: 'lambda', vary: true, label: 'L2 (lambda)', flag: '--lambda', help: 'L2 regularisation of leaf weights', type: 'real', range: { min: 0, max: BIG } },
  { key: 'alpha', vary: true, label: 'L1 (alpha)', flag: '--alpha', help: 'L1 regularisation of leaf weights', type: 'real', range: { min: 0, max: BIG } },
  {
    key: 'gamma',
    vary: true,
    label: 'Min split loss (gamma)',
    flag: '--gamma',
    help: 'a split must reduce the loss by more than this',
    type: 'real',
    range: { min: 0, max: BIG },
  },
  {
    key: 'minChildWeight',
    vary: true,
    label: 'Min child weight',
    flag: '--min-child-weight',
    help: 'least hessian (rows) in a child',
    type: 'real',
    range: { min: 0, max: BIG },
  },
  {
    key: 'maxBin',
    vary: true,
    label: 'Max bins',
    flag: '--max-bin',
    help: 'histogram bins per feature (quantile cuts)',
    type: 'int',
    range: { min: 2, max: 256 },
  },
  {
    key: 'subsample',
    vary: true,
    label: 'Row subsample',
    flag: '--subsample',
    help: 'fraction of rows each tree samples',
    type: 'real',
    range: { min: 0, max: 1, exclusiveMin: true },
  },
  {
    key: 'colsampleBytree',
    vary: true,
    label: 'Column sample',
    flag: '--colsample',
    help: 'fraction of features each tree samples',
    type: 'real',
    range: { min: 0, max: 1, exclusiveMin: true },
  },
  {
    key: 'baseScore',
    label: 'Base score',
    flag: '--base-score',
    help: 'initial prediction (binary: a probability in (0, 1))',
    type: 'real',
    range: { min: -BIG, max: BIG },
  },
] as const satisfies readonly ParamField[]

export const GBDT_DEFAULTS: GbdtParams = {
  kind: 'gbdt',
  rounds: 100,
  maxDepth: 6,
  eta: 0.1,
  lambda: 1,
  alpha: 0,
  gamma: 0,
  minChildWeight: 1,
  maxBin: 256,
  subsample: 0.8,
  colsampleBytree: 0.8,
  baseScore: 0.5,
}

/** True when every model trains the same trees: no row or column sampling (the article's exact settings). */
export function identicalModels(p: GbdtParams): boolean {
  return p.subsample >= 1 && p.colsampleBytree >= 1
}

// ---- the parameters' ranges, as both tree engines check them ----------------------------------

function describeRange(f: (typeof FIELDS)[number]): string {
  const { min, max } = f.range
  const open = 'exclusiveMin' in f.range && f.range.exclusiveMin
  return `${f.type === 'int' ? 'an integer' : 'a number'} ${open ? '>' : '≥'} ${min} and ≤ ${max}`
}

/** Problems with `p`, one message per bad field ("maxDepth must be an integer ≥ 1 and ≤ 16, got 0"); empty when valid. */
export function gbdtParamProblems(p: Omit<GbdtParams, 'kind'>): string[] {
  const out: string[] = []
  for (const f of FIELDS) {
    const v: unknown = p[f.key]
    const { min, max } = f.range
    const open = 'exclusiveMin' in f.range && f.range.exclusiveMin
    const ok = typeof v === 'number' && Number.isFinite(v) && (open ? v > min : v >= min) && v <= max && (f.type !== 'int' || Number.isInteger(v))
    if (!ok) out.push(`${f.key} must be ${describeRange(f)}, got ${String(v)}`)
  }
  return out
}

/** The defaults filled in; throws a RangeError listing every bad field (what the engines train with). */
export function resolveGbdtParams(p: Partial<GbdtParams> = {}): GbdtParams {
  const full: GbdtParams = { ...GBDT_DEFAULTS, ...p, kind: 'gbdt' }
  const problems = gbdtParamProblems(full)
  if (problems.length > 0) throw new RangeError(`invalid GBDT parameters: ${problems.join('; ')}`)
  return full
}

// ---- what both engines derive from the parameters --------------------------------------------

/** Features each tree samples, as XGBoost: max(1, int(float32(c) · F)). */
export function featuresPerTree(colsample: number, features: number): number {
  const c = Math.fround(colsample)
  if (c === 1) return features
  return Math.max(1, Math.trunc(Math.fround(c * features)))
}

/** The fewest rows (the hessian) a node needs to be split: each child needs min_child_weight, and at least one row. */
export function minSplitRows(minChildWeight: number): number {
  return Math.max(2, 2 * Math.fround(minChildWeight))
}

/**
 * Node histograms one model holds at tree level `level`: its nodes, at most 2^level, and at most
 * two per split pair (the built child, or a temporary for a smaller sibling, and the parent's
 * buffer), a pair holding ≥ minSplitRows + 1 rows (an evaluable child and a non-empty sibling).
 */
export function nodeHistogramsAtLevel(level: number, rows: number, minChildWeight: number): number {
  const byRows = 2 * Math.floor(rows / (minSplitRows(minChildWeight) + 1))
  return Math.max(1, Math.min(2 ** level, byRows))
}

/**
 * Node histograms one model holds at its peak on the CPU engine: the last evaluated level
 * (maxDepth − 1) builds in scratch and keeps nothing, so the deepest level that has histograms is
 * maxDepth − 2 (none at depth 1: the root is the last level).
 */
export function peakNodeHistograms(p: Pick<GbdtParams, 'maxDepth' | 'minChildWeight'>, rows: number): number {
  return p.maxDepth < 2 ? 0 : nodeHistogramsAtLevel(p.maxDepth - 2, rows, p.minChildWeight)
}

/** Histogram memory a trainer call may hold (all models together); above it a level pass is split (same results). */
export const HISTOGRAM_BUDGET_BYTES = 512 * 1024 * 1024
/** Bytes of one CPU histogram slot: Σq and the row count, two float64. */
export const CPU_SLOT_BYTES = 16
const PROCESS_BASE_BYTES = 80 * 1024 * 1024

/**
 * Models growing their trees together on a CPU by default (the trainer's treeGroup option; a K-class
 * model's K trees always grow together): one. There is no arithmetic to share between models, and a
 * level pass over one model keeps its histograms in cache. Measured (2026-12, the wasm kernel, depth
 * 6, 100 features, subsample and colsample 0.8, ms per model): 2 000 rows, groups of 1 416, of 3 475,
 * all 24 560; 8 000 rows, 527–531, 567–581, all 12 640–653; 40 000 rows, 1 158, 1 165, all 4 1 160.
 */
export const DEFAULT_TREE_GROUP = 1

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
  /** models growing their trees together (the CPU trainer's treeGroup option; default as the trainer) */
  treeGroup?: number
  /** a classifier's task: per-row hessians; a K-class model grows K trees a round side by side (absent: regression) */
  task?: { objective: Objective; classes: number }
}

export interface GbdtMemory {
  /** float32 training (and test) features and labels the caller holds */
  inputBytes: number
  /** the binned matrix and cuts, shared by all models */
  binnedBytes: number
  /** per model: predictions, sampled rows, quantised gradients, flags, trees */
  perModelBytes: number
  /** scratch shared by the group (partition buffers, gradients) */
  scratchBytes: number
  /** histograms at their peak: min(budget, what the tree group's deepest stored level needs) */
  histogramBytes: number
  /** everything above, for all models (not the process's own memory) */
  totalBytes: number
  /** histogram bytes the tree group would need without a budget (the budget then splits the level pass) */
  histogramUnboundedBytes: number
}

/** Upper-bound memory of the CPU engine training `models` models together; assumes every feature has max_bin bins and no missing values. */
export function gbdtMemory(q: GbdtMemoryQuery): GbdtMemory {
  const p = { ...GBDT_DEFAULTS, ...q.params }
  const rows = q.rows
  const F = q.features
  // trees a round per model (multiclass: K), and whether rows carry hessians of their own (classifiers)
  const K = q.task ? outputsOf(q.task) : 1
  const hessians = q.task !== undefined && q.task.objective !== 'regression'
  const inputBytes = (rows + (q.testRows ?? 0)) * (F + 1) * 4
  const binnedBytes = rows * F + F * (p.maxBin + 1) * 4 + F * 16
  const nodesPerTree = 2 * 2 ** p.maxDepth - 1
  // per class: margins f32; per tree grown: rows i32 + q i32 (+ qh i32) + sampled u8; trees: 6 typed arrays ≈ 22 B per node, plus object overhead
  const perModelBytes = K * (rows * (13 + (hessians ? 4 : 0)) + F * 8 + p.rounds * (nodesPerTree * 22 + 400))
  // partition buffers, float32 gradients (and hessians, a K-class model's probabilities), the labels' copy the row loops read;
  // the wasm histogram kernel's copy of the binned matrix and its per-column bin counts (a float64 per bin: engine/gbdt/kernel.ts countsOf)
  const scratchBytes = rows * 24 + rows * F + F * p.maxBin * 8 + (hessians ? rows * 8 : 0) + (K > 1 ? rows * K * 4 : 0)
  const slots = featuresPerTree(p.colsampleBytree, F) * p.maxBin
  const bufBytes = slots * CPU_SLOT_BYTES
  // the trees that grow together (K a model) hold histograms at the same time
  const together = K * Math.min(q.models, q.treeGroup ?? DEFAULT_TREE_GROUP)
  const histogramUnboundedBytes = together * peakNodeHistograms(p, rows) * bufBytes
  const budget = q.histogramBudgetBytes ?? HISTOGRAM_BUDGET_BYTES
  const histogramBytes = Math.min(histogramUnboundedBytes, Math.max(2 * bufBytes, Math.floor(budget / bufBytes) * bufBytes))
  const totalBytes = inputBytes + binnedBytes + q.models * perModelBytes + scratchBytes + histogramBytes
  return { inputBytes, binnedBytes, perModelBytes, scratchBytes, histogramBytes, totalBytes, histogramUnboundedBytes }
}

/**
 * What a split node's histogram costs beside the rows binned into it, in row-level updates a bin (the
 * CPU engine zeroes it, subtracts it from its parent's or its sibling from it, and scans it for the best
 * split, a division a bin), and how many split nodes a tree has: 2^depth − 1 at most, and no more than
 * one for NODE_ROWS of its sampled rows (a node too small to split is a leaf). Measured, not derived:
 * 18 configurations (eta × subsample × min-child-weight) × 3 folds fused at depth 3, 6 and 8, at 10 000
 * rows (16 and 100 rounds) and 2 000 rows (100 rounds), and × 3 seeds at depth 3 and 8 (100 features,
 * one worker, 2026-12): a least-squares fit of their times gives 2.7 and 6 (every run within 15 %, rms
 * 10 %; without the cap, 47 %). Counted as one a bin (the earlier rule), a depth-8 configuration weighed
 * half its time beside a depth-3 one: a batched grid's two fused programs took 9.0 and 12.4 s, one worker
 * waiting. At 2 000 rows the bins are most of the work, at 200 000 rows a few %.
 */
export const NODE_BIN_PASSES = 2.7
export const NODE_ROWS = 6

/**
 * The trees' backends. cpu = Trainpool's own engine, the only one `auto` picks (the WGSL engine is not
 * yet measured faster on GPU hardware; xgboost is the user's own library, asked for by name).
 * Speeds in work units per second, as workCount counts them (every level over the model's sampled rows,
 * plus NODE_BIN_PASSES a bin of each split node): cpu measured here by `trainpool calibrate` (2026-12:
 * 1.2e9 a thread, 10 fused and one model at 10 000 rows, depth 6; the fit above, 54 fused, 1.39e9; it
 * read 6.4–6.6e8 when a bin counted once, a unit that weighs depth 6 at 10 000 rows 1.5× less; the
 * engine was ≈ 4e7 when this was first set); webgpu rough, not yet measured on GPU hardware (lavapipe
 * runs it at ≈ 2.3e7, WGSL on the CPU), so it errs long on a hardware GPU; xgboost measured 2.2 s CPU
 * per model at 10 000 rows × 100 features, 100 rounds, depth 6, sampling 0.8, nthread 1 (6.6e8 units).
 */
export const GBDT_BACKENDS = [
  {
    name: 'cpu',
    gpu: false,
    auto: true,
    batched: true,
    earlyStopping: true,
    halving: true,
    speed: { workPerSecond: 1.2e9, stepMs: 0.5, jobMs: 5, poolStartMs: 300, sharedDevice: false },
  },
  {
    name: 'webgpu',
    gpu: true,
    auto: false,
    batched: true,
    earlyStopping: true,
    halving: true,
    speed: { workPerSecond: 6e7, stepMs: 1.5, jobMs: 20, poolStartMs: 3000, sharedDevice: true },
  },
  {
    name: 'xgboost',
    gpu: false,
    auto: false,
    batched: {
      why: "XGBoost trains one booster at a time (its training is not thread-safe: parallel XGBoost models are the pool's processes); for batched trees use Trainpool's own engine (--backend cpu)",
    },
    earlyStopping: true,
    halving: true,
    speed: { workPerSecond: 3e8, stepMs: 0.5, jobMs: 20, poolStartMs: 600, sharedDevice: false },
  },
] as const satisfies readonly BackendSpec[]

/** The trees' backends by name: its worker table (src-main/engine/families/gbdt.ts) has one entry for each, no other. */
export type GbdtBackendName = (typeof GBDT_BACKENDS)[number]['name']

export const gbdtFamily: ModelFamily<GbdtParams, GbdtBackendName> = {
  kind: 'gbdt',
  label: 'gradient-boosted trees',
  shortLabel: 'GBDT',
  fields: FIELDS,
  paramsSchema: paramsSchemaFrom<GbdtParams>('gbdt', FIELDS),
  defaults: GBDT_DEFAULTS,
  backends: GBDT_BACKENDS,
  progressTotal: (w) => w.model.rounds,
  maxRounds: (model) => model.rounds,
  roundWord: 'round',
  withRounds: (model, rounds) => ({ ...model, rounds }),
  describeProgress: (p) => (p.done <= 0 ? 'starting' : `tree ${p.done}/${p.total}`),
  work: { unit: 'histogram update', rateLabel: 'M hist. updates/s', rateScale: 1e6 },
  // per tree and feature: every level over the model's sampled rows (a fold's model: its (K−1)/K), and
  // each split node's histogram, NODE_BIN_PASSES updates a bin
  workCount(w, models, rowShare = 1) {
    const { train } = splitRows(w.size, w.testSplit)
    const p = w.model
    const trees = w.task ? outputsOf(w.task) : 1
    const sampled = Math.ceil(train * rowShare * Math.min(1, p.subsample))
    const splitNodes = Math.min(2 ** p.maxDepth - 1, Math.ceil(sampled / NODE_ROWS))
    const perFeature = p.maxDepth * sampled + NODE_BIN_PASSES * splitNodes * p.maxBin
    return models * p.rounds * trees * perFeature * featuresPerTree(p.colsampleBytree, w.features)
  },
  workerPeakBytes: (w, n) => {
    const { train, test } = splitRows(w.size, w.testSplit)
    return PROCESS_BASE_BYTES + gbdtMemory({ rows: train, testRows: test, features: w.features, models: n, params: w.model, task: w.task }).totalBytes
  },
  sameWorkTolerance: 0,
  // cpu and webgpu grow the same trees; XGBoost's are the same splits within float rounding (engine/gbdt/xgboost.test.ts)
  // unless rows or columns are sampled: its random numbers are not ours
  crossBackend: (a, b, run) => {
    if (a !== 'xgboost' && b !== 'xgboost') return { fingerprints: true, tolerance: 0 }
    if (run.set?.folds) {
      return {
        incomparable:
          "xgboost bins each fold's training rows on their own (xgb.cv's way); Trainpool's engines bin the whole training set once and hold each fold's rows out (so a set's folds fuse), so their fold models are not the same models one by one",
      }
    }
    const samples = (field: 'subsample' | 'colsampleBytree') => run.model[field] < 1 || (run.set?.grid[field] ?? []).some((v: unknown) => Number(v) < 1)
    if (samples('subsample') || samples('colsampleBytree')) {
      return {
        incomparable:
          "xgboost samples rows and columns with its own random numbers, so its models are not the same models as Trainpool's engines' one by one (subsample and colsample 1 make them comparable)",
      }
    }
    return { fingerprints: false, tolerance: 1e-4 }
  },
  // splits are on quantile bins (scale-free); a missing value takes the split's learned default side
  userData: { missingValues: 'native', standardise: false },
  notes: (p) =>
    identicalModels(p)
      ? [
          "No row or column sampling (the article's exact settings): every model trains the same trees. Set subsample or column sample below 1 to make the models differ.",
        ]
      : [],
  // the article's trees (depth 6 on 10 000 rows) for 4 rounds, one model alone and 10 fused
  calibration: { size: 10_000, models: 10, params: { rounds: 4 }, stepsParam: 'rounds', step: 'round' },
  presets: {
    smoke: { params: { rounds: 10 }, note: '10 rounds' },
    quick: { params: { rounds: 30 }, note: '30 rounds' },
    article: { params: {}, note: "the article's trees: 100 rounds, depth 6, eta 0.1" },
  },
  describe: (p) =>
    `${p.rounds} rounds, depth ${p.maxDepth}, eta ${p.eta}, ${identicalModels(p) ? 'no sampling (identical models)' : `subsample ${p.subsample}, colsample ${p.colsampleBytree}`}, max_bin ${p.maxBin}`,
}
