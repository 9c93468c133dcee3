// A model set's shape and limits (what contract/model-set.ts enumerates and checks against a
// family), below the families and the contract, so the workload's shape can name it.
import { z } from 'zod'
import { intField, type Range } from './fields'

export const SET_LIMITS = {
  seeds: { min: 1, max: 100 },
  folds: { min: 2, max: 10 },
  /** values one field of a grid takes */
  values: { min: 1, max: 16 },
} as const satisfies Record<string, Range>

/** A field's grid values: numbers, or for a list field (hidden layers) one list per value. */
export type GridValue = number | number[]

export const ModelSetSchema = z
  .object({
    /** field key → the values it takes (fields the family lets vary); each value is checked by its field's own schema (modelSetIssues) */
    grid: z
      .record(
        z.string(),
        z.array(
          z.custom<GridValue>(() => true),
          { error: 'a grid field takes a list of values' },
        ),
      )
      .default({}),
    seeds: intField('seeds', SET_LIMITS.seeds).default(1),
    /** K-fold cross-validation; null: none */
    folds: intField('folds', SET_LIMITS.folds).nullable().default(null),
  })
  .strict()
export type ModelSet = z.infer<typeof ModelSetSchema>
