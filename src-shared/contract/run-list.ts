// A run as History lists it: one derivation of a RunListEntry from a stored result, used by the
// store and by the test fakes alike.
import { familyOf } from '../families'
import type { RunListEntry } from './api'
import { backendsOf } from './config'
import { describeSet } from './model-set'
import type { RunResult } from './result'

/** The backends a run trained on, in one line: "onnxruntime · CPU model", side by side "wasm · …; onnxruntime · …", before a run the choice. */
export function backendLine(r: Pick<RunResult, 'config' | 'environment'>): string {
  const env = r.environment
  if (env?.backends?.length) return env.backends.map((b) => `${b.backend} · ${b.device}`).join('; ')
  if (env) return `${env.backend} · ${env.device}`
  return backendsOf(r.config).join(', ')
}

/** "GBDT · 100 rounds, depth 6, …": the family and its parameters in one line. */
export function modelLine(config: RunResult['config']): string {
  const family = familyOf(config.model)
  const set = config.set ? ` · set: ${describeSet(family, config.set)}` : ''
  return `${family.shortLabel} · ${family.describe(config.model, config.features)}${set}`
}

/** History's order: newest first, by start time (a run without one last). */
export function newestFirst<T extends { startedAt?: string | null }>(entries: T[]): T[] {
  return [...entries].sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? ''))
}

/**
 * A run as History lists it. `folder`: the store's name for it, when that is not the run's own id —
 * a run folder copied by hand holds another run's run.json: listed by its folder, marked a copy of
 * that run, so neither hides the other.
 */
export function listEntry(run: RunResult, folder: string = run.runId): RunListEntry {
  // sequential is the baseline (1.00×), not a speedup: a run where only it finished has none
  const speedups = run.summary
    .filter((s) => s.strategy !== 'sequential')
    .map((s) => s.speedupVsSequential)
    .filter((v): v is number => v !== null && Number.isFinite(v))
  return {
    runId: folder,
    ...(folder !== run.runId ? { copyOf: run.runId } : {}),
    status: run.status,
    startedAt: run.startedAt,
    preset: run.config.preset,
    // backends side by side: every backend compared ("wasm, cpu") and their devices
    backend:
      run.environment?.backends && run.environment.backends.length > 1
        ? run.environment.backends.map((b) => b.backend).join(', ')
        : (run.environment?.backend ?? null),
    device:
      run.environment?.backends && run.environment.backends.length > 1
        ? run.environment.backends.map((b) => b.device).join('; ')
        : (run.environment?.device ?? null),
    sizes: run.config.sizes,
    models: run.config.models,
    bestSpeedup: speedups.length ? Math.max(...speedups) : null,
    model: modelLine(run.config),
    ...(run.dataset ? { data: `${run.dataset.name} · ${run.dataset.rows} × ${run.dataset.columns}` } : {}),
    ...(run.name ? { name: run.name } : {}),
    ...(run.tags ? { tags: run.tags } : {}),
  }
}
