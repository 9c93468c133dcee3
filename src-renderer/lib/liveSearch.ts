// What the live lanes say of a search (issue 39): under successive halving, the rung in flight
// ("rung 2 of 4 · 18 of 54 configurations · 54 models") and the models that left at a cut; under
// early stopping, the models that stopped before their last round. The rung comes from the lanes'
// progress (a rung's jobs train to its rounds: progress.total), never going back within a
// measurement; who trained how far from the cells' rounds trained (each model-done's, summed over
// rungs by the runner). The rungs themselves are the shared rule's (contract/halving.ts rungsOf).
import type { BenchConfig } from '@shared/contract/config'
import type { ModelCell, WorkerLane } from '@shared/contract/events'
import { configurationModels, type RungPlan, rungsOf } from '@shared/contract/halving'
import { configurationParams, setMember } from '@shared/contract/model-set'
import { familyOf } from '@shared/families'

/** A halving run's rungs, or null (a grid, or a config the families do not know). */
export function liveRungPlan(config: BenchConfig | null): RungPlan[] | null {
  if (!config) return null
  try {
    return rungsOf(familyOf(config.model), config)
  } catch {
    return null
  }
}

/** The rung in flight and the models seen training in it so far (ascending). */
export interface RungInFlight {
  index: number
  seen: number[]
}

/**
 * The rung the lanes are in — the furthest whose rounds a lane's progress counts to, never before
 * `previous` — with the models seen in it: a lane's job counting to its rounds, or one just handed
 * out (no progress yet: only the current rung's jobs, or the next's, whose models are the current's
 * too, are handed out). Null before any progress.
 */
export function rungInFlight(plan: readonly RungPlan[], lanes: readonly WorkerLane[], previous: RungInFlight | null): RungInFlight | null {
  let index = previous?.index ?? null
  for (const l of lanes) {
    if (!l.modelIndices.length || !l.progress) continue
    const i = plan.findIndex((r) => r.rounds === l.progress!.total)
    if (i >= 0 && (index === null || i > index)) index = i
  }
  if (index === null) return null
  const seen = new Set(index === previous?.index ? previous.seen : [])
  for (const l of lanes) if (!l.progress || l.progress.total === plan[index].rounds) for (const m of l.modelIndices) seen.add(m)
  return { index, seen: [...seen].sort((a, b) => a - b) }
}

/** What a model's cell shows beyond its progress: trained on, left after rung k (1-based), or stopped at round r. */
export type CellSearchState = { kind: 'left'; afterRung: number } | { kind: 'stopped'; round: number } | null

export interface LiveSearch {
  /** "rung 2 of 4 · 18 of 54 configurations · 54 models", or an early-stopping count "3 of 12 models stopped early" */
  text: string
  /** per model (by index) */
  cells: CellSearchState[]
}

/**
 * The search's live words and each cell's state, or null when the run does not search (a grid
 * without early stopping). `rung`: the rung in flight (rungInFlight), null before the first progress.
 */
export function liveSearch(
  config: BenchConfig | null,
  plan: readonly RungPlan[] | null,
  rung: RungInFlight | null,
  cells: readonly ModelCell[],
): LiveSearch | null {
  if (!config) return null
  if (plan && rung !== null) {
    const at = rung.index
    const r = plan[at]
    const perConfiguration = config.set ? configurationModels(config.set, 0).length : 1
    // the last rung each model finished (its rounds trained are that rung's)
    const finished = cells.map((c) => (c.roundsTrained === undefined ? -1 : plan.findIndex((p) => p.rounds === c.roundsTrained)))
    // the rung's models are known once as many have been seen in it (or finished it) as it trains
    const live = new Set(rung.seen)
    finished.forEach((k, i) => k === at && live.add(i))
    const known = live.size >= r.configurations * perConfiguration
    // a model left after rung k+1 when a rung after the next is in flight, or the next's models are all known without it
    const states = finished.map((k, i): CellSearchState =>
      k >= 0 && (k < at - 1 || (k === at - 1 && known && !live.has(i))) ? { kind: 'left', afterRung: k + 1 } : null,
    )
    const left = plan[0].configurations - r.configurations
    const models = r.configurations * perConfiguration
    const s = (n: number) => (n === 1 ? '' : 's')
    return {
      text: `rung ${at + 1} of ${plan.length} · ${r.configurations} of ${plan[0].configurations} configurations · ${models} model${s(models)} to ${r.rounds} round${s(r.rounds)}${left > 0 ? ` · ${left} configuration${s(left)} left at the cuts` : ''}`,
      cells: states,
    }
  }
  if (config.earlyStopping !== undefined) {
    const family = familyOf(config.model)
    const maxRounds = family.maxRounds
    if (!maxRounds) return null
    const set = config.set
    // a model stopped when it trained fewer rounds than its configuration's (the model's, without a set)
    const states = cells.map((c, i): CellSearchState => {
      if (!c.done || c.roundsTrained === undefined) return null
      const full = maxRounds((set ? configurationParams(family, config.model, set, setMember(set, i).configuration) : config.model) as never)
      return c.roundsTrained < full ? { kind: 'stopped', round: c.roundsTrained } : null
    })
    const stopped = states.filter((s) => s?.kind === 'stopped').length
    return { text: `early stopping: ${stopped} of ${cells.length} models stopped before their last round`, cells: states }
  }
  return null
}
