// What a model artifact's schema cannot say alone: that its trees are trees (children in range, each
// node reached once from the root, so no cycle), its arrays agree in length, its split features
// exist, its MLP layers chain, its numbers fit float32, its sizes are bounded, and a classifier's
// outputs, trees and base score fit its objective and class count. A crafted
// models.json that breaks one of these hung the exporter or crashed XGBoost's load_model; the
// schema (model-artifact.ts) runs this check on every read, so such a file is refused with the reason.
import { CLASS_LIMITS } from '../vocabulary/task'
import { ARTIFACT_LIMITS, BOOSTER_LIST_BOUNDS, listBoundsProblem } from './model-artifact-bounds'
import type { ModelArtifact, TreeArtifact } from './model-artifact-shape'

const FLOAT32_MAX = 3.4028234663852886e38
/** XGBoost's "no parent" (the root's entry in `parents`) */
const XGBOOST_NO_PARENT = 2147483647

/** Why `artifact` cannot be exported or loaded, in words ("tree 3, node 5: …"); null when it is sound. */
export function artifactProblem(artifact: ModelArtifact): string | null {
  switch (artifact.format) {
    case 'gbdt-trees':
      return treesProblem(artifact)
    case 'mlp':
      return mlpProblem(artifact)
    case 'xgboost-json':
      return xgboostJsonProblem(artifact.json)
  }
}

function featuresProblem(features: number): string | null {
  return features >= 1 && features <= ARTIFACT_LIMITS.features ? null : `features ${features} is outside 1 to ${ARTIFACT_LIMITS.features}`
}

function float32Problem(values: readonly number[], what: string): string | null {
  const i = values.findIndex((v) => !(Math.abs(v) <= FLOAT32_MAX))
  return i < 0 ? null : `${what}[${i}] = ${values[i]} is not a finite float32`
}

/**
 * The class count (outputs a row) an artifact's objective and classes fields say, or why they
 * disagree: a regressor has no classes, binary has 2, multiclass CLASS_LIMITS.min to max.
 */
function classCountProblem(artifact: { objective?: string; classes?: number }): string | null {
  const { objective = 'regression', classes } = artifact
  if (objective === 'regression') return classes === undefined ? null : `classes ${classes} with objective regression: a regressor has no classes`
  if (classes === undefined) return `objective ${objective} without classes: a classifier says its class count`
  if (objective === 'binary') return classes === 2 ? null : `classes ${classes} with objective binary: a binary model has 2`
  return classes >= CLASS_LIMITS.min && classes <= CLASS_LIMITS.max
    ? null
    : `classes ${classes} with objective multiclass: a multiclass model has ${CLASS_LIMITS.min} to ${CLASS_LIMITS.max}`
}

/** Outputs a row of a sound artifact (classCountProblem first): K for multiclass, else 1 (a regressor's prediction, a binary model's margin). */
const outputsOfArtifact = (artifact: { objective?: string; classes?: number }): number => (artifact.objective === 'multiclass' ? artifact.classes! : 1)

function treesProblem(artifact: Extract<ModelArtifact, { format: 'gbdt-trees' }>): string | null {
  const { features, trees } = artifact
  const problem = featuresProblem(features) ?? float32Problem([artifact.baseScore], 'baseScore') ?? classCountProblem(artifact)
  if (problem) return problem
  // XGBoost's binary:logistic takes base_score as a probability (its logit is the first margin) and refuses one outside (0, 1)
  if (artifact.objective === 'binary' && !(artifact.baseScore > 0 && artifact.baseScore < 1))
    return `baseScore ${artifact.baseScore} with objective binary: a binary model's base score is a probability, strictly between 0 and 1`
  const K = outputsOfArtifact(artifact)
  if (trees.length % K !== 0)
    return `${trees.length} trees with objective multiclass of ${K} classes: ${K} trees a round (one per class), so a multiple of ${K}`
  if (trees.length > ARTIFACT_LIMITS.trees) return `${trees.length} trees: at most ${ARTIFACT_LIMITS.trees} are accepted`
  for (const [k, tree] of trees.entries()) {
    const why = treeProblem(tree, features)
    if (why) return `tree ${k}, ${why}`
  }
  return null
}

/** Nodes in breadth-first order: node i's children are left[i] and left[i] + 1, both after i, and every node but the root has one parent. */
function treeProblem(t: TreeArtifact, features: number): string | null {
  const n = t.feature.length
  if (n < 1 || n > ARTIFACT_LIMITS.treeNodes) return `${n} nodes: a tree has 1 to ${ARTIFACT_LIMITS.treeNodes}`
  for (const key of ['threshold', 'defaultLeft', 'left', 'leafValue'] as const) {
    if (t[key].length !== n) return `${key} has ${t[key].length} entries but feature has ${n}: one per node`
  }
  const values = float32Problem(t.threshold, 'threshold') ?? float32Problem(t.leafValue, 'leafValue')
  if (values) return values
  const parents = new Uint8Array(n)
  // breadth-first: a node's depth is known before its children's
  const depth = new Uint16Array(n)
  for (let i = 0; i < n; i++) {
    const left = t.left[i]
    const feature = t.feature[i]
    if (left === -1) {
      if (feature !== -1) return `node ${i}: a leaf (left −1) has split feature ${feature}, not −1`
      continue
    }
    if (!(feature >= 0 && feature < features)) return `node ${i}: split feature ${feature} is outside 0 to ${features - 1} (the model has ${features} features)`
    if (!(left > i && left + 1 < n))
      return `node ${i}: children ${left} and ${left + 1} are not nodes after it (1 to ${n - 1}, breadth-first order; anything else is out of range or a cycle)`
    if (parents[left] || parents[left + 1]) return `node ${i}: child ${parents[left] ? left : left + 1} already has a parent (a node is reached once)`
    parents[left] = parents[left + 1] = 1
    depth[left] = depth[left + 1] = depth[i] + 1
    if (depth[left] > ARTIFACT_LIMITS.treeDepth) return depthProblem(left, depth[left])
  }
  const orphan = parents.indexOf(0, 1)
  return orphan < 0 ? null : `node ${orphan}: no node leads to it`
}

/** a path of splits longer than any run grows (a chain of 65 535 levels fits the node count, not the depth) */
const depthProblem = (node: number, depth: number): string =>
  `node ${node} is at depth ${depth}: a tree is at most ${ARTIFACT_LIMITS.treeDepth} levels deep (the trees' --max-depth limit)`

function mlpProblem(artifact: Extract<ModelArtifact, { format: 'mlp' }>): string | null {
  const { features, layers, preprocess } = artifact
  const problem = featuresProblem(features) ?? classCountProblem(artifact)
  if (problem) return problem
  if (layers.length > ARTIFACT_LIMITS.layers) return `${layers.length} layers: at most ${ARTIFACT_LIMITS.layers} are accepted`
  let inputs = features
  for (const [k, layer] of layers.entries()) {
    const where = `layer ${k}`
    if (layer.inputs !== inputs) return `${where} takes ${layer.inputs} inputs but ${k === 0 ? 'the model has' : 'the layer before gives'} ${inputs}`
    if (layer.outputs > ARTIFACT_LIMITS.units) return `${where} has ${layer.outputs} outputs: at most ${ARTIFACT_LIMITS.units}`
    if (layer.inputs * layer.outputs > ARTIFACT_LIMITS.layerWeights)
      return `${where} has ${layer.inputs}×${layer.outputs} weights: at most ${ARTIFACT_LIMITS.layerWeights}`
    if (layer.w.length !== layer.inputs * layer.outputs)
      return `${where}: w has ${layer.w.length} values, ${layer.inputs}×${layer.outputs} = ${layer.inputs * layer.outputs} expected`
    if (layer.b.length !== layer.outputs) return `${where}: b has ${layer.b.length} values, ${layer.outputs} expected (one per output)`
    const values = float32Problem(layer.w, `${where} w`) ?? float32Problem(layer.b, `${where} b`)
    if (values) return values
    inputs = layer.outputs
  }
  const outputs = outputsOfArtifact(artifact)
  if (inputs !== outputs) {
    const expected =
      artifact.objective === 'multiclass'
        ? `a multiclass model of ${outputs} classes has ${outputs} (one per class)`
        : artifact.objective === 'binary'
          ? "a binary model's has 1 (the margin of class 1)"
          : "a regressor's has 1"
    return `the last layer has ${inputs} outputs: ${expected}`
  }
  if (!preprocess) return null
  for (const key of ['mean', 'std'] as const) {
    if (preprocess[key].length !== features) return `preprocess.${key} has ${preprocess[key].length} values, one per feature (${features}) expected`
    const values = float32Problem(preprocess[key], `preprocess.${key}`)
    if (values) return values
  }
  const flat = preprocess.std.findIndex((s) => !(s > 0))
  return flat < 0 ? null : `preprocess.std[${flat}] = ${preprocess.std[flat]}: a feature's std is positive`
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const isIntegers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x))
const isNumbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === 'number')
/** XGBoost writes its counts as decimal strings ("7") */
const countOf = (v: unknown): number => (typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : NaN)

/** The xgboost backend's booster as XGBoost 1.7 saved it (doc/model.schema): a gbtree of numeric splits whose trees are trees. */
function xgboostJsonProblem(text: string): string | null {
  // bounded before it is parsed, as models.json itself is
  const oversized = listBoundsProblem(text, BOOSTER_LIST_BOUNDS)
  if (oversized) return `the booster's ${oversized}`
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch (err) {
    return `the booster is not JSON (${(err as Error).message})`
  }
  const learner = isObject(root) ? root.learner : undefined
  const booster = isObject(learner) ? learner.gradient_booster : undefined
  const model = isObject(booster) ? booster.model : undefined
  if (!isObject(learner) || !isObject(booster) || !isObject(model)) return 'the booster has no learner.gradient_booster.model'
  if (booster.name !== 'gbtree') return `the booster is ${JSON.stringify(booster.name)}: only gbtree is accepted`
  const features = countOf(isObject(learner.learner_model_param) ? learner.learner_model_param.num_feature : undefined)
  const problem = featuresProblem(features)
  if (problem) return `learner_model_param.num_feature: ${problem}`
  const trees = model.trees
  if (!Array.isArray(trees)) return 'the booster has no trees array'
  if (trees.length > ARTIFACT_LIMITS.trees) return `${trees.length} trees: at most ${ARTIFACT_LIMITS.trees} are accepted`
  const declared = countOf(isObject(model.gbtree_model_param) ? model.gbtree_model_param.num_trees : undefined)
  if (declared !== trees.length) return `gbtree_model_param.num_trees says ${declared} but there are ${trees.length} trees`
  if (!Array.isArray(model.tree_info) || model.tree_info.length !== trees.length) return `tree_info does not have one entry per tree (${trees.length})`
  const objective = xgboostObjectiveProblem(learner)
  if (typeof objective === 'string') return objective
  // XGBoost adds tree t's leaf to output tree_info[t] of each row unchecked: one outside the outputs crashed load_model's predict (a segmentation fault)
  const stray = (model.tree_info as unknown[]).findIndex((c) => !(Number.isInteger(c) && (c as number) >= 0 && (c as number) < objective.outputs))
  if (stray >= 0) return `tree_info[${stray}] = ${JSON.stringify(model.tree_info[stray])}: a tree's output is 0 to ${objective.outputs - 1} (${objective.name})`
  for (const [k, tree] of trees.entries()) {
    const why = xgboostTreeProblem(tree, k, features)
    if (why) return `tree ${k}, ${why}`
  }
  return spellingProblem(text, trees.length)
}

/** The objectives Trainpool's xgboost backend trains, and outputs a row: each with the num_class XGBoost 1.7 saves for it. */
const XGBOOST_OBJECTIVES = ['reg:squarederror', 'binary:logistic', 'multi:softprob'] as const

/** The learner's objective (an accepted one) and its outputs a row, or why not: num_class "0" but for multi:softprob, whose num_class is K in both its places. */
function xgboostObjectiveProblem(learner: Json): string | { name: string; outputs: number } {
  const objective = isObject(learner.objective) ? learner.objective : {}
  const name = objective.name
  if (!(XGBOOST_OBJECTIVES as readonly unknown[]).includes(name)) return `objective.name ${JSON.stringify(name)}: accepted ${XGBOOST_OBJECTIVES.join(', ')}`
  const numClass = countOf(isObject(learner.learner_model_param) ? learner.learner_model_param.num_class : undefined)
  if (name !== 'multi:softprob')
    return numClass === 0 ? { name: name as string, outputs: 1 } : `learner_model_param.num_class ${numClass} with objective ${name}: "0" expected`
  if (!(numClass >= CLASS_LIMITS.min && numClass <= CLASS_LIMITS.max))
    return `learner_model_param.num_class ${numClass} with objective multi:softprob: ${CLASS_LIMITS.min} to ${CLASS_LIMITS.max} classes are accepted`
  const softmax = countOf(isObject(objective.softmax_multiclass_param) ? objective.softmax_multiclass_param.num_class : undefined)
  if (softmax !== numClass) return `softmax_multiclass_param.num_class ${softmax} differs from learner_model_param.num_class ${numClass}`
  return { name, outputs: numClass }
}

const XGBOOST_NODE_ARRAYS = ['left_children', 'right_children', 'parents', 'split_indices', 'default_left', 'split_type'] as const
const XGBOOST_VALUE_ARRAYS = ['split_conditions', 'base_weights', 'loss_changes', 'sum_hessian'] as const

/**
 * XGBoost's JSON reader types a number by its spelling: a float field refuses "0" (an Integer), an
 * integer field "1.0". Read from the text, as JSON.parse forgets it: each tree's arrays (and its id),
 * found once per tree as plain text (an escaped key would hide one: refused too).
 */
function spellingProblem(text: string, trees: number): string | null {
  for (const key of ['id', ...XGBOOST_NODE_ARRAYS, ...XGBOOST_VALUE_ARRAYS]) {
    const found = [...text.matchAll(new RegExp(`"${key}"\\s*:\\s*(\\[[^\\]]*\\]|[-+.\\w]+)`, 'g'))]
    if (found.length !== trees) return `"${key}" appears ${found.length} times as plain text for ${trees} trees`
    const float = (XGBOOST_VALUE_ARRAYS as readonly string[]).includes(key)
    for (const [k, match] of found.entries()) {
      const tokens = match[1]
        .replace(/^\[|\]$/g, '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '')
      const wrong = tokens.find((t) => (float ? !/[.eE]/.test(t) : !/^-?\d+$/.test(t)))
      if (wrong !== undefined)
        return `tree ${k}, ${key}: ${wrong} is not spelled as ${float ? 'a float (XGBoost reads "0" as an integer; "0.0" is a float)' : 'an integer'}`
    }
  }
  return null
}

function xgboostTreeProblem(tree: unknown, k: number, features: number): string | null {
  if (!isObject(tree) || !isObject(tree.tree_param)) return 'not a tree (no tree_param)'
  if (tree.id !== k) return `id ${JSON.stringify(tree.id)}: the trees are numbered 0, 1, … in order`
  const n = countOf(tree.tree_param.num_nodes)
  if (!(n >= 1 && n <= ARTIFACT_LIMITS.treeNodes)) return `num_nodes ${JSON.stringify(tree.tree_param.num_nodes)}: a tree has 1 to ${ARTIFACT_LIMITS.treeNodes}`
  for (const key of XGBOOST_NODE_ARRAYS) {
    const a = tree[key]
    if (!isIntegers(a) || a.length !== n) return `${key} is not ${n} integers (one per node)`
  }
  for (const key of XGBOOST_VALUE_ARRAYS) {
    const a = tree[key]
    if (!isNumbers(a) || a.length !== n) return `${key} is not ${n} numbers (one per node)`
    const values = float32Problem(a, key)
    if (values) return values
  }
  const categorical = (tree.split_type as number[]).findIndex((s) => s !== 0)
  if (categorical >= 0 || (Array.isArray(tree.categories) && tree.categories.length > 0))
    return `node ${Math.max(0, categorical)}: a categorical split; only numeric splits are accepted`
  const left = tree.left_children as number[]
  const right = tree.right_children as number[]
  const parents = tree.parents as number[]
  const split = tree.split_indices as number[]
  if (tree.tree_param.num_deleted !== '0')
    return `num_deleted ${JSON.stringify(tree.tree_param.num_deleted)}: trees with deleted nodes are not accepted (XGBoost's hist trees have none)`
  if (parents[0] !== XGBOOST_NO_PARENT) return `node 0 (the root) has parent ${parents[0]}, not ${XGBOOST_NO_PARENT}`
  for (let i = 0; i < n; i++) {
    // XGBoost's loader reads every node's parent, and takes a leaf whose split index is 2^31 − 1 for a deleted node
    if (i > 0 && !(parents[i] >= 0 && parents[i] < n)) return `node ${i}: parent ${parents[i]} is outside 0 to ${n - 1}`
    if (!(split[i] >= 0 && split[i] < features))
      return `node ${i}: split feature ${split[i]} is outside 0 to ${features - 1} (the model has ${features} features)`
  }
  // from the root, each node reached once: no cycle, no shared child
  const reached = new Uint8Array(n)
  const depth = new Uint16Array(n)
  reached[0] = 1
  const stack = [0]
  let count = 1
  while (stack.length) {
    const i = stack.pop()!
    if (depth[i] > ARTIFACT_LIMITS.treeDepth) return depthProblem(i, depth[i])
    if (left[i] === -1 && right[i] === -1) continue
    for (const child of [left[i], right[i]]) {
      if (!(child >= 0 && child < n)) return `node ${i}: child ${child} is outside 0 to ${n - 1} (a leaf has both children −1)`
      if (reached[child]) return `node ${i}: child ${child} is reached twice (a cycle or a shared node)`
      if (parents[child] !== i) return `node ${child}: parent ${parents[child]}, but node ${i} leads to it`
      reached[child] = 1
      depth[child] = depth[i] + 1
      count++
      stack.push(child)
    }
  }
  return count === n ? null : `node ${reached.indexOf(0)}: not reached from the root`
}
