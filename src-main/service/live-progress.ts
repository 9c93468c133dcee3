// The live view of the measurement in flight: one lane per worker (what it trains, its Progress)
// and one cell per model, projected from the runner's hooks and sent as `progress` events at most
// once per PROGRESS_MIN_INTERVAL_MS (the shells redraw from these snapshots; a tab that re-attaches
// gets the last one).
import { type MeasurementKey, type ModelCell, PROGRESS_MIN_INTERVAL_MS, type Progress, type RunEvent, type WorkerLane } from '@shared/contract'
import type { WorkerWhere } from '../bench/runner'

export class LiveProgress {
  private lanes: WorkerLane[] = []
  private models: ModelCell[] = []
  /** each lane's GPU and host, once its worker reported them */
  private readonly whereOf: WorkerWhere[] = []
  private index = 0
  private key: MeasurementKey | null = null
  private started = performance.now()
  private timer: NodeJS.Timeout | null = null
  private lastSent = 0
  /** the last snapshot sent (re-attaching tabs start from it) */
  last: Extract<RunEvent, { type: 'progress' }> | null = null

  constructor(
    private readonly runId: string,
    private readonly emit: (event: RunEvent) => void,
  ) {}

  /** A measurement starts: lanes and cells start empty (the runner calls this before dispatching). */
  measuring(index: number, key: MeasurementKey): void {
    this.index = index
    this.key = key
    this.started = performance.now()
    this.models = Array.from({ length: key.models }, () => ({ fraction: 0, loss: null, done: false }))
    this.lanes = []
  }

  /** the worker's running job is now this one (not the one it holds next) */
  running(worker: number, modelIndices: number[], where?: WorkerWhere): void {
    if (where) this.whereOf[worker] = { ...this.whereOf[worker], ...where }
    this.lanes[worker] = { worker, modelIndices, progress: null, ...this.whereField(worker) }
    this.schedule()
  }

  private whereField(worker: number): WorkerWhere {
    const w = this.whereOf[worker]
    return { ...(w?.gpu !== undefined ? { gpu: w.gpu } : {}), ...(w?.host !== undefined ? { host: w.host } : {}) }
  }

  progressed(worker: number, modelIndices: number[], progress: Progress): void {
    this.lanes[worker] = { worker, modelIndices, progress, ...this.whereField(worker) }
    const fraction = progress.total > 0 ? progress.done / progress.total : 0
    for (const i of modelIndices) {
      const cell = this.models[i]
      if (cell && !cell.done) {
        cell.fraction = fraction
        cell.loss = progress.loss ?? null
      }
    }
    this.schedule()
  }

  /** `roundsTrained`: the model's rounds so far, when it counts them (early stopping, halving): the lanes show who stopped or left */
  modelDone(index: number, finalLoss: number | null, roundsTrained?: number): void {
    const cell = this.models[index]
    if (cell) Object.assign(cell, { fraction: 1, loss: finalLoss, done: true, ...(roundsTrained !== undefined ? { roundsTrained } : {}) })
    this.schedule()
  }

  /**
   * Sends the snapshot now. `ifDue`: only when the interval since the last one has passed (before
   * a measurement or the end of a run; those events mark the models done themselves).
   */
  flush(ifDue = false): void {
    this.stop()
    if (ifDue && performance.now() - this.lastSent < PROGRESS_MIN_INTERVAL_MS) return
    if (!this.key) return
    this.lastSent = performance.now()
    this.last = {
      type: 'progress',
      runId: this.runId,
      index: this.index,
      key: this.key,
      elapsedMs: performance.now() - this.started,
      modelsDone: this.models.filter((m) => m.done).length,
      lanes: this.lanes.filter(Boolean).map((l) => ({ ...l, modelIndices: [...l.modelIndices] })),
      models: this.models.map((m) => ({ ...m })),
    }
    this.emit(this.last)
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  private schedule(): void {
    if (this.timer) return
    const wait = Math.max(0, this.lastSent + PROGRESS_MIN_INTERVAL_MS - performance.now())
    this.timer = setTimeout(() => this.flush(), wait)
  }
}
