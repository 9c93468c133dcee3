// A halving rung's model continued (train.ts resume, resume.ts): trained r rounds, sent back as its
// artifact, then continued to R is the model trained R rounds straight — the same trees bit for bit,
// with row and column subsampling and a fold held out — alone and in a batched group, for a regressor
// and a K-class classifier; the engine counts only the rounds it grew; what cannot be continued is refused.
import { describe, expect, it } from 'vitest'
import {
  type GbdtModel,
  type GbdtParams,
  type GbdtTask,
  type GbdtTrainStats,
  prepareGbdtData,
  trainGbdt,
  trainGbdtGroup,
  treeHash,
  treesArtifact,
} from './index'
import { resumedTrees } from './resume'
import { syntheticClassification, syntheticRegression, type SyntheticData } from './synthetic'

const P: Partial<GbdtParams> = { maxDepth: 4, eta: 0.3, subsample: 0.7, colsampleBytree: 0.6, maxBin: 32 }
const FOLD = { begin: 60, end: 150 }

/** `model`'s first `rounds` rounds sent back as a job's artifact and read back on `data` (what a rung hands the next). */
function sentBack(model: GbdtModel, rounds: number, data: ReturnType<typeof prepareGbdtData>, task?: GbdtTask) {
  const artifact = treesArtifact(model)
  return resumedTrees(JSON.parse(JSON.stringify(artifact)), rounds, data, task, 0.5)
}

describe.each([
  { name: 'regression', d: syntheticRegression({ rows: 400, features: 7, seed: 3, noise: 0.5 }) as SyntheticData, task: undefined as GbdtTask | undefined },
  {
    name: 'multiclass',
    d: syntheticClassification({ rows: 400, features: 7, seed: 4, noise: 1, classes: 3 }),
    task: { objective: 'multiclass', classes: 3 } as GbdtTask,
  },
])('a model continued from an earlier rung ($name)', ({ d, task }) => {
  const data = prepareGbdtData(d.x, d.y, d.rows, d.features, 32)

  it('has the trees of one trained straight to the full rounds, subsampled and with a fold held out', () => {
    const straight = trainGbdt(data, { ...P, rounds: 9 }, 11, { heldOut: [FOLD], task })
    const first = trainGbdt(data, { ...P, rounds: 3 }, 11, { heldOut: [FOLD], task, resume: [null] })
    expect(first.roundsGrown).toBe(3)
    const stats: GbdtTrainStats = { peakNodeHistograms: 0 }
    const resumed = trainGbdt(data, { ...P, rounds: 9 }, 11, { heldOut: [FOLD], task, resume: [sentBack(first, 3, data, task)], stats })
    expect(treeHash(resumed)).toBe(treeHash(straight))
    // the engine grew the 6 rounds left, no more (a model grown again from nothing would count 9)
    expect(resumed.roundsGrown).toBe(6)
    expect(stats.modelRounds).toBe(6)
  })

  it('in a batched group beside a model starting from none, each has its trees alone', () => {
    const seeds = [21, 22]
    const straight = seeds.map((s) => trainGbdt(data, { ...P, rounds: 8 }, s, { heldOut: [FOLD], task }))
    const first = trainGbdt(data, { ...P, rounds: 2 }, 21, { heldOut: [FOLD], task })
    const group = trainGbdtGroup(data, { ...P, rounds: 8 }, seeds, { heldOut: [FOLD, FOLD], task, resume: [sentBack(first, 2, data, task), null] })
    expect(group.map(treeHash)).toEqual(straight.map(treeHash))
    expect(group.map((m) => m.roundsGrown)).toEqual([6, 8])
  })
})

describe('what cannot be continued is refused', () => {
  const d = syntheticRegression({ rows: 300, features: 5, seed: 8, noise: 0.5 })
  const data = prepareGbdtData(d.x, d.y, d.rows, d.features, 32)
  const model = trainGbdt(data, { ...P, rounds: 3 }, 5)
  const artifact = treesArtifact(model)

  it('a round count that is not the trees, another objective, other data', () => {
    expect(() => resumedTrees(artifact, 2, data, undefined, 0.5)).toThrow(/2 rounds are 2 trees, the model has 3/)
    expect(() => resumedTrees(artifact, 3, data, { objective: 'binary', classes: 2 }, 0.5)).toThrow(/the model is regression, the job trains binary/)
    const other = syntheticRegression({ rows: 300, features: 5, seed: 9, noise: 0.5 })
    const otherData = prepareGbdtData(other.x, other.y, other.rows, other.features, 32)
    expect(() => resumedTrees(artifact, 3, otherData, undefined, 0.5)).toThrow(/none of its cuts on this data/)
  })

  it('nothing left to grow, and early stopping beside it', () => {
    const trees = resumedTrees(artifact, 3, data, undefined, 0.5)
    expect(() => trainGbdt(data, { ...P, rounds: 3 }, 5, { resume: [trees] })).toThrow(/nothing left of its 3/)
    expect(() => trainGbdt(data, { ...P, rounds: 6 }, 5, { resume: [trees], heldOut: [FOLD], earlyStopping: { rounds: 2, metric: 'mse' } })).toThrow(
      /not with earlyStopping/,
    )
  })
})
