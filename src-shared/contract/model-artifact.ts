// A trained model as a run keeps it (the models of one measurement at the run's largest size: every
// strategy trained the same models) and exports it: the trees of Trainpool's engines (CPU and WGSL,
// the same trees), or XGBoost's own model JSON for the xgboost backend. Written to <run>/models.json
// by the store, read back (validated) by export-models and the app's "Save best model".
import { z } from 'zod'
import { familyOf } from '../families'
import type { Task } from '../vocabulary/task'
import { type BenchConfig, LIMITS } from './config'
import { modelConfiguration } from './model-set'
import { artifactProblem } from './model-artifact-structure'
import { ModelArtifactShape } from './model-artifact-shape'

export { ARTIFACT_LIMITS, KEPT_MODELS_LIST_BOUNDS, ListBoundsScan, type NotedList, type TextRange } from './model-artifact-bounds'
export { DenseLayerSchema, type ModelArtifact, PreprocessSchema, type Preprocess, TreeArtifactSchema, type TreeArtifact } from './model-artifact-shape'

/** Every reader's artifact check: the shape, then the structure (model-artifact-structure.ts), so a crafted artifact never reaches an exporter or a loader. */
export const ModelArtifactSchema = ModelArtifactShape.superRefine((artifact, ctx) => {
  const problem = artifactProblem(artifact)
  if (problem) ctx.addIssue({ code: 'custom', message: problem })
})

/** One kept model: its index in the run, its artifact (a reader taking models.json one model at a time checks each with this). */
export const KeptModelSchema = z.object({ index: z.number().int().min(0), artifact: ModelArtifactSchema })
export type KeptModel = z.infer<typeof KeptModelSchema>

/** a kept models list's refusal of a repeated index (also a reader's that takes them one at a time) */
export const keptTwice = (index: number): string => `model ${index} is kept twice: one artifact per model`

/** The models a run kept: which measurement trained them, and each model's artifact by index. */
export const KeptModelsSchema = z.object({
  size: z.number().int(),
  strategy: z.string(),
  workers: z.number().int(),
  models: z
    .array(KeptModelSchema)
    .max(LIMITS.models.max)
    .superRefine((models, ctx) => {
      const seen = new Set<number>()
      for (const { index } of models) {
        if (seen.has(index)) ctx.addIssue({ code: 'custom', message: keptTwice(index) })
        seen.add(index)
      }
    }),
})
export type KeptModels = z.infer<typeof KeptModelsSchema>

/**
 * What a model file says of itself (XGBoost JSON's learner attributes, ONNX metadata): its run, its
 * index, its parameters, in a model set its configuration in words ("max-depth 5 · eta 0.3"), and a
 * classifier's objective and class names in output order (trainpool_classes, a JSON array: output k,
 * or a binary model's p, is class k's — class 1's), so the mapping from outputs to labels travels with it.
 */
export function modelAttributes(
  run: { runId: string; config: BenchConfig; task?: Pick<Task, 'objective' | 'classes'> },
  index: number,
): Record<string, string> {
  const { params, label } = modelConfiguration(familyOf(run.config.model), run.config.model, run.config.set, index)
  const task = run.task
  return {
    trainpool_run: run.runId,
    trainpool_model: String(index),
    ...(label ? { trainpool_configuration: label } : {}),
    trainpool_params: JSON.stringify(params),
    ...(task && task.objective !== 'regression' ? { trainpool_objective: task.objective, trainpool_classes: JSON.stringify(task.classes) } : {}),
  }
}
