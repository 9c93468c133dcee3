// Schema builders for numeric fields: every message names the field and the accepted range. Used by
// the run config and by each model family's hyperparameters (families/), so a limit is stated once.
import { z } from 'zod'

export interface Range {
  min: number
  max: number
}

export const intField = (name: string, lim: Range) =>
  z
    .number({ error: `${name} must be a number` })
    .refine(Number.isFinite, { message: `${name} must be a finite number`, abort: true })
    .refine(Number.isInteger, { message: `${name} must be a whole number`, abort: true })
    .refine((v) => v >= lim.min && v <= lim.max, {
      message: `${name} must be an integer from ${lim.min} to ${lim.max}`,
    })

export const intListField = (name: string, lim: Range, count: Range) =>
  z
    .array(intField(name, lim), { error: `${name} must be a list of integers` })
    .min(count.min, `${name} needs at least ${count.min} value`)
    .max(count.max, `${name} takes at most ${count.max} values`)

export const enumListField = <T extends readonly [string, ...string[]]>(name: string, values: T) =>
  z
    .array(z.enum(values, { error: `${name} accepts ${values.join(', ')}` }))
    .min(1, `${name} needs at least one of ${values.join(', ')}`)
    .max(values.length)
    .refine((v) => new Set(v).size === v.length, `${name} lists a value twice`)

/** A real number in [min, max]; `exclusiveMin` makes the lower bound open (eta > 0). */
export const realField = (name: string, lim: Range & { exclusiveMin?: boolean }) =>
  z
    .number({ error: `${name} must be a number` })
    .refine(Number.isFinite, { message: `${name} must be a finite number`, abort: true })
    .refine((v) => (lim.exclusiveMin ? v > lim.min : v >= lim.min) && v <= lim.max, {
      message: lim.exclusiveMin ? `${name} must be above ${lim.min} and at most ${lim.max}` : `${name} must be from ${lim.min} to ${lim.max}`,
    })

// ---- numbers as a user types them: the one rule of every numeric flag and config panel box ------

/** What a typed number must be: an integer, or any real number. */
export type NumberKind = 'integer' | 'real'

// decimal notation only — digits, an optional fraction and exponent, `_` between digits (10_000) —
// since JavaScript's Number() also takes hex, octal and binary literals, Infinity and blanks
const DECIMAL = /^[+-]?(\d+(_\d+)*(\.(\d+(_\d+)*)?)?|\.\d+(_\d+)*)(e[+-]?\d+)?$/i
// an integer written as one: "10", not "10.0" or "1e1"
const INTEGER = /^[+-]?\d+(_\d+)*$/

/** A typed number's value, or what is wrong with the text ("is not a decimal number"). */
export type NumberRead = { value: number; problem?: undefined } | { value?: undefined; problem: string }

/** The one rule for a number a user types (a CLI flag, a config panel box): decimal only, an integer written as an integer. */
export function readNumber(text: string, kind: NumberKind): NumberRead {
  const t = text.trim()
  if (t === '') return { problem: 'is empty' }
  if (!DECIMAL.test(t)) return { problem: Number.isFinite(Number(t)) ? 'is not a decimal number' : 'is not a number' }
  const value = Number(t.replace(/_/g, ''))
  if (!Number.isFinite(value)) return { problem: 'is too large' }
  if (kind === 'integer' && !INTEGER.test(t)) return { problem: Number.isInteger(value) ? 'is not written as an integer' : 'is not an integer' }
  // past 2^53 a double no longer holds every integer: 9007199254740993 would be read (and quoted back) as …992
  if (kind === 'integer' && !Number.isSafeInteger(value))
    return {
      problem: value > 0 ? `is too large to be exact (at most ${Number.MAX_SAFE_INTEGER})` : `is too small to be exact (at least ${Number.MIN_SAFE_INTEGER})`,
    }
  return { value }
}

/** readNumber's value, NaN when the text is refused (a box's draft value: the schema then names the field). */
export function numberOf(text: string, kind: NumberKind): number {
  return readNumber(text, kind).value ?? NaN
}

/** What one item of a typed list says when refused: "value 2 is empty", "\"0x10\" is not a decimal number"; null when it reads. */
export function itemProblem(item: string, index: number, kind: NumberKind): string | null {
  const read = readNumber(item, kind)
  if (read.problem === undefined) return null
  return item.trim() === '' ? `value ${index + 1} is empty` : `${JSON.stringify(item.trim())} ${read.problem}`
}
