// The gradient-boosted trees family's shared half: XGBoost 1.7 `hist` regression trees (squared
// error, depth-wise), the article's own workload. Defaults are the article's (100 rounds, depth 6,
// eta 0.1) with subsample and colsample 0.8 drawn per model from seed + i + 1, so N models differ.
// Progress is counted in boosting rounds (a lane shows "tree 37/100"); work in histogram updates
// (one sampled row × one sampled feature added into a node histogram, per tree level: what the
// trainer spends its time on). Training: src-main/engine/families/gbdt.ts over src-main/engine/gbdt/.
import { splitRows } from '../contract/split'
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
  /** the initial prediction of every row (XGBoost 1.7's default 0.5, set explicitly) */
  baseScore: number
}

const BIG = 1e6
const FIELDS = [
  { key: 'rounds', label: 'Boosting rounds', flag: '--rounds', help: 'trees per model', type: 'int', range: { min: 1, max: 10_000 } },
  { key: 'maxDepth', label: 'Max depth', flag: '--max-depth', help: 'depth of each tree (depth-wise growth)', type: 'int', range: { min: 1, max: 16 } },
  { key: 'eta', label: 'Learning rate (eta)', flag: '--eta', help: 'shrinkage of each tree', type: 'real', range: { min: 0, max: 1, exclusiveMin: true } },
  { key: 'lambda', label: 'L2 (lambda)', flag: '--lambda', help: 'L2 regularisation of leaf weights', type: 'real', range: { min: 0, max: BIG } },
  { key: 'alpha', label: 'L1 (alpha)', flag: '--alpha', help: 'L1 regularisation of leaf weights', type: 'real', range: { min: 0, max: BIG } },
  { key: 'gamma', label: 'Min split loss (gamma)', flag: '--gamma', help: 'a split must reduce the loss by more than this', type: 'real', range: { min: 0, max: BIG } },
  { key: 'minChildWeight', label: 'Min child weight', flag: '--min-child-weight', help: 'least hessian (rows) in a child', type: 'real', range: { min: 0, max: BIG } },
  { key: 'maxBin', label: 'Max bins', flag: '--max-bin', help: 'histogram bins per feature (quantile cuts)', type: 'int', range: { min: 2, max: 256 } },
  { key: 'subsample', label: 'Row subsample', flag: '--subsample', help: 'fraction of rows each tree samples', type: 'real', range: { min: 0, max: 1, exclusiveMin: true } },
  {
    key: 'colsampleBytree',
    label: 'Column sample',
    flag: '--colsample',
    help: 'fraction of features each tree samples',
    type: 'real',
    range: { min: 0, max: 1, exclusiveMin: true },
  },
  { key: 'baseScore', label: 'Base score', flag: '--base-score', help: 'initial prediction', type: 'real', range: { min: -BIG, max: BIG } },
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

/** Features each tree samples, as XGBoost: max(1, int(float32(c) · F)). */
export function featuresPerTree(colsample: number, features: number): number {
  const c = Math.fround(colsample)
  if (c === 1) return features
  return Math.max(1, Math.trunc(Math.fround(c * features)))
}

/** Histogram memory the trainer may hold for a whole group; above it a level pass is split (same results). */
export const HISTOGRAM_BUDGET_BYTES = 512 * 1024 * 1024
const PROCESS_BASE_BYTES = 80 * 1024 * 1024

export interface GbdtMemory {
  /** float32 features and labels (train and test), and the binned training matrix with its cuts */
  dataBytes: number
  /** per model: predictions, sampled rows, quantised gradients, trees */
  perModelBytes: number
  /** histograms at their peak (bounded by HISTOGRAM_BUDGET_BYTES) */
  histogramBytes: number
  totalBytes: number
}

/** Upper-bound memory of one worker training `models` models together on `size` rows. */
export function gbdtMemory(size: number, features: number, testSplit: number, p: GbdtParams, models: number): GbdtMemory {
  const { train } = splitRows(size, testSplit)
  const F = features
  const dataBytes = size * (F + 1) * 4 + train * F + F * (p.maxBin + 1) * 4 + F * 16
  const nodesPerTree = 2 * 2 ** p.maxDepth - 1
  const perModelBytes = train * 13 + F * 8 + p.rounds * (nodesPerTree * 22 + 400)
  const scratchBytes = train * 12
  const bufBytes = featuresPerTree(p.colsampleBytree, F) * p.maxBin * 16
  const sampledRows = Math.ceil(train * p.subsample)
  const peakNodes = Math.max(1, Math.min(2 ** (p.maxDepth - 1), Math.floor(sampledRows / Math.max(2, 2 * p.minChildWeight))))
  const unbounded = models * peakNodes * bufBytes
  const histogramBytes = Math.min(unbounded, Math.max(2 * bufBytes, Math.floor(HISTOGRAM_BUDGET_BYTES / bufBytes) * bufBytes))
  const totalBytes = PROCESS_BASE_BYTES + dataBytes + models * perModelBytes + scratchBytes + histogramBytes
  return { dataBytes, perModelBytes, histogramBytes, totalBytes }
}

/**
 * The trees' backends. cpu = Trainpool's own engine, the only one `auto` picks (the WGSL engine is not
 * yet measured faster on GPU hardware; xgboost is the user's own library, asked for by name).
 * Speeds in histogram updates per second: cpu measured here (≈ 4e7, 1 thread); webgpu rough, not yet
 * measured — the CPU engine's rate, as on lavapipe (WGSL running on the CPU), so it errs long on a
 * hardware GPU; xgboost measured 2.2 s CPU per model at 10 000 rows × 100 features, 100 rounds,
 * depth 6, sampling 0.8, nthread 1 (3.1e8 updates).
 */
export const GBDT_BACKENDS = [
  { name: 'cpu', gpu: false, auto: true, batched: true, speed: { workPerSecond: 4e7, stepMs: 1, jobMs: 5, poolStartMs: 400, sharedDevice: false } },
  { name: 'webgpu', gpu: true, auto: false, batched: true, speed: { workPerSecond: 4e7, stepMs: 1.5, jobMs: 20, poolStartMs: 3000, sharedDevice: true } },
  {
    name: 'xgboost',
    gpu: false,
    auto: false,
    batched: {
      why: "XGBoost trains one booster at a time (its training is not thread-safe: parallel XGBoost models are the pool's processes); for batched trees use Trainpool's own engine (--backend cpu)",
    },
    speed: { workPerSecond: 1.3e8, stepMs: 0.5, jobMs: 20, poolStartMs: 600, sharedDevice: false },
  },
] as const satisfies readonly BackendSpec[]

export const gbdtFamily: ModelFamily<GbdtParams> = {
  kind: 'gbdt',
  label: 'gradient-boosted trees',
  shortLabel: 'GBDT',
  fields: FIELDS,
  paramsSchema: paramsSchemaFrom<GbdtParams>('gbdt', FIELDS),
  defaults: GBDT_DEFAULTS,
  backends: GBDT_BACKENDS,
  progressTotal: (w) => w.model.rounds,
  describeProgress: (p) => (p.done <= 0 ? 'starting' : `tree ${p.done}/${p.total}`),
  work: { unit: 'histogram update', rateLabel: 'M hist. updates/s', rateScale: 1e6 },
  workCount(w, models) {
    const { train } = splitRows(w.size, w.testSplit)
    const p = w.model
    return models * p.rounds * p.maxDepth * Math.ceil(train * Math.min(1, p.subsample)) * featuresPerTree(p.colsampleBytree, w.features)
  },
  workerPeakBytes: (w, n) => gbdtMemory(w.size, w.features, w.testSplit, w.model, n).totalBytes,
  sameWorkTolerance: 0,
  // splits are on quantile bins (scale-free); a missing value takes the split's learned default side
  userData: { missingValues: 'native', standardise: false },
  notes: (p) =>
    identicalModels(p)
      ? ["No row or column sampling (the article's exact settings): every model trains the same trees. Set subsample or column sample below 1 to make the models differ."]
      : [],
  presets: {
    smoke: { params: { rounds: 10 }, note: '10 rounds' },
    quick: { params: { rounds: 30 }, note: '30 rounds' },
    article: { params: {}, note: "the article's trees: 100 rounds, depth 6, eta 0.1" },
  },
  describe: (p) =>
    `${p.rounds} rounds, depth ${p.maxDepth}, eta ${p.eta}, ${identicalModels(p) ? 'no sampling (identical models)' : `subsample ${p.subsample}, colsample ${p.colsampleBytree}`}, max_bin ${p.maxBin}`,
}
