// The run configuration: one schema for the CLI, IPC, WebSocket and the renderer's inline validation.
// Limits are product limits (what a desktop benchmark can sensibly run), stated once here.
import { z } from 'zod'

export const STRATEGIES = ['sequential', 'pool', 'batched'] as const
export const BACKENDS = ['auto', 'tensorflow', 'webgpu', 'wasm', 'cpu'] as const
export const CONCRETE_BACKENDS = ['tensorflow', 'webgpu', 'wasm', 'cpu'] as const
export const TARGETS = ['teacher', 'noise'] as const
export const PRESET_NAMES = ['smoke', 'quick', 'article'] as const
export const FAILURE_POLICIES = ['stop', 'continue'] as const

export type Strategy = (typeof STRATEGIES)[number]
export type BackendName = (typeof BACKENDS)[number]
export type ConcreteBackend = (typeof CONCRETE_BACKENDS)[number]
export type Target = (typeof TARGETS)[number]
export type PresetName = (typeof PRESET_NAMES)[number]

export const LIMITS = {
  size: { min: 2, max: 2_000_000 },
  sizesCount: { min: 1, max: 12 },
  models: { min: 1, max: 1000 },
  workers: { min: 1, max: 64 },
  listCount: { min: 1, max: 8 },
  epochs: { min: 1, max: 1000 },
  batchSize: { min: 1, max: 65_536 },
  hidden: { min: 1, max: 4096 },
  hiddenLayers: { min: 1, max: 4 },
  lr: { min: 1e-6, max: 1 },
  repeats: { min: 1, max: 100 },
  seed: { min: 0, max: 2_000_000_000 },
  features: { min: 1, max: 4096 },
  testSplit: { min: 0.05, max: 0.5 },
} as const

const int = (name: string, lim: { min: number; max: number }) =>
  z
    .number({ error: `${name} must be a number` })
    .refine(Number.isFinite, { message: `${name} must be a finite number`, abort: true })
    .refine(Number.isInteger, { message: `${name} must be a whole number`, abort: true })
    .refine((v) => v >= lim.min && v <= lim.max, {
      message: `${name} must be an integer from ${lim.min} to ${lim.max}`,
    })

const intList = (name: string, lim: { min: number; max: number }, count: { min: number; max: number }) =>
  z
    .array(int(name, lim), { error: `${name} must be a list of integers` })
    .min(count.min, `${name} needs at least ${count.min} value`)
    .max(count.max, `${name} takes at most ${count.max} values`)

const enumList = <T extends readonly [string, ...string[]]>(name: string, values: T) =>
  z
    .array(z.enum(values, { error: `${name} accepts ${values.join(', ')}` }))
    .min(1, `${name} needs at least one of ${values.join(', ')}`)
    .max(values.length)
    .refine((v) => new Set(v).size === v.length, `${name} lists a value twice`)

const realIn = (name: string, lim: { min: number; max: number }) =>
  z
    .number({ error: `${name} must be a number` })
    .refine(Number.isFinite, { message: `${name} must be a finite number`, abort: true })
    .refine((v) => v >= lim.min && v <= lim.max, { message: `${name} must be from ${lim.min} to ${lim.max}` })

/** The full, explicit configuration of one run (what is stored with every result). */
export const BenchConfigSchema = z
  .object({
    preset: z.enum([...PRESET_NAMES, 'custom']).default('custom'),
    sizes: intList('sizes', LIMITS.size, LIMITS.sizesCount),
    models: intList('models', LIMITS.models, LIMITS.listCount),
    workers: intList('workers', LIMITS.workers, LIMITS.listCount),
    strategies: enumList('strategies', STRATEGIES),
    backend: z.enum(BACKENDS, { error: `backend accepts ${BACKENDS.join(', ')}` }),
    epochs: int('epochs', LIMITS.epochs),
    batchSize: int('batchSize', LIMITS.batchSize),
    hidden: intList('hidden', LIMITS.hidden, LIMITS.hiddenLayers),
    lr: realIn('lr', LIMITS.lr),
    repeats: int('repeats', LIMITS.repeats),
    seed: int('seed', LIMITS.seed),
    target: z.enum(TARGETS, { error: `target accepts ${TARGETS.join(', ')}` }),
    features: int('features', LIMITS.features),
    testSplit: realIn('testSplit', LIMITS.testSplit),
    failurePolicy: z.enum(FAILURE_POLICIES, { error: `failurePolicy accepts ${FAILURE_POLICIES.join(', ')}` }),
  })
  .strict()
  .superRefine((c, ctx) => {
    // cross-field checks only once the fields themselves are valid
    const valid = (xs: unknown, lim: { min: number; max: number }) =>
      Array.isArray(xs) && xs.length > 0 && xs.every((v) => Number.isInteger(v) && v >= lim.min && v <= lim.max)
    if (!valid(c.models, LIMITS.models) || !valid(c.workers, LIMITS.workers) || !valid(c.sizes, LIMITS.size)) return
    if (!(c.testSplit >= LIMITS.testSplit.min && c.testSplit <= LIMITS.testSplit.max)) return
    const minModels = Math.min(...c.models)
    for (const w of c.workers) {
      if (w > minModels) {
        ctx.addIssue({
          code: 'custom',
          path: ['workers'],
          message: `workers ${w} is more than models ${minModels}: each worker needs at least one model (workers must be from 1 to ${minModels})`,
        })
      }
    }
    for (const size of c.sizes) {
      const { train, test } = splitRows(size, c.testSplit)
      if (train < 1 || test < 1) {
        ctx.addIssue({
          code: 'custom',
          path: ['sizes'],
          message: `sizes ${size} leaves ${train} training and ${test} test rows at testSplit ${c.testSplit}; it needs at least one of each`,
        })
      }
    }
  })

export type BenchConfig = z.infer<typeof BenchConfigSchema>

/** Train/test row counts: the last round(size × testSplit) rows are the test set. */
export function splitRows(size: number, testSplit: number): { train: number; test: number } {
  const test = Math.round(size * testSplit)
  return { train: size - test, test }
}

export const DEFAULT_CONFIG: BenchConfig = {
  preset: 'custom',
  sizes: [10_000],
  models: [50],
  workers: [2],
  strategies: ['sequential', 'pool', 'batched'],
  backend: 'auto',
  epochs: 3,
  batchSize: 512,
  hidden: [64],
  lr: 0.01,
  repeats: 3,
  seed: 42,
  target: 'teacher',
  features: 100,
  testSplit: 0.2,
  failurePolicy: 'stop',
}

export const PRESETS: Record<PresetName, { label: string; description: string; config: Partial<BenchConfig> }> = {
  smoke: {
    label: 'Smoke',
    description: '2 000 rows × 4 models × 2 workers, 1 epoch, 1 repeat: seconds, for tests',
    config: { sizes: [2000], models: [4], workers: [2], epochs: 1, repeats: 1 },
  },
  quick: {
    label: 'Quick',
    description: '2 000 / 5 000 rows × 16 models × 2 workers, 2 epochs: a CPU-friendly look',
    config: { sizes: [2000, 5000], models: [16], workers: [2], epochs: 2, repeats: 2 },
  },
  article: {
    label: 'Article: 10k/50k/100k/200k rows × 50 models × 5 workers',
    description: "The article's experiment (with batched added): 10 000–200 000 rows, 50 models, 5 workers",
    config: { sizes: [10_000, 50_000, 100_000, 200_000], models: [50], workers: [5], epochs: 3, repeats: 3 },
  },
}

/** A preset applied over the defaults; later overrides win. */
export function presetConfig(name: PresetName, overrides: Partial<BenchConfig> = {}): BenchConfig {
  return { ...DEFAULT_CONFIG, ...PRESETS[name].config, preset: name, ...overrides }
}
