// `auto` by calibration, for the service (issue 32): this machine's calibration read from the store's
// cache (or kept in memory without a store), redone on request (the API's calibrate, `trainpool
// calibrate`), and done on first use by a run with `auto`, which then runs on the pick — every worker
// the same backend. TRAINPOOL_AUTO=order keeps the old rule: the workers take the table's order.
//
// A calibration must run alone: one timed beside another calibration or a run keeps the other's
// noise (a fused round measured at 3.3× its quiet time). Of the two ways to know, the store's locks
// are used, not the machine's load: os.loadavg() counts every process on the machine, trails by a
// minute and cannot name what competed, so it would refuse every calibration on a busy shared
// machine and still miss a run that started a second ago. So a calibration holds the store's
// calibration lock (store/calibration-lock.ts: a second calibration is refused, naming the first's
// pid), is refused while another process writes a live run in the store (its writer lock), and
// watches for one starting while it times: what it measured then is returned and said, not kept.
// A run that starts during a calibration says so in its warnings (live-run.ts).
import os from 'node:os'
import { autoChoiceOf, ORDER_RULE_TEXT, whyCalibrationUnusable } from '@shared/calibration'
import {
  AUTO_RULES,
  type AutoChoice,
  type AutoRule,
  CALIBRATION_VERSION,
  type CalibrationFile,
  type CalibrationState,
  type Capabilities,
  type FamilyCalibration,
  type MachineKey,
  TrainpoolError,
} from '@shared/contract'
import { BackendUnavailableError, findFamily, isGpuBackend, type ModelFamily } from '@shared/families'
import { calibrateFamily, type CalibrationHooks } from '../bench/calibrate'
import type { WorkerLauncher } from '../pool/launcher'
import { type CalibrationLockOptions, holdCalibrationLock } from '../store/calibration-lock'
import { calibrationPath, privateCalibrationDir, readCalibration, writeCalibration } from '../store/calibration-cache'
import { HEARTBEAT_MS, type WriterLock } from '../store/writer-lock'
import { type LiveWriter, RunStore } from '../store/run-store'
import type { BackendProbe } from './backend-probe'

/** The rule TRAINPOOL_AUTO names (unset: calibrated); anything else is refused with the accepted values. */
export function autoRuleFromEnv(env: NodeJS.ProcessEnv = process.env): AutoRule {
  const value = env.TRAINPOOL_AUTO
  if (value === undefined || value === '') return 'calibrated'
  if ((AUTO_RULES as readonly string[]).includes(value)) return value as AutoRule
  throw new Error(`TRAINPOOL_AUTO=${JSON.stringify(value)} is not valid: ${AUTO_RULES.join(' | ')}`)
}

/** How a run with `auto` gets its backend: resolved before its pools start, or left to its workers (the table's order) with the reason. */
export type AutoResolution = { resolve(hooks: AutoHooks): Promise<AutoChoice> } | { byWorkers: string }

export interface AutoHooks extends CalibrationHooks {
  /** a line of progress or a note (the run's phase message, the CLI's stderr) */
  say?(line: string): void
}

export interface AutoCalibrationOptions {
  launcher: WorkerLauncher
  /** where the cache lives (the store's folder); null: kept in memory for this process */
  storeDir: string | null
  appVersion: string
  probe: BackendProbe
  rule: AutoRule
  /** the calibration lock's heartbeat and staleness, and how often a calibration looks for a run started meanwhile (ms; tests shorten them) */
  lock?: CalibrationLockOptions & { watchMs?: number }
}

/** A calibration's hold on its store: what competed with it meanwhile (null: nothing), and the lock given back. */
interface AloneOnStore {
  competed(): Promise<string | null>
  release(): Promise<void>
}

/** A calibration done: each family's, and why it was not kept in the store (null: kept — in the store, or in memory without one). */
export interface CalibrationOutcome {
  families: FamilyCalibration[]
  notKept: string | null
}

export class AutoCalibration {
  /** without a store: this process's calibration */
  private inMemory: CalibrationFile | null = null
  private running = false

  constructor(private readonly options: AutoCalibrationOptions) {}

  get rule(): AutoRule {
    return this.options.rule
  }

  get calibrating(): boolean {
    return this.running
  }

  /** What the calibration is keyed by: this machine as the probe sees it (see contract/calibration.ts). */
  async machine(): Promise<MachineKey> {
    const probed = await this.options.probe.backends()
    const available = probed.filter((b) => b.available)
    return {
      host: os.hostname(),
      cpu: os.cpus()[0]?.model?.trim() || os.arch(),
      cpuCount: os.cpus().length,
      adapters: available
        .filter((b) => isGpuBackend(b.name))
        .map((b) => `${b.name}: ${b.detail}`)
        .sort(),
      backends: available.map((b) => b.name).sort(),
    }
  }

  /** The calibration kept for this machine and version; null when there is none (a damaged file counts as none: `said` hears why). */
  async cached(said?: (line: string) => void): Promise<CalibrationFile | null> {
    const machine = await this.machine()
    const storeDir = this.options.storeDir
    if (storeDir !== null) {
      const read = await readCalibration(storeDir, machine, this.options.appVersion)
      if (read.kind === 'found') return this.usable(read.file, read.path, said)
      if (read.kind === 'damaged') said?.(`the calibration cache ${read.path} ${read.why}: ignored (a calibration rewrites it)`)
    }
    // no store, or one that could not be written: this process's own, while the machine is the same
    return this.inMemory && JSON.stringify(this.inMemory.machine) === JSON.stringify(machine) ? this.inMemory : null
  }

  /** The file with only the families a calibration here would have written (whyCalibrationUnusable); the others are said and redone when needed. */
  private usable(file: CalibrationFile, path: string, said?: (line: string) => void): CalibrationFile {
    const families = Object.entries(file.families).filter(([kind, calibration]) => {
      const family = findFamily(kind)
      const why = family ? whyCalibrationUnusable(family, calibration, file.machine.backends, file.machine.cpuCount) : 'is of no model family Trainpool has'
      if (why) said?.(`the calibration cache ${path}: its ${JSON.stringify(kind)} entry ${why}: ignored (a calibration redoes it)`)
      return why === null
    })
    return { ...file, families: Object.fromEntries(families) }
  }

  /** What the shells are told: the rule and each family's calibration here. */
  async state(): Promise<CalibrationState> {
    return { rule: this.rule, families: (await this.cached())?.families ?? {} }
  }

  /** The capabilities with `auto` as the calibration picks it (calibrated families only) and the calibration itself. */
  async announce(caps: Omit<Capabilities, 'calibration'>): Promise<Capabilities> {
    const calibration = await this.state()
    if (calibration.rule !== 'calibrated') return { ...caps, calibration }
    const picked = Object.fromEntries(Object.values(calibration.families).flatMap((f) => (f.auto ? [[f.kind, f.auto]] : [])))
    return { ...caps, autoBackends: { ...caps.autoBackends, ...picked }, calibration }
  }

  /**
   * Measures the families now and keeps the result (merged with the other families' kept
   * calibration) when it ran alone and could be written; refused (`busy`) while another calibration
   * or another process's run uses the store (see the header).
   */
  async calibrate(families: readonly ModelFamily[], hooks: AutoHooks = {}): Promise<CalibrationOutcome> {
    if (this.running) throw new TrainpoolError('busy', 'a calibration of auto is already running: wait for it to finish')
    this.running = true
    let alone: AloneOnStore | null = null
    try {
      if (this.options.storeDir !== null) alone = await this.aloneOnStore(this.options.storeDir)
      const probed = await this.options.probe.backends()
      const measured: FamilyCalibration[] = []
      for (const family of families) {
        const onBackend = (backend: string, i: number, count: number) => {
          hooks.onBackend?.(backend, i, count)
          hooks.say?.(`calibrating auto for the ${family.label}: timing ${backend} (${i + 1} of ${count})`)
        }
        measured.push(await calibrateFamily(this.options.launcher, family, probed, { ...hooks, onBackend }))
      }
      const competed = await alone?.competed()
      if (competed) return { families: measured, notKept: `${competed}: its timings are not this machine's alone` }
      return { families: measured, notKept: await this.keep(measured, hooks.say) }
    } finally {
      await alone?.release()
      this.running = false
    }
  }

  /**
   * The store to this calibration alone: its lock taken and no other process's run live, else
   * refused naming the other; then watched until released. `competed` names what took the lock
   * over or ran meanwhile.
   */
  private async aloneOnStore(storeDir: string): Promise<AloneOnStore> {
    const dir = await privateCalibrationDir(storeDir).catch(() => null)
    // a store that cannot hold the lock cannot keep the calibration either: it is measured, and said not kept
    const taken = dir === null ? null : await holdCalibrationLock(dir, this.options.lock).catch(() => null)
    if (taken && 'busy' in taken) {
      throw new TrainpoolError(
        'busy',
        `another calibration of auto is timing the backends on ${storeDir}: ${holderText(taken.busy)}; wait for it to finish, then calibrate again`,
      )
    }
    const runs = new RunStore(storeDir)
    // runs of this process are this service's own: the run whose first use of auto calibrates
    const otherRuns = async () => (await runs.otherLiveWriters('').catch(() => [] as LiveWriter[])).filter((w) => w.pid !== process.pid)
    const running = await otherRuns()
    if (running.length) {
      await taken?.held.release()
      throw new TrainpoolError(
        'busy',
        `${runText(running[0], storeDir)} is training on this machine: a calibration now would time it too; wait for it to finish`,
      )
    }
    let seen: LiveWriter | null = null
    let watching: Promise<void> | null = null
    const timer = setInterval(() => {
      if (seen || watching) return
      watching = otherRuns()
        .then((found) => void (seen ??= found[0] ?? null))
        .finally(() => (watching = null))
    }, this.options.lock?.watchMs ?? HEARTBEAT_MS)
    timer.unref()
    return {
      competed: async () => {
        await watching
        seen ??= (await otherRuns())[0] ?? null
        if (seen) return `${runText(seen, storeDir)} trained on this machine during the calibration`
        if (taken && !(await taken.held.stillOurs())) return 'another calibration took over the calibration lock during this one'
        return null
      },
      release: async () => {
        clearInterval(timer)
        await watching
        await taken?.held.release()
      },
    }
  }

  /**
   * `auto` for a run of a family: the kept calibration's pick, or a calibration now (first use, or
   * the kept one could pick nothing); a BackendUnavailableError naming every backend's reason when
   * nothing can be picked.
   */
  async resolve(kind: string, hooks: AutoHooks = {}): Promise<AutoChoice> {
    const kept = autoChoiceOf((await this.cached())?.families[kind])
    if (kept) return kept
    const family = findFamily(kind)
    if (!family) throw new Error(`no model family ${kind}`)
    hooks.say?.(`calibrating auto for the ${family.label}: the first run with auto on this machine times each backend it may pick (a few seconds each)`)
    const {
      families: [calibration],
      notKept,
    } = await this.calibrate([family], hooks)
    const choice = autoChoiceOf(calibration)
    if (!choice) throw new BackendUnavailableError('auto', calibration.reason)
    return notKept ? { ...choice, reason: `${choice.reason}; not kept: ${notKept}` } : choice
  }

  /** How a run with `auto` on this machine gets its backend. */
  forRun(kind: string): AutoResolution {
    if (this.rule === 'order') return { byWorkers: ORDER_RULE_TEXT }
    return { resolve: (hooks) => this.resolve(kind, hooks) }
  }

  /** Keeps the calibration (in memory too); null when the store has it (or there is none), else why it could not be written. */
  private async keep(measured: readonly FamilyCalibration[], say?: (line: string) => void): Promise<string | null> {
    const machine = await this.machine()
    const before = await this.cached(say)
    const file: CalibrationFile = {
      version: CALIBRATION_VERSION,
      trainpool: this.options.appVersion,
      machine,
      families: { ...before?.families, ...Object.fromEntries(measured.map((f) => [f.kind, f])) },
    }
    this.inMemory = file
    const storeDir = this.options.storeDir
    if (storeDir === null) return null
    try {
      await writeCalibration(storeDir, file)
      return null
    } catch (err) {
      const why = `it could not be written to ${calibrationPath(storeDir, machine, this.options.appVersion)} (${(err as Error).message.split(', ')[0]})`
      say?.(`could not keep the calibration in ${storeDir}: ${(err as Error).message} (kept until this process ends)`)
      return why
    }
  }
}

/** "pid 123", "pid 123 on host-b", with when it began */
function holderText(lock: WriterLock): string {
  const where = lock.host === os.hostname() ? `pid ${lock.pid}` : `pid ${lock.pid} on ${lock.host}`
  return `${where}, started ${new Date(lock.startedAt).toLocaleTimeString()}`
}

function runText(writer: LiveWriter, storeDir: string): string {
  return `run ${writer.runId} (pid ${writer.pid}, in ${storeDir})`
}
