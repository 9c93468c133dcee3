// The list bounds checked on models.json's bytes before it is parsed (model-artifact-bounds.ts): a
// list one past its bound is refused naming its field and the bound, one at the bound passes (a full
// depth-16 tree), text inside strings never counts, and a chunk boundary anywhere changes nothing.
import { describe, expect, it } from 'vitest'
import { ARTIFACT_LIMITS, KEPT_MODELS_LIST_BOUNDS, ListBoundsScan, ModelArtifactSchema, type TreeArtifact } from './model-artifact'
import { BOOSTER_LIST_BOUNDS } from './model-artifact-bounds'

/** a full tree of `depth` levels in breadth-first order: splits on feature 0, leaves 1 */
function fullTree(depth: number): TreeArtifact {
  const n = 2 ** (depth + 1) - 1
  const split = (i: number) => i < 2 ** depth - 1
  return {
    feature: Array.from({ length: n }, (_, i) => (split(i) ? 0 : -1)),
    threshold: Array.from({ length: n }, (_, i) => (split(i) ? 0.5 : 0)),
    defaultLeft: new Array<0 | 1>(n).fill(0),
    left: Array.from({ length: n }, (_, i) => (split(i) ? 2 * i + 1 : -1)),
    leafValue: Array.from({ length: n }, (_, i) => (split(i) ? 0 : 1)),
  }
}
const keptText = (tree: TreeArtifact, extra = '') =>
  JSON.stringify({
    size: 10,
    strategy: 'fused',
    workers: 1,
    models: [{ index: 0, artifact: { format: 'gbdt-trees', features: 1, baseScore: 0.5, trees: [tree] } }],
  }) + extra

function scanInChunks(text: string, chunk: number): string | null {
  const scan = new ListBoundsScan(KEPT_MODELS_LIST_BOUNDS)
  const bytes = Buffer.from(text)
  for (let at = 0; at < bytes.length && !scan.problem; at += chunk) scan.feed(bytes.subarray(at, at + chunk))
  return scan.problem
}

describe('list bounds on the raw text', () => {
  it('the deepest tree a run grows passes, and its artifact is sound; one entry more is refused naming the field', () => {
    const deepest = fullTree(ARTIFACT_LIMITS.treeDepth)
    expect(deepest.feature).toHaveLength(131_071)
    expect(ModelArtifactSchema.safeParse({ format: 'gbdt-trees', features: 1, baseScore: 0.5, trees: [deepest] }).success).toBe(true)
    expect(scanInChunks(keptText(deepest), 65_536)).toBeNull()
    const over = { ...deepest, leafValue: [...deepest.leafValue, 1] }
    expect(scanInChunks(keptText(over), 65_536)).toBe(
      'models.0.artifact.trees.0.leafValue has more than 131071 entries: a tree of depth 16 has at most 131071 nodes',
    )
  })

  it('any chunk boundary gives the same answer; brackets, commas and quotes inside strings do not count', () => {
    const tricky = JSON.stringify({
      size: 1,
      strategy: 'a,[b]"{c}\\',
      workers: 1,
      models: [{ index: 0, artifact: { format: 'xgboost-json', json: '[1,2,3,[4]]' } }],
    })
    const long = JSON.stringify({ models: Array.from({ length: 1001 }, (_, i) => ({ index: i })) })
    for (const chunk of [1, 2, 3, 7, 1 << 20]) {
      expect(scanInChunks(tricky, chunk)).toBeNull()
      expect(scanInChunks(long, chunk)).toBe('models has more than 1000 entries: a run keeps at most 1000 models')
    }
  })

  it('a list under an unknown name, and nesting deeper than either format, are bounded too', () => {
    expect(scanInChunks(JSON.stringify({ models: [{ stray: new Array(70_000).fill(0) }] }), 4096)).toMatch(/^models\.0\.stray has more than 65536 entries/)
    expect(scanInChunks('['.repeat(100_000), 4096)).toMatch(/is nested more than 32 levels deep/)
  })

  it("an xgboost booster's lists are bounded before its text is parsed", () => {
    const booster = JSON.stringify({ learner: { gradient_booster: { model: { trees: [{ left_children: new Array(131_072).fill(-1) }] } } } })
    expect(new ListBoundsScan(BOOSTER_LIST_BOUNDS).feed(booster)).toMatch(/^learner\.gradient_booster\.model\.trees\.0\.left_children has more than 131071/)
    const parsed = ModelArtifactSchema.safeParse({ format: 'xgboost-json', json: booster })
    expect(parsed.error?.issues[0].message).toMatch(/^the booster's learner\.gradient_booster\.model\.trees\.0\.left_children has more than 131071 entries/)
  })
})
