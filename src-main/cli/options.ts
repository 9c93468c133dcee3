// Flag parsing for `trainpool bench`: flags → a raw config, and config errors → messages that name
// the flag, the value and the accepted range.
import {
  BACKENDS, type BenchConfig, BenchConfigSchema, DEFAULT_CONFIG, LIMITS, PRESET_NAMES, type PresetName, presetConfig,
  STRATEGIES, TARGETS, fieldIssues,
} from '@shared/contract'

export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/** config field → the flag that sets it */
export const FLAG_FOR_FIELD: Record<string, string> = {
  sizes: '--sizes', models: '--models', workers: '--workers', strategies: '--strategies', backend: '--backend',
  epochs: '--epochs', batchSize: '--batch-size', hidden: '--hidden', lr: '--lr', repeats: '--repeats', seed: '--seed',
  target: '--target', preset: '--preset', features: '--features', testSplit: '--test-split', failurePolicy: '--on-failure',
}

export interface BenchFlags {
  preset?: string
  sizes?: string
  models?: string
  workers?: string
  strategies?: string
  backend?: string
  epochs?: string
  batchSize?: string
  hidden?: string
  lr?: string
  repeats?: string
  seed?: string
  target?: string
  features?: string
  testSplit?: string
  onFailure?: string
}

function numberList(flag: string, text: string, range: { min: number; max: number }): number[] {
  const parts = text.split(',').map((s) => s.trim())
  return parts.map((p) => {
    const v = /^[+-]?\d+(\.\d+)?(e\d+)?$/i.test(p.replace(/_/g, '')) ? Number(p.replace(/_/g, '')) : NaN
    if (!Number.isInteger(v)) {
      throw new UsageError(`${flag} ${JSON.stringify(text)}: ${JSON.stringify(p)} is not an integer; accepted: comma-separated integers from ${range.min} to ${range.max}`)
    }
    return v
  })
}

function numberValue(flag: string, text: string, accepted: string): number {
  const v = Number(text)
  if (text.trim() === '' || !Number.isFinite(v)) throw new UsageError(`${flag} ${JSON.stringify(text)} is not a number; accepted: ${accepted}`)
  return v
}

function integerValue(flag: string, text: string, range: { min: number; max: number }): number {
  const v = numberValue(flag, text, `an integer from ${range.min} to ${range.max}`)
  if (!Number.isInteger(v)) throw new UsageError(`${flag} ${JSON.stringify(text)} is not an integer; accepted: an integer from ${range.min} to ${range.max}`)
  return v
}

/** Flags → the full config (preset, then explicit flags), validated. Throws UsageError. */
export function configFromFlags(flags: BenchFlags): BenchConfig {
  let base: BenchConfig = { ...DEFAULT_CONFIG }
  if (flags.preset !== undefined) {
    if (!(PRESET_NAMES as readonly string[]).includes(flags.preset)) {
      throw new UsageError(`--preset ${JSON.stringify(flags.preset)} is not a preset; accepted: ${PRESET_NAMES.join(', ')}`)
    }
    base = presetConfig(flags.preset as PresetName)
  }
  const raw: Record<string, unknown> = { ...base }
  const explicit = (field: string, value: unknown) => {
    raw[field] = value
    if (flags.preset === undefined) raw.preset = 'custom'
  }
  if (flags.sizes !== undefined) explicit('sizes', numberList('--sizes', flags.sizes, LIMITS.size))
  if (flags.models !== undefined) explicit('models', numberList('--models', flags.models, LIMITS.models))
  if (flags.workers !== undefined) explicit('workers', numberList('--workers', flags.workers, LIMITS.workers))
  if (flags.hidden !== undefined) explicit('hidden', numberList('--hidden', flags.hidden, LIMITS.hidden))
  if (flags.strategies !== undefined) explicit('strategies', flags.strategies.split(',').map((s) => s.trim()))
  if (flags.backend !== undefined) explicit('backend', flags.backend)
  if (flags.target !== undefined) explicit('target', flags.target)
  if (flags.onFailure !== undefined) explicit('failurePolicy', flags.onFailure)
  if (flags.epochs !== undefined) explicit('epochs', integerValue('--epochs', flags.epochs, LIMITS.epochs))
  if (flags.batchSize !== undefined) explicit('batchSize', integerValue('--batch-size', flags.batchSize, LIMITS.batchSize))
  if (flags.repeats !== undefined) explicit('repeats', integerValue('--repeats', flags.repeats, LIMITS.repeats))
  if (flags.seed !== undefined) explicit('seed', integerValue('--seed', flags.seed, LIMITS.seed))
  if (flags.features !== undefined) explicit('features', integerValue('--features', flags.features, LIMITS.features))
  if (flags.lr !== undefined) explicit('lr', numberValue('--lr', flags.lr, `a number from ${LIMITS.lr.min} to ${LIMITS.lr.max}`))
  if (flags.testSplit !== undefined) explicit('testSplit', numberValue('--test-split', flags.testSplit, `a number from ${LIMITS.testSplit.min} to ${LIMITS.testSplit.max}`))
  const parsed = BenchConfigSchema.safeParse(raw)
  if (!parsed.success) {
    const messages = fieldIssues(parsed.error, raw).map((issue) => {
      const top = issue.field.split('.')[0]
      const flag = FLAG_FOR_FIELD[top] ?? top
      return `${flag}: ${issue.message.replace(new RegExp(`^${top}\\b`), flag)}`
    })
    throw new UsageError([...new Set(messages)].join('\n'))
  }
  return parsed.data
}

export const FLAG_HELP = {
  strategies: `comma-separated: ${STRATEGIES.join(', ')}`,
  backend: BACKENDS.join(' | '),
  target: TARGETS.join(' | '),
}
