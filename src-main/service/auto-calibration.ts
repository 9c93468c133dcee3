// `auto` by calibration, for the service (issue 32): this machine's calibration read from the store's
// cache (or kept in memory without a store), redone on request (the API's calibrate, `trainpool
// calibrate`), and done on first use by a run with `auto`, which then runs on the pick — every worker
// the same backend. TRAINPOOL_AUTO=order keeps the old rule: the workers take the table's order.
import os from 'node:os'
import { autoChoiceOf, ORDER_RULE_TEXT } from '@shared/calibration'
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
import { readCalibration, writeCalibration } from '../store/calibration-cache'
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
      if (read.kind === 'found') return read.file
      if (read.kind === 'damaged') said?.(`the calibration cache ${read.path} ${read.why}: ignored (a calibration rewrites it)`)
    }
    // no store, or one that could not be written: this process's own, while the machine is the same
    return this.inMemory && JSON.stringify(this.inMemory.machine) === JSON.stringify(machine) ? this.inMemory : null
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

  /** Measures the families now and keeps the result (merged with the other families' kept calibration). */
  async calibrate(families: readonly ModelFamily[], hooks: AutoHooks = {}): Promise<FamilyCalibration[]> {
    if (this.running) throw new TrainpoolError('busy', 'a calibration of auto is already running: wait for it to finish')
    this.running = true
    try {
      const probed = await this.options.probe.backends()
      const measured: FamilyCalibration[] = []
      for (const family of families) {
        const onBackend = (backend: string, i: number, count: number) => {
          hooks.onBackend?.(backend, i, count)
          hooks.say?.(`calibrating auto for the ${family.label}: timing ${backend} (${i + 1} of ${count})`)
        }
        measured.push(await calibrateFamily(this.options.launcher, family, probed, { ...hooks, onBackend }))
      }
      await this.keep(measured, hooks.say)
      return measured
    } finally {
      this.running = false
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
    const [calibration] = await this.calibrate([family], hooks)
    const choice = autoChoiceOf(calibration)
    if (!choice) throw new BackendUnavailableError('auto', calibration.reason)
    return choice
  }

  /** How a run with `auto` on this machine gets its backend. */
  forRun(kind: string): AutoResolution {
    if (this.rule === 'order') return { byWorkers: ORDER_RULE_TEXT }
    return { resolve: (hooks) => this.resolve(kind, hooks) }
  }

  private async keep(measured: readonly FamilyCalibration[], say?: (line: string) => void): Promise<void> {
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
    if (storeDir === null) return
    try {
      await writeCalibration(storeDir, file)
    } catch (err) {
      say?.(`could not keep the calibration in ${storeDir}: ${(err as Error).message} (kept until this process ends)`)
    }
  }
}
