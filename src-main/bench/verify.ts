// Same work, proven: every strategy trained every model, and model i's primary metric on the test
// rows (MSE, log loss, …: the run's task) (and, where
// training is exact, its fingerprint) agrees across strategies within the family's tolerance.
// Backends side by side: the same within each backend, and across backends as the family says
// (family.crossBackend). A disagreement fails the run, loudly, naming what disagreed.
import {
  type BenchConfig,
  type ConcreteBackend,
  type Measurement,
  type MeasurementKey,
  METRIC_SPECS,
  type PerModel,
  REGRESSION_TASK,
  rungsOf,
  setMember,
  type Task,
  type Verification,
} from '@shared/contract'
import { metricValue } from '@shared/metrics'
import { familyOf, type ModelFamily } from '@shared/families'
import { expandPlan } from '@shared/plan'

export function verify(
  config: BenchConfig,
  measurements: readonly Measurement[],
  task: Pick<Task, 'metric'> = REGRESSION_TASK,
  tolerance = familyOf(config.model).sameWorkTolerance,
): Verification {
  const v = new Verifier(config, tolerance, task.metric)
  for (const size of config.sizes) {
    for (const models of config.models) {
      const atSize = measurements.filter((m) => m.size === size && m.models === models)
      const references = v.backendsOf().flatMap((backend) =>
        v.checkBackend(
          atSize.filter((m) => m.backend === backend),
          backend,
          size,
          models,
        ),
      )
      v.compareBackends(references, size, models)
    }
  }
  return v.verification()
}

/** What the check found so far: its problems and notes, the models each strategy trained, the largest differences. */
class Verifier {
  private readonly family: ModelFamily
  private readonly planned: MeasurementKey[]
  private readonly problems: string[] = []
  private readonly notes: string[] = []
  private readonly modelsTrained: Record<string, number> = {}
  private maxRel = 0
  private maxCross: number | undefined
  /** "test MSE", "test log loss": what a problem calls the compared value */
  private readonly label: string
  private value(p: PerModel): number {
    return metricValue(p, this.metric)
  }

  constructor(
    private readonly config: BenchConfig,
    private readonly tolerance: number,
    private readonly metric: Task['metric'],
  ) {
    this.family = familyOf(config.model)
    this.label = `test ${METRIC_SPECS[metric].label}`
    this.planned = expandPlan(config)
  }

  backendsOf(): (ConcreteBackend | undefined)[] {
    return [...new Set(this.planned.map((k) => k.backend))]
  }

  /** One backend's measurements at a size: each against its reference (sequential, else the first that finished). Returns the reference. */
  checkBackend(here: readonly Measurement[], backend: ConcreteBackend | undefined, size: number, models: number): Measurement[] {
    const on = backend ? ` on ${backend}` : ''
    const reference = here.find((m) => m.status === 'ok' && m.strategy === 'sequential') ?? here.find((m) => m.status === 'ok')
    for (const m of here) this.checkMeasurement(m, reference, `${m.strategy} W=${m.workers}${on} repeat ${m.repeat} at ${size} rows × ${models} models`, models)
    for (const strategy of this.config.strategies) {
      if (!this.planned.some((k) => k.size === size && k.models === models && k.strategy === strategy && k.backend === backend)) continue // every W > N here
      if (!here.some((m) => m.strategy === strategy && m.status === 'ok'))
        this.problems.push(`${strategy}${on} has no finished measurement at ${size} rows × ${models} models`)
    }
    return reference ? [reference] : []
  }

  private checkMeasurement(m: Measurement, reference: Measurement | undefined, where: string, models: number): void {
    this.modelsTrained[m.strategy] = Math.min(this.modelsTrained[m.strategy] ?? Infinity, m.modelsTrained)
    if (m.status !== 'ok') this.problems.push(`${where}: ${m.status}`)
    if (m.modelsTrained !== models) this.problems.push(`${where}: trained ${m.modelsTrained} of ${models} models`)
    const seen = new Set(m.perModel.map((p) => p.index))
    if (m.status === 'ok' && seen.size !== models) this.problems.push(`${where}: results for ${seen.size} distinct models, expected ${models}`)
    const refs = new Map(reference?.perModel.map((p) => [p.index, p]) ?? [])
    for (const p of m.perModel) this.checkModel(p, refs.get(p.index), reference?.strategy, where)
    if (m.status === 'ok' && this.config.search?.method === 'halving') this.checkRungs(m, reference, where)
  }

  /**
   * A halving search (contract/halving.ts): the rungs its config plans, each model's rounds those of
   * the last rung its configuration was live in (its jobs' counters summed: a model grown twice
   * shows), and the same configurations promoted at every rung as the reference's.
   */
  private checkRungs(m: Measurement, reference: Measurement | undefined, where: string): void {
    const plan = rungsOf(this.family, this.config) ?? []
    const rungs = m.rungs ?? []
    const shape = (r: readonly { rounds: number; configurations: number }[]) => r.map((x) => `${x.configurations}×${x.rounds}`).join(' → ')
    const got = shape(rungs.map((r) => ({ rounds: r.rounds, configurations: r.configurations.length })))
    if (got !== shape(plan)) this.problems.push(`${where}: rungs ${got || 'none'}, the search plans ${shape(plan)}`)
    const set = this.config.set
    if (set) {
      for (const p of m.perModel) {
        const c = setMember(set, p.index).configuration
        const last = rungs.findLastIndex((r) => r.configurations.includes(c))
        const rounds = rungs[last]?.rounds
        if (p.rung !== last || p.roundsTrained !== rounds)
          this.problems.push(
            `${where}: model ${p.index} trained ${p.roundsTrained ?? 'no counted'} rounds reaching rung ${p.rung ?? 'none'}; its configuration's last rung is ${last} at ${rounds} rounds`,
          )
      }
    }
    if (!reference || reference === m || !reference.rungs) return
    rungs.forEach((r, i) => {
      const theirs = reference.rungs![i]?.configurations ?? []
      if (r.configurations.join() !== theirs.join())
        this.problems.push(`${where}: rung ${i} trained configurations ${r.configurations.join(', ')}, ${reference.strategy}'s ${theirs.join(', ')}`)
    })
  }

  /** Model i against the reference's model i: a finite test MSE, the same fingerprint (exact families), the MSE within tolerance. */
  private checkModel(p: PerModel, ref: PerModel | undefined, refStrategy: string | undefined, where: string): void {
    if (!Number.isFinite(this.value(p))) {
      this.problems.push(`${where}: model ${p.index} ${this.label} is ${this.value(p)}`)
      return
    }
    if (!ref) return
    if (ref.fingerprint !== undefined && p.fingerprint !== ref.fingerprint) {
      this.problems.push(`${where}: model ${p.index} differs from ${refStrategy}'s (fingerprint ${p.fingerprint ?? 'missing'} vs ${ref.fingerprint})`)
    }
    // early stopping: every strategy stops model i at the same round and keeps the same one
    if (p.roundsTrained !== ref.roundsTrained || p.bestRound !== ref.bestRound || p.rung !== ref.rung) {
      this.problems.push(
        `${where}: model ${p.index} stopped after ${p.roundsTrained ?? 'all'} rounds keeping round ${p.bestRound ?? 'last'}${p.rung !== undefined ? ` at rung ${p.rung}` : ''}, ${refStrategy}'s after ${ref.roundsTrained ?? 'all'} keeping ${ref.bestRound ?? 'last'}${ref.rung !== undefined ? ` at rung ${ref.rung}` : ''}`,
      )
    }
    const rel = relDiff(this.value(p), this.value(ref))
    if (rel > this.maxRel) this.maxRel = rel
    if (rel > this.tolerance) {
      this.problems.push(
        `${where}: model ${p.index} ${this.label} ${this.value(p).toPrecision(7)} differs from ${refStrategy}'s ${this.value(ref).toPrecision(7)} by ${rel.toExponential(2)} (tolerance ${this.tolerance})`,
      )
    }
  }

  /** Across backends: each against the first backend's reference, by the family's rule for the pair. */
  compareBackends(references: readonly Measurement[], size: number, models: number): void {
    const [base, ...others] = references
    for (const other of others) {
      const pair = `${base.backend} vs ${other.backend} at ${size} rows × ${models} models`
      const rule = this.family.crossBackend(base.backend!, other.backend!, this.config)
      if ('incomparable' in rule) {
        this.notes.push(`${pair}: not compared model by model: ${rule.incomparable}`)
        continue
      }
      const theirs = new Map(other.perModel.map((p) => [p.index, p]))
      for (const p of base.perModel) {
        const q = theirs.get(p.index)
        if (!q) continue
        if (rule.fingerprints && p.fingerprint !== undefined && q.fingerprint !== p.fingerprint) {
          this.problems.push(
            `${pair}: model ${p.index} differs (fingerprint ${q.fingerprint ?? 'missing'} vs ${p.fingerprint}): these backends must train the same model`,
          )
          continue
        }
        const rel = relDiff(this.value(q), this.value(p))
        this.maxCross = Math.max(this.maxCross ?? 0, rel)
        if (rel > rule.tolerance) {
          this.problems.push(
            `${pair}: model ${p.index} ${this.label} ${this.value(q).toPrecision(7)} vs ${this.value(p).toPrecision(7)} differs by ${rel.toExponential(2)} (cross-backend tolerance ${rule.tolerance})`,
          )
        }
      }
    }
  }

  verification(): Verification {
    const modelsTrained = Object.fromEntries(Object.entries(this.modelsTrained).map(([k, n]) => [k, Number.isFinite(n) ? n : 0]))
    const { problems, notes, maxRel, maxCross, tolerance } = this
    return {
      sameWork: problems.length === 0,
      maxRelMseDiff: maxRel,
      tolerance,
      modelsTrained,
      problems,
      ...(notes.length ? { notes } : {}),
      ...(maxCross !== undefined ? { maxCrossBackendRelMseDiff: maxCross } : {}),
    }
  }
}

function relDiff(a: number, ref: number): number {
  return Math.abs(a - ref) / Math.max(Math.abs(ref), 1e-12)
}
