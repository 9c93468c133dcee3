// The current run: applies the RunEvent stream (lanes, model cells, measurements, status, timing,
// loss history) and starts/cancels runs through the bridge. High-rate data sits in shallowRefs that
// are replaced per event, never deep-proxied. It depends on no other store: the config store reads
// it (busy, a joined run's config, a failed start's field issues), never the other way round.
import { defineStore } from 'pinia'
import { computed, ref, shallowRef } from 'vue'
import type { BenchConfig } from '@shared/contract/config'
import type { TrainpoolErrorShape } from '@shared/contract/errors'
import type { ModelCell, RunEvent, RunPhase, WorkerLane } from '@shared/contract/events'
import type { RunListEntry } from '@shared/contract/api'
import type { Measurement, MeasurementKey, RunResult, RunStatus } from '@shared/contract/result'
import { expandPlan } from '@shared/plan'
import { chooseBridge } from '../bridge'
import { asErrorShape } from '../lib/errors'
import { appendSamples, type TelemetryView } from '../lib/telemetry'

export type RunUiStatus = 'idle' | 'starting' | 'running' | Exclude<RunStatus, 'running'> | 'error'

export const LOSS_HISTORY_MAX = 300

export const useRunStore = defineStore('run', () => {
  const status = ref<RunUiStatus>('idle')
  const runId = ref<string | null>(null)
  const config = shallowRef<BenchConfig | null>(null)
  const plan = shallowRef<MeasurementKey[]>([])
  const startedAtMs = ref<number | null>(null)
  const finishedAtMs = ref<number | null>(null)
  const phase = ref<RunPhase | null>(null)
  const phaseMessage = ref('')
  const currentIndex = ref<number | null>(null)
  const currentKey = shallowRef<MeasurementKey | null>(null)
  const measurementElapsedMs = ref(0)
  const modelsDone = ref(0)
  const lanes = shallowRef<WorkerLane[]>([])
  const models = shallowRef<ModelCell[]>([])
  const measurements = shallowRef<Measurement[]>([])
  const lossHistory = shallowRef<number[]>([])
  const result = shallowRef<RunResult | null>(null)
  const error = shallowRef<TrainpoolErrorShape | null>(null)
  /** GPU and worker telemetry of the whole run (null: none received / an older run) */
  const telemetry = shallowRef<TelemetryView | null>(null)
  /** the jobs a run on a scheduler has submitted so far (live; the result's own once it ends) */
  const scheduler = shallowRef<RunResult['scheduler'] | null>(null)
  const cancelling = ref(false)
  /** the current run was started elsewhere (another tab/window, or before this page loaded) and joined here */
  const joined = ref(false)
  /** the furthest measurement this run has shown (1-based); the counter never goes back */
  const furthestMeasurement = ref(0)
  /** the newest finished run in the store, offered on a page that opens with no run in progress */
  const lastRun = shallowRef<{ entry: RunListEntry; finishedAtMs: number | null } | null>(null)
  /** wall clock, advanced by a ticker while running and on every event */
  const now = ref(Date.now())
  let ticker: ReturnType<typeof setInterval> | null = null
  let unsubscribe: (() => void) | null = null
  /** the full result of `lastRun`, fetched with it (opening it then shows at once; the estimate calibrates on it) */
  const lastResult = shallowRef<RunResult | null>(null)

  const busy = computed(() => status.value === 'starting' || status.value === 'running')

  function startTicker() {
    if (ticker == null) ticker = setInterval(() => (now.value = Date.now()), 500)
  }
  function stopTicker() {
    if (ticker != null) clearInterval(ticker)
    ticker = null
  }

  /** Clears the live part of the view; `keepTelemetry`: a finished run keeps its telemetry. */
  function clearLive(keepTelemetry = false) {
    phase.value = null
    phaseMessage.value = ''
    currentIndex.value = null
    currentKey.value = null
    measurementElapsedMs.value = 0
    modelsDone.value = 0
    lanes.value = []
    models.value = []
    lossHistory.value = []
    if (!keepTelemetry) telemetry.value = null
  }

  /** Back to "no run": the one place every field of a run is cleared. */
  function resetRun() {
    stopTicker()
    status.value = 'idle'
    runId.value = null
    config.value = null
    plan.value = []
    startedAtMs.value = null
    finishedAtMs.value = null
    measurements.value = []
    result.value = null
    error.value = null
    scheduler.value = null
    cancelling.value = false
    joined.value = false
    furthestMeasurement.value = 0
    clearLive()
  }

  /** A fresh run on screen: everything of the previous one cleared, then what is known of this one. */
  function beginRun(id: string, cfg: BenchConfig, runPlan: MeasurementKey[], startedAt: number, startedHere: boolean) {
    resetRun()
    runId.value = id
    config.value = cfg
    plan.value = runPlan
    startedAtMs.value = startedAt
    joined.value = !startedHere
    status.value = 'running'
    startTicker()
  }

  function enterMeasurement(index: number, key: MeasurementKey | null) {
    if (currentIndex.value === index) return
    currentIndex.value = index
    furthestMeasurement.value = Math.max(furthestMeasurement.value, index + 1)
    if (key) currentKey.value = key
    lossHistory.value = []
    modelsDone.value = 0
    measurementElapsedMs.value = 0
    models.value = []
    lanes.value = []
  }

  function applyEvent(e: RunEvent): void {
    if (e.type !== 'run-started' && runId.value != null && e.runId !== runId.value) return
    now.value = Date.now()
    switch (e.type) {
      case 'run-started': {
        lastRun.value = null
        // a run this page did not start (re-attached on load, or started in another tab) is "joined":
        // the config store then shows its config in the config panel
        const ours = status.value === 'starting' || e.runId === runId.value
        const t = Date.parse(e.startedAt)
        beginRun(e.runId, e.config, e.plan, Number.isFinite(t) ? t : Date.now(), ours)
        break
      }
      case 'phase':
        phase.value = e.phase
        phaseMessage.value = e.message
        if (e.index != null) enterMeasurement(e.index, e.key)
        break
      case 'progress': {
        // a snapshot of an earlier measurement sent late (its timer fired after the next one began):
        // stale, and showing it would move the counter backwards
        if (currentIndex.value != null && e.index < currentIndex.value) break
        enterMeasurement(e.index, e.key)
        currentKey.value = e.key
        measurementElapsedMs.value = e.elapsedMs
        modelsDone.value = e.modelsDone
        lanes.value = e.lanes
        models.value = e.models
        const loss = currentLoss(e.models, e.lanes)
        if (loss != null) {
          const h = lossHistory.value
          const next = h.length >= LOSS_HISTORY_MAX ? h.slice(h.length - LOSS_HISTORY_MAX + 1) : h.slice()
          next.push(loss)
          lossHistory.value = next
        }
        if (status.value === 'idle' || status.value === 'starting') status.value = 'running'
        break
      }
      case 'measurement': {
        const m = e.measurement
        measurements.value = [...measurements.value, m]
        if (currentIndex.value === e.index) {
          // every cell done only when the measurement finished; a cancelled or failed one marks the
          // models it did train, and leaves the rest as they were
          const trained = new Set(m.perModel.map((p) => p.index))
          models.value = models.value.map((c, i) => (m.status === 'ok' || trained.has(i) ? { ...c, fraction: 1, done: true } : c))
          modelsDone.value = models.value.filter((c) => c.done).length
        }
        break
      }
      case 'telemetry':
        telemetry.value = { gpu: e.gpu, samples: appendSamples(telemetry.value?.samples ?? [], e.samples) }
        break
      case 'scheduler':
        scheduler.value = e.scheduler
        break
      case 'run-finished': {
        const r = e.result
        result.value = r
        scheduler.value = r.scheduler ?? scheduler.value
        if (r.telemetry) telemetry.value = { gpu: r.telemetry.gpu, samples: r.telemetry.samples }
        measurements.value = r.measurements
        config.value = r.config
        status.value = r.status === 'running' ? 'interrupted' : r.status
        const t = r.finishedAt ? Date.parse(r.finishedAt) : NaN
        finishedAtMs.value = Number.isFinite(t) ? t : Date.now()
        if (r.error) error.value = { code: 'internal', message: r.error }
        if (!plan.value.length) plan.value = expandPlan(r.config)
        cancelling.value = false
        // the live part ends with the run: no lanes, cells or per-measurement counters stay behind
        // to contradict the result (a cancelled measurement's cells are not "done")
        clearLive(true)
        stopTicker()
        break
      }
    }
  }

  /** Subscribes to the bridge's event stream (once) and re-attaches to a run already in progress. */
  async function connect(): Promise<void> {
    const bridge = chooseBridge()
    if (!unsubscribe) unsubscribe = bridge.onEvent(applyEvent)
    let current: Awaited<ReturnType<typeof bridge.currentRun>> = null
    try {
      current = await bridge.currentRun()
      if (current && current.runId !== runId.value) for (const e of current.events) applyEvent(e)
    } catch {
      // no run in progress to re-attach to; not an error for the UI
    }
    if (!current && status.value === 'idle') await findLastRun()
  }

  /** The newest finished run in the store (a reload after a run offers it instead of "No run yet"). */
  async function findLastRun(): Promise<void> {
    try {
      const bridge = chooseBridge()
      const newest = (await bridge.listRuns())
        .filter((r) => r.status !== 'running' && r.status !== 'damaged')
        .sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? ''))[0]
      if (!newest) return
      const full = await bridge.getRun({ runId: newest.runId }).catch(() => null)
      const t = full?.finishedAt ? Date.parse(full.finishedAt) : NaN
      if (status.value === 'idle') lastRun.value = { entry: newest, finishedAtMs: Number.isFinite(t) ? t : null }
      lastResult.value = full
    } catch {
      // no history to offer: the view says "No run yet"
    }
  }
  /** Shows a stored, finished run in the Run view (the "Last run … — open" offer). */
  async function showStored(id: string): Promise<void> {
    const r = lastResult.value?.runId === id ? lastResult.value : await chooseBridge().getRun({ runId: id })
    if (busy.value) return
    const t = Date.parse(r.startedAt)
    resetRun()
    runId.value = r.runId
    config.value = r.config
    plan.value = expandPlan(r.config)
    startedAtMs.value = Number.isFinite(t) ? t : null
    applyEvent({ type: 'run-finished', runId: r.runId, result: r })
    if (startedAtMs.value == null) startedAtMs.value = finishedAtMs.value
    lastRun.value = null
  }

  function disconnect() {
    unsubscribe?.()
    unsubscribe = null
    stopTicker()
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

  async function launch(cfg: BenchConfig, call: () => Promise<{ runId: string }>): Promise<string | null> {
    if (busy.value) return null
    lastRun.value = null
    status.value = 'starting'
    error.value = null
    cancelling.value = false
    joined.value = false
    try {
      const { runId: id } = await call()
      // run-started not seen yet: show the run as started with what we know (its event fills in the plan)
      if (runId.value !== id && status.value === 'starting') beginRun(id, cfg, [], Date.now(), true)
      if (status.value === 'starting') status.value = 'running'
      startTicker()
      return id
    } catch (err) {
      error.value = asErrorShape(err)
      status.value = 'error'
      return null
    }
  }

  async function cancel(): Promise<void> {
    if (!busy.value || cancelling.value) return
    cancelling.value = true
    try {
      const r = await chooseBridge().cancel(runId.value ? { runId: runId.value } : {})
      if (!r.cancelled) cancelling.value = false
    } catch (err) {
      cancelling.value = false
      error.value = asErrorShape(err)
    }
  }

  const elapsedMs = computed(() => {
    if (startedAtMs.value == null) return null
    return Math.max(0, (finishedAtMs.value ?? now.value) - startedAtMs.value)
  })

  /**
   * 0..1 of the whole plan: finished measurements plus the current one's model fractions. A run
   * that finished is full; a cancelled/interrupted one stays where it stopped.
   */
  const overallFraction = computed(() => {
    if (result.value?.status === 'ok' || result.value?.status === 'failed') return 1
    const total = plan.value.length
    if (!total) return result.value ? 1 : 0
    const done = measurements.value.filter((m) => m.status !== 'cancelled').length
    const cells = models.value
    const inCurrent =
      cells.length && currentIndex.value != null && currentIndex.value >= done
        ? cells.reduce((a, c) => a + c.fraction, 0) / cells.length
        : 0
    return Math.min(1, (done + inCurrent) / total)
  })

  const etaMs = computed(() => {
    if (!busy.value || elapsedMs.value == null) return null
    const f = overallFraction.value
    if (f < 0.02) return null
    return (elapsedMs.value * (1 - f)) / f
  })

  return {
    status,
    runId,
    config,
    plan,
    startedAtMs,
    finishedAtMs,
    phase,
    phaseMessage,
    currentIndex,
    currentKey,
    measurementElapsedMs,
    modelsDone,
    lanes,
    models,
    measurements,
    lossHistory,
    result,
    error,
    telemetry,
    scheduler,
    cancelling,
    joined,
    furthestMeasurement,
    lastRun,
    lastResult,
    now,
    busy,
    elapsedMs,
    overallFraction,
    etaMs,
    applyEvent,
    connect,
    disconnect,
    start,
    startVerification,
    cancel,
    resetRun,
    findLastRun,
    showStored,
  }
})

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
