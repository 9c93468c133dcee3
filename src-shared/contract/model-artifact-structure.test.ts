// Every reader's artifact check (ModelArtifactSchema, KeptModelsSchema): sound artifacts pass; each
// kind of crafted one — a child index far out of range, a cycle, arrays of different lengths, a
// split feature beyond the features, an orphan node, MLP layers that do not chain, numbers no
// float32 holds, an XGBoost booster whose tree loops — is refused saying where and why.
import { describe, expect, it } from 'vitest'
import { KeptModelsSchema, type ModelArtifact, ModelArtifactSchema, type TreeArtifact } from './model-artifact'

/** root splits feature 1 at 0.5; nodes 1 and 2 are leaves */
const stump: TreeArtifact = { feature: [1, -1, -1], threshold: [0.5, 0, 0], defaultLeft: [1, 0, 0], left: [1, -1, -1], leafValue: [0, -0.25, 0.75] }
const trees = (...t: TreeArtifact[]): ModelArtifact => ({ format: 'gbdt-trees', features: 2, baseScore: 0.5, trees: t })
const mlp = (layers: { inputs: number; outputs: number; w?: number[]; b?: number[] }[], features = 2): ModelArtifact => ({
  format: 'mlp',
  features,
  layers: layers.map((l) => ({
    inputs: l.inputs,
    outputs: l.outputs,
    w: l.w ?? new Array<number>(l.inputs * l.outputs).fill(0.1),
    b: l.b ?? new Array<number>(l.outputs).fill(0),
  })),
  preprocess: null,
})

/** XGBoost 1.7's JSON of one tree: a root split (feature 0) and two leaves, as XGBoost saves it */
function booster(tree: Record<string, unknown> = {}, learner: Record<string, unknown> = {}): ModelArtifact {
  const base = {
    // floats with a fraction: JSON.stringify spells 1.0 as "1", which XGBoost reads as an integer
    base_weights: [0.5, -1.5, 1.5],
    categories: [],
    categories_nodes: [],
    categories_segments: [],
    categories_sizes: [],
    default_left: [1, 0, 0],
    id: 0,
    left_children: [1, -1, -1],
    loss_changes: [0.5, 0.1, 0.1],
    parents: [2147483647, 0, 0],
    right_children: [2, -1, -1],
    split_conditions: [0.5, -1.5, 1.5],
    split_indices: [0, 0, 0],
    split_type: [0, 0, 0],
    sum_hessian: [10.5, 5.5, 5.5],
    tree_param: { num_deleted: '0', num_feature: '2', num_nodes: '3', size_leaf_vector: '0' },
  }
  const json = {
    learner: {
      attributes: {},
      feature_names: [],
      feature_types: [],
      gradient_booster: {
        model: { gbtree_model_param: { num_parallel_tree: '1', num_trees: '1', size_leaf_vector: '0' }, tree_info: [0], trees: [{ ...base, ...tree }] },
        name: 'gbtree',
      },
      learner_model_param: { base_score: '5E-1', boost_from_average: '1', num_class: '0', num_feature: '2', num_target: '1' },
      objective: { name: 'reg:squarederror', reg_loss_param: { scale_pos_weight: '1' } },
      ...learner,
    },
    version: [1, 7, 4],
  }
  return { format: 'xgboost-json', json: JSON.stringify(json) }
}

function refusal(artifact: unknown): string {
  const parsed = ModelArtifactSchema.safeParse(artifact)
  expect(parsed.success, 'the crafted artifact was accepted').toBe(false)
  return parsed.error!.issues.map((i) => i.message).join('; ')
}

describe('sound artifacts pass', () => {
  it('trees (a stump, a single leaf), an MLP with its preprocessing, an XGBoost booster', () => {
    expect(ModelArtifactSchema.safeParse(trees(stump, { feature: [-1], threshold: [0], defaultLeft: [0], left: [-1], leafValue: [0.1] })).success).toBe(true)
    const withPreprocess = {
      ...mlp([
        { inputs: 2, outputs: 3 },
        { inputs: 3, outputs: 1 },
      ]),
      preprocess: { mean: [0, 1], std: [1, 2], impute: true, standardise: true },
    }
    expect(ModelArtifactSchema.safeParse(withPreprocess).success).toBe(true)
    expect(ModelArtifactSchema.safeParse(booster()).success).toBe(true)
  })
})

describe('crafted trees are refused with the reason', () => {
  it('a child index far out of range (4294967290)', () => {
    expect(refusal(trees({ ...stump, left: [4294967290, -1, -1] }))).toMatch(/tree 0, node 0: children 4294967290 and 4294967291 are not nodes after it/)
  })
  it('a cycle (a node whose child is its parent)', () => {
    const cycle: TreeArtifact = {
      feature: [0, 0, -1, -1, -1],
      threshold: [0.5, 0.5, 0, 0, 0],
      defaultLeft: [0, 0, 0, 0, 0],
      left: [1, 0, -1, -1, -1],
      leafValue: [0, 0, 1, 2, 3],
    }
    expect(refusal(trees(stump, cycle))).toMatch(/tree 1, node 1: children 0 and 1 are not nodes after it .*cycle/)
  })
  it('arrays of different lengths', () => {
    expect(refusal(trees({ ...stump, threshold: [0.5] }))).toMatch(/tree 0, threshold has 1 entries but feature has 3/)
  })
  it('a split feature beyond the features', () => {
    expect(refusal(trees({ ...stump, feature: [7, -1, -1] }))).toMatch(/tree 0, node 0: split feature 7 is outside 0 to 1 \(the model has 2 features\)/)
  })
  it('a node no other node leads to, and a node with two parents', () => {
    const orphan: TreeArtifact = {
      feature: [0, -1, -1, -1, -1],
      threshold: [0.5, 0, 0, 0, 0],
      defaultLeft: [0, 0, 0, 0, 0],
      left: [1, -1, -1, -1, -1],
      leafValue: [0, 1, 2, 3, 4],
    }
    expect(refusal(trees(orphan))).toMatch(/node 3: no node leads to it/)
    const shared: TreeArtifact = {
      feature: [0, 0, -1, -1],
      threshold: [0.5, 0.5, 0, 0],
      defaultLeft: [0, 0, 0, 0],
      left: [1, 2, -1, -1],
      leafValue: [0, 0, 2, 3],
    }
    expect(refusal(trees(shared))).toMatch(/node 1: child 2 already has a parent/)
  })
  it('a leaf with a split feature; values no float32 holds; more trees or nodes than any run trains', () => {
    expect(refusal(trees({ ...stump, feature: [1, 0, -1] }))).toMatch(/node 1: a leaf \(left −1\) has split feature 0/)
    expect(refusal(trees({ ...stump, leafValue: [0, 1e300, 0] }))).toMatch(/leafValue\[1\] = 1e\+300 is not a finite float32/)
    // 10 000 rounds × 32 classes: the most trees a run grows
    expect(refusal({ ...trees(), trees: new Array<TreeArtifact>(320_001).fill(stump) })).toMatch(/320001 trees: at most 320000/)
    const n = 2 ** 17 + 1
    const huge = {
      feature: new Array<number>(n).fill(-1),
      threshold: new Array<number>(n).fill(0),
      defaultLeft: new Array<0>(n).fill(0),
      left: new Array<number>(n).fill(-1),
      leafValue: new Array<number>(n).fill(0),
    }
    expect(refusal(trees(huge))).toMatch(/131073 nodes: a tree has 1 to 131071/)
  })
})

describe('crafted MLPs are refused with the reason', () => {
  it('layers that do not chain, the wrong number of weights or biases, a last layer of several outputs', () => {
    expect(
      refusal(
        mlp([
          { inputs: 2, outputs: 3 },
          { inputs: 4, outputs: 1 },
        ]),
      ),
    ).toMatch(/layer 1 takes 4 inputs but the layer before gives 3/)
    expect(
      refusal(
        mlp([
          { inputs: 5, outputs: 3 },
          { inputs: 3, outputs: 1 },
        ]),
      ),
    ).toMatch(/layer 0 takes 5 inputs but the model has 2/)
    expect(
      refusal(
        mlp([
          { inputs: 2, outputs: 3, w: [1, 2] },
          { inputs: 3, outputs: 1 },
        ]),
      ),
    ).toMatch(/layer 0: w has 2 values, 2×3 = 6 expected/)
    expect(
      refusal(
        mlp([
          { inputs: 2, outputs: 3, b: [0] },
          { inputs: 3, outputs: 1 },
        ]),
      ),
    ).toMatch(/layer 0: b has 1 values, 3 expected/)
    expect(
      refusal(
        mlp([
          { inputs: 2, outputs: 3 },
          { inputs: 3, outputs: 2 },
        ]),
      ),
    ).toMatch(/the last layer has 2 outputs: a regressor's has 1/)
  })
  it('a preprocessing of the wrong length or with a zero std; a layer larger than any run trains', () => {
    const base = mlp([
      { inputs: 2, outputs: 3 },
      { inputs: 3, outputs: 1 },
    ])
    expect(refusal({ ...base, preprocess: { mean: [0], std: [1, 1], impute: false, standardise: true } })).toMatch(
      /preprocess.mean has 1 values, one per feature \(2\)/,
    )
    expect(refusal({ ...base, preprocess: { mean: [0, 0], std: [1, 0], impute: false, standardise: true } })).toMatch(
      /preprocess.std\[1\] = 0: a feature's std is positive/,
    )
    expect(
      refusal(
        mlp([
          { inputs: 2, outputs: 70_000, w: [], b: [] },
          { inputs: 70_000, outputs: 1, w: [], b: [] },
        ]),
      ),
    ).toMatch(/layer 0 has 70000 outputs: at most 65536/)
  })
})

describe('a crafted XGBoost booster is refused with the reason', () => {
  it('a chain of splits deeper than --max-depth allows (16), though its node count fits', () => {
    // node 2k splits into a leaf (2k + 1) and node 2k + 2, 17 times: 35 nodes, depth 17
    const n = 35
    const splits = (i: number) => i % 2 === 0 && i < n - 1
    const chain = {
      left_children: Array.from({ length: n }, (_, i) => (splits(i) ? i + 1 : -1)),
      right_children: Array.from({ length: n }, (_, i) => (splits(i) ? i + 2 : -1)),
      parents: Array.from({ length: n }, (_, i) => (i === 0 ? 2147483647 : i % 2 === 1 ? i - 1 : i - 2)),
      split_indices: new Array(n).fill(0),
      default_left: new Array(n).fill(0),
      split_type: new Array(n).fill(0),
      ...Object.fromEntries(['split_conditions', 'base_weights', 'loss_changes', 'sum_hessian'].map((k) => [k, new Array(n).fill(0.5)])),
      tree_param: { num_deleted: '0', num_feature: '2', num_nodes: String(n), size_leaf_vector: '0' },
    }
    expect(refusal(booster(chain))).toMatch(/tree 0, node 3[34] is at depth 17: a tree is at most 16 levels deep/)
  })
  it('a cycle, a child out of range, a parent out of range, a split feature beyond num_feature', () => {
    expect(refusal(booster({ left_children: [1, 0, -1], right_children: [2, 2, -1], split_indices: [0, 0, 0] }))).toMatch(
      /tree 0, node 1: child 0 is reached twice/,
    )
    expect(refusal(booster({ left_children: [1, -1, -1], right_children: [4294967290, -1, -1] }))).toMatch(/tree 0, node 0: child 4294967290 is outside 0 to 2/)
    expect(refusal(booster({ parents: [2147483647, 0, 99] }))).toMatch(/tree 0, node 2: parent 99 is outside 0 to 2/)
    expect(refusal(booster({ split_indices: [5, 0, 0] }))).toMatch(/tree 0, node 0: split feature 5 is outside 0 to 1/)
  })
  it('arrays not one per node, a count that disagrees, a categorical split, another booster, text that is not JSON', () => {
    expect(refusal(booster({ split_conditions: [0.5] }))).toMatch(/tree 0, split_conditions is not 3 numbers/)
    expect(refusal(booster({ tree_param: { num_deleted: '0', num_feature: '2', num_nodes: '5', size_leaf_vector: '0' } }))).toMatch(
      /left_children is not 5 integers/,
    )
    expect(refusal(booster({ split_type: [1, 0, 0] }))).toMatch(/node 0: a categorical split/)
    const linear = JSON.parse((booster() as { json: string }).json)
    linear.learner.gradient_booster.name = 'gblinear'
    expect(refusal({ format: 'xgboost-json', json: JSON.stringify(linear) })).toMatch(/only gbtree is accepted/)
    expect(refusal({ format: 'xgboost-json', json: '{"learner":' })).toMatch(/the booster is not JSON/)
  })
  it('a number spelled as XGBoost\'s reader refuses it: a float field\'s "0", an integer field\'s "1.0", an escaped key', () => {
    const text = (booster() as { json: string }).json
    expect(refusal({ format: 'xgboost-json', json: text.replace('"split_conditions":[0.5,', '"split_conditions":[0,') })).toMatch(
      /tree 0, split_conditions: 0 is not spelled as a float/,
    )
    expect(refusal({ format: 'xgboost-json', json: text.replace('"left_children":[1,', '"left_children":[1.0,') })).toMatch(
      /tree 0, left_children: 1.0 is not spelled as an integer/,
    )
    expect(refusal({ format: 'xgboost-json', json: text.replace('"sum_hessian"', '"sum\\u005fhessian"') })).toMatch(
      /"sum_hessian" appears 0 times as plain text for 1 trees/,
    )
  })
})

describe('classifier artifacts: outputs, trees and base score fit the objective and class count', () => {
  const twoLayers = (outputs: number) =>
    mlp([
      { inputs: 2, outputs: 3 },
      { inputs: 3, outputs },
    ])
  /** XGBoost's multi:softprob booster of 3 classes: one round, three trees (the one-tree booster thrice) */
  interface SoftprobLearner {
    learner_model_param: { num_class: string }
    objective: { name: string; softmax_multiclass_param: { num_class: string } }
    gradient_booster: { model: { tree_info: number[]; trees: Record<string, unknown>[]; gbtree_model_param: { num_trees: string } } }
  }
  function softprobBooster(patch: (learner: SoftprobLearner) => void = () => {}): ModelArtifact {
    const learner = (JSON.parse((booster() as { json: string }).json) as { learner: SoftprobLearner }).learner
    const model = learner.gradient_booster.model
    model.trees = [0, 1, 2].map((id) => ({ ...model.trees[0], id }))
    model.tree_info = [0, 1, 2]
    model.gbtree_model_param.num_trees = '3'
    learner.learner_model_param.num_class = '3'
    learner.objective = { name: 'multi:softprob', softmax_multiclass_param: { num_class: '3' } }
    patch(learner)
    // floats keep a fraction: JSON.stringify would spell 1.5 right but 10.0 as "10"
    return { format: 'xgboost-json', json: JSON.stringify({ learner, version: [1, 7, 4] }) }
  }

  it('sound: a binary MLP (1 output) and a multiclass one (K outputs), binary trees, K trees a round, a multi:softprob booster', () => {
    expect(ModelArtifactSchema.safeParse({ ...twoLayers(1), objective: 'binary', classes: 2 }).success).toBe(true)
    expect(ModelArtifactSchema.safeParse({ ...twoLayers(4), objective: 'multiclass', classes: 4 }).success).toBe(true)
    expect(ModelArtifactSchema.safeParse({ ...trees(stump, stump), objective: 'binary', classes: 2 }).success).toBe(true)
    expect(ModelArtifactSchema.safeParse({ ...trees(stump, stump, stump, stump, stump, stump), objective: 'multiclass', classes: 3 }).success).toBe(true)
    expect(ModelArtifactSchema.safeParse(softprobBooster()).success).toBe(true)
  })

  it('an MLP whose last layer does not give one output (binary) or K (multiclass)', () => {
    expect(refusal({ ...twoLayers(1), objective: 'multiclass', classes: 3 })).toMatch(
      /the last layer has 1 outputs: a multiclass model of 3 classes has 3 \(one per class\)/,
    )
    expect(refusal({ ...twoLayers(2), objective: 'binary', classes: 2 })).toMatch(/the last layer has 2 outputs: a binary model's has 1/)
  })

  it('classes that do not fit the objective: binary of 3, multiclass of 2, more than 32, a classifier without its count, a regressor with one', () => {
    expect(refusal({ ...twoLayers(1), objective: 'binary', classes: 3 })).toMatch(/classes 3 with objective binary: a binary model has 2/)
    expect(refusal({ ...trees(stump, stump), objective: 'multiclass', classes: 2 })).toMatch(
      /classes 2 with objective multiclass: a multiclass model has 3 to 32/,
    )
    const tooMany = ModelArtifactSchema.safeParse({ ...twoLayers(33), objective: 'multiclass', classes: 33 })
    expect(tooMany.error?.issues[0].path).toEqual(['classes'])
    expect(refusal({ ...trees(stump), objective: 'binary' })).toMatch(/objective binary without classes: a classifier says its class count/)
    expect(refusal({ ...trees(stump), classes: 2 })).toMatch(/classes 2 with objective regression: a regressor has no classes/)
  })

  it('multiclass trees that are not K a round; a binary base score that is not a probability', () => {
    expect(refusal({ ...trees(stump, stump, stump, stump), objective: 'multiclass', classes: 3 })).toMatch(
      /4 trees with objective multiclass of 3 classes: 3 trees a round \(one per class\), so a multiple of 3/,
    )
    for (const baseScore of [0, 1, 1.5, -0.2])
      expect(refusal({ ...trees(stump), baseScore, objective: 'binary', classes: 2 })).toMatch(
        new RegExp(`baseScore ${baseScore} with objective binary: a binary model's base score is a probability, strictly between 0 and 1`),
      )
  })

  it("a booster whose tree_info names an output it does not have (XGBoost 1.7's predict crashed on one), an objective it does not train, num_class that disagrees", () => {
    expect(refusal(softprobBooster((l) => (l.gradient_booster.model.tree_info = [0, 1, 7000000])))).toMatch(
      /tree_info\[2\] = 7000000: a tree's output is 0 to 2 \(multi:softprob\)/,
    )
    const regression = JSON.parse((booster() as { json: string }).json)
    regression.learner.gradient_booster.model.tree_info = [1]
    expect(refusal({ format: 'xgboost-json', json: JSON.stringify(regression) })).toMatch(/tree_info\[0\] = 1: a tree's output is 0 to 0 \(reg:squarederror\)/)
    expect(refusal(booster({}, { objective: { name: 'multi:softmax' } }))).toMatch(
      /objective.name "multi:softmax": accepted reg:squarederror, binary:logistic, multi:softprob/,
    )
    expect(refusal(softprobBooster((l) => (l.objective.softmax_multiclass_param.num_class = '4')))).toMatch(
      /softmax_multiclass_param.num_class 4 differs from learner_model_param.num_class 3/,
    )
    expect(refusal(softprobBooster((l) => (l.learner_model_param.num_class = '40')))).toMatch(
      /learner_model_param.num_class 40 with objective multi:softprob: 3 to 32/,
    )
    const binary = JSON.parse((booster() as { json: string }).json)
    binary.learner.objective.name = 'binary:logistic'
    binary.learner.learner_model_param.num_class = '2'
    expect(refusal({ format: 'xgboost-json', json: JSON.stringify(binary) })).toMatch(
      /learner_model_param.num_class 2 with objective binary:logistic: "0" expected/,
    )
  })
})

describe('kept models', () => {
  it('name where the problem is, and refuse a model kept twice', () => {
    const kept = {
      size: 100,
      strategy: 'sequential',
      workers: 1,
      models: [
        { index: 0, artifact: trees(stump) },
        { index: 1, artifact: trees({ ...stump, left: [4294967290, -1, -1] }) },
      ],
    }
    const parsed = KeptModelsSchema.safeParse(kept)
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['models', 1, 'artifact'], message: expect.stringMatching(/^tree 0, node 0: children 4294967290/) })
    const twice = { ...kept, models: [kept.models[0], kept.models[0]] }
    expect(KeptModelsSchema.safeParse(twice).error?.issues[0].message).toBe('model 0 is kept twice: one artifact per model')
  })
})
