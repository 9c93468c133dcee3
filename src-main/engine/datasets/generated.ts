// Synthetic regression data from the data seed alone (the user's own data: user-data.ts; datasetFor
// picks). X ~ U(0,1). The default target is a fixed
// seeded "teacher" (a random one-hidden-layer tanh network) plus noise, standardised, so models
// learn and test MSE means something; `noise` reproduces the article's pure-noise target.
import { splitRows, type WorkloadData } from '@shared/contract'
import type { Dataset, DatasetSpec } from './dataset'
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
  const rng = new Rng(spec.seed, 1)
  for (let i = 0; i < x.length; i++) x[i] = rng.uniform()
  const y = spec.target === 'noise' ? noiseTarget(size, spec.seed) : teacherTarget(x, size, features, spec.seed)
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
