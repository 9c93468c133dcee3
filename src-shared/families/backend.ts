// A backend as a model family's shared half knows it: one entry per (family, backend) with what
// main, the renderer and the CLI need without starting it — GPU or not, `batched` or why not, its
// assumed speed — listed in `auto`'s order, and the one `auto` rule (the capabilities announce it,
// a worker applies it). The worker half (src-main/engine/families/) registers the same names; it
// imports only the vocabulary, never the contract (the contract's backend lists come from here).
import { TrainpoolError } from '../vocabulary/errors'
import type { Objective } from '../vocabulary/task'

/**
 * Assumed speed of a backend for one family: rough on purpose (the UI says "rough estimate"). The
 * estimator (src-shared/estimate.ts) reads it; the compute part divides the family's work count by
 * `workPerSecond`, so a family counts its work in its own unit.
 */
export interface BackendSpeed {
  /** work one worker does per second, in the family's work unit (FLOP for the MLP) */
  workPerSecond: number
  /** fixed cost of one training step (one progress unit): dispatch, kernel launches, JS */
  stepMs: number
  /** fixed cost of one job: model set-up, test-set evaluation, the result message */
  jobMs: number
  /** starting and warming one pool of workers, paid once per pool (repeats reuse it), before the clock */
  poolStartMs: number
  /** all workers share one device (a GPU): W workers do not add compute, only overlap fixed costs */
  sharedDevice: boolean
}

export interface BackendSpec<Name extends string = string> {
  name: Name
  /** a GPU backend: `auto` takes it only on GPU hardware (tfjs-node-gpu falls back to the CPU silently; WebGPU without a GPU is lavapipe) */
  gpu: boolean
  /** `auto` may pick it (the family's list order is the preference); false: only when asked for by name */
  auto: boolean
  /** `true`, or why `batched` does not exist on it and what to use instead (said when it is refused) */
  batched: true | { why: string }
  speed: BackendSpeed
  /** the objectives it trains (vocabulary/task.ts), and why not the others; absent: every objective */
  objectives?: { trains: readonly Objective[]; why: string }
  /** `true`: it stops models early (contract/early-stopping.ts); else why not; absent: not yet (a toy backend) */
  earlyStopping?: true | { why: string }
  /** `true`: it continues a model from the trees a rung handed back (successive halving, contract/halving.ts); else why not; absent: not yet */
  halving?: true | { why: string }
}

/** A capability a backend declares `true`, or else why not (BackendSpec's earlyStopping, halving). */
export type DeclaredCapability = 'earlyStopping' | 'halving'

type BackendTable = { label: string; backends: readonly BackendSpec[] }

/** The family's backends that declare `capability`, in the table's order. */
export function backendsWith(family: Pick<BackendTable, 'backends'>, capability: DeclaredCapability): string[] {
  return family.backends.filter((b) => b[capability] === true).map((b) => b.name)
}

/** The refusal of a backend that does not declare `capability`: "backend X cannot <doing>: <why>; accepted: <those that can>, or <without>", or null. */
function whyNotDeclared(
  family: BackendTable,
  backend: string,
  capability: DeclaredCapability,
  words: { doing: string; notYet: string; without: string },
): string | null {
  const spec = family.backends.find((b) => b.name === backend)
  const declared = spec?.[capability]
  if (!spec || declared === true) return null
  const others = backendsWith(family, capability)
  return `backend ${backend} cannot ${words.doing}: ${declared?.why ?? words.notYet}; accepted: ${others.length ? `${others.join(', ')}, or ` : ''}${words.without}`
}

/** Why a family's backend cannot continue models between halving rungs ("backend webgpu cannot continue a model (…) between rungs: …; accepted: cpu, xgboost, or search grid"), or null. */
export function whyNoHalving(family: BackendTable, backend: string): string | null {
  return whyNotDeclared(family, backend, 'halving', {
    doing: `continue a model (${family.label}) between rungs`,
    notYet: 'its engine does not continue a model from a rung yet',
    without: 'search grid',
  })
}

/**
 * Why `auto` cannot promise early stopping for a family: it picks by machine and calibration alone, and
 * may pick one of these backends that cannot stop models early; null when every backend it may pick can.
 */
export function whyNoEarlyStoppingOnAuto(family: BackendTable): string | null {
  const cannot = family.backends.filter((b) => b.auto && b.earlyStopping !== true).map((b) => b.name)
  if (cannot.length === 0) return null
  const able = backendsWith(family, 'earlyStopping')
  return `backend auto may pick ${cannot.join(' or ')}, which cannot stop a ${family.label} early yet; accepted: ${able.length ? `${able.join(', ')}, or ` : ''}no --early-stopping`
}

/** Why a family's backend cannot stop models early ("backend webgpu cannot stop a … early: …; accepted: cpu, xgboost"), or null. */
export function whyNoEarlyStopping(family: BackendTable, backend: string): string | null {
  return whyNotDeclared(family, backend, 'earlyStopping', {
    doing: `stop a ${family.label} early`,
    notYet: 'its engine does not stop models early yet',
    without: 'no --early-stopping',
  })
}

/** Why a family's backend cannot train an objective ("backend webgpu trains regression only: …; accepted: cpu, xgboost"), or null. */
export function whyNoObjective(family: BackendTable, backend: string, objective: Objective): string | null {
  const spec = family.backends.find((b) => b.name === backend)
  if (!spec?.objectives || spec.objectives.trains.includes(objective)) return null
  const others = family.backends.filter((b) => !b.objectives || b.objectives.trains.includes(objective)).map((b) => b.name)
  return `backend ${backend} cannot train a ${objective} ${family.label} yet: ${spec.objectives.why}; accepted: ${others.join(', ')}`
}

/**
 * A backend cannot start here: the one error (and the one sentence) for it, whatever the backend —
 * thrown by a worker's backend entry, by the pool when its workers report it, and said by the service
 * when the probe already knows. `reason` alone is what the probe and the worker send.
 */
export class BackendUnavailableError extends Error {
  constructor(
    readonly backend: string,
    readonly reason: string,
  ) {
    super(`backend ${backend} is not available here: ${reason}`)
    this.name = 'BackendUnavailableError'
  }
}

/**
 * A config's backend checked against what the probe found (the service's and the fake's rule):
 * `auto` always passes; a backend not found or not available is refused on field backend.
 */
export function refuseUnavailableBackend(choice: string | readonly string[], probed: readonly { name: string; available: boolean; detail: string }[]): void {
  const list = typeof choice === 'string' ? [choice] : choice
  for (const [i, backend] of list.entries()) {
    if (backend === 'auto') continue
    const cap = probed.find((b) => b.name === backend)
    if (cap?.available) continue
    const why = new BackendUnavailableError(backend, cap?.detail ?? 'unknown backend').message
    throw new TrainpoolError('backend-unavailable', why, [{ field: typeof choice === 'string' ? 'backend' : `backend.${i}`, message: why }])
  }
}

/** What the probe says of a backend, as far as the `auto` rule reads it (structured fields, never the detail text). */
export interface ProbedBackend {
  name: string
  available: boolean
  gpu?: boolean
  detail: string
}

/** The one rule of `auto`: an entry `auto` may pick, available and, for a GPU backend, on GPU hardware. */
export function autoAccepts(spec: BackendSpec, probed: ProbedBackend): boolean {
  return spec.auto && probed.available && (!spec.gpu || probed.gpu === true)
}

/** The backend `auto` picks for a family from probe results: its first entry autoAccepts(); null when none. */
export function autoBackendFor(backends: readonly BackendSpec[], probed: readonly ProbedBackend[]): string | null {
  for (const spec of backends) {
    const p = probed.find((b) => b.name === spec.name)
    if (p && autoAccepts(spec, p)) return spec.name
  }
  return null
}

/** Why autoAccepts() passed a backend by (the kept backend's autoSkipped flag, and the error when none is left). */
export function autoSkipReason(spec: BackendSpec, probed: ProbedBackend): string {
  if (!spec.auto) return `${spec.name}: only when asked for by name`
  return probed.available ? `${spec.name}: ${probed.detail} is not a GPU` : `${spec.name}: ${probed.detail}`
}

/** The names `auto` tries, in order. */
export function autoOrder(backends: readonly BackendSpec[]): string[] {
  return backends.filter((b) => b.auto).map((b) => b.name)
}
