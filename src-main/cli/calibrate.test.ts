// `trainpool calibrate` for real (the trees: only their cpu engine is `auto`'s, a second or two):
// it prints the table and what `auto` now picks (--json: as the store keeps it), keeps it in the store, and the next
// `bench --backend auto` on that store runs on it without calibrating, saying why; a bad --family
// is refused (exit 2) naming the accepted ones.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { z } from 'zod'
import { FamilyCalibrationSchema } from '@shared/contract'
import { CALIBRATION_DIR } from '../store/calibration-cache'
import { killAll, spawnCli } from '../testing/cli-process'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-calibrate-cli-'))
afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

// the suite's TRAINPOOL_AUTO=order (vitest.config.ts) off: these runs take auto by calibration
const byCalibration = { TRAINPOOL_AUTO: undefined }

it('calibrate --family gbdt prints the table and the pick; bench --backend auto then runs on it', async () => {
  const json = join(dir, 'calibration.json')
  const cli = spawnCli('calibrate', ['--family', 'gbdt', '--store', dir, '--json', json], [], byCalibration)
  const { code } = await cli.exited
  expect(code, cli.out.stderr).toBe(0)
  expect(cli.out.stderr).toMatch(/^calibrating auto for the gradient-boosted trees: timing cpu \(1 of 1\)$/m)
  expect(cli.out.stdout).toMatch(/^GBDT 4 rounds, depth 6, .* on 10k rows: one model alone and 10 fused$/m)
  expect(cli.out.stdout).toMatch(
    /^backend +one model \/ round +10 fused \/ round +10 over \d+ workers? \/ round +fastest batched +device, or why not measured$/m,
  )
  // one core: no spread measured (–)
  expect(cli.out.stdout).toMatch(/^cpu +\d[\d.]* m?s +\d[\d.]* m?s +(\d[\d.]* m?s|–) +\d[\d.]* m?s +\S/m)
  expect(cli.out.stdout).toMatch(/^xgboost +– +– +– +– +not a choice of auto: only when asked for by name$/m)
  expect(cli.out.stdout).toMatch(/^auto → cpu: a batched round of 10 models in .*, the only backend auto could measure here \(calibrated \d{4}-\d\d-\d\d\)$/m)
  expect(readdirSync(join(dir, CALIBRATION_DIR)).filter((n) => n.endsWith('.json'))).toHaveLength(1)
  const written = z.array(FamilyCalibrationSchema).parse(JSON.parse(readFileSync(json, 'utf8')))
  expect(written).toMatchObject([{ kind: 'gbdt', auto: 'cpu' }])

  const bench = spawnCli('bench', ['--model', 'gbdt', '--preset', 'smoke', '--rounds', '3', '--strategies', 'sequential', '--store', dir], [], byCalibration)
  const ran = await bench.exited
  expect(ran.code, bench.out.stderr).toBe(0)
  expect(bench.out.stderr).not.toMatch(/calibrating/)
  expect(bench.out.stdout).toMatch(/^auto → cpu: .* \(calibrated \d{4}-\d\d-\d\d\)$/m)
})

it('calibrate --family with an unknown family exits 2 naming the accepted ones', async () => {
  const cli = spawnCli('calibrate', ['--family', 'trees', '--store', dir], [], byCalibration)
  const { code } = await cli.exited
  expect(code).toBe(2)
  expect(cli.out.stderr).toBe('trainpool calibrate: --family accepts mlp, gbdt (got "trees")\n')
})
