// Where a run's workers run (`launcher`): absent, processes on this machine (today's pool); `slurm`,
// one Slurm job array per pool whose tasks dial back to the coordinator (the W workers of a pool are
// one array, each task one worker that trains many models: Slurm's own advice for many short jobs).
// Its fields are sbatch's own options; nothing here reaches a shell (sbatch is run without one), and
// each value is checked so a typo is refused by name before anything is submitted.
import { z } from 'zod'
import { TrainpoolError } from '../vocabulary/errors'
import { intField } from '../vocabulary/fields'

/** A Slurm name or list (partition, account, gres): letters, digits and the punctuation Slurm uses in them. */
const slurmWord = (field: string, example: string) =>
  z
    .string({ error: `launcher.${field} accepts a Slurm value such as ${example}` })
    .regex(/^[A-Za-z0-9_.:,=+@%\-/]{1,200}$/, `launcher.${field} accepts a Slurm value such as ${example} (letters, digits and _ . : , = + @ % - /)`)

export const SLURM_DEFAULTS = { gres: 'gpu:1', queueTimeoutS: 600 } as const

export const LauncherSchema = z.discriminatedUnion('engine', [
  z
    .object({
      engine: z.literal('slurm'),
      partition: slurmWord('partition', 'gpu').optional(),
      /** each task's generic resources; null: none (a CPU-only partition). Default gpu:1 */
      gres: slurmWord('gres', 'gpu:1').nullable().default(SLURM_DEFAULTS.gres),
      /** sbatch --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS */
      time: z
        .string({ error: 'launcher.time accepts a Slurm time limit such as 30, 1:00:00 or 1-12' })
        .regex(/^(\d{1,4}-)?\d{1,5}(:\d{1,2}){0,2}$/, 'launcher.time accepts a Slurm time limit such as 30, 1:00:00 or 1-12')
        .optional(),
      account: slurmWord('account', 'mylab').optional(),
      /** other sbatch options passed through as given, e.g. --qos=short (each one an --option or --option=value) */
      sbatchArgs: z
        .array(
          z.string().regex(/^--[a-z][a-z-]*(=[^\s]{1,200})?$/, 'launcher.sbatchArgs accepts sbatch options as --option or --option=value, e.g. --qos=short'),
        )
        .max(16)
        .default([]),
      /** a task still pending after this long fails the run with Slurm's pending reason */
      queueTimeoutS: intField('launcher.queueTimeoutS', { min: 5, max: 7 * 24 * 3600 }).default(SLURM_DEFAULTS.queueTimeoutS),
    })
    .strict(),
])
export type LauncherChoice = z.infer<typeof LauncherSchema>

/** sbatch options that Trainpool sets itself: passing them again would contradict the run (or the token scheme). */
export const SBATCH_RESERVED = [
  '--array',
  '-a',
  '--parsable',
  '--output',
  '--error',
  '--export',
  '--wrap',
  '--job-name',
  '--gres',
  '--partition',
  '--time',
  '--account',
  '--chdir',
]

/** The reserved option an sbatch argument names (`--array=0-3`, `-a3`), or null. */
export function reservedSbatchArg(arg: string): string | null {
  if (/^-a./.test(arg)) return '-a'
  const name = arg.split('=')[0]
  return SBATCH_RESERVED.includes(name) ? name : null
}

/**
 * A launcher the machine cannot use is refused on field `launcher` (the service from its probe of
 * sbatch, the test fake from its capabilities): in the same words on both.
 */
export function refuseUnavailableLauncher(launcher: LauncherChoice | undefined, slurm: { available: boolean; detail: string }): void {
  if (!launcher || slurm.available) return
  throw new TrainpoolError(
    'invalid-input',
    `launcher slurm: sbatch cannot submit from here (${slurm.detail}); run Trainpool where sbatch works (a login node), or leave launcher out`,
    [{ field: 'launcher', message: `sbatch cannot submit from here: ${slurm.detail}` }],
  )
}
