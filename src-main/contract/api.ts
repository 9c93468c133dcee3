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

/** Request payloads; `start` carries a raw config that the service validates field by field. */
export const REQUEST_SCHEMAS = {
  capabilities: z.undefined(),
  start: z.object({ config: z.record(z.string(), z.unknown()) }).strict(),
  cancel: z.object({ runId: RunIdSchema.optional() }).strict(),
  listRuns: z.undefined(),
  getRun: z.object({ runId: RunIdSchema }).strict(),
  currentRun: z.undefined(),
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
  onEvent(listener: (event: RunEvent) => void): () => void
  /** Electron only (the preload): application-menu commands; absent in browser mode */
  onMenuCommand?(listener: (command: MenuCommand) => void): () => void
}
