// A trained model as a run keeps it (the models of one measurement at the run's largest size: every
// strategy trained the same models) and exports it: the trees of Trainpool's engines (CPU and WGSL,
// the same trees), or XGBoost's own model JSON for the xgboost backend. Written to <run>/models.json
// by the store, read back (validated) by export-models and the app's "Save best model".
import { z } from 'zod'
import { familyOf } from '../families'
import { type BenchConfig, LIMITS } from './config'
import { modelConfiguration } from './model-set'
import { artifactProblem } from './model-artifact-structure'

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

const ModelArtifactShape = z.discriminatedUnion('format', [
  /** an MLP regressor: its layers in order (the last has one output) and the features' preprocessing */
  z.object({ format: z.literal('mlp'), features: z.number().int().min(1), layers: z.array(DenseLayerSchema).min(2), preprocess: PreprocessSchema.nullable() }),
  z.object({ format: z.literal('gbdt-trees'), features: z.number().int().min(1), baseScore: z.number(), trees: z.array(TreeArtifactSchema) }),
  /** the xgboost backend's booster, as XGBoost saved it */
  z.object({ format: z.literal('xgboost-json'), json: z.string() }),
])
export type ModelArtifact = z.infer<typeof ModelArtifactShape>

/** Every reader's artifact check: the shape, then the structure (model-artifact-structure.ts), so a crafted artifact never reaches an exporter or a loader. */
export const ModelArtifactSchema = ModelArtifactShape.superRefine((artifact, ctx) => {
  const problem = artifactProblem(artifact)
  if (problem) ctx.addIssue({ code: 'custom', message: problem })
})

/** The models a run kept: which measurement trained them, and each model's artifact by index. */
export const KeptModelsSchema = z.object({
  size: z.number().int(),
  strategy: z.string(),
  workers: z.number().int(),
  models: z
    .array(z.object({ index: z.number().int().min(0), artifact: ModelArtifactSchema }))
    .max(LIMITS.models.max)
    .superRefine((models, ctx) => {
      const seen = new Set<number>()
      for (const { index } of models) {
        if (seen.has(index)) ctx.addIssue({ code: 'custom', message: `model ${index} is kept twice: one artifact per model` })
        seen.add(index)
      }
    }),
})
export type KeptModels = z.infer<typeof KeptModelsSchema>

/**
 * What a model file says of itself (XGBoost JSON's learner attributes, ONNX metadata): its run, its
 * index, its parameters, and in a model set its configuration in words ("max-depth 5 · eta 0.3").
 */
export function modelAttributes(run: { runId: string; config: BenchConfig }, index: number): Record<string, string> {
  const { params, label } = modelConfiguration(familyOf(run.config.model), run.config.model, run.config.set, index)
  return {
    trainpool_run: run.runId,
    trainpool_model: String(index),
    ...(label ? { trainpool_configuration: label } : {}),
    trainpool_params: JSON.stringify(params),
  }
}
