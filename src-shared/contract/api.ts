// The one API both shells expose to the renderer: preload (IPC) and the WebSocket bridge implement
// it; main and the server validate every request payload against REQUEST_SCHEMAS.
import { z } from 'zod'
import type { TrainpoolErrorShape } from './errors'
import type { Capabilities, RunEvent } from './events'
import type { RunResult, RunStatus } from './result'

import type { MenuCommand, Method } from './channels'

export { CHANNELS, type Method } from './channels'

const RunIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'runId may hold only letters, digits, - and _')

/** Export formats: the full run (json), one row per measurement (csv), the summary table (md). */
export const EXPORT_FORMATS = ['json', 'csv', 'md'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

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

/** Request payloads; `start` carries a raw config that the service validates field by field. */
export const REQUEST_SCHEMAS = {
  capabilities: z.undefined(),
  start: z.object({ config: z.record(z.string(), z.unknown()) }).strict(),
  cancel: z.object({ runId: RunIdSchema.optional() }).strict(),
  listRuns: z.undefined(),
  getRun: z.object({ runId: RunIdSchema }).strict(),
  currentRun: z.undefined(),
  renameRun: z.object({ runId: RunIdSchema, name: z.string().max(500) }).strict(),
  tagRun: z.object({ runId: RunIdSchema, tags: z.array(z.string().max(200)).max(50) }).strict(),
  deleteRun: z.object({ runId: RunIdSchema }).strict(),
  exportRun: z.object({ runId: RunIdSchema, format: z.enum(EXPORT_FORMATS) }).strict(),
  reportPdf: z.object({ runId: RunIdSchema }).strict(),
} satisfies Record<Method, z.ZodType>

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
  name?: string
  tags?: string[]
  /** why a damaged file could not be read */
  problem?: string
}

export interface ApiResponses {
  capabilities: Capabilities
  start: { runId: string }
  cancel: { cancelled: boolean }
  listRuns: RunListEntry[]
  getRun: RunResult
  currentRun: { runId: string; events: RunEvent[] } | null
  renameRun: RunListEntry
  tagRun: RunListEntry
  deleteRun: { deleted: true }
  exportRun: ExportedFile
  reportPdf: PdfReport
}

export type ApiRequest<M extends Method> = z.input<(typeof REQUEST_SCHEMAS)[M]>

/** What crosses the wire for every call: never a thrown error, always a typed envelope. */
export type Envelope<T> = { ok: true; value: T } | { ok: false; error: TrainpoolErrorShape }

/** window.trainpool (preload) and the WebSocket bridge both implement this. */
export interface TrainpoolApi {
  capabilities(): Promise<Capabilities>
  start(config: Record<string, unknown>): Promise<{ runId: string }>
  cancel(runId?: string): Promise<{ cancelled: boolean }>
  listRuns(): Promise<RunListEntry[]>
  getRun(runId: string): Promise<RunResult>
  currentRun(): Promise<{ runId: string; events: RunEvent[] } | null>
  renameRun(runId: string, name: string): Promise<RunListEntry>
  tagRun(runId: string, tags: string[]): Promise<RunListEntry>
  deleteRun(runId: string): Promise<{ deleted: true }>
  exportRun(runId: string, format: ExportFormat): Promise<ExportedFile>
  reportPdf(runId: string): Promise<PdfReport>
  onEvent(listener: (event: RunEvent) => void): () => void
  /** Electron only (the preload): application-menu commands; absent in browser mode */
  onMenuCommand?(listener: (command: MenuCommand) => void): () => void
}
