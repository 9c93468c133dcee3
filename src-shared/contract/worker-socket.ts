// The worker socket: a worker on another machine (`trainpool worker --connect`, e.g. a Slurm task)
// speaks the same messages as a local one, as JSON over an authenticated WebSocket. A socket is a
// network endpoint, so every frame is parsed against these schemas on both ends and size-limited.
// `hello` (one-time token) → `welcome` or close; a data table travels by sha256 (`fetch-table`).
import { z } from 'zod'
import { BackendChoiceSchema, ConcreteBackendSchema, ModelSchema } from './config'
import { IMPUTE_MODES } from './dataset'
import { DeviceCountersSchema } from './device-counters'
import { TARGETS } from '../vocabulary/names'
import { CLASS_LIMITS, METRICS, OBJECTIVES } from '../vocabulary/task'
import { ModelArtifactSchema } from './model-artifact'
import type { ResumeState } from './halving'
import { ModelSetSchema } from '../vocabulary/model-set-shape'
import { PerModelSchema } from './result'
import type { FromWorker, ToWorker } from './worker-messages'

export const WORKER_SOCKET = {
  /** the path workers dial: ws://HOST:PORT/worker */
  path: '/worker',
  /** largest frame either side accepts (a kept model's weights or trees fit many times over); before its welcome a worker's frames are held to a few KiB (src-main/net/pre-auth.ts) */
  maxFrameBytes: 16 * 2 ** 20,
  /** raw bytes of the data table per chunk (sent base64: a third larger) */
  tableChunkBytes: 2 ** 20,
  /** a connection that has not said hello by then is closed */
  helloTimeoutMs: 10_000,
  /** close codes: refused hello (bad, unknown or replayed token), and a frame that broke the contract */
  refusedCode: 4401,
  invalidCode: 4400,
} as const

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in lowercase hex')
const Index = z.number().int().min(0)

const WorkloadDataSchema = z
  .object({
    table: z.string().min(1).max(4096),
    sha256: Sha256Schema,
    targetColumn: Index,
    featureColumns: z.array(Index),
    impute: z.enum(IMPUTE_MODES),
    standardise: z.boolean(),
    classValues: z.array(z.number()).max(CLASS_LIMITS.max).optional(),
  })
  .strict()

const WorkloadSchema = z
  .object({
    size: z.number().int().min(1),
    features: z.number().int().min(1),
    seed: z.number().int().min(0),
    target: z.enum(TARGETS),
    testSplit: z.number(),
    model: ModelSchema,
    data: WorkloadDataSchema.optional(),
    set: ModelSetSchema.optional(),
    task: z
      .object({ objective: z.enum(OBJECTIVES), classes: z.number().int().min(0).max(CLASS_LIMITS.max) })
      .strict()
      .optional(),
    earlyStopping: z
      .object({ rounds: z.number().int().min(1), metric: z.enum(METRICS) })
      .strict()
      .optional(),
    validation: z.number().optional(),
  })
  .strict()

/** A halving rung's model to continue (contract/halving.ts ResumeState): its trees so far, checked like every artifact. */
const ResumeStateSchema = z.object({ index: Index, rounds: z.number().int().min(1), artifact: ModelArtifactSchema }).strict() satisfies z.ZodType<ResumeState>

export const ToWorkerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('init'), backend: BackendChoiceSchema, family: z.string().max(64), workerIndex: Index }),
  z.object({ type: z.literal('warmup'), workload: WorkloadSchema, modelIndices: z.array(Index) }),
  z.object({
    type: z.literal('job'),
    jobId: Index,
    workload: WorkloadSchema,
    modelIndices: z.array(Index),
    fused: z.boolean(),
    keep: z.boolean().optional(),
    after: Index.optional(),
    resume: z.array(ResumeStateSchema).optional(),
  }),
  z.object({ type: z.literal('cancel'), jobId: Index }),
  z.object({ type: z.literal('memory') }),
  z.object({ type: z.literal('probe') }),
  z.object({ type: z.literal('shutdown') }),
])

const Flags = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
const ProgressSchema = z.object({ done: z.number(), total: z.number(), unit: z.string().max(64), loss: z.number().nullable().optional() })

export const FromWorkerSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('ready'),
    backend: ConcreteBackendSchema,
    device: z.string().max(1000),
    flags: Flags,
    versions: z.record(z.string(), z.string()),
    initMs: z.number(),
    visibleDevices: z.string().max(1000).nullable().optional(),
  }),
  z.object({ type: z.literal('init-failed'), backend: BackendChoiceSchema, reason: z.string().max(10_000) }),
  z.object({ type: z.literal('warm'), ms: z.number() }),
  z.object({ type: z.literal('progress'), jobId: Index, modelIndices: z.array(Index), progress: ProgressSchema }),
  z.object({ type: z.literal('model-done'), jobId: Index, model: PerModelSchema.omit({ worker: true }), artifact: ModelArtifactSchema.optional() }),
  z.object({ type: z.literal('job-done'), jobId: Index, wallMs: z.number(), rssBytes: z.number(), device: DeviceCountersSchema.optional() }),
  z.object({ type: z.literal('job-failed'), jobId: z.number().int(), message: z.string().max(100_000), outOfMemory: z.boolean().optional() }),
  z.object({ type: z.literal('cancelled'), jobId: Index, started: z.boolean().optional() }),
  z.object({ type: z.literal('memory'), numTensors: z.number(), numBytes: z.number(), rssBytes: z.number() }),
  z.object({
    type: z.literal('capabilities'),
    backends: z.array(z.object({ name: ConcreteBackendSchema, available: z.boolean(), gpu: z.boolean().optional(), detail: z.string().max(10_000) })),
  }),
  z.object({ type: z.literal('heartbeat') }),
])

/** The worker's first frame: which worker it is, its one-time token, and where it runs. */
export const WorkerHelloSchema = z
  .object({
    type: z.literal('hello'),
    worker: Index,
    submission: Index,
    token: z.string().regex(/^[0-9a-f]{64}$/, 'a token: 64 hex digits'),
    host: z.string().min(1).max(255),
    pid: z.number().int().min(1),
  })
  .strict()
export type WorkerHello = z.infer<typeof WorkerHelloSchema>

/** A worker asks for the data table of a data set it was given by sha256 (its machine does not share the store). */
export const FetchTableSchema = z.object({ type: z.literal('fetch-table'), sha256: Sha256Schema, offset: z.number().int().min(0) }).strict()

/** Every frame a worker may send once welcomed. */
export const WorkerFrameSchema = z.union([FromWorkerSchema, FetchTableSchema])
export type WorkerFrame = z.infer<typeof WorkerFrameSchema>

/** A part of a data table; `tableSha256` is the digest of the whole table file, checked by the worker at the end. */
export const TableChunkSchema = z
  .object({
    type: z.literal('table-chunk'),
    sha256: Sha256Schema,
    offset: z.number().int().min(0),
    totalBytes: z.number().int().min(0),
    tableSha256: Sha256Schema,
    base64: z.string(),
  })
  .strict()
export type TableChunk = z.infer<typeof TableChunkSchema>

/** Every frame the coordinator may send. */
export const CoordinatorFrameSchema = z.union([
  ToWorkerSchema,
  TableChunkSchema,
  z.object({ type: z.literal('welcome') }).strict(),
  z.object({ type: z.literal('table-missing'), sha256: Sha256Schema, reason: z.string().max(1000) }).strict(),
])
export type CoordinatorFrame = z.infer<typeof CoordinatorFrameSchema>

// the schemas above describe exactly the hand-written message types, each message with every one of
// its fields (a field missing here would be stripped from the socket's frames): a drift fails the type check
type FieldsMissing<From extends { type: string }, In extends { type: string }> = {
  [T in From['type']]: Exclude<keyof Extract<From, { type: T }>, keyof Extract<In, { type: T }>>
}[From['type']]
type Exact<A extends { type: string }, B extends { type: string }> = [FieldsMissing<A, B> | FieldsMissing<B, A>] extends [never] ? true : false
const sameToWorker: Exact<z.infer<typeof ToWorkerSchema>, ToWorker> = true
const sameFromWorker: Exact<z.infer<typeof FromWorkerSchema>, FromWorker> = true
const toWorkerMatches: z.infer<typeof ToWorkerSchema> extends ToWorker ? true : false = true
const fromWorkerMatches: z.infer<typeof FromWorkerSchema> extends FromWorker ? true : false = true
void [sameToWorker, sameFromWorker, toWorkerMatches, fromWorkerMatches]
