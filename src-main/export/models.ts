// A run's kept models written out in standard formats: trees (Trainpool's CPU and WGSL engines) as
// XGBoost 1.7 JSON models, the xgboost backend's boosters as XGBoost saved them, MLPs as ONNX
// inference models (their preprocessing included); a classifier's file outputs probabilities and
// names its classes. `best` is the model a user would keep: in a model set, the best configuration's
// best-scoring model (the leaderboard's ranking); in a plain run, the best score — in the run's
// primary metric (validation with folds), in its direction, scored in the measurement that kept the models.
import {
  type KeptModel,
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
import type { KeptModelsReader } from '../store/run-store'
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
export function bestModelIndex(
  run: Pick<RunResult, 'config' | 'measurements' | 'task'>,
  kept: Pick<KeptModels, 'size' | 'strategy' | 'workers'>,
): number | null {
  const m = run.measurements.find((x) => x.size === kept.size && x.strategy === kept.strategy && x.workers === kept.workers && x.status === 'ok')
  if (!m) return null
  const best = leaderboardOf(run)?.entries[0]
  const candidates = m.perModel.filter((p) => best === undefined || p.configuration === best.configuration)
  const ranked = [...candidates].sort((a, b) => rankKey(run, a) - rankKey(run, b) || a.index - b.index)
  return ranked[0]?.index ?? null
}

type ExportedRun = Pick<RunResult, 'runId' | 'name' | 'config' | 'measurements' | 'task'>

/** The indexes of `which` models; refused (not-found) when the run kept none of them. */
function wantedIndexes(run: ExportedRun, kept: Pick<KeptModels, 'size' | 'strategy' | 'workers'>, indexes: readonly number[], which: 'best' | 'all'): number[] {
  const wanted = which === 'all' ? [...indexes] : [bestModelIndex(run, kept)]
  return wanted.map((index) => {
    if (index === null || !indexes.includes(index))
      throw new TrainpoolError('not-found', `run ${run.runId} kept no model ${index ?? '(no finished measurement scored them)'}`)
    return index
  })
}

/** One kept model's file: the model's run, index and configuration in its name and in its own metadata. */
function fileOf(run: ExportedRun, model: KeptModel): ModelFile {
  const { ext, mimeType, content } = modelFile(model.artifact, modelAttributes(run, model.index))
  return { index: model.index, fileName: modelFileName(run, model.index, ext), content, mimeType }
}

/** The files of `which` models of kept models in memory; refused (not-found) when the run kept none of them. */
export function modelFiles(run: ExportedRun, kept: KeptModels, which: 'best' | 'all'): ModelFile[] {
  const byIndex = new Map(kept.models.map((m) => [m.index, m]))
  return wantedIndexes(run, kept, [...byIndex.keys()], which).map((index) => fileOf(run, byIndex.get(index)!))
}

/**
 * The files of `which` models, each read (from models.json, one model at a time: RunStore.withModels)
 * and built when asked: a writer that writes each before taking the next holds one model and its
 * file, not the set's. A model the run did not keep is refused here, before any.
 */
export function eachModelFile(run: ExportedRun, kept: KeptModelsReader, which: 'best' | 'all'): AsyncIterable<ModelFile> {
  const wanted = wantedIndexes(run, kept, kept.indexes, which)
  return (async function* () {
    for (const index of wanted) yield fileOf(run, await kept.model(index))
  })()
}

/** The best kept model's file (Save best model, `serve`'s bestModel): only that model is built. */
export async function bestModelFile(run: ExportedRun, kept: KeptModelsReader): Promise<ModelFile> {
  const [index] = wantedIndexes(run, kept, kept.indexes, 'best')
  return fileOf(run, await kept.model(index))
}
