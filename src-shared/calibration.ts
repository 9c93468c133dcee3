// `auto` by measurement (issue 32): the calibration workload of a family, what a backend costs on
// it, which backend `auto` picks and the words why, and the speed the estimate takes from it. Pure:
// main measures (bench/calibrate.ts), the FakeService pretends, the renderer reads; all through these.
// The cost is a step of the workload's models batched the fastest way the backend was measured here:
// one fused program, or (workers that do not share a device) a fused share on each of the cores.
import type { AutoChoice, BackendTiming, CalibrationWorkload, FamilyCalibration } from './contract/calibration'
import { type BenchConfig, DEFAULT_CONFIG, type ModelParams } from './contract/config'
import { stepsOf, workOf } from './contract/model-set'
import { type Workload, workloadFor } from './contract/workload'
import { TrainpoolError } from './vocabulary/errors'
import { allFamilies, type BackendSpeed, backendSpec, findFamily, familyKinds, type ModelFamily } from './families'
import { formatDuration, formatRows } from './format'

/** A family without its own calibration shape (a test's family) is timed on this. */
const DEFAULT_SHAPE = { size: 2000, models: 8, params: {}, step: 'step' } as const

/** Said where `auto` follows the table (TRAINPOOL_AUTO=order) instead of a calibration. */
export const ORDER_RULE_TEXT = "the family's table order (TRAINPOOL_AUTO=order): its first backend available here, GPU backends only on GPU hardware"

/** The families a calibrate request names (every one when none): an unknown one is refused on field family. */
export function familiesToCalibrate(kind?: string): ModelFamily[] {
  if (kind === undefined) return allFamilies()
  const family = findFamily(kind)
  if (family) return [family]
  const why = `family accepts ${familyKinds().join(', ')} (got ${JSON.stringify(kind)})`
  throw new TrainpoolError('invalid-input', why, [{ field: 'family', message: why }])
}

/** The calibration of a family as a plain config: its shape's size and models over the family's defaults, one worker. */
export function calibrationConfig(family: ModelFamily): BenchConfig {
  const shape = family.calibration ?? DEFAULT_SHAPE
  const model = { ...structuredClone(family.defaults), ...shape.params } as unknown as ModelParams
  return {
    ...DEFAULT_CONFIG,
    sizes: [shape.size],
    models: [shape.models],
    workers: [1],
    strategies: ['sequential', 'batched'],
    repeats: 1,
    backend: 'auto',
    model,
  }
}

/** What a backend is timed on: the workload, its models fused, and the record the cache keeps of it (`cores`: this machine's). */
export function calibrationWorkload(family: ModelFamily, cores: number): { workload: Workload; record: CalibrationWorkload } {
  const config = calibrationConfig(family)
  const [size] = config.sizes
  const [models] = config.models
  const workload = workloadFor(config, size)
  const steps = stepsOf(family, workload)
  const text = `${family.shortLabel} ${family.describe(config.model, config.features)} on ${formatRows(size)} rows: one model alone and ${models} fused`
  return {
    workload,
    record: {
      text,
      size,
      models,
      workers: Math.max(1, Math.min(cores, models)),
      steps,
      step: family.calibration?.step ?? DEFAULT_SHAPE.step,
      oneModelWork: workOf(family, workload, 1) / steps,
      fusedWork: workOf(family, workload, models) / steps,
    },
  }
}

/**
 * The entry of a backend the calibration does not measure, with why: one `auto` may not pick, or one
 * the probe found unavailable; null for one to measure.
 */
export function unmeasuredTiming(
  family: ModelFamily,
  backend: string,
  probed: readonly { name: string; available: boolean; detail: string }[],
): BackendTiming | null {
  const none = { backend, device: null, oneModelStepMs: null, fusedStepMs: null, spreadStepMs: null, atLeastStepMs: null }
  if (!backendSpec(family, backend)?.auto) return { ...none, note: 'not a choice of auto: only when asked for by name' }
  const found = probed.find((p) => p.name === backend)
  if (!found?.available) return { ...none, note: `not available here: ${found?.detail ?? 'not reported by the probe'}` }
  return null
}

/** Whether a backend's models are also timed spread over the cores (`spreadStepMs`): its workers do not share a device, and there are cores to spread over. */
export function spreadsOverCores(family: ModelFamily, backend: string, record: CalibrationWorkload): boolean {
  return backendSpec(family, backend)?.speed.sharedDevice === false && record.workers > 1
}

/**
 * A step of the workload's models batched the fastest way it was measured here: all fused on one
 * worker, or a fused share on each of `record.workers` workers in parallel. null until the fused
 * program is measured.
 */
export function batchedStep(t: BackendTiming, record: CalibrationWorkload): { ms: number; workers: number } | null {
  if (t.fusedStepMs === null) return null
  return t.spreadStepMs !== null && t.spreadStepMs < t.fusedStepMs ? { ms: t.spreadStepMs, workers: record.workers } : { ms: t.fusedStepMs, workers: 1 }
}

/** What is known of a batched step not measured: a cut-off run's bound, else one model's step (no batched step is faster); a backend whose bound is already over the best cannot win. */
export function batchedStepLowerBound(t: BackendTiming): number | null {
  return t.atLeastStepMs ?? t.oneModelStepMs
}

/**
 * A timed job shorter than `longEnoughMs` is timed again with more steps (its passes multiplied by a
 * power of 2, at most `maxLengthening`): a job's fixed costs (start, result, test rows) divided by 4
 * steps read as steps — on an H100 most of a 4-step fused webgpu job, a step read 10× its cost, and
 * `auto` picked the slower backend. (The difference of two lengths, tried instead, was noisier on 2 cores
 * than the bias it removes.)
 */
export const CALIBRATION_JOB = { longEnoughMs: 250, maxLengthening: 64 } as const

/** How many times the passes of a job that took `ms` are multiplied so it lasts CALIBRATION_JOB.longEnoughMs (a power of 2, capped); 1: long enough. */
export function lengthening(ms: number): number {
  let factor = 1
  while (factor < CALIBRATION_JOB.maxLengthening && ms * factor < CALIBRATION_JOB.longEnoughMs) factor *= 2
  return factor
}

/** The calibration workload with its passes (the shape's `stepsParam`) multiplied by `factor`; null where the family's shape names none. */
export function lengthenedWorkload(family: ModelFamily, workload: Workload, factor: number): Workload | null {
  const key = family.calibration?.stepsParam
  if (!key) return null
  const model = workload.model as unknown as Record<string, number>
  return { ...workload, model: { ...workload.model, [key]: model[key] * factor } } as Workload
}

/** "10.7 ms (2 workers × 25 models)", "4.2 ms (1 worker)": a batched step in words. */
export function batchedStepText(step: { ms: number; workers: number }, record: CalibrationWorkload): string {
  return step.workers === 1
    ? `${stepTimeText(step.ms)} (one fused program)`
    : `${stepTimeText(step.ms)} (${step.workers} workers × ${Math.ceil(record.models / step.workers)})`
}

/** "0.59 ms", "14.6 ms", "1.37 s": a step's time. */
export function stepTimeText(ms: number): string {
  return ms < 1 ? `${ms.toFixed(2)} ms` : formatDuration(ms)
}

/**
 * A family's calibration from its backends' timings (any order; backends missing from `timings`
 * count as not measured): the entries in the table's order, `auto` the lowest cost among the
 * backends `auto` may pick (ties: the table's order), and the reason in words.
 */
export function familyCalibration(
  family: ModelFamily,
  timings: readonly BackendTiming[],
  record: CalibrationWorkload,
  calibratedAt: string,
): FamilyCalibration {
  const none = (backend: string): BackendTiming => ({
    backend,
    device: null,
    oneModelStepMs: null,
    fusedStepMs: null,
    spreadStepMs: null,
    atLeastStepMs: null,
    note: 'not measured',
  })
  const backends = family.backends.map((spec) => timings.find((t) => t.backend === spec.name) ?? none(spec.name))
  const costs = backends.flatMap((t) => {
    const step = backendSpec(family, t.backend)?.auto ? batchedStep(t, record) : null
    return step === null ? [] : [{ backend: t.backend, step }]
  })
  const best = costs.reduce<(typeof costs)[number] | null>((a, c) => (a === null || c.step.ms < a.step.ms ? c : a), null)
  const day = calibratedAt.slice(0, 10)
  if (!best) {
    const why = backends.map((t) => `${t.backend}: ${t.note ?? 'not measured'}`).join('; ')
    return {
      kind: family.kind,
      calibratedAt,
      workload: record,
      backends,
      auto: null,
      reason: `auto has no backend it may pick here (${why}); calibrated ${day}`,
    }
  }
  const others = backends.flatMap((t) => {
    if (t.backend === best.backend || !backendSpec(family, t.backend)?.auto) return []
    const step = batchedStep(t, record)
    const bound = batchedStepLowerBound(t)
    return step !== null ? [`${t.backend} ${stepTimeText(step.ms)}`] : bound !== null ? [`${t.backend} over ${stepTimeText(bound)}`] : []
  })
  const against = others.length ? `against ${others.join(', ')}` : 'the only backend auto could measure here'
  const reason = `auto → ${best.backend}: a batched ${record.step} of ${record.models} models in ${batchedStepText(best.step, record)}, ${against} (calibrated ${day})`
  return { kind: family.kind, calibratedAt, workload: record, backends, auto: best.backend, reason }
}

/**
 * Why a kept calibration of a family cannot be used on this machine, or null. The cache is a file
 * anyone with the store may have edited: it is used only when it is what a calibration here would
 * have written — the family's own table of backends, timings only of backends the probe found
 * available (`available`), the workload this family is calibrated on with this machine's cores, a
 * pick `auto` may make here, and the pick and its words those its own timings give.
 */
export function whyCalibrationUnusable(family: ModelFamily, calibration: FamilyCalibration, available: readonly string[], cores: number): string | null {
  if (calibration.kind !== family.kind) return `is of the family ${JSON.stringify(calibration.kind)}, not ${family.kind}`
  const names = calibration.backends.map((t) => t.backend)
  const table = family.backends.map((b) => b.name)
  if (names.join() !== table.join()) return `lists the backends ${names.join(', ')}, not those of the ${family.label} (${table.join(', ')})`
  const choices = family.backends.filter((b) => b.auto && available.includes(b.name)).map((b) => b.name)
  if (calibration.auto !== null && !choices.includes(calibration.auto))
    return `picks ${JSON.stringify(calibration.auto)}, not a backend auto may pick here (${choices.join(', ') || 'none available'})`
  const timedElsewhere = calibration.backends.find((t) => t.oneModelStepMs !== null && !available.includes(t.backend))
  if (timedElsewhere) return `has timings of ${timedElsewhere.backend}, which is not available here`
  if (JSON.stringify(calibration.workload) !== JSON.stringify(calibrationWorkload(family, cores).record))
    return `was timed on another workload than the ${family.label}'s calibration here`
  const derived = familyCalibration(family, calibration.backends, calibration.workload, calibration.calibratedAt)
  if (derived.auto !== calibration.auto || derived.reason !== calibration.reason)
    return `says auto → ${calibration.auto} where its own timings give ${derived.auto}`
  return null
}

/** What a run with `auto` records from a calibration: null when it has no pick. */
export function autoChoiceOf(calibration: FamilyCalibration | undefined): AutoChoice | null {
  return calibration?.auto ? { backend: calibration.auto as AutoChoice['backend'], reason: calibration.reason, calibratedAt: calibration.calibratedAt } : null
}

/**
 * A backend's speed for the estimate: measured where the calibration has it, else the assumed one.
 * A step's time is fitted as fixed cost + work ÷ rate through its two points (one model, fused); a
 * fused step no slower than one model's (a GPU's fixed costs) is all fixed cost. Per job and per
 * pool costs stay the assumed ones (the calibration does not separate them).
 */
export function calibratedSpeed(calibration: FamilyCalibration | undefined, backend: string, assumed: BackendSpeed): BackendSpeed {
  const t = calibration?.backends.find((b) => b.backend === backend)
  if (!calibration || !t || t.oneModelStepMs === null) return assumed
  const { oneModelWork: w1, fusedWork: wN } = calibration.workload
  const t1 = t.oneModelStepMs
  // ms per unit of work: from both points, else from the assumed rate (only one model measured)
  const msPerWork = t.fusedStepMs !== null && wN > w1 ? Math.max(0, (t.fusedStepMs - t1) / (wN - w1)) : 1000 / assumed.workPerSecond
  return { ...assumed, stepMs: Math.max(0, t1 - w1 * msPerWork), workPerSecond: msPerWork > 0 ? 1000 / msPerWork : Number.POSITIVE_INFINITY }
}

/** A family's calibration as a table (the CLI prints it, the config panel shows it): one row per backend, in the table's order. */
export function calibrationTable(calibration: FamilyCalibration): { title: string; header: string[]; rows: string[][] } {
  const { models, workers, step, text } = calibration.workload
  const rows = calibration.backends.map((t) => {
    const batched = batchedStep(t, calibration.workload)
    const bound = batchedStepLowerBound(t)
    const ms = (v: number | null) => (v === null ? '–' : stepTimeText(v))
    const what = [t.device, t.note].filter((x): x is string => !!x).join(' — ')
    return [
      t.backend,
      ms(t.oneModelStepMs),
      ms(t.fusedStepMs),
      ms(t.spreadStepMs),
      batched ? stepTimeText(batched.ms) : bound !== null ? `over ${stepTimeText(bound)}` : '–',
      what,
    ]
  })
  const spread = `${models} over ${workers} worker${workers === 1 ? '' : 's'} / ${step}`
  return {
    title: text,
    header: ['backend', `one model / ${step}`, `${models} fused / ${step}`, spread, 'fastest batched', 'device, or why not measured'],
    rows,
  }
}
