// The shape every engine trains on, generated (generated.ts) or the user's (user-data.ts): its own module
// so the user's data can build one without importing the generator that picks between the two.
import { foldRows, type HeldOutRows, type Preprocess, type Target, type WorkloadTask } from '@shared/contract'

export interface DatasetSpec {
  size: number
  features: number
  seed: number
  target: Target
  testSplit: number
  /** a classifier's objective and class count (labels are class indices 0 … K−1); absent: regression */
  task?: WorkloadTask
}

export interface Dataset {
  spec: DatasetSpec
  train: number
  test: number
  /** row-major [train, features] */
  xTrain: Float32Array
  yTrain: Float32Array
  xTest: Float32Array
  yTest: Float32Array
  /** what was done to the raw features (the user's data): kept with an exported model so it takes raw rows */
  preprocess?: Preprocess
  /** a fold's held-out training rows (model sets with folds), or a validation fraction's: scored as validation, never trained on */
  validation?: { rows: number; x: Float32Array; y: Float32Array }
}

/**
 * Fold f of K (contract/model-set.ts foldRows): the training rows outside the fold train, the fold's
 * rows are the validation rows; the test rows stay. Copies, in the training rows' order.
 */
export function foldDataset(dataset: Dataset, folds: number, f: number): Dataset {
  return heldOutDataset(dataset, foldRows(dataset.train, folds, f))
}

/**
 * The training rows [begin, end) held out as the validation rows (a fold's, or a validation
 * fraction's tail: contract/early-stopping.ts), the others train; the test rows stay. Copies, in the
 * training rows' order.
 */
export function heldOutDataset(dataset: Dataset, { begin, end }: HeldOutRows): Dataset {
  const width = dataset.spec.features
  const train = dataset.train - (end - begin)
  const xTrain = new Float32Array(train * width)
  xTrain.set(dataset.xTrain.subarray(0, begin * width), 0)
  xTrain.set(dataset.xTrain.subarray(end * width, dataset.train * width), begin * width)
  const yTrain = new Float32Array(train)
  yTrain.set(dataset.yTrain.subarray(0, begin), 0)
  yTrain.set(dataset.yTrain.subarray(end, dataset.train), begin)
  const validation = { rows: end - begin, x: dataset.xTrain.slice(begin * width, end * width), y: dataset.yTrain.slice(begin, end) }
  return { ...dataset, train, xTrain, yTrain, validation }
}

/**
 * The MLP's fused folds: for the batch order[start … start+rows), each model's row weights laid out
 * [rows, n] — 1/(its rows in the batch) for the rows it trains on, 0 for its held-out ones (all 0
 * when the batch has none of its rows) — and its row counts. A model without held-out rows weighs
 * every row 1/rows.
 */
export function heldOutRowWeights(
  order: Int32Array,
  start: number,
  rows: number,
  heldOut: readonly (HeldOutRows | null)[],
  weights: Float32Array,
  counts: Float32Array,
): void {
  const n = heldOut.length
  counts.fill(0)
  for (let r = 0; r < rows; r++) {
    const src = order[start + r]
    for (let k = 0; k < n; k++) {
      const h = heldOut[k]
      const trains = !h || src < h.begin || src >= h.end ? 1 : 0
      weights[r * n + k] = trains
      counts[k] += trains
    }
  }
  for (let r = 0; r < rows; r++) for (let k = 0; k < n; k++) if (weights[r * n + k] !== 0) weights[r * n + k] = 1 / counts[k]
}

/**
 * Each model's scores on its own held-out rows (null without): one `evaluate` per distinct fold,
 * which scores every fused model on the fold's rows x [rows, F+1] (ones last) and y [rows] (its MSE,
 * a classifier's metrics); each model keeps its own fold's entry.
 */
export async function heldOutScores<T>(
  dataset: Dataset,
  heldOut: readonly (HeldOutRows | null)[],
  evaluate: (x: Float32Array, y: Float32Array, rows: number) => Promise<ArrayLike<T>>,
): Promise<(T | null)[]> {
  const out = new Array<T | null>(heldOut.length).fill(null)
  const F = dataset.spec.features
  const done = new Set<string>()
  for (const h of heldOut) {
    if (!h || done.has(`${h.begin}:${h.end}`)) continue
    done.add(`${h.begin}:${h.end}`)
    const rows = h.end - h.begin
    const scores = await evaluate(withOnesColumn(dataset.xTrain.subarray(h.begin * F, h.end * F), rows, F), dataset.yTrain.subarray(h.begin, h.end), rows)
    heldOut.forEach((other, k) => {
      if (other && other.begin === h.begin && other.end === h.end) out[k] = scores[k]
    })
  }
  return out
}

/** Each model's training rows: the data set's, less its held-out ones. */
export function trainingRowsOf(train: number, heldOut: readonly (HeldOutRows | null)[]): number[] {
  return heldOut.map((h) => train - (h ? h.end - h.begin : 0))
}

/**
 * A classifier's training rows reordered so that any contiguous block holds the classes in the
 * proportions of the whole (±1 row a class): folds are contiguous blocks (contract/model-set.ts
 * foldRows), so this makes every fold stratified, as scikit-learn's StratifiedKFold does, whatever K.
 * Row r of class c that is the j-th of its class's n_c rows goes to key (j + 0.5)/n_c; rows are
 * ordered by key, ties by class. Deterministic from the labels alone, so every strategy gets the same order.
 */
export function stratifyTrainingRows(x: Float32Array, y: Float32Array, train: number, features: number, classes: number): void {
  const count = new Float64Array(classes)
  for (let r = 0; r < train; r++) count[y[r]]++
  const seen = new Float64Array(classes)
  const key = new Float64Array(train)
  for (let r = 0; r < train; r++) {
    const c = y[r]
    key[r] = (seen[c]++ + 0.5) / count[c]
  }
  const order = Array.from({ length: train }, (_, r) => r).sort((a, b) => key[a] - key[b] || y[a] - y[b] || a - b)
  const xs = x.slice(0, train * features)
  const ys = y.slice(0, train)
  order.forEach((src, dst) => {
    x.set(xs.subarray(src * features, src * features + features), dst * features)
    y[dst] = ys[src]
  })
}

/** What a workload's task adds to a worker's data key (the labels differ by objective and class count): '' for regression. */
export function taskKey(w: Pick<DatasetSpec, 'task'>): string {
  return w.task ? `:${w.task.objective} ${w.task.classes}` : ''
}

/** [rows, F] → [rows, F+1] with a last column of ones (the MLP engines' first-layer bias input). */
export function withOnesColumn(x: Float32Array, rows: number, F: number): Float32Array {
  const out = new Float32Array(rows * (F + 1))
  for (let r = 0; r < rows; r++) {
    out.set(x.subarray(r * F, r * F + F), r * (F + 1))
    out[r * (F + 1) + F] = 1
  }
  return out
}
