// Trainpool's trees as an XGBoost 1.7 JSON model (doc/model.schema; the layout XGBoost 1.7.4 saves):
// XGBoost predicts with the engines' own rule (left iff value < split_condition, a missing value the
// default way), so Booster.load_model predicts what Trainpool predicted. The engines keep no gains
// or hessians: loss_changes and sum_hessian are 0. A classifier is saved with XGBoost's own objective,
// so its predict gives probabilities: binary:logistic (base_score the probability, as XGBoost keeps
// it), or multi:softprob with num_class = K and tree_info naming each tree's class (round-major: t mod K).
import type { ModelArtifact, TreeArtifact } from '@shared/contract/model-artifact'

/**
 * XGBoost's text for a float parameter: the shortest decimal that reads back as the same float32
 * (XGBoost writes 3E-1). Its parameter parser reads at most a float32's digits: given the float64
 * spelling of fround(0.3), "0.30000001192092896", XGBoost 1.7 silently kept its default base_score 0.5.
 */
function num(x: number): string {
  const f = Math.fround(x)
  for (let digits = 1; digits < 9; digits++) {
    const text = String(Number(f.toPrecision(digits)))
    if (Math.fround(Number(text)) === f) return text
  }
  return String(Number(f.toPrecision(9)))
}

/**
 * A float array: XGBoost's JSON reader types a number by its spelling ("0" is an Integer, which a
 * float field refuses), so these are written with a decimal point or an exponent.
 */
class Floats {
  constructor(readonly values: readonly number[]) {}
}

function floatText(v: number): string {
  const s = String(Math.fround(v))
  return /[.eE]/.test(s) ? s : `${s}.0`
}

/** JSON with Floats spelled as floats (everything else as JSON.stringify spells it). */
function toJson(value: unknown): string {
  if (value instanceof Floats) return `[${value.values.map(floatText).join(',')}]`
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(',')}}`
  return JSON.stringify(value)
}

function xgboostTree(t: TreeArtifact, id: number, features: number) {
  const n = t.feature.length
  const parents = new Array<number>(n).fill(2147483647)
  const right = t.left.map((l) => (l < 0 ? -1 : l + 1))
  t.left.forEach((l, i) => {
    if (l >= 0) parents[l] = parents[l + 1] = i
  })
  const leaf = (i: number) => t.feature[i] < 0
  return {
    base_weights: new Floats(t.leafValue.map((v, i) => (leaf(i) ? v : 0))),
    categories: [],
    categories_nodes: [],
    categories_segments: [],
    categories_sizes: [],
    default_left: t.defaultLeft.map((d, i) => (leaf(i) ? 0 : d)),
    id,
    left_children: t.left,
    loss_changes: new Floats(new Array<number>(n).fill(0)),
    parents,
    right_children: right,
    split_conditions: new Floats(t.threshold.map((v, i) => (leaf(i) ? t.leafValue[i] : v))),
    split_indices: t.feature.map((f) => Math.max(0, f)),
    split_type: new Array<number>(n).fill(0),
    sum_hessian: new Floats(new Array<number>(n).fill(0)),
    tree_param: { num_deleted: '0', num_feature: String(features), num_nodes: String(n), size_leaf_vector: '0' },
  }
}

/**
 * The model file's text: XGBoost JSON (trees) or the booster's own JSON (the xgboost backend), with
 * `attributes` (modelAttributes: its run, index, configuration) as the learner's attributes.
 */
export function xgboostJson(artifact: Extract<ModelArtifact, { format: 'gbdt-trees' | 'xgboost-json' }>, attributes: Record<string, string> = {}): string {
  if (artifact.format === 'xgboost-json') return withAttributes(artifact.json, attributes)
  const { features, trees } = artifact
  const classes = artifact.objective === 'multiclass' ? (artifact.classes ?? 1) : 1
  return toJson({
    learner: {
      attributes,
      feature_names: [],
      feature_types: [],
      gradient_booster: {
        model: {
          gbtree_model_param: { num_parallel_tree: '1', num_trees: String(trees.length), size_leaf_vector: '0' },
          tree_info: trees.map((_, t) => t % classes),
          trees: trees.map((t, i) => xgboostTree(t, i, features)),
        },
        name: 'gbtree',
      },
      learner_model_param: {
        base_score: num(artifact.baseScore),
        boost_from_average: '0',
        num_class: String(artifact.objective === 'multiclass' ? classes : 0),
        num_feature: String(features),
        num_target: '1',
      },
      objective: objectiveOf(artifact),
    },
    version: [1, 7, 4],
  })
}

/** The learner's objective as XGBoost 1.7 saves it: its name and its parameters' section. */
function objectiveOf(artifact: Extract<ModelArtifact, { format: 'gbdt-trees' }>) {
  if (artifact.objective === 'multiclass') return { name: 'multi:softprob', softmax_multiclass_param: { num_class: String(artifact.classes) } }
  return { name: artifact.objective === 'binary' ? 'binary:logistic' : 'reg:squarederror', reg_loss_param: { scale_pos_weight: '1' } }
}

/**
 * The booster's own JSON with `attributes` added to its learner's attributes, as text: parsing and
 * writing it again could change how its float32 values are written.
 */
function withAttributes(json: string, attributes: Record<string, string>): string {
  const entries = Object.entries(attributes)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join(',')
  if (entries === '') return json
  return json.replace(
    /("learner"\s*:\s*\{\s*"attributes"\s*:\s*\{)(\s*\})?/,
    (_match, open: string, empty: string | undefined) => `${open}${entries}${empty !== undefined ? '}' : ','}`,
  )
}
