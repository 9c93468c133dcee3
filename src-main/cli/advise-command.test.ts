// `trainpool advise` as a process: the advice of a stored sweep (fits with R², the pick with its
// interval, the runner-up), the refusal when the run cannot support one, bad targets exit 2 with
// the flag named, and --verify runs the check on real workers and prints predicted vs measured.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AdviceCheckSchema, AdviceSchema } from '@shared/contract'
import { mlpFamily } from '@shared/families'
import { modelSweep } from '@shared/plan'
import { RunStore } from '../store/run-store'
import { killAll, spawnCli } from '../testing/cli-process'
import { fakeRun } from '../testing/run-fixtures'
import { targetFromFlags } from './advise-command'
import { configFromFlags } from './options'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-advise-cli-'))
const store = join(dir, 'runs')
const SWEEP = '20250101-120000-sweep2'
const TWO_COUNTS = '20250101-120000-twocounts'
const model = { ...mlpFamily.defaults, hidden: [16], epochs: 1 }

beforeAll(async () => {
  const runs = new RunStore(store)
  await runs.save(fakeRun({ sizes: [2000], models: modelSweep(8), workers: [1, 2], repeats: 1, model }, SWEEP))
  await runs.save(fakeRun({ sizes: [2000], models: [4, 8], workers: [2], repeats: 1, model }, TWO_COUNTS))
})
afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

async function advise(args: string[]) {
  const cli = spawnCli('advise', [...args, '--store', store])
  const { code } = await cli.exited
  return { code, ...cli.out }
}

describe('trainpool bench --sweep models', () => {
  it('expands one --models N into 1, 2, 4, … N', () => {
    expect(configFromFlags({ preset: 'smoke', models: '50', sweep: 'models' }).models).toEqual([1, 2, 4, 8, 16, 32, 50])
  })

  it.each([
    [{ models: '4,8', sweep: 'models' }, /--sweep models needs one --models N to sweep up to .*got 4,8/],
    [{ models: '50', sweep: 'workers' }, /--sweep "workers" is not a sweep; accepted: models/],
  ])('refuses %o', (flags, message) => {
    expect(() => configFromFlags(flags)).toThrow(message)
  })
})

describe('trainpool advise', () => {
  it('prints the fits with R², the options with intervals and the advice; --json writes it', async () => {
    const json = join(dir, 'advice.json')
    const { code, stdout } = await advise([SWEEP, '--models', '32', '--size', '2000', '--json', json])
    expect(code).toBe(0)
    expect(stdout).toMatch(/time ≈ a \+ b·N/)
    expect(stdout).toMatch(/option\s+N measured\s+a\s+b per model\s+R²/)
    expect(stdout).toMatch(/pool W=2\s+2,4,8\s/)
    expect(stdout).toMatch(/advice: 32 models at 2 000 rows: batched, W=1, ≈ .+ \(.+\); batched W=2 ≈ .+× slower/)
    const advice = AdviceSchema.parse(JSON.parse(readFileSync(json, 'utf8')))
    expect(advice.options[0]).toMatchObject({ strategy: 'batched', workers: 1 })
  }, 60_000)

  it('prints the refusal when the run has too few model counts (exit 0: the answer is no advice)', async () => {
    const { code, stdout } = await advise([TWO_COUNTS, '--models', '32', '--size', '2000'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/REFUSED: 32 models at 2 000 rows: no advice — no fit can be trusted — .*only 2 model counts measured/)
  }, 60_000)

  it.each([
    [['--models', '0', '--size', '2000'], /--models must be a whole number from 1 to 1000000 \(got "0"\)/],
    [['--models', '-3', '--size', '2000'], /--models must be.*\(got "-3"\)/],
    [['--models', '2000000', '--size', '2000'], /--models must be.*\(got "2000000"\)/],
    [['--models', '10', '--size', 'lots'], /--size must be a whole number from 2 to 1000000 \(got "lots"\)/],
    [['--models', '10'], /--size is missing: the target data size in rows, a whole number from 2 to 1000000/],
  ])(
    'exits 2 on a bad target %j, naming the flag',
    async (args, message) => {
      const { code, stderr } = await advise([SWEEP, ...args])
      expect(code).toBe(2)
      expect(stderr).toMatch(message)
    },
    60_000,
  )

  it.each([
    [{ models: '10', size: '0x10' }, /^--size must be a whole number from 2 to 1000000 \(got "0x10"\)$/],
    [{ models: '1e1', size: '2000' }, /^--models must be a whole number from 1 to 1000000 \(got "1e1"\)$/],
    [{ models: '10.0', size: '2000' }, /^--models must be/],
    // past 2^53 it broke two of the schema's rules and was said twice
    [{ models: '10', size: '9007199254740993' }, /^--size must be a whole number from 2 to 1000000 \(got "9007199254740993"\)$/],
    [{ models: '0', size: '9007199254740993' }, /^--models must be .*\(got "0"\)\n--size must be .*\(got "9007199254740993"\)$/],
  ])('reads --models and --size by the shared number rule, one line per flag: %j is refused', (flags, message) => {
    expect(targetFromFlags(flags)).toMatch(message)
  })

  it('exits 2 on an unknown run', async () => {
    const { code, stderr } = await advise(['20990101-000000-none', '--models', '10', '--size', '2000'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/20990101-000000-none/)
  }, 60_000)

  it('--verify runs the recommended and runner-up options at the target and prints predicted vs measured', async () => {
    const json = join(dir, 'check.json')
    const { code, stdout, stderr } = await advise([SWEEP, '--models', '4', '--size', '2000', '--verify', '--json', json])
    expect(stderr).toMatch(/verifying: run \S+ measures the recommended and runner-up options/)
    expect(code).toBe(0)
    expect(stdout).toMatch(/check \(run \S+\): predicted vs measured at 4 models × 2000 rows/)
    expect(stdout).toMatch(/option\s+predicted\s+interval\s+measured\s+error\s+in interval/)
    expect(stdout).toMatch(/the recommended option was the fastest: (yes|NO)/)
    const check = AdviceCheckSchema.parse(JSON.parse(readFileSync(json, 'utf8')))
    expect(check.rows.length).toBeGreaterThanOrEqual(2)
    expect(check.rows.every((r) => r.measuredMs !== null)).toBe(true)
    const source = await new RunStore(store).get(SWEEP)
    expect(source.adviceChecks?.map((c) => c.verifyRunId)).toEqual([check.verifyRunId])
    expect((await new RunStore(store).get(check.verifyRunId)).verifies).toBe(SWEEP)
  }, 180_000)
})
