// Slurm driven through its own commands — sbatch, squeue, scontrol, sacct, scancel — for the Slurm
// scheduler: one array job per pool start, its tasks' states polled, a task or the array cancelled.
// The commands are the one interface every Slurm site has (slurmrestd is often not deployed), and
// the login node where the coordinator runs has them. What this file absorbs (no shell, secrets
// only in the environment, accounting or not, array notation, exit codes): ../README.md, "Slurm".
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { reservedSbatchArg } from '@shared/contract'

// ---------------------------------------------------------------------------------------------
// Types

/** Slurm's job states (squeue's long names). UNKNOWN: nothing said, or a name this file does not know. */
export const SLURM_STATES = [
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'STOPPED',
  'SIGNALING',
  'STAGE_OUT',
  'RESIZING',
  'REQUEUED',
  'REQUEUE_FED',
  'REQUEUE_HOLD',
  'SPECIAL_EXIT',
  'RESV_DEL_HOLD',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'OUT_OF_MEMORY',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
  'REVOKED',
] as const
export type SlurmState = (typeof SLURM_STATES)[number] | 'UNKNOWN'

/** States after which the task will not run again unless resubmitted (or requeued by the site). */
export const FINISHED_STATES: ReadonlySet<SlurmState> = new Set<SlurmState>([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'OUT_OF_MEMORY',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
  'REVOKED',
])

export function isFinished(state: SlurmState): boolean {
  return FINISHED_STATES.has(state)
}

/** Where a task's status came from. */
export type StatusSource = 'sacct' | 'squeue' | 'scontrol' | 'jobcomp' | 'none'

export interface ArrayTaskStatus {
  /** SLURM_ARRAY_TASK_ID */
  index: number
  /** the task's own job id once it started (may equal the array's); null while in the pending record */
  taskJobId: string | null
  state: SlurmState
  /** why it waits (Priority, Resources, JobArrayTaskLimit…) or why it ended (NonZeroExitCode…); null for None */
  reason: string | null
  /** the exit code once finished (null before, or when unknown) */
  exitCode: number | null
  /** the signal that ended it (e.g. 15, 9); null when none or not finished */
  signal: number | null
  /** the node it ran on; null while pending */
  node: string | null
  source: StatusSource
}

export interface SacctStep {
  index: number | null
  taskJobId: string | null
  /** 'batch', 'extern', '0', … */
  step: string
  state: SlurmState
  exitCode: number | null
  signal: number | null
  node: string | null
}

export class SlurmCommandError extends Error {
  constructor(
    readonly command: string,
    readonly args: readonly string[],
    /** exit code; null when it was killed (timeout) or could not start */
    readonly exitCode: number | null,
    readonly stderr: string,
    detail: string,
  ) {
    super(`${command} ${args.join(' ')} ${detail}${stderr.trim() ? `: ${stderr.trim()}` : ''}`)
    this.name = 'SlurmCommandError'
  }
}

// ---------------------------------------------------------------------------------------------
// Running the commands

const QUERY_TIMEOUT_MS = 30_000
const SUBMIT_TIMEOUT_MS = 60_000
const MAX_OUTPUT = 64 * 1024 * 1024

interface RunOptions {
  timeoutMs: number
  input?: string
  env?: NodeJS.ProcessEnv
}

function run(command: string, args: readonly string[], options: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      [...args],
      { timeout: options.timeoutMs, maxBuffer: MAX_OUTPUT, env: options.env ?? process.env, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout)
        const e = error as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string }
        const detail =
          e.code === 'ENOENT'
            ? 'failed: not found on PATH'
            : e.killed && e.signal
              ? `timed out after ${options.timeoutMs} ms (${e.signal})`
              : typeof e.code === 'number'
                ? `failed (exit ${e.code})`
                : `failed (${e.message})`
        reject(new SlurmCommandError(command, args, typeof e.code === 'number' ? e.code : null, String(stderr ?? ''), detail))
      },
    )
    child.stdin?.on('error', () => {}) // EPIPE when the command exits without reading its input
    child.stdin?.end(options.input ?? '')
  })
}

// ---------------------------------------------------------------------------------------------
// Submitting

export interface SubmitArraySpec {
  /** the array's task ids, e.g. [0, 1], or [1] to resubmit one failed task */
  indices: readonly number[]
  /** at most this many tasks at once (`%M`) */
  maxConcurrent?: number
  partition?: string
  /** generic resources per task; default 'gpu:1'; null for none */
  gres?: string | null
  /** time limit in any of sbatch's formats (e.g. '30', '2:00:00', '1-0') */
  time?: string
  account?: string
  /** further sbatch options passed through, each one whole argument (`--constraint=a100`) */
  extraArgs?: readonly string[]
  jobName: string
  /** output file pattern (%A: the array's job id, %a: the task index), relative to cwd or absolute */
  output: string
  /** the worker: program and arguments, run with `exec` in each task (quoted here, never by a shell) */
  command: readonly string[]
  /** added to sbatch's environment, which every task gets (--export=ALL): where secrets go */
  env: Readonly<Record<string, string>>
  /** the tasks' working directory (--chdir) */
  cwd: string
}

export interface SubmitOptions {
  timeoutMs?: number
}

/** `0-2,5,7-8` (+ `%M`): the indices as sbatch's --array value, sorted, ranges merged. */
export function arraySpec(indices: readonly number[], maxConcurrent?: number): string {
  if (indices.length === 0) throw new Error('submitArray: no task indices')
  for (const i of indices) {
    if (!Number.isSafeInteger(i) || i < 0) throw new Error(`submitArray: task index ${i} is not a non-negative integer`)
  }
  const sorted = [...new Set(indices)].sort((a, b) => a - b)
  const parts: string[] = []
  let start = sorted[0]
  let prev = start
  for (const i of [...sorted.slice(1), Number.NaN]) {
    if (i === prev + 1) {
      prev = i
      continue
    }
    parts.push(start === prev ? String(start) : `${start}-${prev}`)
    start = prev = i
  }
  if (maxConcurrent !== undefined) {
    if (!Number.isSafeInteger(maxConcurrent) || maxConcurrent < 1) {
      throw new Error(`submitArray: maxConcurrent ${maxConcurrent} is not a positive integer`)
    }
    return `${parts.join(',')}%${maxConcurrent}`
  }
  return parts.join(',')
}

/** One argument for a POSIX shell: single-quoted, a `'` inside as `'\''`. */
export function shellQuote(arg: string): string {
  if (arg.includes('\0')) throw new Error('a command argument contains a NUL byte')
  return `'${arg.replace(/'/g, `'\\''`)}'`
}

/** The batch script sbatch reads on stdin: the worker exec'd with its quoted arguments. */
export function batchScript(command: readonly string[]): string {
  if (command.length === 0 || command[0] === '') throw new Error('submitArray: the worker command is empty')
  return [
    '#!/bin/sh',
    '# Trainpool worker, one per array task (src-main/pool/slurm/slurm-cli.ts): its index is',
    '# $SLURM_ARRAY_TASK_ID; its settings and secrets come in the environment, never in this script.',
    `exec ${command.map(shellQuote).join(' ')}`,
    '',
  ].join('\n')
}

function checkText(name: string, value: string | undefined): void {
  if (value === undefined) return
  if (value.trim() === '' || /[\n\r\0]/.test(value)) throw new Error(`submitArray: ${name} ${JSON.stringify(value)} is empty or has a line break`)
}

/** sbatch's arguments for a spec (the script comes on stdin). */
export function sbatchArgs(spec: SubmitArraySpec): string[] {
  checkText('jobName', spec.jobName)
  checkText('output', spec.output)
  checkText('cwd', spec.cwd)
  checkText('partition', spec.partition)
  checkText('time', spec.time)
  checkText('account', spec.account)
  if (spec.gres !== null) checkText('gres', spec.gres)
  const args = [
    '--parsable',
    `--array=${arraySpec(spec.indices, spec.maxConcurrent)}`,
    `--job-name=${spec.jobName}`,
    `--output=${spec.output}`,
    `--chdir=${spec.cwd}`,
    '--export=ALL',
  ]
  if (spec.partition !== undefined) args.push(`--partition=${spec.partition}`)
  const gres = spec.gres === undefined ? 'gpu:1' : spec.gres
  if (gres !== null) args.push(`--gres=${gres}`)
  if (spec.time !== undefined) args.push(`--time=${spec.time}`)
  if (spec.account !== undefined) args.push(`--account=${spec.account}`)
  for (const extra of spec.extraArgs ?? []) {
    // An argument not starting with '-' would be taken as the batch script's file name, and sbatch
    // would run that instead of the script on stdin.
    if (extra.trim() === '' || !extra.startsWith('-')) {
      throw new Error(`submitArray: extra sbatch argument ${JSON.stringify(extra)} is empty or not an option (use --name=value)`)
    }
    // What this module owns: the indices, the script, how the environment travels, the output form.
    if (reservedSbatchArg(extra) !== null) {
      throw new Error(`submitArray: extra sbatch argument ${JSON.stringify(extra)} is set by submitArray itself`)
    }
    args.push(extra)
  }
  return args
}

function submitEnv(env: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`submitArray: environment variable name ${JSON.stringify(name)} is not valid`)
    if (value.includes('\0')) throw new Error(`submitArray: environment variable ${name} contains a NUL byte`)
  }
  return { ...process.env, ...env }
}

/** The job id in `sbatch --parsable`'s output: `jobid` or `jobid;cluster`, on its last line. */
export function parseSbatchParsable(stdout: string): string {
  const last =
    stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .pop() ?? ''
  const jobId = last.split(';')[0]
  if (!/^\d+$/.test(jobId)) throw new Error(`sbatch --parsable printed no job id: ${JSON.stringify(stdout)}`)
  return jobId
}

/** Submits one array job; resolves with its job id. */
export async function submitArray(spec: SubmitArraySpec, options: SubmitOptions = {}): Promise<{ jobId: string }> {
  const args = sbatchArgs(spec)
  const script = batchScript(spec.command)
  const env = submitEnv(spec.env)
  const stdout = await run('sbatch', args, { timeoutMs: options.timeoutMs ?? SUBMIT_TIMEOUT_MS, input: script, env })
  return { jobId: parseSbatchParsable(stdout) }
}

// ---------------------------------------------------------------------------------------------
// Parsing what the commands print

/** Expands `2-4,6-9%2` or `[1-7:2]` (optionally with the brackets) into indices and the throttle. */
export function parseArrayTaskSpec(spec: string, limit = 1_000_000): { indices: number[]; throttle: number | null } {
  let body = spec.trim()
  if (body.startsWith('[') && body.endsWith(']')) body = body.slice(1, -1)
  let throttle: number | null = null
  const pct = body.indexOf('%')
  if (pct >= 0) {
    throttle = Number(body.slice(pct + 1))
    if (!Number.isSafeInteger(throttle)) throw new Error(`array task spec ${JSON.stringify(spec)}: bad throttle`)
    body = body.slice(0, pct)
  }
  const indices: number[] = []
  for (const part of body.split(',')) {
    const m = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(part.trim())
    if (!m) throw new Error(`array task spec ${JSON.stringify(spec)}: cannot read ${JSON.stringify(part)}`)
    const from = Number(m[1])
    const to = m[2] === undefined ? from : Number(m[2])
    const step = m[3] === undefined ? 1 : Number(m[3])
    if (to < from || step < 1) throw new Error(`array task spec ${JSON.stringify(spec)}: bad range ${JSON.stringify(part)}`)
    for (let i = from; i <= to; i += step) {
      indices.push(i)
      if (indices.length > limit) throw new Error(`array task spec ${JSON.stringify(spec)}: more than ${limit} tasks`)
    }
  }
  return { indices, throttle }
}

/**
 * A JobID as sacct and squeue write it: `123` (not an array), `123_4`, `123_[2-5%2]`, with a step
 * `123_4.batch`. `indices` is null for a job that is not an array.
 */
export function parseJobIdField(field: string): { arrayJobId: string; indices: number[] | null; step: string | null } {
  const m = /^(\d+)(?:_(\d+|\[[^\]]*\]))?(?:\.(.+))?$/.exec(field.trim())
  if (!m) throw new Error(`cannot read job id ${JSON.stringify(field)}`)
  const indices = m[2] === undefined ? null : parseArrayTaskSpec(m[2]).indices
  return { arrayJobId: m[1], indices, step: m[3] ?? null }
}

/** `CANCELLED by 1000` → CANCELLED; unknown names → UNKNOWN. */
export function normalizeState(raw: string): SlurmState {
  const word = raw.trim().split(/\s+/)[0]?.replace(/\+$/, '').toUpperCase() ?? ''
  return (SLURM_STATES as readonly string[]).includes(word) ? (word as SlurmState) : 'UNKNOWN'
}

/** Slurm's `code:signal` (e.g. `143:0`, `0:15`). Before the task finished, both are null. */
export function parseExitCode(raw: string | undefined, state: SlurmState): { exitCode: number | null; signal: number | null } {
  const m = /^(\d+):(\d+)$/.exec((raw ?? '').trim())
  if (!m || !isFinished(state)) return { exitCode: null, signal: null }
  const signal = Number(m[2])
  return { exitCode: Number(m[1]), signal: signal === 0 ? null : signal }
}

const none = (value: string | undefined): string | null => {
  const v = (value ?? '').trim()
  return v === '' || v === 'None' || v === '(null)' || v === 'None assigned' || v === 'N/A' ? null : v
}

/** squeue's format for parseSqueue: array id, job id, array job id, task id(s), state, reason, nodes. */
export const SQUEUE_FORMAT = '%i|%A|%F|%K|%T|%r|%N'

/** `squeue -t all -h -o SQUEUE_FORMAT` → one status per task (a pending range expanded; no exit codes). */
export function parseSqueue(text: string): ArrayTaskStatus[] {
  const tasks: ArrayTaskStatus[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    const f = line.split('|')
    if (f.length < 7) throw new Error(`squeue: cannot read ${JSON.stringify(line)}`)
    const [arrayId, jobId, , taskIds, stateText, reason, node] = f
    if (taskIds === 'N/A') continue // not an array job
    const { indices } = parseJobIdField(arrayId)
    const state = normalizeState(stateText)
    const range = arrayId.includes('[')
    for (const index of indices ?? []) {
      tasks.push({
        index,
        taskJobId: range ? null : jobId,
        state,
        reason: none(reason),
        exitCode: null,
        signal: null,
        node: none(node),
        source: 'squeue',
      })
    }
  }
  return tasks
}

/** One `Key=Value Key=Value …` line (scontrol -o, the jobcomp file) as a record. */
export function parseKeyValueLine(line: string): Record<string, string> {
  const record: Record<string, string> = {}
  // A value may hold spaces (a job name, a command); a new field starts where ` Key=` does.
  for (const field of line.trim().split(/\s+(?=[A-Za-z][\w:/]*=)/)) {
    const eq = field.indexOf('=')
    if (eq > 0) record[field.slice(0, eq)] = field.slice(eq + 1)
  }
  return record
}

function fromKeyValueRecords(text: string, source: 'scontrol' | 'jobcomp', arrayJobId?: string): ArrayTaskStatus[] {
  const tasks: ArrayTaskStatus[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    const r = parseKeyValueLine(line)
    if (r.JobId === undefined) continue
    if (!r.ArrayTaskId || r.ArrayTaskId === 'N/A' || !r.ArrayJobId || r.ArrayJobId === '0') continue // not an array task
    if (arrayJobId !== undefined && r.ArrayJobId !== arrayJobId) continue
    const state = normalizeState(r.JobState ?? '')
    const { indices } = parseArrayTaskSpec(r.ArrayTaskId)
    const range = indices.length > 1 || /[-,%]/.test(r.ArrayTaskId)
    const { exitCode, signal } = parseExitCode(r.ExitCode, state)
    for (const index of indices) {
      tasks.push({
        index,
        taskJobId: range ? null : r.JobId,
        state,
        reason: none(r.Reason),
        exitCode: range ? null : exitCode,
        signal: range ? null : signal,
        node: none(r.NodeList),
        source,
      })
    }
  }
  return tasks
}

/** `scontrol show job -o JOB` (one line per task, or per pending range) → one status per task. */
export function parseScontrolJobs(text: string): ArrayTaskStatus[] {
  return fromKeyValueRecords(text, 'scontrol')
}

/**
 * The jobcomp file (jobcomp/filetxt: a line per finished job, scontrol's `Key=Value` style) → the
 * tasks of one array. Its ExitCode for a cancelled task is written at the cancel (0:0), not at the
 * exit. Tasks still pending when the whole array was cancelled get no line.
 */
export function parseJobComp(text: string, arrayJobId: string): ArrayTaskStatus[] {
  return fromKeyValueRecords(text, 'jobcomp', arrayJobId)
}

/** sacct's fields for parseSacct, in this order. */
export const SACCT_FIELDS = 'JobID,JobIDRaw,State,ExitCode,Reason,NodeList'

/**
 * `sacct -P -n -j JOB -o SACCT_FIELDS` → the tasks (from the allocation rows; a pending range
 * expanded) and the steps (`.batch`, `.extern`, `.0`… rows, each with its own state).
 */
export function parseSacct(text: string): { tasks: ArrayTaskStatus[]; steps: SacctStep[] } {
  const tasks: ArrayTaskStatus[] = []
  const steps: SacctStep[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    const f = line.split('|')
    if (f.length < 6) throw new Error(`sacct: cannot read ${JSON.stringify(line)}`)
    const [jobIdText, rawId, stateText, exitText, reason, node] = f
    const id = parseJobIdField(jobIdText)
    const state = normalizeState(stateText)
    const { exitCode, signal } = parseExitCode(exitText, state)
    const taskJobId = rawId.split('.')[0] || null
    if (id.step !== null) {
      steps.push({
        index: id.indices?.length === 1 ? id.indices[0] : null,
        taskJobId,
        step: id.step,
        state,
        exitCode,
        signal,
        node: none(node),
      })
      continue
    }
    if (id.indices === null) continue // not an array job
    const range = jobIdText.includes('[')
    for (const index of id.indices) {
      tasks.push({
        index,
        taskJobId: range ? null : taskJobId,
        state,
        reason: none(reason),
        exitCode: range ? null : exitCode,
        signal: range ? null : signal,
        node: none(node),
        source: 'sacct',
      })
    }
  }
  return { tasks, steps }
}

// ---------------------------------------------------------------------------------------------
// Querying and cancelling

function checkJobId(jobId: string): void {
  if (!/^\d+$/.test(jobId)) throw new Error(`not a Slurm job id: ${JSON.stringify(jobId)}`)
}

const gone = (e: unknown): boolean => e instanceof SlurmCommandError && /Invalid job id specified/i.test(e.stderr)
const noAccounting = (e: unknown): boolean => e instanceof SlurmCommandError && /accounting storage is disabled/i.test(e.stderr + e.message)

/** Whether sacct works here: unknown until first asked; false once it said accounting is disabled. */
let accounting: boolean | undefined

export interface QueryOptions {
  /** the indices the caller submitted: those found nowhere come back as UNKNOWN */
  indices?: readonly number[]
  /** the jobcomp file (JobCompLoc) to read for tasks the controller has forgotten */
  jobCompFile?: string
  /** false: never try sacct (default: try it until it says accounting is disabled) */
  sacct?: boolean
  timeoutMs?: number
}

/**
 * The status of each task of an array job, by index. sacct first where accounting works (it knows
 * tasks long finished); squeue's live view overrides it (slurmdbd lags the controller); scontrol
 * adds the exit codes squeue lacks; the jobcomp file, if named, and UNKNOWN for the rest of
 * `options.indices`.
 */
export async function queryArray(jobId: string, options: QueryOptions = {}): Promise<ArrayTaskStatus[]> {
  checkJobId(jobId)
  const timeoutMs = options.timeoutMs ?? QUERY_TIMEOUT_MS
  const byIndex = new Map<number, ArrayTaskStatus>()

  if (options.sacct !== false && accounting !== false) {
    try {
      const out = await run('sacct', ['-P', '-n', '-j', jobId, '-o', SACCT_FIELDS], { timeoutMs })
      accounting = true
      for (const t of parseSacct(out).tasks) byIndex.set(t.index, t)
    } catch (e) {
      if (noAccounting(e)) accounting = false
      // Any other sacct failure (slurmdbd down, …): the controller's view below still answers.
    }
  }

  let live: ArrayTaskStatus[] = []
  try {
    live = parseSqueue(await run('squeue', ['-t', 'all', '-h', '-j', jobId, '-o', SQUEUE_FORMAT], { timeoutMs }))
  } catch (e) {
    if (!gone(e)) throw e
  }
  for (const t of live) {
    const before = byIndex.get(t.index)
    // The same finished task in sacct: keep its exit code.
    const keep = before && before.state === t.state && before.exitCode !== null
    byIndex.set(t.index, keep ? { ...t, exitCode: before.exitCode, signal: before.signal } : t)
  }
  const needExit = [...byIndex.values()].some((t) => t.source === 'squeue' && isFinished(t.state))
  if (needExit) {
    try {
      const out = await run('scontrol', ['show', 'job', '-o', jobId], { timeoutMs })
      for (const t of parseScontrolJobs(out)) {
        const before = byIndex.get(t.index)
        if (before?.source === 'squeue' && isFinished(before.state)) byIndex.set(t.index, t)
      }
    } catch (e) {
      if (!gone(e)) throw e
    }
  }

  const missing = (options.indices ?? []).filter((i) => !byIndex.has(i))
  if (missing.length > 0 && options.jobCompFile !== undefined) {
    let text = ''
    try {
      text = await readFile(options.jobCompFile, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    }
    for (const t of parseJobComp(text, jobId)) if (missing.includes(t.index)) byIndex.set(t.index, t)
  }
  for (const index of options.indices ?? []) {
    if (!byIndex.has(index)) {
      byIndex.set(index, { index, taskJobId: null, state: 'UNKNOWN', reason: null, exitCode: null, signal: null, node: null, source: 'none' })
    }
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index)
}

/** Cancels the whole array job, or one task of it. (scancel says nothing for an unknown id.) */
export async function cancel(jobId: string, index?: number, options: { timeoutMs?: number } = {}): Promise<void> {
  checkJobId(jobId)
  if (index !== undefined && (!Number.isSafeInteger(index) || index < 0)) throw new Error(`cancel: task index ${index} is not a non-negative integer`)
  await run('scancel', [index === undefined ? jobId : `${jobId}_${index}`], { timeoutMs: options.timeoutMs ?? QUERY_TIMEOUT_MS })
}

/**
 * Whether sbatch is on PATH and configured (`sbatch --version` also fails when no slurm.conf is
 * found). It does not ask the controller: the first submit says whether that answers.
 */
export async function sbatchAvailable(options: { timeoutMs?: number } = {}): Promise<{ available: boolean; detail: string }> {
  try {
    const out = await run('sbatch', ['--version'], { timeoutMs: options.timeoutMs ?? 10_000 })
    return { available: true, detail: out.trim() }
  } catch (e) {
    return { available: false, detail: e instanceof Error ? e.message : String(e) }
  }
}
