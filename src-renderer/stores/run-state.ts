// The current run as plain data, and the rules that move it: applyEvent (one RunEvent in), the
// start and the stored-run transitions, and what is derived (progress, elapsed, ETA). No Pinia, no
// bridge, no timers: the run store holds one RunState and does the calls; tests call these directly.
import type { BenchConfig } from '@shared/contract/config'
import type { TrainpoolErrorShape } from '@shared/vocabulary/errors'
import type { ModelCell, RunEvent, RunPhase, WorkerLane } from '@shared/contract/events'
import type { RunListEntry } from '@shared/contract/api'
import type { Measurement, MeasurementKey, RunResult, RunStatus } from '@shared/contract/result'
import { resolveTask } from '@shared/contract/task'
import { REGRESSION_TASK, type Task } from '@shared/vocabulary/task'
import { expandPlan } from '@shared/plan'
import type { RungPlan } from '@shared/contract/halving'
import { liveRungPlan, type RungInFlight, rungInFlight } from '../lib/liveSearch'
import { appendSamples, type TelemetryView } from '../lib/telemetry'

export type RunUiStatus = 'idle' | 'starting' | 'running' | Exclude<RunStatus, 'running'> | 'error'

export const LOSS_HISTORY_MAX = 300

export interface RunState {
  status: RunUiStatus
  runId: string | null
  config: BenchConfig | null
  plan: MeasurementKey[]
  startedAtMs: number | null
  finishedAtMs: number | null
  phase: RunPhase | null
  phaseMessage: string
  currentIndex: number | null
  currentKey: MeasurementKey | null
  measurementElapsedMs: number
  modelsDone: number
  lanes: WorkerLane[]
  models: ModelCell[]
  measurements: Measurement[]
  lossHistory: number[]
  /** a halving search's rungs (contract/halving.ts), null for a grid */
  rungPlan: RungPlan[] | null
  /** the rung the current measurement's lanes are in, and the models seen in it (lib/liveSearch.ts) */
  rung: RungInFlight | null
  result: RunResult | null
  /**
   * what the models learn and the metric they are ranked by: the run-started event's (before it,
   * or from a service that does not send one: generated data's own, read from its target; null on
   * the user's data), then the result's (regression for a run from before classifiers)
   */
  task: Task | null
  error: TrainpoolErrorShape | null
  /** GPU and worker telemetry of the whole run (null: none received / an older run) */
  telemetry: TelemetryView | null
  /** the jobs a run on a scheduler has submitted so far (live; the result's own once it ends) */
  scheduler: RunResult['scheduler'] | null
  cancelling: boolean
  /** the current run was started elsewhere (another tab/window, or before this page loaded) and joined here */
  joined: boolean
  /** the furthest measurement this run has shown (1-based); the counter never goes back */
  furthestMeasurement: number
  /** the newest finished run in the store, offered on a page that opens with no run in progress */
  lastRun: { entry: RunListEntry; finishedAtMs: number | null } | null
  /** wall clock, advanced on every event (and by the store's ticker while running) */
  now: number
}

export function emptyRunState(nowMs = Date.now()): RunState {
  const s = { lastRun: null, now: nowMs } as RunState
  return resetRun(s)
}

/** Clears the live part of the view; `keepTelemetry`: a finished run keeps its telemetry. */
function clearLive(s: RunState, keepTelemetry = false): void {
  s.phase = null
  s.phaseMessage = ''
  s.currentIndex = null
  s.currentKey = null
  s.measurementElapsedMs = 0
  s.modelsDone = 0
  s.lanes = []
  s.models = []
  s.lossHistory = []
  s.rung = null
  if (!keepTelemetry) s.telemetry = null
}

/** Back to "no run": the one place every field of a run is cleared (the last-run offer and the clock stay). */
export function resetRun(s: RunState): RunState {
  s.status = 'idle'
  s.runId = null
  s.config = null
  s.rungPlan = null
  s.plan = []
  s.startedAtMs = null
  s.finishedAtMs = null
  s.measurements = []
  s.result = null
  s.task = null
  s.error = null
  s.scheduler = null
  s.cancelling = false
  s.joined = false
  s.furthestMeasurement = 0
  clearLive(s)
  return s
}

/** A fresh run on screen: everything of the previous one cleared, then what is known of this one. */
function beginRun(s: RunState, id: string, cfg: BenchConfig, plan: MeasurementKey[], startedAt: number, startedHere: boolean): void {
  resetRun(s)
  s.runId = id
  s.config = cfg
  s.rungPlan = liveRungPlan(cfg)
  s.plan = plan
  s.startedAtMs = startedAt
  s.joined = !startedHere
  s.status = 'running'
  s.task = generatedTask(cfg)
}

/** The task of a run on generated data, from its config alone (its target fixes the objective); null for the user's data or a config it refuses. */
function generatedTask(cfg: BenchConfig): Task | null {
  if (cfg.data) return null
  try {
    return resolveTask(cfg)
  } catch {
    return null
  }
}

function enterMeasurement(s: RunState, index: number, key: MeasurementKey | null): void {
  if (s.currentIndex === index) return
  s.currentIndex = index
  s.furthestMeasurement = Math.max(s.furthestMeasurement, index + 1)
  if (key) s.currentKey = key
  s.lossHistory = []
  s.modelsDone = 0
  s.measurementElapsedMs = 0
  s.models = []
  s.lanes = []
  s.rung = null
}

/** An ISO time as ms, or `fallback` when it does not parse. */
function timeOr<T>(iso: string | null | undefined, fallback: T): number | T {
  const t = iso ? Date.parse(iso) : NaN
  return Number.isFinite(t) ? t : fallback
}

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>

function onRunStarted(s: RunState, e: EventOf<'run-started'>, nowMs: number): void {
  s.lastRun = null
  // a run this page did not start (re-attached on load, or started in another tab) is "joined":
  // the config store then shows its config in the config panel
  const ours = s.status === 'starting' || e.runId === s.runId
  beginRun(s, e.runId, e.config, e.plan, timeOr(e.startedAt, nowMs), ours)
  if (e.task) s.task = e.task
}

function onPhase(s: RunState, e: EventOf<'phase'>): void {
  s.phase = e.phase
  s.phaseMessage = e.message
  if (e.index != null) enterMeasurement(s, e.index, e.key)
  // a halving measurement begins with its first rung: said from the start, since a short first rung
  // can end before the first progress snapshot (the lanes' progress then moves it on, never back)
  if (e.phase === 'measuring' && s.rungPlan && s.rung === null) s.rung = { index: 0, seen: [] }
}

function onProgress(s: RunState, e: EventOf<'progress'>): void {
  // a snapshot of an earlier measurement sent late (its timer fired after the next one began):
  // stale, and showing it would move the counter backwards
  if (s.currentIndex != null && e.index < s.currentIndex) return
  enterMeasurement(s, e.index, e.key)
  s.currentKey = e.key
  s.measurementElapsedMs = e.elapsedMs
  s.modelsDone = e.modelsDone
  s.lanes = e.lanes
  s.models = e.models
  if (s.rungPlan) s.rung = rungInFlight(s.rungPlan, e.lanes, s.rung)
  const loss = currentLoss(e.models, e.lanes)
  if (loss != null) {
    const h = s.lossHistory
    const next = h.length >= LOSS_HISTORY_MAX ? h.slice(h.length - LOSS_HISTORY_MAX + 1) : h.slice()
    next.push(loss)
    s.lossHistory = next
  }
  if (s.status === 'idle' || s.status === 'starting') s.status = 'running'
}

function onMeasurement(s: RunState, e: EventOf<'measurement'>): void {
  const m = e.measurement
  s.measurements = [...s.measurements, m]
  if (s.currentIndex !== e.index) return
  // every cell done only when the measurement finished; a cancelled or failed one marks the
  // models it did train, and leaves the rest as they were
  const trained = new Set(m.perModel.map((p) => p.index))
  s.models = s.models.map((c, i) => (m.status === 'ok' || trained.has(i) ? { ...c, fraction: 1, done: true } : c))
  s.modelsDone = s.models.filter((c) => c.done).length
}

function onRunFinished(s: RunState, r: RunResult, nowMs: number): void {
  s.result = r
  s.task = r.task ?? REGRESSION_TASK
  s.scheduler = r.scheduler ?? s.scheduler
  if (r.telemetry) s.telemetry = { gpu: r.telemetry.gpu, samples: r.telemetry.samples }
  s.measurements = r.measurements
  s.config = r.config
  s.status = r.status === 'running' ? 'interrupted' : r.status
  s.finishedAtMs = timeOr(r.finishedAt, nowMs)
  if (r.error) s.error = { code: 'internal', message: r.error }
  if (!s.plan.length) s.plan = expandPlan(r.config)
  s.cancelling = false
  // the live part ends with the run: no lanes, cells or per-measurement counters stay behind
  // to contradict the result (a cancelled measurement's cells are not "done")
  clearLive(s, true)
}

/** One event of the run stream into `s` (events of another run than the one shown are ignored). */
export function applyEvent(s: RunState, e: RunEvent, nowMs = Date.now()): RunState {
  if (e.type !== 'run-started' && s.runId != null && e.runId !== s.runId) return s
  s.now = nowMs
  switch (e.type) {
    case 'run-started':
      onRunStarted(s, e, nowMs)
      break
    case 'phase':
      onPhase(s, e)
      break
    case 'progress':
      onProgress(s, e)
      break
    case 'measurement':
      onMeasurement(s, e)
      break
    case 'telemetry':
      s.telemetry = { gpu: e.gpu, samples: appendSamples(s.telemetry?.samples ?? [], e.samples) }
      break
    case 'scheduler':
      s.scheduler = e.scheduler
      break
    case 'run-finished':
      onRunFinished(s, e.result, nowMs)
      break
  }
  return s
}

/** A start asked of the service: shown as starting, with nothing of the last attempt's error. */
export function startRequested(s: RunState): void {
  s.lastRun = null
  s.status = 'starting'
  s.error = null
  s.cancelling = false
  s.joined = false
}

/** The service started run `id`: shown as running with what is known here, if its run-started has not come yet. */
export function startAnswered(s: RunState, id: string, cfg: BenchConfig, nowMs: number): void {
  // run-started not seen yet: its event fills in the plan
  if (s.runId !== id && s.status === 'starting') beginRun(s, id, cfg, [], nowMs, true)
  if (s.status === 'starting') s.status = 'running'
}

export function startRefused(s: RunState, error: TrainpoolErrorShape): void {
  s.error = error
  s.status = 'error'
}

/** A stored, finished run shown as if it had just ended here (the "Last run … — open" offer). */
export function showStoredRun(s: RunState, r: RunResult, nowMs: number): void {
  resetRun(s)
  s.runId = r.runId
  s.config = r.config
  s.plan = expandPlan(r.config)
  s.startedAtMs = timeOr(r.startedAt, null)
  applyEvent(s, { type: 'run-finished', runId: r.runId, result: r }, nowMs)
  if (s.startedAtMs == null) s.startedAtMs = s.finishedAtMs
  s.lastRun = null
}

export function isBusy(s: RunState): boolean {
  return s.status === 'starting' || s.status === 'running'
}

export function runElapsedMs(s: RunState): number | null {
  if (s.startedAtMs == null) return null
  return Math.max(0, (s.finishedAtMs ?? s.now) - s.startedAtMs)
}

/**
 * 0..1 of the whole plan: finished measurements plus the current one's model fractions. A run
 * that finished is full; a cancelled/interrupted one stays where it stopped.
 */
export function runFraction(s: RunState): number {
  if (s.result?.status === 'ok' || s.result?.status === 'failed') return 1
  const total = s.plan.length
  if (!total) return s.result ? 1 : 0
  const done = s.measurements.filter((m) => m.status !== 'cancelled').length
  const cells = s.models
  const inCurrent = cells.length && s.currentIndex != null && s.currentIndex >= done ? cells.reduce((a, c) => a + c.fraction, 0) / cells.length : 0
  return Math.min(1, (done + inCurrent) / total)
}

/** Time left, from the time so far and the fraction done (none before 2 % of the plan). */
export function runEtaMs(s: RunState): number | null {
  const elapsed = runElapsedMs(s)
  if (!isBusy(s) || elapsed == null) return null
  const f = runFraction(s)
  if (f < 0.02) return null
  return (elapsed * (1 - f)) / f
}

/** Mean loss of the models being trained right now (lanes), falling back to the model cells. */
export function currentLoss(cells: readonly ModelCell[], lanes: readonly WorkerLane[]): number | null {
  let sum = 0
  let n = 0
  for (const l of lanes) {
    const loss = l.progress?.loss
    if (l.modelIndices.length && loss != null && Number.isFinite(loss)) {
      sum += loss
      n++
    }
  }
  if (!n) {
    for (const c of cells) {
      if (c.loss != null && Number.isFinite(c.loss)) {
        sum += c.loss
        n++
      }
    }
  }
  return n ? sum / n : null
}
