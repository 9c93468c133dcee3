// The stored/exported result of one run (schema version 2: the model family in the config; v1 files
// are migrated on read by migrate.ts). Validated when read back so a damaged file is reported, never trusted.
import { GpuInfoSchema } from './gpus'
import { z } from 'zod'
import { AdviceCheckSchema } from './advice'
import { AutoChoiceSchema } from './calibration'
import { BenchConfigSchema, ConcreteBackendSchema, STRATEGIES } from './config'
import { DataSetRecordSchema } from './dataset'
import { DeviceCountersSchema } from './device-counters'
import { RungRecordSchema } from './halving'
import { RunTelemetrySchema } from './telemetry'
import { CLASS_LIMITS, METRICS, OBJECTIVES, type Task } from '../vocabulary/task'

/** a model's scores in its objective's metrics (vocabulary/task.ts); every value finite or NaN-free by construction of the engines */
export const MetricsSchema = z.partialRecord(z.enum(METRICS), z.number())

/** what the run's models learned (vocabulary/task.ts Task); absent in files from before classifiers: regression ranked by MSE */
export const TaskSchema = z
  .object({
    objective: z.enum(OBJECTIVES),
    classes: z.array(z.string().max(256)).max(CLASS_LIMITS.max),
    metric: z.enum(METRICS),
    auto: z.boolean(),
  })
  .strict() satisfies z.ZodType<Task>

export const SCHEMA_VERSION = 2

export const RUN_STATUSES = ['running', 'ok', 'failed', 'cancelled', 'interrupted'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

export const PerModelSchema = z.object({
  index: z.number().int().min(0),
  seed: z.number().int().min(1),
  /** this model's own training time; null when it was trained fused with others (batched) */
  trainMs: z.number().min(0).nullable(),
  /** batched: the training time of the fused group the model was part of; null otherwise */
  groupTrainMs: z.number().min(0).nullable(),
  /** mean squared error on the test rows: of the prediction (regression), of the class probabilities against the one-hot label (a classifier: the Brier score) */
  testMse: z.number(),
  /** every metric of the run's objective on the test rows (metrics.ts scoreOutputs); absent in files from before classifiers */
  metrics: MetricsSchema.optional(),
  finalLoss: z.number().nullable(),
  worker: z.number().int().min(0),
  /** a digest of the trained model, where the family's training is exact (trees) */
  fingerprint: z.string().optional(),
  /** in a model set: the model's configuration (contract/model-set.ts order) */
  configuration: z.number().int().min(0).optional(),
  /** in a model set with folds: the fold it held out, and its MSE on those rows */
  fold: z.number().int().min(0).optional(),
  validationMse: z.number().optional(),
  /** in a model set with folds: every metric of the objective on its held-out rows */
  validationMetrics: MetricsSchema.optional(),
  /** in a model set's batched measurement: the first model index of the fused program it was trained in */
  fusedGroup: z.number().int().min(0).optional(),
  /** with early stopping (contract/early-stopping.ts): the rounds (trees) or epochs it trained, and the 1-based round whose model it kept */
  roundsTrained: z.number().int().min(1).optional(),
  bestRound: z.number().int().min(1).optional(),
  /**
   * with search halving (contract/halving.ts): the last rung it trained in (0-based), its roundsTrained
   * the rounds it had there — the sum of what each rung's job grew (in a rung's model-done: that job's alone)
   */
  rung: z.number().int().min(0).optional(),
})
export type PerModel = z.infer<typeof PerModelSchema>

export const WorkerFailureSchema = z.object({
  worker: z.number().int().min(0),
  modelIndices: z.array(z.number().int().min(0)),
  reason: z.string(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  stderrTail: z.string(),
})
export type WorkerFailure = z.infer<typeof WorkerFailureSchema>

export const MeasurementKeySchema = z.object({
  size: z.number().int(),
  models: z.number().int(),
  workers: z.number().int(),
  strategy: z.enum(STRATEGIES),
  repeat: z.number().int().min(0),
  /** backends side by side (config.backend a list): the backend this measurement ran on; absent in a one-backend run (environment.backend) */
  backend: ConcreteBackendSchema.optional(),
})
export type MeasurementKey = z.infer<typeof MeasurementKeySchema>

/**
 * hyperfine's rule, a minimum time as well as a minimum count: a measurement whose run lasted less
 * than minMs is run again on the same warm workers, up to maxRuns, until its runs together have
 * lasted minMs; its time is then the median run (a 20 ms run alone is mostly noise on a shared machine).
 */
export const MEASUREMENT_FLOOR = { minMs: 250, maxRuns: 40 } as const

export const MeasurementSchema = MeasurementKeySchema.extend({
  status: z.enum(['ok', 'failed', 'cancelled']),
  /** the run's wall time; with runsMs, their median */
  wallMs: z.number().min(0),
  /** a measurement shorter than MEASUREMENT_FLOOR.minMs: each of its runs' wall time, first run first */
  runsMs: z.array(z.number().min(0)).optional(),
  /**
   * with runsMs: the run perModel holds (its index in runsMs), the median run (of an even count the
   * faster middle one); absent in older files, whose perModel is the first run's (leaderboard.ts scales those times)
   */
  perModelRun: z.number().int().min(0).optional(),
  /** process start-up paid before this measurement (0 when the workers were reused) */
  startupMs: z.number().min(0),
  /** warm-up (data generation/upload + one compile step) paid before this measurement */
  warmupMs: z.number().min(0),
  modelsTrained: z.number().int().min(0),
  /** work of all models' training, in the family's unit (FLOPs of the training GEMMs for the MLP) */
  work: z.number().min(0),
  perModel: z.array(PerModelSchema),
  failures: z.array(WorkerFailureSchema),
  /** peak resident set size per worker, bytes, as last reported */
  peakRssBytes: z.array(z.number().min(0)),
  /** with a GPU choice: each worker's CUDA_VISIBLE_DEVICES as the worker itself reported it ('' = no GPU), by worker index */
  workerGpus: z.array(z.string().nullable()).optional(),
  /** remote workers (a scheduler's tasks): how long they waited in its queue before they dialled back, kept out of startupMs */
  queueMs: z.number().min(0).optional(),
  /** remote workers: each one's host as it reported it, by worker index */
  workerHosts: z.array(z.string()).optional(),
  /** a GPU engine's device work in the run whose models perModel holds (dispatches, submits, readbacks): why a GPU sat idle */
  device: DeviceCountersSchema.optional(),
  /** with search halving: each rung of the run perModel holds, in order (its rounds, the configurations live in it, their models) */
  rungs: z.array(RungRecordSchema).optional(),
})
export type Measurement = z.infer<typeof MeasurementSchema>

export const SummaryEntrySchema = z.object({
  size: z.number().int(),
  models: z.number().int(),
  workers: z.number().int(),
  strategy: z.enum(STRATEGIES),
  /** backends side by side: the backend (speedups are against sequential on the same backend) */
  backend: ConcreteBackendSchema.optional(),
  repeats: z.number().int(),
  medianMs: z.number(),
  minMs: z.number(),
  maxMs: z.number(),
  speedupVsSequential: z.number().nullable(),
  efficiency: z.number().nullable(),
  /** work per second, in the family's rate unit (GFLOP/s for the MLP) */
  workRate: z.number(),
  warnings: z.array(z.string()),
})
export type SummaryEntry = z.infer<typeof SummaryEntrySchema>

export const VerificationSchema = z.object({
  sameWork: z.boolean(),
  maxRelMseDiff: z.number(),
  tolerance: z.number(),
  /** per strategy: the fewest models any of its measurements trained */
  modelsTrained: z.record(z.string(), z.number()),
  problems: z.array(z.string()),
  /** backends side by side: pairs not compared model by model, and why */
  notes: z.array(z.string()).optional(),
  /** backends side by side: the largest relative test-MSE difference of a model between two backends compared model by model */
  maxCrossBackendRelMseDiff: z.number().optional(),
})
export type Verification = z.infer<typeof VerificationSchema>

export const EnvironmentSchema = z.object({
  backend: ConcreteBackendSchema,
  device: z.string(),
  cpu: z.string(),
  cpuCount: z.number().int(),
  memoryBytes: z.number(),
  os: z.string(),
  node: z.string(),
  versions: z.record(z.string(), z.string()),
  backendFlags: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  /** with a GPU choice (config.gpus): the GPUs the workers were spread over, round-robin by worker index */
  gpus: z.array(GpuInfoSchema).optional(),
  /** a run with backend `auto`: the backend it resolved to and why (a calibration's numbers, or the table's order) */
  auto: AutoChoiceSchema.optional(),
  /** backends side by side: each backend's device, versions and flags as its workers reported them (backend/device/versions above are the first's) */
  backends: z
    .array(
      z.object({
        backend: ConcreteBackendSchema,
        device: z.string(),
        versions: z.record(z.string(), z.string()),
        backendFlags: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
      }),
    )
    .optional(),
})
export type Environment = z.infer<typeof EnvironmentSchema>

export const RunResultSchema = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  runId: z.string(),
  name: z.string().optional(),
  tags: z.array(z.string()).optional(),
  status: z.enum(RUN_STATUSES),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  config: BenchConfigSchema,
  environment: EnvironmentSchema.nullable(),
  measurements: z.array(MeasurementSchema),
  summary: z.array(SummaryEntrySchema),
  verification: VerificationSchema,
  warnings: z.array(z.string()),
  error: z.string().nullable(),
  /** GPU (nvidia-smi) and worker CPU/RSS samples, ≤ 1 Hz, bounded; absent in older files */
  telemetry: RunTelemetrySchema.optional(),
  /** checks of advice drawn from this run: each verification run's predicted against measured (newest last) */
  adviceChecks: z.array(AdviceCheckSchema).optional(),
  /** a verification run: the id of the run whose advice it checks */
  verifies: z.string().optional(),
  /** the user's data set the run trained on (config.data); absent for generated data and in older files */
  dataset: DataSetRecordSchema.optional(),
  /** what the models learned: objective, class names in output order, the primary metric; absent in older files (regression, MSE) */
  task: TaskSchema.optional(),
  /** the trained models the run kept (models.json beside run.json): which measurement trained them, how many, in what format */
  keptModels: z.object({ size: z.number().int(), strategy: z.string(), workers: z.number().int(), count: z.number().int(), format: z.string() }).optional(),
  /** a run on a scheduler (config.launcher): its kind and every job it submitted, saved as each is submitted, so a coordinator that restarts cancels the jobs of a run it marks interrupted (never an id that reads as an option) */
  scheduler: z
    .object({ engine: z.string().regex(/^[a-z][a-z0-9-]{0,30}$/), jobIds: z.array(z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,199}$/)) })
    .optional(),
})
export type RunResult = z.infer<typeof RunResultSchema>

/** What one option of a run is, as a key: backend (side by side), strategy and W. */
export function optionKey(o: { backend?: string; strategy: string; workers: number }): string {
  return `${o.backend ? `${o.backend}/` : ''}${o.strategy}/${o.workers}`
}

export function measurementKeyString(k: MeasurementKey): string {
  return `${k.backend ? `${k.backend}/` : ''}${k.size}/${k.models}/${k.strategy}/W${k.workers}/r${k.repeat}`
}
