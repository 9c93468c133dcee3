// What a launcher is, as a model family is its field specs: where a run's workers can run besides
// this machine (a scheduler: Slurm, one day Ray or Kubernetes Jobs), said once as a spec — its name,
// its fields (each with its schema, CLI flag, box label and how a typed text reads), the words of its
// refusals — from which config.launcher's schema, the CLI's flags, the capabilities' keys and the
// config panel's "Where to run" are derived (contract/launcher.ts is the registry). Whether it can
// submit from here is main's to check (its SchedulerEntry, src-main/pool/remote/scheduler.ts).
import { z } from 'zod'
import { intField, type NumberKind, numberOf } from '../vocabulary/fields'
import type { PathIssue } from './model-set'

/** One field of a launcher's choice (config.launcher.<key>): its schema, flag and box come from this. */
export interface LauncherField {
  key: string
  /** what the box is labelled, and what the panel's messages call it */
  label: string
  /** the `trainpool bench` flag that sets it (with --launcher <engine>) */
  flag: string
  /** the flag's value in --help: `--partition <name>` */
  valueName: string
  /** the flag's help, and the box's hint */
  help: string
  /** what an empty box means */
  placeholder: string
  /** the field's schema inside config.launcher (its default, or optional) */
  schema: z.ZodType
  /** a typed text (a flag's value, a box's text) → the field's value; undefined: left out */
  read(text: string): unknown
  /** the box's text for a value of the field */
  text(value: unknown): string
  /** a number typed by the shared rule (readNumber): its kind and what is accepted */
  number?: { kind: NumberKind; accepted: string }
  /** the box takes a whole row (a long value) */
  wide?: boolean
}

/** A launcher: where workers run, and everything the contract, the CLI and the panel say about it. */
export interface LauncherSpec {
  /** config.launcher.engine, the --launcher value, the capabilities' key, the run record's scheduler.engine */
  engine: string
  /** in sentences: "Slurm" */
  name: string
  /** the choice in "Where to run": "Slurm cluster" */
  label: string
  /** --launcher's help for this choice */
  help: string
  fields: readonly LauncherField[]
  /** config.launcher for this engine (built by defineLauncher from the fields) */
  schema: z.ZodType<LauncherChoice>
  /** checks across the choice's fields (an option the scheduler sets itself), with their paths inside config.launcher */
  problems(choice: LauncherChoice): PathIssue[]
  /** why config.gpus does not combine with it: "Slurm assigns each task its GPU (launcher.gres, default gpu:1)" */
  assignsGpus: string
  /** the words of its refusal where it cannot submit from here (the check's answer follows `why`) */
  unavailable: { why: string; instead: string }
  /** what the panel says under its fields, and beside the estimate */
  summary: string
  estimateNote: string
  /** what a run asked the scheduler for, in one line (the run's scheduler card) */
  describe(choice: LauncherChoice): string
}

/** Whether a launcher can submit from here (Capabilities.launchers, by engine). */
export interface LauncherCapability {
  available: boolean
  /** the launcher's version when available ("slurm 22.05.8"), otherwise why not */
  detail: string
}

/** config.launcher: the engine, the fields every remote launcher has, and the launcher's own. */
export type LauncherChoice = { engine: string; queueTimeoutS: number } & Record<string, unknown>

const QUEUE_TIMEOUT = { min: 5, max: 7 * 24 * 3600 }
export const DEFAULT_QUEUE_TIMEOUT_S = 600

/** Every remote launcher's own field: its workers must dial back in time, or the run fails saying why. */
export const QUEUE_TIMEOUT_FIELD: LauncherField = {
  key: 'queueTimeoutS',
  label: 'Queue timeout (s)',
  flag: '--queue-timeout',
  valueName: 'seconds',
  help: "a task still pending after this long fails the run with the scheduler's reason",
  placeholder: String(DEFAULT_QUEUE_TIMEOUT_S),
  schema: intField('launcher.queueTimeoutS', QUEUE_TIMEOUT).default(DEFAULT_QUEUE_TIMEOUT_S),
  read: (text) => (text.trim() === '' ? undefined : numberOf(text, 'integer')),
  text: (value) => (value == null ? '' : String(value)),
  number: { kind: 'integer', accepted: `whole seconds from ${QUEUE_TIMEOUT.min} to ${QUEUE_TIMEOUT.max} (a week)` },
}

/** A text field: empty is left out. */
export const textRead = (text: string): string | undefined => (text.trim() === '' ? undefined : text.trim())
export const textOf = (value: unknown): string => (value == null ? '' : Array.isArray(value) ? value.join(' ') : String(value))

/** A launcher from its own fields (the queue timeout is added to them): its schema is derived. */
export function defineLauncher(
  spec: Omit<LauncherSpec, 'schema' | 'fields' | 'problems'> & Partial<Pick<LauncherSpec, 'problems'>> & { fields: readonly LauncherField[] },
): LauncherSpec {
  const fields = [...spec.fields, QUEUE_TIMEOUT_FIELD]
  const shape: Record<string, z.ZodType> = { engine: z.literal(spec.engine) }
  for (const f of fields) shape[f.key] = f.schema
  return {
    problems: () => [],
    ...spec,
    fields,
    schema: z.object(shape).strict() as unknown as z.ZodType<LauncherChoice>,
  }
}
