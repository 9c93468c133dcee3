// The shape every engine trains on, generated (data.ts) or the user's (user-data.ts): its own module
// so the user's data can build one without importing the generator that picks between the two.
import type { Target } from '@shared/contract'

export interface DatasetSpec {
  size: number
  features: number
  seed: number
  target: Target
  testSplit: number
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
}
