// A run's kept models written out in standard formats: trees (Trainpool's CPU and WGSL engines) as
// XGBoost 1.7 JSON models, the xgboost backend's boosters as XGBoost saved them, MLPs as ONNX
// inference models (their preprocessing included); a classifier's file outputs probabilities and
// names its classes. `best` is the model a user would keep: in a model set, the best configuration's
// best-scoring model (the leaderboard's ranking); in a plain run, the best score — in the run's
// primary metric (validation with folds), in its direction, scored in the measurement that kept the models.
import {
  type KeptModels,
  METRIC_SPECS,
  modelAttributes,
  modelFileName,
  type ModelArtifact,
  type PerModel,
  type RunResult,
  TrainpoolError,
} from '@shared/contract'
import { leaderboardOf } from '@shared/leaderboard'
import { metricValue, validationMetricValue } from '@shared/metrics'
import { onnxModel } from './onnx-model'
import { xgboostJson } from './xgboost-json'

export interface ModelFile {
  index: number
  fileName: string
  /** XGBoost JSON text, or an ONNX model's bytes */
  content: string | Uint8Array
  mimeType: string
}

/** A kept model in its standard format: the file's extension, MIME type and content; `attributes` (modelAttributes) go in its metadata. */
export function modelFile(artifact: ModelArtifact, attributes: Record<string, string> = {}): Pick<ModelFile, 'content' | 'mimeType'> & { ext: string } {
  if (artifact.format === 'mlp') return { ext: 'onnx', mimeType: 'application/onnx', content: onnxModel(artifact, attributes) }
  return { ext: 'json', mimeType: 'application/json', content: xgboostJson(artifact, attributes) }
}

/**
 * A model's rank key in the run's primary metric (a run from before classifiers: MSE), lower first
 * whatever the metric's direction; a model without that score ranks last.
 */
function rankKey(run: Pick<RunResult, 'config' | 'task'>, p: PerModel): number {
  const metric = run.task?.metric ?? 'mse'
  const value = (run.config.set?.folds ?? null) !== null ? validationMetricValue(p, metric) : metricValue(p, metric)
  if (Number.isNaN(value)) return Infinity
  return METRIC_SPECS[metric].better === 'min' ? value : -value
}

/** The model a user would keep (see the header); null when the kept measurement has no scores. */
export function bestModelIndex(run: Pick<RunResult, 'config' | 'measurements' | 'task'>, kept: KeptModels): number | null {
  const m = run.measurements.find((x) => x.size === kept.size && x.strategy === kept.strategy && x.workers === kept.workers && x.status === 'ok')
  if (!m) return null
  const best = leaderboardOf(run)?.entries[0]
  const candidates = m.perModel.filter((p) => best === undefined || p.configuration === best.configuration)
  const ranked = [...candidates].sort((a, b) => rankKey(run, a) - rankKey(run, b) || a.index - b.index)
  return ranked[0]?.index ?? null
}

/** The files of `which` models; refused (not-found) when the run kept none of them. */
export function modelFiles(run: Pick<RunResult, 'runId' | 'name' | 'config' | 'measurements' | 'task'>, kept: KeptModels, which: 'best' | 'all'): ModelFile[] {
  return [...eachModelFile(run, kept, which)]
}

/**
 * modelFiles one at a time, each built when asked: a writer that writes each before taking the next
 * holds one model's file, not the set's. A model the run did not keep is refused here, before any.
 */
export function eachModelFile(
  run: Pick<RunResult, 'runId' | 'name' | 'config' | 'measurements' | 'task'>,
  kept: KeptModels,
  which: 'best' | 'all',
): Iterable<ModelFile> {
  const wanted = which === 'all' ? kept.models.map((m) => m.index) : [bestModelIndex(run, kept)]
  const models = wanted.map((index) => {
    const model = kept.models.find((m) => m.index === index)
    if (!model) throw new TrainpoolError('not-found', `run ${run.runId} kept no model ${index ?? '(no finished measurement scored them)'}`)
    return model
  })
  return (function* () {
    for (const model of models) {
      // the model's run, index and configuration, in its file's name and in its own metadata
      const { ext, mimeType, content } = modelFile(model.artifact, modelAttributes(run, model.index))
      yield { index: model.index, fileName: modelFileName(run, model.index, ext), content, mimeType }
    }
  })()
}
