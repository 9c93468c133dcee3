// Advice: which strategy and W to use for N models at a data size, predicted from a run's own
// measurements by fitted cost models (src-shared/advice/), with an interval, a refusal when the fit
// cannot be trusted, and a self-check (the recommended and the runner-up configurations run at the
// target, predicted against measured) stored with the run.
import { z } from 'zod'
import { STRATEGIES } from '../vocabulary/names'

/** What a user may ask advice for: bigger than this is not a benchmark this app can check. */
export const ADVICE_LIMITS = {
  models: { min: 1, max: 1_000_000 },
  size: { min: 2, max: 1_000_000 },
  /** beyond this multiple of the largest measured N a prediction is labelled an extrapolation */
  extrapolationFactor: 4,
  /** a fit with R² below this (or too few points) is not used to predict */
  minR2: 0.9,
  /** past the knee adding a worker gains less than this fraction */
  kneeGain: 0.1,
} as const

const countField = (name: string, lim: { min: number; max: number }) =>
  z
    .number({ error: `${name} must be a whole number from ${lim.min} to ${lim.max}` })
    .int(`${name} must be a whole number from ${lim.min} to ${lim.max}`)
    .min(lim.min, `${name} must be a whole number from ${lim.min} to ${lim.max}`)
    .max(lim.max, `${name} must be a whole number from ${lim.min} to ${lim.max}`)

export const AdviceTargetSchema = z
  .object({
    models: countField('models', ADVICE_LIMITS.models),
    size: countField('size', ADVICE_LIMITS.size),
  })
  .strict()
export type AdviceTarget = z.infer<typeof AdviceTargetSchema>

const Strategy = z.enum(STRATEGIES)
/** backends side by side: the backend an option runs on (absent when the run had one backend) */
const OptionBackend = z.string().max(64).optional()

/** time ≈ a + b·x by least squares, with its quality. */
export const LinearFitSchema = z.object({
  a: z.number(),
  b: z.number(),
  r2: z.number().nullable(),
  /** residual standard error (ms); null with fewer than 3 points */
  sigma: z.number().nullable(),
  points: z.array(z.object({ x: z.number(), ms: z.number(), predictedMs: z.number() })),
})
export type LinearFit = z.infer<typeof LinearFitSchema>

/** One strategy's cost model at one data size and W: time ≈ a + b·N (pool: a + b·N/W_eff). */
export const CostModelSchema = z.object({
  backend: OptionBackend,
  strategy: Strategy,
  workers: z.number().int().min(1),
  size: z.number().int(),
  fit: LinearFitSchema,
  /** why this model is not used to predict (R² < 0.9, too few points…); null when it is */
  refusal: z.string().nullable(),
})
export type CostModel = z.infer<typeof CostModelSchema>

/** Time against W for a strategy at one (size, N): Amdahl (or USL when time rises again) fitted to the points. */
export const WorkerScalingSchema = z.object({
  backend: OptionBackend,
  strategy: Strategy,
  size: z.number().int(),
  models: z.number().int(),
  law: z.enum(['amdahl', 'usl']),
  /** Amdahl: serial fraction σ; USL: σ and κ (contention) */
  sigma: z.number(),
  kappa: z.number(),
  r2: z.number().nullable(),
  points: z.array(z.object({ workers: z.number().int(), ms: z.number() })),
  /** the fitted curve at W = 1 … max(measured W, a little past) */
  curve: z.array(z.object({ workers: z.number(), ms: z.number() })),
  fastestWorkers: z.number().int(),
  /** past this W one more worker gains < 10 % */
  kneeWorkers: z.number().int(),
})
export type WorkerScaling = z.infer<typeof WorkerScalingSchema>

/** One way to train the target: predicted time and its interval. */
export const AdviceOptionSchema = z.object({
  backend: OptionBackend,
  strategy: Strategy,
  workers: z.number().int().min(1),
  predictedMs: z.number(),
  lowMs: z.number(),
  highMs: z.number(),
  /**
   * ranked by its own measurement at the target (that N and size measured, too few model counts for
   * a line: a model set, which measures its own N only): predictedMs its median, lowMs–highMs its
   * fastest and slowest repeat
   */
  measured: z.boolean().optional(),
})
export type AdviceOption = z.infer<typeof AdviceOptionSchema>

export const AdviceSchema = z.object({
  runId: z.string(),
  target: AdviceTargetSchema,
  /** the measured size the cost models were fitted at (the target size when measured) */
  fittedSize: z.number().int(),
  /** target N > 4× the largest measured N */
  extrapolated: z.boolean(),
  /** fastest first; empty when every fit was refused */
  options: z.array(AdviceOptionSchema),
  costModels: z.array(CostModelSchema),
  scaling: z.array(WorkerScalingSchema),
  /** the one-line advice ("500 models at 50 000 rows: batched, W=2, ≈ 41 s (36–47 s); pool W=2 ≈ 2.3× slower"), or why none */
  text: z.string(),
  /** why no recommendation is made (poor fits, too few points); null when one is */
  refusal: z.string().nullable(),
})
export type Advice = z.infer<typeof AdviceSchema>

/** "verify this advice": the recommended and runner-up options run at the target. */
export const AdviceCheckSchema = z.object({
  advice: AdviceSchema,
  /** the run that measured them */
  verifyRunId: z.string(),
  checkedAt: z.string(),
  rows: z.array(
    z.object({
      backend: OptionBackend,
      strategy: Strategy,
      workers: z.number().int(),
      predictedMs: z.number(),
      lowMs: z.number(),
      highMs: z.number(),
      /** null when the verification run failed for this option */
      measuredMs: z.number().nullable(),
    }),
  ),
  /** the measured fastest is the recommended one */
  pickRight: z.boolean().nullable(),
})
export type AdviceCheck = z.infer<typeof AdviceCheckSchema>
