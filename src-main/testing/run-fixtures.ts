// Synthetic, schema-valid stored runs for the store, export, report, service and app tests (no
// training involved). Node-side on purpose: the summary and the verification come from the real
// bench/stats and bench/verify, so a stored run reads exactly as one the runner would have saved.
// (The renderer's scripted stream and its result: src-shared/testing/fixtures.ts.)
import {
  presetConfig,
  SCHEMA_VERSION,
  type BenchConfig,
  type KeptModels,
  type Measurement,
  type MeasurementKey,
  type RunResult,
  type TreeArtifact,
} from '@shared/contract'
import { familyOf } from '@shared/families'
import { expandPlan } from '@shared/plan'
import { summarize } from '../bench/stats'
import { verify } from '../bench/verify'

/** Deterministic wall time: batched fastest, pool in between, with a little per-repeat jitter. */
export function fakeWall(k: MeasurementKey): number {
  const base = (k.size / 1000) * k.models * 3.7
  const factor = k.strategy === 'sequential' ? 1 : k.strategy === 'pool' ? 1 / Math.min(k.workers, 3) + 0.05 : 0.18 + 0.02 * k.workers
  return base * factor * (1 + 0.013 * k.repeat) + 0.123456
}

export function fakeMeasurement(k: MeasurementKey): Measurement {
  return {
    ...k,
    status: 'ok',
    wallMs: fakeWall(k),
    startupMs: k.repeat === 0 ? 151.25 : 0,
    warmupMs: 42.5,
    modelsTrained: k.models,
    work: k.size * k.models * 1e5,
    perModel: Array.from({ length: k.models }, (_, i) => ({
      index: i,
      seed: 43 + i,
      trainMs: k.strategy === 'batched' ? null : fakeWall(k) / k.models,
      groupTrainMs: k.strategy === 'batched' ? fakeWall(k) : null,
      testMse: 0.0812345 + i * 1e-3,
      finalLoss: 0.09 + i * 1e-3,
      worker: k.strategy === 'sequential' ? 0 : i % k.workers,
    })),
    failures: [],
    peakRssBytes: [123_456_789],
  }
}

export function fakeRun(overrides: Partial<BenchConfig> = {}, runId = '20250101-120000-abcdef', count?: number): RunResult {
  const config = presetConfig('quick', { backend: 'wasm', workers: [1, 2, 4], repeats: 3, ...overrides })
  const plan = expandPlan(config)
  const measurements = plan.slice(0, count ?? plan.length).map(fakeMeasurement)
  return {
    schemaVersion: SCHEMA_VERSION,
    runId,
    status: 'ok',
    startedAt: '2025-01-01T12:00:00.000Z',
    finishedAt: '2025-01-01T12:05:00.000Z',
    config,
    environment: {
      backend: 'wasm',
      device: 'WebAssembly SIMD (4 threads)',
      cpu: 'Test CPU @ 3.0GHz',
      cpuCount: 8,
      memoryBytes: 16 * 2 ** 30,
      os: 'Linux 6.1 x64',
      node: '22.0.0',
      versions: { trainpool: '0.1.0', tfjs: '4.22.0' },
      backendFlags: { WASM_HAS_SIMD_SUPPORT: true },
    },
    measurements,
    summary: summarize(measurements, familyOf(config.model)),
    verification: verify(config, measurements),
    warnings: [],
    error: null,
  }
}

/** A tree that splits `feature` at 0.5 into two leaves (−0.25, 0.75). */
export function stumpTree(feature = 0): TreeArtifact {
  return { feature: [feature, -1, -1], threshold: [0.5, 0, 0], defaultLeft: [1, 0, 0], left: [1, -1, -1], leafValue: [0, -0.25, 0.75] }
}

/** A trees run (2 features, 300 rows, one sequential measurement of `models` models) and the models it kept: model i is `trees` stumps on feature i mod 2. */
export function fakeTreesRun(models = 2, trees = 1, runId = '20250101-120000-abcdef'): { run: RunResult; kept: KeptModels } {
  const run = fakeRun(
    {
      model: { kind: 'gbdt', rounds: trees } as never,
      backend: 'cpu',
      sizes: [300],
      models: [models],
      strategies: ['sequential'],
      workers: [1],
      repeats: 1,
      features: 2,
    },
    runId,
  )
  const artifact = (i: number) => ({ format: 'gbdt-trees' as const, features: 2, baseScore: 0.5, trees: Array.from({ length: trees }, () => stumpTree(i % 2)) })
  return {
    run,
    kept: { size: 300, strategy: 'sequential', workers: 1, models: Array.from({ length: models }, (_, i) => ({ index: i, artifact: artifact(i) })) },
  }
}
