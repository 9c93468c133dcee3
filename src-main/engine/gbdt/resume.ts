// A halving rung's model handed back to the trainer (train.ts `resume`): the trees a job sent back
// as its artifact (tree.ts treesArtifact: thresholds, not bins) turned back into the trainer's trees
// on the same binned data — each split's bin is the cut its threshold is (or −1 at the feature's
// minimum), which the artifact was made from. A model from other data, another objective or another
// round count is refused: continuing it would not be the model an uninterrupted run trains.
import type { ModelArtifact } from '@shared/contract'
import type { GbdtData } from './binning'
import { type GbdtTask, treesPerRound } from './objective'
import type { GbdtTree } from './tree'

/** The trees of `artifact` (a model `rounds` rounds in) as the trainer grew them on `data`, or a RangeError saying why they cannot be. */
export function resumedTrees(artifact: ModelArtifact, rounds: number, data: GbdtData, task: GbdtTask | undefined, baseScore: number): GbdtTree[] {
  if (artifact.format !== 'gbdt-trees') throw new RangeError(`resume: a ${artifact.format} model is not trees to continue`)
  if (artifact.features !== data.features) throw new RangeError(`resume: the model has ${artifact.features} features, the data ${data.features}`)
  const objective = task?.objective ?? 'regression'
  if ((artifact.objective ?? 'regression') !== objective || (objective !== 'regression' && artifact.classes !== task!.classes))
    throw new RangeError(`resume: the model is ${artifact.objective ?? 'regression'}, the job trains ${objective}`)
  if (artifact.baseScore !== Math.fround(baseScore)) throw new RangeError(`resume: the model's base score ${artifact.baseScore} is not the job's ${baseScore}`)
  const K = treesPerRound(task)
  if (artifact.trees.length !== rounds * K) throw new RangeError(`resume: ${rounds} rounds are ${rounds * K} trees, the model has ${artifact.trees.length}`)
  const { values, ptrs, minValues } = data.cuts
  return artifact.trees.map((t, ti) => {
    const splitBin = new Int32Array(t.feature.length)
    t.feature.forEach((f, node) => {
      if (f < 0) return void (splitBin[node] = -1)
      const threshold = Math.fround(t.threshold[node])
      if (threshold === minValues[f]) return void (splitBin[node] = -1)
      for (let b = ptrs[f]; b < ptrs[f + 1]; b++) if (values[b] === threshold) return void (splitBin[node] = b - ptrs[f])
      throw new RangeError(`resume: tree ${ti} node ${node} splits feature ${f} at ${threshold}, which is none of its cuts on this data`)
    })
    return {
      feature: Int32Array.from(t.feature),
      splitBin,
      threshold: Float32Array.from(t.threshold),
      defaultLeft: Uint8Array.from(t.defaultLeft),
      left: Int32Array.from(t.left),
      leafValue: Float32Array.from(t.leafValue),
    }
  })
}
