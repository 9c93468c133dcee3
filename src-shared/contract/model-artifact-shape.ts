// A trained model's shape as zod knows it (its fields and types); model-artifact-structure.ts checks
// what a shape cannot say (trees are trees, layers chain, sizes bounded), model-artifact.ts joins both.
import { z } from 'zod'
import { CLASS_LIMITS, OBJECTIVES } from '../vocabulary/task'

/**
 * A classifier's artifact says so (absent: a regressor, as every artifact before classifiers):
 * binary — one output, a margin whose sigmoid is p(class 1); multiclass — K outputs (an MLP's last
 * layer), or K trees a round in round-major order (tree t is class t mod K), softmax over the margins.
 */
const ClassifierFields = {
  objective: z.enum(OBJECTIVES).optional(),
  /** K, the class count (2 for binary); absent for a regressor */
  classes: z.number().int().min(2).max(CLASS_LIMITS.max).optional(),
}

/** One regression tree, nodes in breadth-first order; a node's children are `left` and `left + 1`; a row goes left iff value < threshold (NaN: iff defaultLeft). */
export const TreeArtifactSchema = z.object({
  /** split feature, −1 for a leaf */
  feature: z.array(z.number().int().min(-1)),
  /** float32 split value */
  threshold: z.array(z.number()),
  defaultLeft: z.array(z.union([z.literal(0), z.literal(1)])),
  /** the left child, −1 for a leaf */
  left: z.array(z.number().int().min(-1)),
  /** float32 leaf value (0 for an internal node) */
  leafValue: z.array(z.number()),
})
export type TreeArtifact = z.infer<typeof TreeArtifactSchema>

/** One dense layer of an MLP: w row-major [inputs × outputs], b [outputs]; ReLU after every layer but the last. */
export const DenseLayerSchema = z.object({
  inputs: z.number().int().min(1),
  outputs: z.number().int().min(1),
  w: z.array(z.number()),
  b: z.array(z.number()),
})

/** What was done to the raw features before training (the user's data): missing values → mean, then (x − mean) / std. */
export const PreprocessSchema = z.object({
  mean: z.array(z.number()),
  std: z.array(z.number()),
  impute: z.boolean(),
  standardise: z.boolean(),
})
export type Preprocess = z.infer<typeof PreprocessSchema>

export const ModelArtifactShape = z.discriminatedUnion('format', [
  /** an MLP regressor: its layers in order (the last has one output) and the features' preprocessing */
  z.object({
    format: z.literal('mlp'),
    features: z.number().int().min(1),
    layers: z.array(DenseLayerSchema).min(2),
    preprocess: PreprocessSchema.nullable(),
    ...ClassifierFields,
  }),
  /** baseScore: a regressor's initial prediction; a classifier's as XGBoost 1.7 takes it (binary: a probability, its logit the initial margin; multiclass: added to every class's margin) */
  z.object({
    format: z.literal('gbdt-trees'),
    features: z.number().int().min(1),
    baseScore: z.number(),
    trees: z.array(TreeArtifactSchema),
    ...ClassifierFields,
  }),
  /** the xgboost backend's booster, as XGBoost saved it */
  z.object({ format: z.literal('xgboost-json'), json: z.string() }),
])
export type ModelArtifact = z.infer<typeof ModelArtifactShape>
