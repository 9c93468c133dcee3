// The seeded row sample of the user's data: which rows of the cached table each data size trains and
// tests on. Workers build their data set from it (engine/datasets/user-data.ts); the service checks
// a classifier's classes against it before the run (resolve-source.ts): one function, so both see
// the same rows. A larger size's sample starts with the smaller one's.
import { splitRows } from '@shared/contract'
import { permutation, Rng } from '@shared/vocabulary/random'

/** the PRNG stream of the row sample (generated data uses 1–6) */
const SAMPLE_STREAM = 7

/** Rows (0-based) of the table a size trains on, in order: training rows first, then test rows. */
export function sampleRows(targetValues: Float32Array, size: number, seed: number): Int32Array {
  const usable: number[] = []
  for (let r = 0; r < targetValues.length; r++) if (!Number.isNaN(targetValues[r])) usable.push(r)
  if (size > usable.length) {
    throw new Error(`data: a sample of ${size} rows was asked for, the data set has ${usable.length} rows with a target value`)
  }
  const order = permutation(usable.length, new Rng(seed, SAMPLE_STREAM))
  const rows = new Int32Array(size)
  for (let i = 0; i < size; i++) rows[i] = usable[order[i]]
  return rows
}

export interface ClassesOnlyInTest {
  size: number
  /** class indices (positions in classValues) in the size's test rows and not in its training rows */
  classes: number[]
  train: number
  test: number
}

/**
 * The first size (in the config's order) whose test rows hold a class its training rows do not — a
 * class its models could never learn — or null when every size trains on every class it tests on.
 * `target` is the target column as stored; classValues[k] is class k's stored value.
 */
export function classesOnlyInTest(
  target: Float32Array,
  classValues: readonly number[],
  sizes: readonly number[],
  seed: number,
  testSplit: number,
): ClassesOnlyInTest | null {
  if (sizes.length === 0) return null
  const classOf = new Map(classValues.map((v, k) => [Math.fround(v), k]))
  const rows = sampleRows(target, Math.max(...sizes), seed)
  for (const size of sizes) {
    const { train, test } = splitRows(size, testSplit)
    const trained = new Uint8Array(classValues.length)
    for (let i = 0; i < train; i++) {
      const k = classOf.get(target[rows[i]])
      if (k !== undefined) trained[k] = 1
    }
    const missing = new Set<number>()
    for (let i = train; i < size; i++) {
      const k = classOf.get(target[rows[i]])
      if (k !== undefined && !trained[k]) missing.add(k)
    }
    if (missing.size > 0) return { size, classes: [...missing].sort((a, b) => a - b), train, test }
  }
  return null
}
