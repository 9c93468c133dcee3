import type { FieldIssue, TrainpoolErrorShape } from '@shared/vocabulary/errors'

/** Normalises whatever a bridge call threw into a TrainpoolErrorShape. */
export function asErrorShape(err: unknown): TrainpoolErrorShape {
  if (err && typeof err === 'object' && 'message' in err) {
    const e = err as { code?: unknown; message: unknown; issues?: unknown }
    const issues = Array.isArray(e.issues)
      ? (e.issues as unknown[]).filter((i): i is FieldIssue => !!i && typeof i === 'object' && typeof (i as FieldIssue).message === 'string')
      : undefined
    return {
      code: typeof e.code === 'string' ? (e.code as TrainpoolErrorShape['code']) : 'internal',
      message: String(e.message),
      ...(issues && issues.length ? { issues } : {}),
    }
  }
  return { code: 'internal', message: String(err) }
}
