// slurm-cli without Slurm: the parsers on outputs recorded from the test cluster (and sacct's
// documented format: fixtures/README.md), the sbatch arguments and script, and submit/query/cancel
// against stand-in commands on PATH that answer with those recordings.
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  type ArrayTaskStatus,
  type SubmitArraySpec,
  arraySpec,
  batchScript,
  normalizeState,
  parseArrayTaskSpec,
  parseJobComp,
  parseJobIdField,
  parseKeyValueLine,
  parseSacct,
  parseSbatchParsable,
  parseScontrolJobs,
  parseSqueue,
  sbatchArgs,
  shellQuote,
} from './slurm-cli'

const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name), 'utf8')
/** index → [state, exitCode, signal, taskJobId] */
const summary = (tasks: ArrayTaskStatus[]) => Object.fromEntries(tasks.map((t) => [t.index, [t.state, t.exitCode, t.signal, t.taskJobId]]))

const spec = (over: Partial<SubmitArraySpec> = {}): SubmitArraySpec => ({
  indices: [0, 1],
  jobName: 'trainpool-run',
  output: '/runs/r1/slurm-%A_%a.out',
  command: ['node', '/app/worker.js'],
  env: { TRAINPOOL_TOKEN: 's3cret' },
  cwd: '/runs/r1',
  ...over,
})

describe('sbatch: arguments and script', () => {
  it('arraySpec: sorted, merged ranges, the throttle; refuses what sbatch would misread', () => {
    expect(arraySpec([0, 1])).toBe('0-1')
    expect(arraySpec([1])).toBe('1')
    expect(arraySpec([8, 0, 1, 2, 5, 7, 3, 2])).toBe('0-3,5,7-8')
    expect(arraySpec([0, 1, 2, 3], 2)).toBe('0-3%2')
    expect(() => arraySpec([])).toThrow(/no task indices/)
    expect(() => arraySpec([-1])).toThrow(/not a non-negative integer/)
    expect(() => arraySpec([1.5])).toThrow(/not a non-negative integer/)
    expect(() => arraySpec([0], 0)).toThrow(/maxConcurrent 0/)
  })

  it('the options: gres gpu:1 by default, none with null; --export=ALL; secrets never in the arguments', () => {
    const args = sbatchArgs(spec({ maxConcurrent: 4, partition: 'gpu', time: '2:00:00', account: 'lab', extraArgs: ['--constraint=a100', '-Q'] }))
    expect(args).toEqual([
      '--parsable',
      '--array=0-1%4',
      '--job-name=trainpool-run',
      '--output=/runs/r1/slurm-%A_%a.out',
      '--chdir=/runs/r1',
      '--export=ALL',
      '--partition=gpu',
      '--gres=gpu:1',
      '--time=2:00:00',
      '--account=lab',
      '--constraint=a100',
      '-Q',
    ])
    expect(args.join(' ')).not.toContain('s3cret')
    expect(sbatchArgs(spec({ gres: null }))).not.toContainEqual(expect.stringMatching(/^--gres/))
    expect(sbatchArgs(spec({ gres: 'gpu:a100:2' }))).toContain('--gres=gpu:a100:2')
  })

  it('refuses empty or positional extra arguments (sbatch would run that file instead of the script), its own options, and line breaks', () => {
    expect(() => sbatchArgs(spec({ extraArgs: [''] }))).toThrow(/empty or not an option/)
    expect(() => sbatchArgs(spec({ extraArgs: ['  '] }))).toThrow(/empty or not an option/)
    expect(() => sbatchArgs(spec({ extraArgs: ['run.sh'] }))).toThrow(/empty or not an option/)
    for (const own of ['--wrap=sleep 1', '--export=NONE', '--array=0-9', '-a', '-a0-3', '--parsable']) {
      expect(() => sbatchArgs(spec({ extraArgs: [own] })), own).toThrow(/is set by submitArray itself/)
    }
    expect(() => sbatchArgs(spec({ jobName: 'a\nb' }))).toThrow(/jobName .* line break/)
    expect(() => sbatchArgs(spec({ partition: '' }))).toThrow(/partition "" is empty/)
    expect(() => batchScript([])).toThrow(/command is empty/)
  })

  it('the script execs the worker with every argument intact through /bin/sh, however it is quoted', () => {
    const tricky = ["it's", 'a b', '$HOME', '`id`', '"q"', 'line\nbreak', '', '\\', '#SBATCH --x', '*']
    const script = batchScript([process.execPath, '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', ...tricky])
    expect(script.startsWith('#!/bin/sh\n')).toBe(true)
    expect(script).toMatch(/^exec '/m)
    const out = execFileSync('/bin/sh', ['-s'], { input: script, encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual(tricky)
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`)
    expect(() => shellQuote('a\0b')).toThrow(/NUL/)
  })

  it('parseSbatchParsable: jobid or jobid;cluster on the last line', () => {
    expect(parseSbatchParsable('12345\n')).toBe('12345')
    expect(parseSbatchParsable('12345;trainpool\n')).toBe('12345')
    expect(parseSbatchParsable('sbatch: note\n  \n777;c1\n')).toBe('777')
    expect(() => parseSbatchParsable('Submitted batch job 5\n')).toThrow(/printed no job id/)
    expect(() => parseSbatchParsable('')).toThrow(/printed no job id/)
  })
})

describe('parsing array ids and states', () => {
  it('parseArrayTaskSpec: ranges, split ranges, steps, the throttle', () => {
    expect(parseArrayTaskSpec('2-4,6-9%2')).toEqual({ indices: [2, 3, 4, 6, 7, 8, 9], throttle: 2 })
    const split = parseArrayTaskSpec('[60-89,91-94]')
    expect(split.indices).toHaveLength(34)
    expect(split.indices).not.toContain(90)
    expect(split.throttle).toBeNull()
    expect(parseArrayTaskSpec('1-7:2').indices).toEqual([1, 3, 5, 7])
    const big = parseArrayTaskSpec('9201-10000%500')
    expect([big.indices.length, big.indices[0], big.indices.at(-1), big.throttle]).toEqual([800, 9201, 10000, 500])
    expect(() => parseArrayTaskSpec('5-2')).toThrow(/bad range/)
    expect(() => parseArrayTaskSpec('a-b')).toThrow(/cannot read/)
    expect(() => parseArrayTaskSpec('0-2000000')).toThrow(/more than 1000000 tasks/)
  })

  it('parseJobIdField: plain, task, pending record, steps', () => {
    expect(parseJobIdField('127')).toEqual({ arrayJobId: '127', indices: null, step: null })
    expect(parseJobIdField('123_4')).toEqual({ arrayJobId: '123', indices: [4], step: null })
    expect(parseJobIdField('123_4.batch')).toEqual({ arrayJobId: '123', indices: [4], step: 'batch' })
    expect(parseJobIdField('123_4.0')).toEqual({ arrayJobId: '123', indices: [4], step: '0' })
    expect(parseJobIdField('123_[2-3%2]')).toEqual({ arrayJobId: '123', indices: [2, 3], step: null })
    expect(() => parseJobIdField('abc')).toThrow(/cannot read job id/)
  })

  it('normalizeState: the first word; names it does not know are UNKNOWN', () => {
    expect(normalizeState('CANCELLED by 1000')).toBe('CANCELLED')
    expect(normalizeState('OUT_OF_MEMORY')).toBe('OUT_OF_MEMORY')
    expect(normalizeState(' running ')).toBe('RUNNING')
    expect(normalizeState('OUT_OF_ME+')).toBe('UNKNOWN') // sacct without -P truncates
    expect(normalizeState('')).toBe('UNKNOWN')
  })

  it('parseKeyValueLine: a value with spaces stays one value', () => {
    expect(parseKeyValueLine('JobId=5 JobName=my job name UserId=root(0) AllocNode:Sid=localhost:1 Power=')).toEqual({
      JobId: '5',
      JobName: 'my job name',
      UserId: 'root(0)',
      'AllocNode:Sid': 'localhost:1',
      Power: '',
    })
  })
})

describe('squeue and scontrol, recorded from the test cluster', () => {
  it('a live array: two tasks running, the pending record expanded, the task cancelled while pending listed nowhere', () => {
    const squeue = parseSqueue(fixture('squeue-live.txt'))
    expect(squeue.map((t) => t.index)).toEqual([2, 3, 4, 6, 7, 8, 9, 1, 0])
    expect(squeue.find((t) => t.index === 0)).toEqual({
      index: 0,
      taskJobId: '6',
      state: 'RUNNING',
      reason: null,
      exitCode: null,
      signal: null,
      node: 'vm',
      source: 'squeue',
    })
    expect(squeue.find((t) => t.index === 9)).toEqual({
      index: 9,
      taskJobId: null,
      state: 'PENDING',
      reason: 'JobArrayTaskLimit',
      exitCode: null,
      signal: null,
      node: null,
      source: 'squeue',
    })
    const scontrol = parseScontrolJobs(fixture('scontrol-live.txt'))
    expect(summary(scontrol)).toEqual(summary(squeue))
    expect(scontrol.every((t) => t.source === 'scontrol')).toBe(true)
  })

  it('exit codes and signals come from scontrol (squeue prints none)', () => {
    const squeue = parseSqueue(fixture('squeue-array-finished.txt'))
    expect(squeue.every((t) => t.exitCode === null)).toBe(true)
    expect(summary(parseScontrolJobs(fixture('scontrol-array-finished.txt')))).toEqual({
      0: ['COMPLETED', 0, null, '10'],
      1: ['FAILED', 3, null, '11'],
      2: ['FAILED', 0, 9, '12'], // killed by SIGKILL
      3: ['CANCELLED', 0, 15, '9'], // cancelled while running; it started last and kept the array's id
    })
    expect(parseScontrolJobs(fixture('scontrol-array-finished.txt')).find((t) => t.index === 1)?.reason).toBe('NonZeroExitCode')
    expect(summary(squeue)).toEqual({
      0: ['COMPLETED', null, null, '10'],
      1: ['FAILED', null, null, '11'],
      2: ['FAILED', null, null, '12'],
      3: ['CANCELLED', null, null, '9'],
    })
  })

  it('a whole array cancelled: the running tasks (143: they trapped TERM) and the pending record', () => {
    const scontrol = parseScontrolJobs(fixture('scontrol-array-cancelled.txt'))
    expect(summary(scontrol)).toEqual({
      0: ['CANCELLED', 143, null, '6'],
      1: ['CANCELLED', 143, null, '7'],
      2: ['CANCELLED', 143, null, '8'],
      3: ['CANCELLED', null, null, null],
      4: ['CANCELLED', null, null, null],
      6: ['CANCELLED', null, null, null],
      7: ['CANCELLED', null, null, null],
      8: ['CANCELLED', null, null, null],
      9: ['CANCELLED', null, null, null],
    })
    expect(parseSqueue(fixture('squeue-array-cancelled.txt')).map((t) => t.state)).toEqual(Array(9).fill('CANCELLED'))
  })

  it('a time limit: TIMEOUT with the reason TimeLimit', () => {
    expect(summary(parseScontrolJobs(fixture('scontrol-array-timeout.txt')))).toEqual({
      0: ['TIMEOUT', 0, 15, '15'],
      1: ['COMPLETED', 0, null, '14'],
    })
    expect(parseSqueue(fixture('squeue-array-timeout.txt')).find((t) => t.index === 0)?.reason).toBe('TimeLimit')
  })

  it("the jobcomp file: one array's tasks; a cancel's exit code is 0:0 there; no line for the pending record; other jobs ignored", () => {
    const text = fixture('jobcomp.txt')
    expect(summary(parseJobComp(text, '9'))).toEqual({
      0: ['COMPLETED', 0, null, '10'],
      1: ['FAILED', 3, null, '11'],
      2: ['FAILED', 0, 9, '12'],
      3: ['CANCELLED', 0, null, '9'],
    })
    expect(Object.keys(summary(parseJobComp(text, '5')))).toEqual(['0', '1', '2'])
    expect(parseJobComp(text, '13')).toEqual([]) // job 13 is not an array
    expect(parseJobComp(text, '9').every((t) => t.source === 'jobcomp')).toBe(true)
  })
})

describe('sacct (its documented -P format)', () => {
  it('an array in every final state: the allocation rows decide, the step rows come apart', () => {
    const { tasks, steps } = parseSacct(fixture('sacct-array.txt'))
    expect(summary(tasks)).toEqual({
      0: ['COMPLETED', 0, null, '4243'],
      1: ['FAILED', 3, null, '4244'],
      2: ['CANCELLED', 0, 15, '4245'],
      3: ['TIMEOUT', 0, null, '4246'],
      4: ['OUT_OF_MEMORY', 0, 125, '4247'],
      5: ['NODE_FAIL', 0, null, '4248'],
      6: ['PREEMPTED', 0, null, '4249'],
      7: ['RUNNING', null, null, '4250'],
      8: ['PENDING', null, null, null],
      9: ['PENDING', null, null, null],
      11: ['PENDING', null, null, null],
      12: ['PENDING', null, null, null],
    })
    expect(tasks.find((t) => t.index === 8)).toMatchObject({ reason: 'JobArrayTaskLimit', node: null, source: 'sacct' })
    expect(tasks.find((t) => t.index === 3)).toMatchObject({ reason: 'TimeLimit', node: 'gpu03' })
    expect(steps.filter((s) => s.index === 3).map((s) => [s.step, s.state, s.signal])).toEqual([
      ['batch', 'CANCELLED', 15],
      ['extern', 'COMPLETED', null],
    ])
    expect(steps.find((s) => s.index === 2 && s.step === '0')).toMatchObject({ taskJobId: '4245', state: 'CANCELLED', signal: 15 })
    expect(steps).toHaveLength(14)
  })

  it('a large throttled pending record and a split one', () => {
    const big = parseSacct(fixture('sacct-pending-ranges.txt')).tasks
    expect(big).toHaveLength(801)
    expect(big.filter((t) => t.state === 'PENDING')).toHaveLength(800)
    expect(big.find((t) => t.index === 9200)).toMatchObject({ state: 'RUNNING', taskJobId: '9324', node: 'gpu07' })
    const split = parseSacct(fixture('sacct-split-range.txt'))
    expect(split.tasks.map((t) => t.index)).toEqual([...Array.from({ length: 30 }, (_, i) => 60 + i), 91, 92, 93, 94, 90])
    expect(split.tasks.find((t) => t.index === 90)?.state).toBe('COMPLETING')
    expect(split.steps.map((s) => [s.step, s.state])).toEqual([
      ['batch', 'COMPLETED'],
      ['extern', 'RUNNING'],
    ])
  })

  it('refuses a line it cannot read', () => {
    expect(() => parseSacct('4242_0|4243|COMPLETED\n')).toThrow(/sacct: cannot read/)
    expect(() => parseSqueue('5_1|7\n')).toThrow(/squeue: cannot read/)
  })
})

// ---------------------------------------------------------------------------------------------
// The functions that run commands, against stand-ins on PATH: each answers from <dir>/answers/
// <name>.out/.err/.rc and records its arguments, stdin and environment.

const bin = mkdtempSync(join(os.tmpdir(), 'trainpool-slurm-cli-'))
const answers = join(bin, 'answers')
mkdirSync(answers)
for (const name of ['sbatch', 'squeue', 'scontrol', 'sacct', 'scancel']) {
  writeFileSync(
    join(bin, name),
    `#!/bin/sh
a="$(dirname "$0")/answers/${name}"
printf '%s\\n' "$@" > "$a.args"
cat > "$a.stdin"
env > "$a.env"
[ -f "$a.err" ] && cat "$a.err" >&2
[ -f "$a.out" ] && cat "$a.out"
exit "$(cat "$a.rc" 2>/dev/null || echo 0)"
`,
  )
  chmodSync(join(bin, name), 0o755)
}
const answer = (name: string, out: string, rc = 0, err = '') => {
  writeFileSync(join(answers, `${name}.out`), out)
  writeFileSync(join(answers, `${name}.err`), err)
  writeFileSync(join(answers, `${name}.rc`), String(rc))
}
const asked = (name: string, what: 'args' | 'stdin' | 'env') => {
  try {
    return readFileSync(join(answers, `${name}.${what}`), 'utf8')
  } catch {
    return null
  }
}
const GONE = 'slurm_load_jobs error: Invalid job id specified\n'
const NO_ACCOUNTING = 'Slurm accounting storage is disabled\n'

/** A fresh module: its memory of whether sacct works starts empty. */
async function cli() {
  vi.resetModules()
  return import('./slurm-cli')
}

describe('submit, query, cancel (stand-in commands)', () => {
  beforeEach(() => {
    rmSync(answers, { recursive: true, force: true })
    mkdirSync(answers)
    vi.stubEnv('PATH', `${bin}:${process.env.PATH}`)
  })
  afterEach(() => vi.unstubAllEnvs())
  afterAll(() => rmSync(bin, { recursive: true, force: true }))

  it('submitArray: the script on stdin, the secret only in the environment, the id from --parsable', async () => {
    const { submitArray } = await cli()
    answer('sbatch', '4242;trainpool\n')
    await expect(submitArray(spec({ indices: [1], command: ['node', '/app/worker.js', "--name=it's"] }))).resolves.toEqual({ jobId: '4242' })
    const args = asked('sbatch', 'args')!
    expect(args.split('\n')).toContain('--array=1')
    expect(args).not.toContain('s3cret')
    expect(asked('sbatch', 'stdin')).toBe(batchScript(['node', '/app/worker.js', "--name=it's"]))
    expect(asked('sbatch', 'stdin')).not.toContain('s3cret')
    expect(asked('sbatch', 'env')).toContain('TRAINPOOL_TOKEN=s3cret\n')
    expect(asked('sbatch', 'env')).toContain(`PATH=${bin}:`) // the caller's environment too (--export=ALL)
  })

  it("submitArray: sbatch's refusal comes back with its stderr; a bad environment name is refused before", async () => {
    const { submitArray, SlurmCommandError } = await cli()
    answer('sbatch', '', 1, 'sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification\n')
    const error = await submitArray(spec()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SlurmCommandError)
    expect(String(error)).toMatch(/sbatch --parsable .* failed \(exit 1\): sbatch: error: Batch job submission failed: Invalid generic resource/)
    await expect(submitArray(spec({ env: { 'BAD NAME': 'x' } }))).rejects.toThrow(/environment variable name "BAD NAME"/)
  })

  it('a command that hangs is stopped at the timeout, and says so', async () => {
    const { submitArray } = await cli()
    const real = readFileSync(join(bin, 'sbatch'), 'utf8')
    writeFileSync(join(bin, 'sbatch'), '#!/bin/sh\nexec sleep 30\n')
    try {
      await expect(submitArray(spec(), { timeoutMs: 300 })).rejects.toThrow(/sbatch .* timed out after 300 ms \(SIGTERM\)/)
    } finally {
      writeFileSync(join(bin, 'sbatch'), real)
    }
  })

  it('queryArray without accounting: squeue for the states, scontrol for the exit codes; sacct not asked again', async () => {
    const { queryArray } = await cli()
    answer('sacct', '', 1, NO_ACCOUNTING)
    answer('squeue', fixture('squeue-array-finished.txt'))
    answer('scontrol', fixture('scontrol-array-finished.txt'))
    const tasks = await queryArray('9')
    expect(summary(tasks)).toEqual({
      0: ['COMPLETED', 0, null, '10'],
      1: ['FAILED', 3, null, '11'],
      2: ['FAILED', 0, 9, '12'],
      3: ['CANCELLED', 0, 15, '9'],
    })
    expect(asked('squeue', 'args')!.split('\n')).toEqual(['-t', 'all', '-h', '-j', '9', '-o', '%i|%A|%F|%K|%T|%r|%N', ''])
    expect(asked('scontrol', 'args')!.split('\n')).toEqual(['show', 'job', '-o', '9', ''])
    rmSync(join(answers, 'sacct.args'))
    await queryArray('9')
    expect(asked('sacct', 'args')).toBeNull() // accounting is off: remembered
  })

  it('queryArray: a live array needs no scontrol; a task found nowhere is UNKNOWN when asked for', async () => {
    const { queryArray } = await cli()
    answer('sacct', '', 1, NO_ACCOUNTING)
    answer('squeue', fixture('squeue-live.txt'))
    answer('scontrol', '', 1, 'should not be asked')
    const tasks = await queryArray('5', { indices: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] })
    expect(tasks.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(tasks.find((t) => t.index === 5)).toEqual({
      index: 5,
      taskJobId: null,
      state: 'UNKNOWN',
      reason: null,
      exitCode: null,
      signal: null,
      node: null,
      source: 'none',
    })
    expect(asked('scontrol', 'args')).toBeNull()
  })

  it('queryArray: an array the controller forgot comes from the jobcomp file, if named', async () => {
    const { queryArray } = await cli()
    answer('sacct', '', 1, NO_ACCOUNTING)
    answer('squeue', '', 1, GONE)
    answer('scontrol', '', 1, GONE)
    const jobcomp = join(bin, 'jobcomp.txt')
    writeFileSync(jobcomp, fixture('jobcomp.txt'))
    expect(await queryArray('9')).toEqual([])
    expect(summary(await queryArray('9', { indices: [0, 1, 2, 3, 4], jobCompFile: jobcomp }))).toEqual({
      0: ['COMPLETED', 0, null, '10'],
      1: ['FAILED', 3, null, '11'],
      2: ['FAILED', 0, 9, '12'],
      3: ['CANCELLED', 0, null, '9'],
      4: ['UNKNOWN', null, null, null],
    })
    expect((await queryArray('9', { indices: [0], jobCompFile: join(bin, 'missing.txt') }))[0].state).toBe('UNKNOWN')
  })

  it("queryArray with accounting: sacct for what the controller forgot, squeue's live state over it", async () => {
    const { queryArray } = await cli()
    answer('sacct', fixture('sacct-array.txt'))
    // The controller still has task 7 (now finished) and the pending ones; 0-6 are gone from it.
    answer('squeue', '4242_7|4250|4242|7|COMPLETED|None|gpu03\n4242_[8-9,11-12%4]|4242|4242|8-9,11-12%4|PENDING|JobArrayTaskLimit|\n')
    answer('scontrol', 'JobId=4250 ArrayJobId=4242 ArrayTaskId=7 JobName=w JobState=COMPLETED Reason=None ExitCode=0:0 NodeList=gpu03\n')
    const tasks = await queryArray('4242')
    expect(summary(tasks)[1]).toEqual(['FAILED', 3, null, '4244'])
    expect(tasks.find((t) => t.index === 1)?.source).toBe('sacct')
    expect(tasks.find((t) => t.index === 7)).toMatchObject({ state: 'COMPLETED', exitCode: 0, source: 'scontrol' })
    expect(tasks.find((t) => t.index === 8)).toMatchObject({ state: 'PENDING', source: 'squeue' })
    expect(asked('sacct', 'args')!.split('\n')).toEqual(['-P', '-n', '-j', '4242', '-o', 'JobID,JobIDRaw,State,ExitCode,Reason,NodeList', ''])
  })

  it('queryArray: a controller that does not answer is an error with its words; a bad id is refused', async () => {
    const { queryArray } = await cli()
    answer('sacct', '', 1, NO_ACCOUNTING)
    answer('squeue', '', 1, 'squeue: error: Unable to contact slurm controller (connect failure)\n')
    await expect(queryArray('9')).rejects.toThrow(/squeue -t all .* failed \(exit 1\): squeue: error: Unable to contact slurm controller/)
    await expect(queryArray('9; rm -rf /')).rejects.toThrow(/not a Slurm job id/)
  })

  it('cancel: the array, or one task', async () => {
    const { cancel } = await cli()
    answer('scancel', '')
    await cancel('4242')
    expect(asked('scancel', 'args')).toBe('4242\n')
    await cancel('4242', 3)
    expect(asked('scancel', 'args')).toBe('4242_3\n')
    await expect(cancel('4242', -1)).rejects.toThrow(/not a non-negative integer/)
  })

  it('sbatchAvailable: the version, or why not', async () => {
    const { sbatchAvailable } = await cli()
    answer('sbatch', 'slurm 22.05.8\n')
    expect(await sbatchAvailable()).toEqual({ available: true, detail: 'slurm 22.05.8' })
    answer('sbatch', '', 1, 'sbatch: fatal: Could not establish a configuration source\n')
    expect(await sbatchAvailable()).toEqual({
      available: false,
      detail: 'sbatch --version failed (exit 1): sbatch: fatal: Could not establish a configuration source',
    })
    vi.stubEnv('PATH', join(bin, 'nothing-here'))
    expect((await sbatchAvailable()).detail).toBe('sbatch --version failed: not found on PATH')
  })
})
