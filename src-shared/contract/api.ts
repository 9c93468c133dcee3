// The API table: every request method the renderer may call, declared once — its name, its request
// schema (main validates every payload against it) and its response type. The IPC channel,
// TrainpoolApi, the service's methods, dispatch(), the preload and the WebSocket bridge are derived
// from it: adding a method is an entry here and a method on the service. The sandboxed preload
// bundles this file (zod included).
import { z } from 'zod'
import { type Advice, AdviceTargetSchema } from './advice'
import type { MenuCommand } from './channels'
import { type DataSetInfo, Sha256Schema } from './dataset'
import type { TrainpoolErrorShape } from '../vocabulary/errors'
import type { FamilyCalibration } from './calibration'
import type { Capabilities, RunEvent } from './events'
import type { RunResult, RunStatus } from './result'
import type { BenchConfig } from './config'
import { modelConfiguration } from './model-set'
import { familyOf } from '../families'

// ---- run ids, names and tags: the one place their limits live (the store uses the same schemas) ----

export const RUN_LIMITS = {
  /** characters of a run id */
  idLength: 64,
  /** characters of a run's display name (after whitespace is squeezed) */
  nameLength: 120,
  /** tags on one run */
  tags: 20,
  /** characters of one tag (after whitespace is squeezed) */
  tagLength: 40,
} as const

/** A run id: also a folder name in the store, so nothing that could escape it (no ., /, \, NUL). */
export const RUN_ID_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${RUN_LIMITS.idLength}}$`)
export const RUN_ID_RULE = `letters, digits, - and _ only (1–${RUN_LIMITS.idLength} characters)`

export const RunIdSchema = z.string().regex(RUN_ID_PATTERN, RUN_ID_RULE)

const squeeze = (s: string) => s.replace(/\s+/g, ' ').trim()

/** A display name: whitespace squeezed and trimmed; '' removes the name. */
export const RunNameSchema = z
  .string()
  .transform(squeeze)
  .pipe(z.string().max(RUN_LIMITS.nameLength, `at most ${RUN_LIMITS.nameLength} characters`))

const RunTagSchema = z
  .string()
  .transform(squeeze)
  .pipe(z.string().max(RUN_LIMITS.tagLength, `at most ${RUN_LIMITS.tagLength} characters`))

/** A run's tags (replacing the old ones): at most RUN_LIMITS.tags given; squeezed, de-duplicated, empty ones dropped. */
export const RunTagsSchema = z
  .array(RunTagSchema)
  .max(RUN_LIMITS.tags, { error: (issue) => `at most ${RUN_LIMITS.tags} tags (got ${(issue.input as unknown[]).length})` })
  .transform((tags) => [...new Set(tags.filter((t) => t !== ''))])

// ---- response types ----

/** Export formats: the full run (json), one row per measurement (csv), the summary table (md), a model set's leaderboard (one CSV row per configuration). */
export const EXPORT_FORMATS = ['json', 'csv', 'md', 'leaderboard'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]
export const EXPORT_MIME: Record<ExportFormat, string> = { json: 'application/json', csv: 'text/csv', md: 'text/markdown', leaderboard: 'text/csv' }
/** The file extension of an export format. */
export const EXPORT_EXTENSION: Record<ExportFormat, string> = { json: 'json', csv: 'csv', md: 'md', leaderboard: 'leaderboard.csv' }

/** A file name safe on every OS: trainpool-<name or id>.<ext> (exports and the PDF report). */
export function exportFileName(run: { runId: string; name?: string }, ext: string): string {
  const base = (run.name ? `${run.name}-${run.runId}` : run.runId)
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
  return `trainpool-${base || 'run'}.${ext}`
}

/**
 * A kept model's file name: the run's export name with the model's index and, in a model set, its
 * configuration: trainpool-<name or id>-model-<i>[-max-depth-5_eta-0.3].<ext>.
 */
export function modelFileName(run: { runId: string; name?: string; config?: BenchConfig }, index: number, ext: string): string {
  const { label } = run.config ? modelConfiguration(familyOf(run.config.model), run.config.model, run.config.set, index) : { label: '' }
  const configuration = label
    .replace(/ · /g, '_')
    .replace(/[^A-Za-z0-9._]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
  return exportFileName(run, ext).replace(new RegExp(`\\.${ext}$`), `-model-${index}${configuration ? `-${configuration}` : ''}.${ext}`)
}

/** An export's content; the Electron shell also saves it (save dialog) and says where. */
export interface ExportedFile {
  fileName: string
  mimeType: string
  content: string
  /** Electron: where the save dialog put it, null when the user cancelled; absent in browser mode (download `content`) */
  savedPath?: string | null
}

/** A rendered PDF report: Electron saves it via a save dialog (savedPath); browser mode gets the bytes (base64) to download. */
export interface PdfReport {
  fileName: string
  /** bytes of the PDF */
  sizeBytes: number
  savedPath?: string | null
  base64?: string
}

/** A run's best trained model as a file (ONNX for an MLP, XGBoost JSON for trees): the bytes (base64) to download, or where Electron saved it. */
export interface SavedModel {
  fileName: string
  mimeType: string
  sizeBytes: number
  savedPath?: string | null
  base64?: string
}

export interface RunListEntry {
  runId: string
  status: RunStatus | 'damaged'
  startedAt: string | null
  preset: string | null
  backend: string | null
  device: string | null
  sizes: number[]
  models: number[]
  bestSpeedup: number | null
  /** the model family and its parameters in one line ("GBDT · 100 rounds, depth 6, …"); absent for a damaged file */
  model?: string
  /** the user's data set the run trained on ("plants.csv · 300 × 7"); absent for generated data */
  data?: string
  name?: string
  tags?: string[]
  /** why a damaged file could not be read */
  problem?: string
  /** the run whose run.json this folder holds, when that is another run's (a folder copied by hand) */
  copyOf?: string
}

/** A method's response type, carried by the table for the compiler only: `_response` never exists at run time. */
export interface ResponseMarker<T> {
  readonly _response: T
}
export function response<T>(): ResponseMarker<T> {
  return {} as ResponseMarker<T>
}

/** The request of a method that takes none: `capabilities()` sends nothing, and anything sent is refused. */
const NO_REQUEST = z.undefined()

interface MethodSpec {
  request: z.ZodType
  response: ResponseMarker<unknown>
}

// ---- the table ----

export const API = {
  capabilities: { request: NO_REQUEST, response: response<Capabilities>() },
  /** `config` is raw here: the service validates it field by field (BenchConfigSchema) */
  start: { request: z.object({ config: z.record(z.string(), z.unknown()) }).strict(), response: response<{ runId: string }>() },
  /** no runId: whichever run is live */
  cancel: { request: z.object({ runId: RunIdSchema.optional() }).strict(), response: response<{ cancelled: boolean }>() },
  listRuns: { request: NO_REQUEST, response: response<RunListEntry[]>() },
  getRun: { request: z.object({ runId: RunIdSchema }).strict(), response: response<RunResult>() },
  /** the live run's events so far (a reconnecting tab replays them), or null when idle */
  currentRun: { request: NO_REQUEST, response: response<{ runId: string; events: RunEvent[] } | null>() },
  /** '' removes the name */
  renameRun: { request: z.object({ runId: RunIdSchema, name: RunNameSchema }).strict(), response: response<RunListEntry>() },
  /** replaces the run's tags */
  tagRun: { request: z.object({ runId: RunIdSchema, tags: RunTagsSchema }).strict(), response: response<RunListEntry>() },
  deleteRun: { request: z.object({ runId: RunIdSchema }).strict(), response: response<{ deleted: true }>() },
  exportRun: { request: z.object({ runId: RunIdSchema, format: z.enum(EXPORT_FORMATS) }).strict(), response: response<ExportedFile>() },
  /** browser mode and the CLI get the bytes (base64); the Electron shell saves it instead */
  reportPdf: { request: z.object({ runId: RunIdSchema }).strict(), response: response<PdfReport>() },
  /**
   * the run's best kept model as a file (a model set: the best configuration's best model; else the
   * lowest test MSE); not-found when the run kept none. The Electron shell saves it instead
   */
  bestModel: { request: z.object({ runId: RunIdSchema }).strict(), response: response<SavedModel>() },
  /** the data sets loaded into the store's cache, newest first (the config panel's recent list) */
  dataSets: { request: NO_REQUEST, response: response<DataSetInfo[]>() },
  /** one cached data set, by the sha256 of its file */
  dataSetInfo: { request: z.object({ sha256: Sha256Schema }).strict(), response: response<DataSetInfo>() },
  /**
   * removes a data set from the store's cache, and browser mode's uploaded copy of its file; runs that
   * trained on it keep their record of it. Refused (busy) while the live run trains on it
   */
  deleteDataSet: { request: z.object({ sha256: Sha256Schema }).strict(), response: response<{ deleted: true }>() },
  /** Electron: a native open dialog for a CSV/TSV/Parquet file, loaded into the cache; null when cancelled. Browser mode and the CLI refuse it (upload instead) */
  chooseDataFile: { request: NO_REQUEST, response: response<DataSetInfo | null>() },
  /** which strategy and W for `models` at `size`, predicted from the run's own times (a refusal inside when the fits cannot be trusted) */
  advise: { request: AdviceTargetSchema.extend({ runId: RunIdSchema }).strict(), response: response<Advice>() },
  /**
   * runs the advice's recommended and runner-up options at the target (a normal live run, `verifies`
   * the source); when it ends, the check (predicted vs measured) is stored with the source run's
   * adviceChecks before run-finished is sent. Refused when the advice is.
   */
  verifyAdvice: { request: AdviceTargetSchema.extend({ runId: RunIdSchema }).strict(), response: response<{ runId: string }>() },
  /**
   * times a small fixed workload on every backend `auto` may pick for the family (every family when
   * none is named), a few seconds each, and keeps it in the store: `auto` is then the fastest.
   * `family` is checked by the service against the registered families. Refused (busy) while a run is live
   */
  calibrate: { request: z.object({ family: z.string().max(64).optional() }).strict(), response: response<FamilyCalibration[]>() },
} satisfies Record<string, MethodSpec>

export type Method = keyof typeof API

export const METHODS = Object.keys(API) as Method[]

/** True for the table's own method names only (not "__proto__", "toString", a non-string…). */
export function isMethod(name: unknown): name is Method {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(API, name)
}

/** What a caller sends. */
export type ApiRequest<M extends Method> = z.input<(typeof API)[M]['request']>
/** What the service receives: the request after validation (names squeezed, tags de-duplicated…). */
export type ParsedRequest<M extends Method> = z.output<(typeof API)[M]['request']>
export type ApiResponse<M extends Method> = (typeof API)[M]['response'] extends ResponseMarker<infer T> ? T : never
export type ApiResponses = { [M in Method]: ApiResponse<M> }

/** A method that takes no request is called with none: `capabilities()`; the others with one object: `getRun({ runId })`. */
type Call<Req, Res> = undefined extends Req ? (request?: Req) => Promise<Res> : (request: Req) => Promise<Res>

/** One method per table entry, as the renderer calls it (the preload and the WebSocket bridge build these). */
export type RequestMethods = { [M in Method]: Call<ApiRequest<M>, ApiResponse<M>> }
/** One method per table entry, as the service implements it (dispatch() calls it with the parsed request). */
export type ServiceMethods = { [M in Method]: Call<ParsedRequest<M>, ApiResponse<M>> }

// ---- channels and transports ----

/** IPC channel of a method, derived from its name: getRun → trainpool:get-run. */
export function channelFor(method: Method): string {
  return `trainpool:${method.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
}

/** Main → renderer: RunEvents. */
export const EVENT_CHANNEL = 'trainpool:event'

/** IPC channels: one per method, plus `event`. */
export const CHANNELS = Object.freeze({
  ...(Object.fromEntries(METHODS.map((m) => [m, channelFor(m)])) as { readonly [M in Method]: string }),
  event: EVENT_CHANNEL,
} as const)

/** What crosses the wire for every call: never a thrown error, always a typed envelope. */
export type Envelope<T> = { ok: true; value: T } | { ok: false; error: TrainpoolErrorShape }

/** How a transport sends one request and gets its (unwrapped) response. */
export type Caller = <M extends Method>(method: M, request: ApiRequest<M> | undefined) => Promise<ApiResponse<M>>

/** The request methods over a transport: one per table entry, each sending its one request object as is. */
export function requestMethods(call: Caller): RequestMethods {
  return Object.fromEntries(METHODS.map((m) => [m, (request?: unknown) => call(m, request as never)])) as unknown as RequestMethods
}

/** window.trainpool (preload) and the WebSocket bridge both implement this. */
export interface TrainpoolApi extends RequestMethods {
  onEvent(listener: (event: RunEvent) => void): () => void
  /** Electron only (the preload): application-menu commands; absent in browser mode */
  onMenuCommand?(listener: (command: MenuCommand) => void): () => void
}
