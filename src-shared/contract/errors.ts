// Typed errors that cross process boundaries (IPC, WebSocket, CLI): a code, a message that names
// the field and what is accepted, and the individual issues for inline display.
import type { z } from 'zod'

export const ERROR_CODES = [
  'invalid-input',
  'backend-unavailable',
  'insufficient-memory',
  'busy',
  'not-found',
  'damaged',
  'unauthorized',
  'internal',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

export interface FieldIssue {
  /** dotted path of the field, e.g. "sizes.1" or "batchSize" */
  field: string
  message: string
}

export interface TrainpoolErrorShape {
  code: ErrorCode
  message: string
  issues?: FieldIssue[]
}

export class TrainpoolError extends Error implements TrainpoolErrorShape {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly issues?: FieldIssue[],
  ) {
    super(message)
    this.name = 'TrainpoolError'
  }
  toJSON(): TrainpoolErrorShape {
    return { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) }
  }
}

/** Turns zod issues into field issues whose message states the value and what is accepted. */
export function fieldIssues(error: z.ZodError, input: unknown): FieldIssue[] {
  return error.issues.map((issue) => {
    const field = issue.path.join('.')
    const value = valueAt(input, issue.path)
    let message = issue.message
    if (issue.code === 'unrecognized_keys') {
      message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`
    } else if (issue.code === 'invalid_type' && value === undefined) {
      message = `${field || 'value'} is required`
    } else if (value !== undefined && typeof value !== 'object') {
      message = `${message} (got ${JSON.stringify(value) ?? String(value)})`
    }
    return { field, message }
  })
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<PropertyKey, unknown>)[key]
  }
  return cur
}

export function invalidInput(error: z.ZodError, input: unknown, what = 'input'): TrainpoolError {
  const issues = fieldIssues(error, input)
  const summary = issues.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).join('; ')
  return new TrainpoolError('invalid-input', `invalid ${what}: ${summary}`, issues)
}

export function toErrorShape(err: unknown): TrainpoolErrorShape {
  if (err instanceof TrainpoolError) return err.toJSON()
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) }
}
