// Typed errors that cross process boundaries (IPC, WebSocket, CLI): a code, a message that names
// the field and what is accepted, and the individual issues for inline display.
import type { z } from 'zod'

export const ERROR_CODES = ['invalid-input', 'backend-unavailable', 'insufficient-memory', 'busy', 'not-found', 'damaged', 'unauthorized', 'internal'] as const
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

/** The most characters of a user's value an error message repeats: a 900 KB input must not come back (twice) in its error. */
export const ECHO_LIMIT = 120

/** A value as an error message quotes it (JSON), cut to ECHO_LIMIT characters with what was left out said. */
export function echoValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= ECHO_LIMIT ? text : `${text.slice(0, ECHO_LIMIT)}… (${text.length} characters)`
}

/** Turns zod issues into field issues whose message states the value and what is accepted. */
export function fieldIssues(error: z.ZodError, input: unknown): FieldIssue[] {
  return error.issues.map((issue) => {
    const field = issue.path.join('.')
    const value = valueAt(input, issue.path)
    let message = issue.message
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.slice(0, 10).map((k) => (k.length > ECHO_LIMIT ? echoValue(k) : k))
      message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys.join(', ')}${issue.keys.length > 10 ? `, and ${issue.keys.length - 10} more` : ''}`
    } else if (issue.code === 'invalid_type' && value === undefined) {
      message = `${field || 'value'} is required`
    } else if (value !== undefined && typeof value !== 'object') {
      message = `${message} (got ${echoValue(value)})`
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
