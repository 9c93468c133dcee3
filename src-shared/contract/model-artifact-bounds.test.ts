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

describe("the models list's entries, noted for a reader that parses one model at a time", () => {
  /** the noted list and each entry as text, scanned `chunk` bytes at a time */
  function notedInChunks(text: string, chunk: number): { list: string; entries: string[] } | null {
    const scan = new ListBoundsScan(KEPT_MODELS_LIST_BOUNDS, 'models')
    const bytes = Buffer.from(text)
    for (let at = 0; at < bytes.length; at += chunk) scan.feed(bytes.subarray(at, at + chunk))
    if (!scan.noted) return null
    const piece = ({ start, end }: { start: number; end: number }) => bytes.subarray(start, end).toString('utf8')
    return { list: piece(scan.noted), entries: scan.noted.entries.map(piece) }
  }

  it('each entry parses to what JSON.parse of the whole gives, whatever the chunks, spacing, strings and nesting', () => {
    const models = [
      { index: 0, artifact: { format: 'gbdt-trees', features: 1, baseScore: 0.5, trees: [fullTree(2)] } },
      { index: 3, artifact: { format: 'xgboost-json', json: '{"a":[1,2,{"models":[]}]}\\"]}' } },
      { index: 7, artifact: { format: 'mlp', features: 1, layers: [{ inputs: 1, outputs: 1, w: [0.5], b: [-1e-7] }], preprocess: null }, note: 'é ✓ "[{' },
    ]
    const envelope = { size: 10, strategy: 'pool', workers: 2 }
    const texts = [
      JSON.stringify({ ...envelope, models }),
      JSON.stringify({ ...envelope, models }, null, 3),
      // a "models" key inside a model, and one before the real list: the last top-level one is the list (as JSON.parse keeps it)
      `{"models":[{"index":99}], "size":10,"strategy":"pool","workers":2, "models" : [ ${models.map((m) => JSON.stringify(m)).join(' ,\n ')} ] }`,
    ]
    for (const text of texts) {
      const whole = JSON.parse(text) as { models: unknown[] }
      for (const chunk of [1, 3, 64, 1 << 20]) {
        const noted = notedInChunks(text, chunk)
        expect(noted?.entries.map((e) => JSON.parse(e) as unknown)).toEqual(whole.models)
        expect(JSON.parse(noted!.list)).toEqual(whole.models)
      }
    }
    expect(notedInChunks(JSON.stringify({ ...envelope, models: [] }), 5)).toEqual({ list: '[]', entries: [] })
    // a "models" list that is not the top-level object's is not noted
    expect(notedInChunks(JSON.stringify([{ models: models }]), 5)).toBeNull()
  })
})
