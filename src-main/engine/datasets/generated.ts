// Synthetic regression data from the data seed alone (the user's own data: user-data.ts; datasetFor
// picks). X ~ U(0,1). The default target is a fixed
// seeded "teacher" (a random one-hidden-layer tanh network) plus noise, standardised, so models
// learn and test MSE means something; `noise` reproduces the article's pure-noise target.
import { splitRows, type WorkloadData } from '@shared/contract'
import { type Dataset, type DatasetSpec, stratifyTrainingRows } from './dataset'
import { Rng, mixSeed, permutation } from '../random'
import { userDataset } from './user-data'

// the engines import the shape together with datasetFor from here; it is defined in dataset.ts
export type { Dataset, DatasetSpec } from './dataset'

const TEACHER_UNITS = 16
const TEACHER_NOISE = 0.1

/** The data set a workload (of any family: it reads nothing of the model) trains on: the user's (read from the cached table) or generated. */
export function datasetFor(w: DatasetSpec & { data?: WorkloadData }): Dataset {
  return w.data ? userDataset({ ...w, data: w.data }) : generateDataset(w)
}

export function generateDataset(spec: DatasetSpec): Dataset {
  const { size, features } = spec
  const { train, test } = splitRows(size, spec.testSplit)
  const x = new Float32Array(size * features)
  let y: Float32Array
  if (spec.task && spec.task.objective !== 'regression') {
    y = classificationData(x, size, features, spec.task.classes, spec.seed)
    stratifyTrainingRows(x, y, train, features, spec.task.classes)
  } else {
    const rng = new Rng(spec.seed, 1)
    for (let i = 0; i < x.length; i++) x[i] = rng.uniform()
    y = spec.target === 'noise' ? noiseTarget(size, spec.seed) : teacherTarget(x, size, features, spec.seed)
  }
  return {
    spec: { ...spec },
    train,
    test,
    xTrain: x.subarray(0, train * features),
    yTrain: y.subarray(0, train),
    xTest: x.subarray(train * features),
    yTest: y.subarray(train),
  }
}

/** make_classification's shape (its defaults): informative features, the rest noise; 2 clusters a class */
const INFORMATIVE = 10
const CLUSTERS_PER_CLASS = 2
const CLASS_SEP = 1
const FLIP_Y = 0.01

/**
 * Seeded classification data like scikit-learn's make_classification: K classes of equal size, each
 * 2 Gaussian clusters (unit variance) around vertices of a hypercube of side 2·class_sep in the
 * first min(10, F) features; the other features are N(0, 1) noise; 1 % of labels replaced at random
 * (flip_y), so no model reaches 0 log loss. Writes x; returns the labels 0 … K−1.
 */
function classificationData(x: Float32Array, size: number, features: number, classes: number, seed: number): Float32Array {
  const informative = Math.min(INFORMATIVE, features)
  const rng = new Rng(seed, 6)
  const centroids = new Float64Array(classes * CLUSTERS_PER_CLASS * informative)
  for (let i = 0; i < centroids.length; i++) centroids[i] = rng.uniform() < 0.5 ? -CLASS_SEP : CLASS_SEP
  const y = new Float32Array(size)
  for (let r = 0; r < size; r++) {
    const label = r % classes // equal class sizes; the rows are shuffled below
    const cluster = label * CLUSTERS_PER_CLASS + rng.below(CLUSTERS_PER_CLASS)
    for (let f = 0; f < features; f++) x[r * features + f] = (f < informative ? centroids[cluster * informative + f] : 0) + rng.normal()
    y[r] = rng.uniform() < FLIP_Y ? rng.below(classes) : label
  }
  const order = permutation(size, new Rng(seed, 1))
  const xs = x.slice()
  const ys = y.slice()
  order.forEach((src, dst) => {
    x.set(xs.subarray(src * features, src * features + features), dst * features)
    y[dst] = ys[src]
  })
  return y
}

function noiseTarget(size: number, seed: number): Float32Array {
  const rng = new Rng(seed, 2)
  const y = new Float32Array(size)
  for (let i = 0; i < size; i++) y[i] = rng.uniform()
  return y
}

function teacherTarget(x: Float32Array, size: number, features: number, seed: number): Float32Array {
  const rng = new Rng(seed, 3)
  const a = new Float64Array(features * TEACHER_UNITS)
  const scale = Math.sqrt(3 / features)
  for (let i = 0; i < a.length; i++) a[i] = rng.normal() * scale
  const shift = new Float64Array(TEACHER_UNITS)
  for (let j = 0; j < TEACHER_UNITS; j++) {
    let colSum = 0
    for (let f = 0; f < features; f++) colSum += a[f * TEACHER_UNITS + j]
    shift[j] = colSum / 2 // centre each unit on E[x] = 0.5
  }
  const c = new Float64Array(TEACHER_UNITS)
  for (let j = 0; j < TEACHER_UNITS; j++) c[j] = rng.normal()
  const raw = new Float64Array(size)
  const h = new Float64Array(TEACHER_UNITS)
  for (let r = 0; r < size; r++) {
    h.fill(0)
    const row = r * features
    for (let f = 0; f < features; f++) {
      const xv = x[row + f]
      const base = f * TEACHER_UNITS
      for (let j = 0; j < TEACHER_UNITS; j++) h[j] += xv * a[base + j]
    }
    let out = 0
    for (let j = 0; j < TEACHER_UNITS; j++) out += c[j] * Math.tanh(h[j] - shift[j])
    raw[r] = out
  }
  let mean = 0
  for (let r = 0; r < size; r++) mean += raw[r]
  mean /= size
  let variance = 0
  for (let r = 0; r < size; r++) variance += (raw[r] - mean) ** 2
  const std = Math.sqrt(variance / size) || 1
  const noise = new Rng(seed, 4)
  const y = new Float32Array(size)
  for (let r = 0; r < size; r++) y[r] = (raw[r] - mean) / std + TEACHER_NOISE * noise.normal()
  return y
}

/** The mini-batch order of one epoch: depends on (data seed, epoch) only, shared by all models. */
export function epochOrder(train: number, seed: number, epoch: number): Int32Array {
  return permutation(train, new Rng(mixSeed(seed, epoch + 1), 5))
}
