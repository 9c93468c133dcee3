// The user's data set as a worker trains on it: the target and feature columns read from the cached
// table (never the CSV), a seeded sample of `size` rows (a larger size contains the smaller ones;
// data/row-sample.ts, which the service checks a classifier's classes against too), split, then —
// where the family asks — imputed and standardised with training-row statistics only. A
// classifier's labels become class indices (a text target's codes or the column's numbers, mapped by
// classValues) and its training rows are stratified. The same Dataset shape as generated data
// (dataset.ts), so the engines cannot tell the two apart.
import { type Preprocess, splitRows, type Workload, type WorkloadData } from '@shared/contract'
import { sampleRows } from '../../data/row-sample'
import { readTableColumns } from '../../data/table-file'
import { type Dataset, type DatasetSpec, stratifyTrainingRows } from './dataset'

export interface FeatureStats {
  mean: Float64Array
  std: Float64Array
}

/** Per-feature mean and (population) std over the first `train` rows of row-major x, NaN skipped. */
export function trainingStats(x: Float32Array, train: number, features: number): FeatureStats {
  const sum = new Float64Array(features)
  const count = new Float64Array(features)
  for (let r = 0; r < train; r++) {
    for (let f = 0; f < features; f++) {
      const v = x[r * features + f]
      if (v === v) {
        sum[f] += v
        count[f]++
      }
    }
  }
  const mean = sum.map((s, f) => (count[f] > 0 ? s / count[f] : 0))
  const sq = new Float64Array(features)
  for (let r = 0; r < train; r++) {
    for (let f = 0; f < features; f++) {
      const v = x[r * features + f]
      if (v === v) sq[f] += (v - mean[f]) ** 2
    }
  }
  // a constant column is only centred (dividing by 0 would make it NaN)
  const std = sq.map((s, f) => (count[f] > 0 && s > 0 ? Math.sqrt(s / count[f]) : 1))
  return { mean, std }
}

export function userDataset(w: DatasetSpec & { data: WorkloadData }): Dataset {
  const { data } = w
  const [target] = readTableColumns(data.table, [data.targetColumn]).values
  const F = data.featureColumns.length
  const rows = sampleRows(target, w.size, w.seed)
  const { train, test } = splitRows(w.size, w.testSplit)
  const x = new Float32Array(w.size * F)
  const y = new Float32Array(w.size)
  for (let i = 0; i < w.size; i++) y[i] = target[rows[i]]
  if (data.classValues) toClassIndices(y, data.classValues)
  // one column at a time: a worker holds one of the file's columns besides its sample, never the table
  data.featureColumns.forEach((column, f) => {
    const [values] = readTableColumns(data.table, [column]).values
    for (let i = 0; i < w.size; i++) x[i * F + f] = values[rows[i]]
  })
  if (data.classValues) stratifyTrainingRows(x, y, train, F, data.classValues.length)
  let preprocess: Preprocess | undefined
  if (data.impute === 'mean' || data.standardise) {
    const { mean, std } = trainingStats(x, train, F)
    preprocess = { mean: [...mean], std: [...std], impute: data.impute === 'mean', standardise: data.standardise }
    for (let i = 0; i < x.length; i++) {
      const f = i % F
      let v = x[i]
      if (v !== v && data.impute === 'mean') v = mean[f]
      x[i] = data.standardise ? (v - mean[f]) / std[f] : v
    }
  }
  return {
    spec: { size: w.size, features: F, seed: w.seed, target: w.target, testSplit: w.testSplit, ...(w.task ? { task: w.task } : {}) },
    train,
    test,
    xTrain: x.subarray(0, train * F),
    yTrain: y.subarray(0, train),
    xTest: x.subarray(train * F),
    yTest: y.subarray(train),
    ...(preprocess ? { preprocess } : {}),
  }
}

/** A classifier's labels: each stored value replaced by its class index (classValues[k] → k); the service checked every value has one. */
function toClassIndices(y: Float32Array, classValues: readonly number[]): void {
  const index = new Map(classValues.map((v, k) => [Math.fround(v), k]))
  for (let i = 0; i < y.length; i++) {
    const k = index.get(y[i])
    if (k === undefined) throw new Error(`data: target value ${y[i]} is not one of the classes (${classValues.join(', ')})`)
    y[i] = k
  }
}

/** What identifies the user's data in a worker's data key ('' for generated data). */
export function userDataKey(w: Workload): string {
  const d = w.data
  return d
    ? `:${d.sha256}:${d.targetColumn}:${d.featureColumns.join(',')}:${d.impute}:${d.standardise ? 's' : 'r'}${d.classValues ? `:classes ${d.classValues.join(',')}` : ''}`
    : ''
}
