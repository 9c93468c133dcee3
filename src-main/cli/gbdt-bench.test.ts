// `trainpool bench --model gbdt --preset smoke`: the real CLI with real worker processes trains
// the trees in all three strategies and verifies model i is the same trees everywhere (tolerance 0,
// equal tree hashes), with no tfjs backend in the workers.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { parseRunResult } from '@shared/contract'
import { killAll, spawnCli } from '../testing/cli-process'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-gbdt-cli-'))
afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

it('bench --model gbdt --preset smoke exits 0, every strategy trained the same trees', async () => {
  const json = join(dir, 'run.json')
  const cli = spawnCli('bench', ['--model', 'gbdt', '--preset', 'smoke', '--backend', 'cpu', '--no-save', '--json', json])
  const { code } = await cli.exited
  expect(cli.out.stderr).not.toMatch(/error/i)
  expect(code).toBe(0)
  expect(cli.out.stdout).toMatch(/GBDT 10 rounds, depth 6, eta 0\.1, subsample 0\.8, colsample 0\.8/)
  expect(cli.out.stdout).toMatch(/same work: sequential 4\/4, pool 4\/4, batched 4\/4 models; per-model test MSE agree \(max rel\. Δ 0\.0e\+0, tolerance 0\)/)
  const run = parseRunResult(JSON.parse(readFileSync(json, 'utf8')))
  expect(run.config.model.kind).toBe('gbdt')
  expect(run.environment).toMatchObject({ backend: 'cpu', backendFlags: { engine: 'typescript' } })
  // no tfjs in a trees worker: its versions name the tree engine only
  expect(Object.keys(run.environment!.versions).some((k) => k.includes('tfjs'))).toBe(false)
  const hashes = run.measurements.map((m) => m.perModel.map((p) => p.fingerprint))
  expect(hashes[0].every((h) => /^[0-9a-f]{16}$/.test(h!))).toBe(true)
  expect(new Set(hashes[0]).size).toBe(4) // sampling 0.8 → four different models
  for (const h of hashes) expect(h).toEqual(hashes[0])
  const mses = run.measurements.map((m) => m.perModel.map((p) => p.testMse))
  for (const m of mses) expect(m).toEqual(mses[0])
})

it('bench --target binary --json -: the result JSON alone on stdout (the summary on stderr), a binary classifier scored by log loss', async () => {
  const cli = spawnCli('bench', [
    '--model',
    'gbdt',
    '--preset',
    'smoke',
    '--backend',
    'cpu',
    '--target',
    'binary',
    '--strategies',
    'sequential,batched',
    '--no-save',
    '--json',
    '-',
  ])
  const { code } = await cli.exited
  expect(code).toBe(0)
  const run = parseRunResult(JSON.parse(cli.out.stdout))
  expect(run.task).toEqual({ objective: 'binary', classes: ['0', '1'], metric: 'logloss', auto: true })
  for (const p of run.measurements.flatMap((m) => m.perModel))
    expect(p.metrics).toMatchObject({ logloss: expect.any(Number), accuracy: expect.any(Number), auc: expect.any(Number) })
  expect(cli.out.stderr).toMatch(
    /objective: binary \(2 classes: 0, 1\), read from the target · ranked by log loss · test, mean over 4 models at 2000 rows: log loss \d/,
  )
  expect(cli.out.stderr).toMatch(/per-model test log loss agree \(max rel\. Δ 0\.0e\+0, tolerance 0\)/)
})

it('an objective the generated target contradicts is exit 2 naming --objective, nothing started', async () => {
  const cli = spawnCli('bench', ['--model', 'gbdt', '--preset', 'smoke', '--objective', 'multiclass', '--no-save'])
  const { code } = await cli.exited
  expect(code).toBe(2)
  expect(cli.out.stderr).toMatch(
    /--objective multiclass does not fit generated target teacher, a regression target; accepted: auto, regression \(or --target multiclass\)/,
  )
})
