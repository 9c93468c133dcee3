// The current run: a RunState (run-state.ts: the events applied, the transitions) fed by the
// bridge's event stream, and runs started, joined, shown and cancelled through the bridge. The state
// is shallowReactive: high-rate data is replaced per event, never deep-proxied. It depends on no
// other store: the config store reads it (busy, a joined run's config, a failed start's field issues).
import { defineStore } from 'pinia'
import { computed, shallowReactive, shallowRef, toRefs } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import type { RunEvent } from '@shared/contract/events'
import type { RunResult } from '@shared/contract/result'
import { chooseBridge } from '../bridge'
import { asErrorShape } from '../lib/errors'
import * as runState from './run-state'
import type { RunState } from './run-state'

/** Advances `state.now` every 500 ms while the run is running (its elapsed time and ETA move). */
function liveClock(state: RunState) {
  let ticker: ReturnType<typeof setInterval> | null = null
  function stop() {
    if (ticker != null) clearInterval(ticker)
    ticker = null
  }
  function sync() {
    if (state.status !== 'running') stop()
    else if (ticker == null) ticker = setInterval(() => (state.now = Date.now()), 500)
  }
  return { sync, stop }
}
type LiveClock = ReturnType<typeof liveClock>

export const useRunStore = defineStore('run', () => {
  const state = shallowReactive(runState.emptyRunState())
  const clock = liveClock(state)
  const stored = storedRuns(state, clock)
  let unsubscribe: (() => void) | null = null

  function applyEvent(e: RunEvent): void {
    runState.applyEvent(state, e)
    clock.sync()
  }

  function resetRun(): void {
    runState.resetRun(state)
    clock.sync()
  }

  /** Subscribes to the bridge's event stream (once) and re-attaches to a run already in progress. */
  async function connect(): Promise<void> {
    const bridge = chooseBridge()
    if (!unsubscribe) unsubscribe = bridge.onEvent(applyEvent)
    let current: Awaited<ReturnType<typeof bridge.currentRun>> = null
    try {
      current = await bridge.currentRun()
      if (current && current.runId !== state.runId) for (const e of current.events) applyEvent(e)
    } catch {
      // no run in progress to re-attach to; not an error for the UI
    }
    if (!current && state.status === 'idle') await stored.findLastRun()
  }

  function disconnect() {
    unsubscribe?.()
    unsubscribe = null
    clock.stop()
  }

  return {
    ...toRefs(state),
    busy: computed(() => runState.isBusy(state)),
    elapsedMs: computed(() => runState.runElapsedMs(state)),
    overallFraction: computed(() => runState.runFraction(state)),
    etaMs: computed(() => runState.runEtaMs(state)),
    applyEvent,
    connect,
    disconnect,
    ...runStarts(state, clock),
    resetRun,
    ...stored,
  }
})

/** Starting a run (or an advice's verification run) and cancelling it, through the bridge. */
function runStarts(state: RunState, clock: LiveClock) {
  async function launch(cfg: BenchConfig, call: () => Promise<{ runId: string }>): Promise<string | null> {
    if (runState.isBusy(state)) return null
    runState.startRequested(state)
    try {
      const { runId } = await call()
      runState.startAnswered(state, runId, cfg, Date.now())
      clock.sync()
      return runId
    } catch (err) {
      runState.startRefused(state, asErrorShape(err))
      return null
    }
  }

  /** Starts a run of `cfg` (already validated). False when it could not start; `error` says why (with field issues). */
  async function start(cfg: BenchConfig): Promise<boolean> {
    return (await launch(cfg, () => chooseBridge().start({ config: cfg }))) != null
  }

  /**
   * Starts the run that checks an advice (API verifyAdvice): a normal live run, shown by the live
   * view like any other, started here (so the config panel keeps its draft). `cfg` is the
   * verification run's config as far as it is known here (its run-started event brings the real one).
   * Its id, or null when it could not start (`error` says why).
   */
  function startVerification(request: { runId: string; models: number; size: number }, cfg: BenchConfig): Promise<string | null> {
    return launch(cfg, () => chooseBridge().verifyAdvice(request))
  }

  async function cancel(): Promise<void> {
    if (!runState.isBusy(state) || state.cancelling) return
    state.cancelling = true
    try {
      const r = await chooseBridge().cancel(state.runId ? { runId: state.runId } : {})
      if (!r.cancelled) state.cancelling = false
    } catch (err) {
      state.cancelling = false
      state.error = asErrorShape(err)
    }
  }

  return { start, startVerification, cancel }
}

/** The newest finished run in the store and its full result (null: no history to offer). */
async function newestFinishedRun(): Promise<{ lastRun: NonNullable<RunState['lastRun']>; result: RunResult | null } | null> {
  try {
    const bridge = chooseBridge()
    const newest = (await bridge.listRuns())
      .filter((r) => r.status !== 'running' && r.status !== 'damaged')
      .sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? ''))[0]
    if (!newest) return null
    const full = await bridge.getRun({ runId: newest.runId }).catch(() => null)
    const t = full?.finishedAt ? Date.parse(full.finishedAt) : NaN
    return { lastRun: { entry: newest, finishedAtMs: Number.isFinite(t) ? t : null }, result: full }
  } catch {
    return null
  }
}

/** The last finished run offered on a page that opens with no run in progress, and showing a stored run. */
function storedRuns(state: RunState, clock: LiveClock) {
  /** the full result of `lastRun`, fetched with it (opening it then shows at once; the estimate calibrates on it) */
  const lastResult = shallowRef<RunResult | null>(null)

  /** The newest finished run in the store (a reload after a run offers it instead of "No run yet"). */
  async function findLastRun(): Promise<void> {
    const found = await newestFinishedRun()
    if (!found) return
    if (state.status === 'idle') state.lastRun = found.lastRun
    lastResult.value = found.result
  }

  /** Shows a stored, finished run in the Run view (the "Last run … — open" offer). */
  async function showStored(id: string): Promise<void> {
    const r = lastResult.value?.runId === id ? lastResult.value : await chooseBridge().getRun({ runId: id })
    if (runState.isBusy(state)) return
    runState.showStoredRun(state, r, Date.now())
    clock.sync()
  }

  return { lastResult, findLastRun, showStored }
}
