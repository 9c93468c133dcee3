// The one fake of the service, for every side's tests: the API table's service in memory (it
// implements ServiceMethods, so a method added to the table must be added here) and fakeBridge(),
// the same fake through the renderer's bridge. Pure TypeScript, no test framework: it records calls
// in plain arrays. What a test configures (canned runs, scripted events, advice, calibration,
// injected failures): README.md here.
import {
  API,
  EXPORT_EXTENSION,
  EXPORT_MIME,
  exportFileName,
  modelFileName,
  type ApiRequest,
  type ApiResponse,
  type Method,
  type ParsedRequest,
  type RunListEntry,
  type ServiceMethods,
  type TrainpoolApi,
} from '../contract/api'
import { adviseFrom, checkAdvice } from '../advice'
import { calibrationWorkload, familiesToCalibrate, familyCalibration, spreadsOverCores, unmeasuredTiming } from '../calibration'
import type { BackendTiming, CalibrationWorkload, FamilyCalibration } from '../contract/calibration'
import type { Advice, AdviceCheck } from '../contract/advice'
import type { MenuCommand } from '../contract/channels'
import type { DataSetInfo } from '../contract/dataset'
import { invalidInput, toErrorShape, TrainpoolError, type TrainpoolErrorShape } from '../vocabulary/errors'
import type { Capabilities, RunEvent } from '../contract/events'
import type { RunResult } from '../contract/result'
import { listEntry, newestFirst } from '../contract/run-list'
import { type BenchConfig, BenchConfigSchema } from '../contract/config'
import { refuseUnavailableLauncher } from '../contract/launcher'
import { resolveTask } from '../contract/task'
import { targetValuesOf } from '../data-columns'
import type { Task } from '../vocabulary/task'
import { type BackendSpec, refuseUnavailableBackend } from '../families'
import { CAPABILITIES } from './fixtures'

/** What the fake answers and records: the table's methods and shutdown. */
export type FakeMethod = Method | 'shutdown'

type RequestOf<M extends FakeMethod> = M extends Method ? ParsedRequest<M> : undefined
type ResponseOf<M extends FakeMethod> = M extends Method ? ApiResponse<M> : void

/** A method's behaviour: the default, or a test's (respond). */
export type Handler<M extends FakeMethod> = (request: RequestOf<M>) => ResponseOf<M> | Promise<ResponseOf<M>>

/** One recorded call: the method and the request as the service received it (parsed, when it came through a bridge). */
export type FakeCall = { [M in FakeMethod]: { method: M; request: RequestOf<M> } }[FakeMethod]

export interface FakeServiceOptions {
  /** merged over CAPABILITIES (an Electron machine with webgpu, wasm and cpu) */
  capabilities?: Partial<Capabilities>
  /** stored runs: each listed and readable */
  runs?: RunResult[]
  /** the id start() answers (default run-1) */
  runId?: string
}

export class FakeService implements ServiceMethods {
  capabilitiesValue: Capabilities
  /** what listRuns returns (listed newest first, as the service does) */
  runs: RunListEntry[] = []
  /** what getRun returns, by id */
  readonly results = new Map<string, RunResult>()
  /** the live run: its id and its events so far (what currentRun returns); null when idle */
  current: { runId: string; events: RunEvent[] } | null = null
  /** the id the next start() answers */
  nextRunId: string
  /** every call, in order */
  readonly calls: FakeCall[] = []
  /** the cached data sets, newest first (what dataSets returns) */
  dataSetsValue: DataSetInfo[] = []
  /** what chooseDataFile answers (null: the user cancelled the dialog) */
  chosenFile: DataSetInfo | null = null
  /** what the last start() resolved the models to learn (the service's resolveTask: generated data's target, or the cached set's target column); null before one */
  startedTask: Task | null = null

  /** verification runs in flight: their source run and the advice they check */
  private readonly verifications = new Map<string, { sourceRunId: string; advice: Advice }>()
  private readonly listeners = new Set<(e: RunEvent) => void>()
  private readonly overrides = new Map<FakeMethod, Handler<never>>()
  private readonly failures = new Map<FakeMethod, { error: unknown; times: number }[]>()

  constructor(options: FakeServiceOptions = {}) {
    this.capabilitiesValue = { ...CAPABILITIES, ...options.capabilities }
    this.nextRunId = options.runId ?? 'run-1'
    for (const r of options.runs ?? []) this.addRun(r)
  }

  // ---- configuration ----

  /** Stores a finished run: listed (an entry derived from it, or `entry`) and readable. */
  addRun(result: RunResult, entry: Partial<RunListEntry> = {}): this {
    this.results.set(result.runId, result)
    this.runs = [...this.runs.filter((r) => r.runId !== result.runId), { ...listEntry(result), ...entry }]
    return this
  }

  /** Caches a data set: listed first by dataSets, found by dataSetInfo. */
  addDataSet(info: DataSetInfo): this {
    this.dataSetsValue = [info, ...this.dataSetsValue.filter((d) => d.sha256 !== info.sha256)]
    return this
  }

  /** Replaces what `method` does (still recorded; an injected failure still comes first). */
  respond<M extends FakeMethod>(method: M, impl: Handler<M>): this {
    this.overrides.set(method, impl as Handler<never>)
    return this
  }

  /** The next `times` calls of `method` reject with `error` (an Error, a TrainpoolError, or any value). */
  fail(method: FakeMethod, error: unknown, times = 1): this {
    this.failures.set(method, [...(this.failures.get(method) ?? []), { error, times }])
    return this
  }

  // ---- recording ----

  /** The requests `method` received, in order. */
  callsTo<M extends FakeMethod>(method: M): RequestOf<M>[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.request as RequestOf<M>)
  }

  // ---- events ----

  onEvent(listener: (event: RunEvent) => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  listenerCount(): number {
    return this.listeners.size
  }

  /** Sends one event to every listener, and follows it: run-started makes it the live run, run-finished ends it. */
  emit(event: RunEvent): void {
    if (event.type === 'run-started') this.current = { runId: event.runId, events: [] }
    if (this.current?.runId === event.runId) this.current.events.push(event)
    if (event.type === 'run-finished' && this.current?.runId === event.runId) this.current = null
    for (const l of [...this.listeners]) l(event)
  }

  /** emit() each event in order. */
  play(events: readonly RunEvent[]): void {
    for (const e of events) this.emit(e)
  }

  // ---- the service interface ----

  capabilities(): Promise<Capabilities> {
    return this.call('capabilities', undefined, () => this.capabilitiesValue)
  }

  /**
   * As the service: the config is checked (schema, then the backend and the launcher against the
   * capabilities), the task resolved (refused as the service refuses it: an objective or metric that
   * does not fit the target); a live run starts.
   */
  start(request: ParsedRequest<'start'>): Promise<{ runId: string }> {
    return this.call('start', request, ({ config }) => {
      const parsed = BenchConfigSchema.safeParse(config)
      if (!parsed.success) throw invalidInput(parsed.error, config, 'config')
      refuseUnavailableBackend(parsed.data.backend, this.capabilitiesValue.backends)
      refuseUnavailableLauncher(parsed.data.launcher, this.capabilitiesValue.launchers)
      this.startedTask = this.taskOf(parsed.data)
      const runId = this.nextRunId
      this.current = { runId, events: [] }
      return { runId }
    })
  }

  cancel(request: ParsedRequest<'cancel'> = {}): Promise<{ cancelled: boolean }> {
    return this.call('cancel', request, ({ runId }) => ({
      cancelled: this.current !== null && (runId === undefined || runId === this.current.runId),
    }))
  }

  listRuns(): Promise<RunListEntry[]> {
    return this.call('listRuns', undefined, () => newestFirst(this.runs))
  }

  getRun(request: ParsedRequest<'getRun'>): Promise<RunResult> {
    return this.call('getRun', request, ({ runId }) => this.stored(runId))
  }

  currentRun(): Promise<{ runId: string; events: RunEvent[] } | null> {
    return this.call('currentRun', undefined, () => this.current && { runId: this.current.runId, events: [...this.current.events] })
  }

  renameRun(request: ParsedRequest<'renameRun'>): Promise<RunListEntry> {
    return this.call('renameRun', request, ({ runId, name }) => this.update(runId, { name }))
  }

  tagRun(request: ParsedRequest<'tagRun'>): Promise<RunListEntry> {
    return this.call('tagRun', request, ({ runId, tags }) => this.update(runId, { tags }))
  }

  deleteRun(request: ParsedRequest<'deleteRun'>): Promise<{ deleted: true }> {
    return this.call('deleteRun', request, ({ runId }) => {
      this.entry(runId)
      this.runs = this.runs.filter((r) => r.runId !== runId)
      this.results.delete(runId)
      return { deleted: true as const }
    })
  }

  exportRun(request: ParsedRequest<'exportRun'>): Promise<ApiResponse<'exportRun'>> {
    return this.call('exportRun', request, ({ runId, format }) => {
      return { fileName: exportFileName(this.entry(runId), EXPORT_EXTENSION[format]), mimeType: EXPORT_MIME[format], content: `fake ${format} of ${runId}` }
    })
  }

  reportPdf(request: ParsedRequest<'reportPdf'>): Promise<ApiResponse<'reportPdf'>> {
    return this.call('reportPdf', request, ({ runId }) => {
      return { fileName: exportFileName(this.entry(runId), 'pdf'), sizeBytes: 4, base64: 'JVBERg==' } // "%PDF"
    })
  }

  /** As the service: not-found unless the stored run says it kept models; then a small stand-in file named as the service names it. */
  bestModel(request: ParsedRequest<'bestModel'>): Promise<ApiResponse<'bestModel'>> {
    return this.call('bestModel', request, ({ runId }) => {
      const run = this.stored(runId)
      if (!run.keptModels) throw new TrainpoolError('not-found', `run ${runId} kept no trained models`)
      const ext = run.keptModels.format === 'mlp' ? 'onnx' : 'json'
      return { fileName: modelFileName(run, 0, ext), mimeType: ext === 'onnx' ? 'application/onnx' : 'application/json', sizeBytes: 2, base64: 'e30=' } // "{}"
    })
  }

  dataSets(): Promise<DataSetInfo[]> {
    return this.call('dataSets', undefined, () => [...this.dataSetsValue])
  }

  dataSetInfo(request: ParsedRequest<'dataSetInfo'>): Promise<DataSetInfo> {
    return this.call('dataSetInfo', request, ({ sha256 }) => this.dataSet(sha256))
  }

  deleteDataSet(request: ParsedRequest<'deleteDataSet'>): Promise<{ deleted: true }> {
    return this.call('deleteDataSet', request, ({ sha256 }) => {
      this.dataSet(sha256)
      this.dataSetsValue = this.dataSetsValue.filter((d) => d.sha256 !== sha256)
      return { deleted: true as const }
    })
  }

  chooseDataFile(): Promise<DataSetInfo | null> {
    return this.call('chooseDataFile', undefined, () => {
      if (this.chosenFile) this.addDataSet(this.chosenFile)
      return this.chosenFile
    })
  }

  /** the real advice (src-shared/advice) of a stored run: give the run a sweep's summary to get options */
  advise(request: ParsedRequest<'advise'>): Promise<Advice> {
    return this.call('advise', request, ({ runId, models, size }) => adviseFrom(this.stored(runId), { models, size }))
  }

  /**
   * As the service: refused when the advice is; otherwise a live run starts (nextRunId, like start).
   * Finish it with completeVerification(), which stores the check with the source run and emits
   * run-finished, in the service's order.
   */
  verifyAdvice(request: ParsedRequest<'verifyAdvice'>): Promise<{ runId: string }> {
    return this.call('verifyAdvice', request, ({ runId, models, size }) => {
      const advice = adviseFrom(this.stored(runId), { models, size })
      if (advice.refusal !== null)
        throw new TrainpoolError('invalid-input', `nothing to verify: ${advice.refusal}`, [{ field: 'models', message: advice.refusal }])
      const verifyRunId = this.nextRunId
      this.current = { runId: verifyRunId, events: [] }
      this.verifications.set(verifyRunId, { sourceRunId: runId, advice })
      return { runId: verifyRunId }
    })
  }

  /**
   * Ends a verification run started by verifyAdvice with `result` (its summary holds the measured
   * times; runId and verifies are set here): the check goes to the source run's adviceChecks, the
   * verification run is stored, and run-finished is emitted. Returns the check.
   */
  completeVerification(verifyRunId: string, result: RunResult): AdviceCheck {
    const pending = this.verifications.get(verifyRunId)
    if (!pending) throw new Error(`${verifyRunId} is not a verification run started by verifyAdvice`)
    this.verifications.delete(verifyRunId)
    const finished: RunResult = { ...result, runId: verifyRunId, verifies: pending.sourceRunId }
    const check = checkAdvice(pending.advice, finished)
    const source = this.stored(pending.sourceRunId)
    this.addRun({ ...source, adviceChecks: [...(source.adviceChecks ?? []), check] })
    this.addRun(finished)
    if (this.current?.runId !== verifyRunId) this.current = { runId: verifyRunId, events: [] }
    this.emit({ type: 'run-finished', runId: verifyRunId, result: finished })
    return check
  }

  /** As the service: the family checked, refused while a run is live; then each backend at its assumed speed (README.md here). */
  calibrate(request: ParsedRequest<'calibrate'>): Promise<FamilyCalibration[]> {
    return this.call('calibrate', request, ({ family }) => {
      const families = familiesToCalibrate(family)
      if (this.current) throw new TrainpoolError('busy', `run ${this.current.runId} is still running: cancel it or wait for it to finish (one run at a time)`)
      const caps = this.capabilitiesValue
      const at = new Date().toISOString()
      const calibrated = families.map((f) => {
        const { record } = calibrationWorkload(f, caps.cpuCount)
        const device = (name: string) => caps.backends.find((b) => b.name === name)?.detail ?? name
        const spread = (name: string) => spreadsOverCores(f, name, record)
        return familyCalibration(
          f,
          f.backends.map((spec) => unmeasuredTiming(f, spec.name, caps.backends) ?? assumedTiming(spec, record, device(spec.name), spread(spec.name))),
          record,
          at,
        )
      })
      const picked = Object.fromEntries(calibrated.flatMap((c) => (c.auto ? [[c.kind, c.auto]] : [])))
      this.capabilitiesValue = {
        ...caps,
        autoBackends: { ...caps.autoBackends, ...picked },
        calibration: { ...caps.calibration, families: { ...caps.calibration.families, ...Object.fromEntries(calibrated.map((c) => [c.kind, c])) } },
      }
      return calibrated
    })
  }

  shutdown(): Promise<void> {
    return this.call('shutdown', undefined, () => {})
  }

  // ---- inside ----

  /** Records the call synchronously (a test may look right after calling), then fails, overrides or answers. */
  private call<M extends FakeMethod>(method: M, request: RequestOf<M>, answer: Handler<M>): Promise<ResponseOf<M>> {
    this.calls.push({ method, request } as FakeCall)
    const queue = this.failures.get(method)
    if (queue?.length) {
      const next = queue[0]
      if (--next.times <= 0) queue.shift()
      return Promise.reject(next.error)
    }
    const impl = (this.overrides.get(method) as Handler<M> | undefined) ?? answer
    try {
      return Promise.resolve(impl(request))
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /**
   * The task the service would resolve: generated data's from its target; the user's from the cached
   * set's target column. A set the fake does not hold, or one cached before its values were listed,
   * reads as a numeric target of many values (the fake checks no more of the data than it did before classifiers).
   */
  private taskOf(config: BenchConfig): Task {
    if (!config.data) return resolveTask(config)
    const target = config.data.target
    const info = this.dataSetsValue.find((d) => d.sha256 === config.data!.sha256)
    const column = info?.columns.find((c) => c.name === target)
    const values = (info && column && targetValuesOf(info, column)) || { column: target, type: 'numeric' as const, distinct: null, integers: false }
    return resolveTask(config, values)
  }

  private dataSet(sha256: string): DataSetInfo {
    const found = this.dataSetsValue.find((d) => d.sha256 === sha256)
    if (!found) throw new TrainpoolError('not-found', `no data set ${sha256} in the cache`)
    return found
  }

  private entry(runId: string): RunListEntry {
    const found = this.runs.find((r) => r.runId === runId) ?? (this.results.has(runId) ? listEntry(this.results.get(runId)!) : undefined)
    if (!found) throw new TrainpoolError('not-found', `no run ${runId}`)
    return found
  }

  private stored(runId: string): RunResult {
    const r = this.results.get(runId)
    if (!r) throw new TrainpoolError('not-found', `no run ${runId}`)
    return r
  }

  /** renames ('' removes the name) or retags ([] removes the tags) a listed or stored run, as the service does */
  private update(runId: string, change: { name: string } | { tags: string[] }): RunListEntry {
    const apply = <T extends { name?: string; tags?: string[] }>(x: T): T => {
      const next = { ...x, ...change }
      if ('name' in change && change.name === '') delete next.name
      if ('tags' in change && change.tags.length === 0) delete next.tags
      return next
    }
    const updated = apply(this.entry(runId))
    this.runs = this.runs.some((r) => r.runId === runId) ? this.runs.map((r) => (r.runId === runId ? updated : r)) : [...this.runs, updated]
    const result = this.results.get(runId)
    if (result) this.results.set(runId, apply(result))
    return updated
  }
}

/** What the fake's calibration "measures": a backend's assumed speed on the calibration workload (spread: each worker's share of the work). */
function assumedTiming(spec: BackendSpec, record: CalibrationWorkload, device: string, spread: boolean): BackendTiming {
  const stepMs = (work: number) => spec.speed.stepMs + (work / spec.speed.workPerSecond) * 1000
  const share = Math.ceil(record.models / record.workers)
  return {
    backend: spec.name,
    device,
    oneModelStepMs: stepMs(record.oneModelWork),
    fusedStepMs: stepMs(record.fusedWork),
    spreadStepMs: spread ? stepMs(record.oneModelWork * share) : null,
    atLeastStepMs: null,
    note: null,
  }
}

// ---- the renderer's view of it ----

/** What the preload and the WebSocket bridge reject with: a plain object (contextBridge drops an Error's fields). */
export interface FakeBridgeError extends TrainpoolErrorShape {
  name: 'TrainpoolError'
}

export interface FakeBridge extends TrainpoolApi {
  /** the service behind it: configure and inspect the fake there */
  readonly service: FakeService
  /** Electron's application menu (with `{ menu: true }`): sends a command to onMenuCommand's listeners */
  sendMenuCommand(command: MenuCommand): void
  /** how many onMenuCommand listeners are subscribed */
  menuListenerCount(): number
}

/**
 * The fake service as the renderer sees it (TrainpoolApi), the way the real shells carry a call: the
 * request is validated against the API table (an invalid one is refused as invalid-input and never
 * reaches the service, like dispatch()), and an error comes back as the bridges' plain
 * { name: 'TrainpoolError', code, message, issues? }. `menu: true` adds onMenuCommand (the preload
 * has it; browser mode's bridge does not).
 */
export function fakeBridge(service: FakeService = new FakeService(), options: { menu?: boolean } = {}): FakeBridge {
  const menuListeners = new Set<(c: MenuCommand) => void>()
  const methods = Object.fromEntries(
    (Object.keys(API) as Method[]).map((m) => [
      m,
      async (request?: ApiRequest<typeof m>) => {
        try {
          const parsed = API[m].request.safeParse(request)
          if (!parsed.success) throw invalidInput(parsed.error, request, `${m} request`)
          return await (service[m] as (r: unknown) => Promise<unknown>).call(service, parsed.data)
        } catch (err) {
          throw {
            name: 'TrainpoolError',
            ...toErrorShape(isErrorShape(err) ? new TrainpoolError(err.code, err.message, err.issues) : err),
          } satisfies FakeBridgeError
        }
      },
    ]),
  ) as unknown as TrainpoolApi
  return {
    ...methods,
    service,
    onEvent: (listener) => service.onEvent(listener),
    ...(options.menu
      ? {
          onMenuCommand(listener: (c: MenuCommand) => void) {
            menuListeners.add(listener)
            return () => {
              menuListeners.delete(listener)
            }
          },
        }
      : {}),
    sendMenuCommand: (command) => menuListeners.forEach((l) => l(command)),
    menuListenerCount: () => menuListeners.size,
  }
}

/** A thrown { code, message } (a test may inject the wire shape itself) */
function isErrorShape(err: unknown): err is TrainpoolErrorShape {
  return (
    !(err instanceof Error) &&
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'string' &&
    typeof (err as { message?: unknown }).message === 'string'
  )
}
