// Where a run's workers run (`launcher`): absent, processes on this machine (today's pool); else a
// launcher by its engine (launcher-spec.ts says what one is). The registry: the one place that lists
// them (Slurm, slurm-launcher.ts), config.launcher's schema looked up in it when a config is checked
// (so a launcher a test registers is accepted too), and the one refusal of a launcher this machine
// cannot use. The CLI's flags, the capabilities and the panel's "Where to run" read the same list.
import { z } from 'zod'
import { TrainpoolError } from '../vocabulary/errors'
import type { LauncherCapability, LauncherChoice, LauncherField, LauncherSpec } from './launcher-spec'
import { slurmLauncher } from './slurm-launcher'

export * from './launcher-spec'
export { reservedSbatchArg, SBATCH_RESERVED, type SlurmChoice, SLURM_DEFAULTS, slurmLauncher } from './slurm-launcher'

/** What --launcher and the panel call workers on this machine (no config.launcher). */
export const LOCAL_LAUNCHER = { engine: 'local', label: 'This machine', help: 'worker processes on this machine; the default' } as const

const registry = new Map<string, LauncherSpec>([[slurmLauncher.engine, slurmLauncher]])

export function allLaunchers(): LauncherSpec[] {
  return [...registry.values()]
}

export function findLauncher(engine: string): LauncherSpec | undefined {
  return registry.get(engine)
}

/** Adds a launcher (a test's toy one; built-ins are listed above); returns the undo. Registering the same spec again is harmless. */
export function registerLauncher(spec: LauncherSpec): () => void {
  const before = registry.get(spec.engine)
  registry.set(spec.engine, spec)
  return () => (before ? registry.set(spec.engine, before) : registry.delete(spec.engine))
}

/** Every launcher's fields, each flag once (two launchers may share one: the queue timeout), with the launchers that have it. */
export function launcherFlags(): { field: LauncherField; launchers: LauncherSpec[] }[] {
  const byFlag = new Map<string, { field: LauncherField; launchers: LauncherSpec[] }>()
  for (const spec of allLaunchers()) {
    for (const field of spec.fields) {
      const entry = byFlag.get(field.flag) ?? { field, launchers: [] }
      entry.launchers.push(spec)
      byFlag.set(field.flag, entry)
    }
  }
  return [...byFlag.values()]
}

/** config.launcher: the launcher its `engine` names validates the rest, looked up when checked. */
export const LauncherSchema = z.unknown().transform((value, ctx): LauncherChoice => {
  const engine = (value as { engine?: unknown } | null)?.engine
  const spec = typeof engine === 'string' ? findLauncher(engine) : undefined
  if (!spec) {
    ctx.issues.push({
      code: 'custom',
      input: value,
      path: ['engine'],
      message: `launcher.engine accepts ${allLaunchers()
        .map((l) => l.engine)
        .join(', ')}`,
    })
    return z.NEVER
  }
  const parsed = spec.schema.safeParse(value)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.issues.push({ ...issue, input: value } as never)
    return z.NEVER
  }
  for (const problem of spec.problems(parsed.data)) ctx.issues.push({ code: 'custom', input: value, path: problem.path, message: problem.message })
  return parsed.data
})
export type { LauncherChoice }

/**
 * A launcher the machine cannot use is refused on field `launcher` (the service from its check, the
 * test fake from its capabilities), in the launcher's own words on both.
 */
export function refuseUnavailableLauncher(launcher: LauncherChoice | undefined, available: Partial<Record<string, LauncherCapability>>): void {
  if (!launcher) return
  const spec = findLauncher(launcher.engine)
  const capability = available[launcher.engine] ?? { available: false, detail: 'not checked on this machine' }
  if (!spec || capability.available) return
  const { why, instead } = spec.unavailable
  throw new TrainpoolError('invalid-input', `launcher ${spec.engine}: ${why} (${capability.detail}); ${instead}, or leave launcher out`, [
    { field: 'launcher', message: `${why}: ${capability.detail}` },
  ])
}
