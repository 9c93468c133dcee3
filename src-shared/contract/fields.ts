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
