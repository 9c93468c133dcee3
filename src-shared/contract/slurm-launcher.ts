// Slurm as a launcher (`launcher: { engine: 'slurm' }`): one Slurm job array per pool whose tasks
// dial back to the coordinator (the W workers of a pool are one array, each task one worker that
// trains many models: Slurm's own advice for many short jobs). Its fields are sbatch's own options;
// nothing here reaches a shell (sbatch is run without one), and each value is checked so a typo is
// refused by name before anything is submitted. Its scheduler is src-main/pool/slurm/.
import { z } from 'zod'
import { DEFAULT_QUEUE_TIMEOUT_S, defineLauncher, type LauncherChoice, textOf, textRead } from './launcher-spec'

/** A Slurm name or list (partition, account, gres): letters, digits and the punctuation Slurm uses in them. */
const slurmWord = (field: string, example: string) =>
  z
    .string({ error: `launcher.${field} accepts a Slurm value such as ${example}` })
    .regex(/^[A-Za-z0-9_.:,=+@%\-/]{1,200}$/, `launcher.${field} accepts a Slurm value such as ${example} (letters, digits and _ . : , = + @ % - /)`)

export const SLURM_DEFAULTS = { gres: 'gpu:1', queueTimeoutS: DEFAULT_QUEUE_TIMEOUT_S } as const

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

/** config.launcher with engine slurm, as its scheduler reads it. */
export interface SlurmChoice extends LauncherChoice {
  engine: 'slurm'
  partition?: string
  /** each task's generic resources; null: none (a CPU-only partition) */
  gres: string | null
  time?: string
  account?: string
  sbatchArgs: string[]
}

export const slurmLauncher = defineLauncher({
  engine: 'slurm',
  name: 'Slurm',
  label: 'Slurm cluster',
  help: 'each pool one Slurm job array whose tasks dial back to --listen',
  fields: [
    {
      key: 'partition',
      label: 'Partition',
      flag: '--partition',
      valueName: 'name',
      help: 'sbatch --partition',
      placeholder: 'the cluster default',
      schema: slurmWord('partition', 'gpu').optional(),
      read: textRead,
      text: textOf,
    },
    {
      key: 'gres',
      label: 'GRES per worker',
      flag: '--gres',
      valueName: 'spec',
      help: "each task's generic resources (default gpu:1; empty or none: no GPU, a CPU partition)",
      placeholder: 'none',
      schema: slurmWord('gres', 'gpu:1').nullable().default(SLURM_DEFAULTS.gres),
      read: (text) => (text.trim() === '' || text.trim() === 'none' ? null : text.trim()),
      text: textOf,
    },
    {
      key: 'time',
      label: 'Time limit',
      flag: '--time',
      valueName: 'limit',
      help: "each task's time limit (sbatch --time: 30, 1:00:00, 1-12)",
      placeholder: 'the partition default',
      /** minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS */
      schema: z
        .string({ error: 'launcher.time accepts a Slurm time limit such as 30, 1:00:00 or 1-12' })
        .regex(/^(\d{1,4}-)?\d{1,5}(:\d{1,2}){0,2}$/, 'launcher.time accepts a Slurm time limit such as 30, 1:00:00 or 1-12')
        .optional(),
      read: textRead,
      text: textOf,
    },
    {
      key: 'account',
      label: 'Account',
      flag: '--account',
      valueName: 'name',
      help: 'sbatch --account',
      placeholder: 'your default',
      schema: slurmWord('account', 'mylab').optional(),
      read: textRead,
      text: textOf,
    },
    {
      key: 'sbatchArgs',
      label: 'Other sbatch options',
      flag: '--sbatch-args',
      valueName: 'options',
      help: 'other sbatch options, space-separated, each --option or --option=value (e.g. "--qos=short --constraint=a100")',
      placeholder: '--qos=short --constraint=a100',
      schema: z
        .array(
          z.string().regex(/^--[a-z][a-z-]*(=[^\s]{1,200})?$/, 'launcher.sbatchArgs accepts sbatch options as --option or --option=value, e.g. --qos=short'),
        )
        .max(16)
        .default([]),
      // an option may hold commas (--mail-type=END,FAIL): split at spaces only
      read: (text) => (text.trim() === '' ? [] : text.trim().split(/\s+/)),
      text: textOf,
      wide: true,
    },
  ],
  problems: (choice) =>
    ((choice as SlurmChoice).sbatchArgs ?? []).flatMap((arg, i) => {
      const name = reservedSbatchArg(arg)
      return name
        ? [
            {
              path: ['sbatchArgs', i],
              message: `launcher.sbatchArgs: ${name} is set by Trainpool itself (its own field or the job array); accepted: other sbatch options such as --qos=short`,
            },
          ]
        : []
    }),
  assignsGpus: 'Slurm assigns each task its GPU (launcher.gres, default gpu:1)',
  unavailable: { why: 'sbatch cannot submit from here', instead: 'run Trainpool where sbatch works (a login node)' },
  summary: 'Each pool is one Slurm job array: W tasks, one worker each, that dial back to this app.',
  estimateNote: 'one job array per pool, its queue wait not counted',
  describe: (choice) => {
    const l = choice as SlurmChoice
    return [
      l.partition ? `partition ${l.partition}` : 'default partition',
      l.gres ? `gres ${l.gres}` : 'no gres',
      ...(l.time ? [`time ${l.time}`] : []),
      ...(l.account ? [`account ${l.account}`] : []),
      ...l.sbatchArgs,
      `queue timeout ${l.queueTimeoutS} s`,
    ].join(' · ')
  },
})
