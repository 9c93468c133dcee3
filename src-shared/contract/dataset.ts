// The user's own data: a CSV or Parquet file, loaded once into a cached binary columnar table in
// the store (keyed by the file's sha256), then named by a run's config. Generated data needs none
// of this (config.data absent). What a run used is recorded in its result (`dataset`).
import { z } from 'zod'
import { CLASS_LIMITS } from '../vocabulary/task'
import { IMPUTE_MODES } from '../vocabulary/workload-shape'

export { IMPUTE_MODES, type ImputeMode } from '../vocabulary/workload-shape'

export const DATA_FORMATS = ['csv', 'parquet'] as const
export type DataFormat = (typeof DATA_FORMATS)[number]

export const SHA256_PATTERN = /^[0-9a-f]{64}$/
/** A file's sha256 as requests name it (a data set's key in the cache). */
export const Sha256Schema = z.string().regex(SHA256_PATTERN, 'sha256 is 64 lowercase hex digits')

/** A column name as written in the header (trimmed of a BOM); at most this long. */
export const COLUMN_NAME_MAX = 256
/** A class label (a text column's value kept as a code) is at most this long: a longer value is not a label. */
export const LEVEL_MAX_CHARS = 256

const ColumnName = z.string().min(1, 'a column name is not empty').max(COLUMN_NAME_MAX, `at most ${COLUMN_NAME_MAX} characters`)

/**
 * Which data a run trains on, when it is the user's file (config.data). The table is found in the
 * store's data cache by `sha256`; `name` is only for people. Features: `features` when given, else
 * every numeric column but the target and `exclude`.
 */
export const DataSourceSchema = z
  .object({
    sha256: Sha256Schema,
    name: z.string().min(1).max(512),
    target: ColumnName,
    features: z.array(ColumnName).min(1).max(4096).nullable().default(null),
    exclude: z.array(ColumnName).max(4096).default([]),
    impute: z.enum(IMPUTE_MODES, { error: `impute accepts ${IMPUTE_MODES.join(', ')}` }).default('none'),
  })
  .strict()
export type DataSource = z.infer<typeof DataSourceSchema>

export const COLUMN_TYPES = ['numeric', 'text'] as const
export type ColumnType = (typeof COLUMN_TYPES)[number]

export const ColumnInfoSchema = z.object({
  name: z.string(),
  type: z.enum(COLUMN_TYPES),
  /** empty, NA, NaN (and Parquet nulls) */
  missing: z.number().int().min(0),
  /** numeric columns: the range of the present values; null for text or an all-missing column */
  min: z.number().nullable(),
  max: z.number().nullable(),
  /** text columns: the first row (1-based, header excluded) whose value is not a number */
  firstTextRow: z.number().int().min(1).nullable(),
  /**
   * a text column kept as codes (at most CLASS_LIMITS.max distinct present values): those values,
   * sorted as class names are (contract/task.ts sortedClasses); the table holds code k for levels[k].
   * Absent: more distinct values, a value too long to be a class name, or a cache from before (see DataSetInfo.cacheVersion)
   */
  levels: z.array(z.string()).min(1).max(CLASS_LIMITS.max).optional(),
  /**
   * a numeric column with at most CLASS_LIMITS.max distinct present values: those values (as the
   * table holds them, float32), ascending — what `objective auto` reads before the run. Absent: more
   * values, or a cache from before
   */
  distinct: z.array(z.number()).max(CLASS_LIMITS.max).optional(),
})
export type ColumnInfo = z.infer<typeof ColumnInfoSchema>

/**
 * The data cache's layout version, in each set's info.json. 2: text columns with few values are kept
 * as codes (ColumnInfo.levels), few-valued numeric columns list their values (ColumnInfo.distinct).
 * Absent (1): numeric columns only; such a set still trains on numeric targets, and loading its file
 * again re-reads it in the current layout.
 */
export const DATA_CACHE_VERSION = 2

/** A loaded (cached) data set, as the config panel previews it and the recent list shows it. */
export const DataSetInfoSchema = z.object({
  sha256: z.string().regex(SHA256_PATTERN),
  /** the file's base name */
  name: z.string(),
  /** where it was read from (the user's path, or the upload's file in the store) */
  path: z.string(),
  format: z.enum(DATA_FORMATS),
  bytes: z.number().int().min(0),
  rows: z.number().int().min(0),
  columns: z.array(ColumnInfoSchema),
  /** the first rows as read (strings, at most 10), for the preview */
  preview: z.array(z.array(z.string())),
  loadedAt: z.string(),
  /** how long parsing into the cache took (0 when it was already cached) */
  loadMs: z.number().min(0),
  /** DATA_CACHE_VERSION of the layout it was cached in; absent: 1 */
  cacheVersion: z.number().int().min(1).optional(),
})
export type DataSetInfo = z.infer<typeof DataSetInfoSchema>

/** What a run on the user's data records in its result (and the report and History show). */
export const DataSetRecordSchema = z.object({
  name: z.string(),
  sha256: z.string().regex(SHA256_PATTERN),
  rows: z.number().int().min(0),
  columns: z.number().int().min(0),
  target: z.string(),
  features: z.array(z.string()),
  /** of the target's stored values: a text target's are its codes (class k = targetLevels[k]) */
  targetStats: z.object({ mean: z.number(), std: z.number(), min: z.number(), max: z.number() }),
  /** a text target: its values, code order (its ColumnInfo.levels); absent: a numeric target */
  targetLevels: z.array(z.string()).optional(),
  impute: z.enum(IMPUTE_MODES),
  /**
   * MLP with impute=mean: per feature column with missing values, how many the file has (each size's
   * sampled rows have theirs filled with the training rows' mean); absent when none
   */
  imputed: z.record(z.string(), z.number().int().min(0)).optional(),
  /** features standardised with training-row statistics (MLP), or left raw (trees) */
  standardised: z.boolean(),
  /** the seed of the row samples and the test split (the run's seed) */
  sampleSeed: z.number().int(),
})
export type DataSetRecord = z.infer<typeof DataSetRecordSchema>
