// `trainpool bench --data FILE --target COL`: the real CLI with real worker processes trains trees
// and the MLP on the example CSV (the file loaded into the store's data cache first, the second
// time from the cache: the MLP test loads it first itself, so it runs alone too), verifies the same work, and records the data set; bad data choices exit 2
// naming the flag, before anything starts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseRunResult } from '@shared/contract'
import { loadDataFile } from '../data'
import { killAll, spawnCli } from '../testing/cli-process'
import { sizesForData } from './bench-command'

const dir = mkdtempSync(join(os.tmpdir(), 'trainpool-data-cli-'))
const store = join(dir, 'store')
const houses = resolve(__dirname, '..', '..', 'examples', 'houses.csv')
afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

async function bench(args: string[]) {
  const cli = spawnCli('bench', ['--data', houses, '--store', store, '--backend', 'cpu', ...args])
  const { code } = await cli.exited
  return { code, ...cli.out }
}

describe('trainpool bench --data', () => {
  it('--model gbdt --preset smoke: loads the file, trains every strategy on it, same trees everywhere; --impute is said not to apply', async () => {
    const json = join(dir, 'gbdt.json')
    const { code, stdout, stderr } = await bench(['--target', 'price_eur', '--model', 'gbdt', '--preset', 'smoke', '--impute', 'mean', '--json', json])
    expect(stderr).toMatch(/data: houses\.csv — 2500 rows × 6 columns, (loaded in|already in the data cache)/)
    expect(stderr).toMatch(/target price_eur; 4 features; left out, not numeric: city \(row 1 is not a number\)/)
    expect(stderr).toMatch(/--impute mean does not apply: gradient-boosted trees take missing values as they are \(nothing is imputed\)/)
    expect(code).toBe(0)
    expect(stdout).toMatch(
      /data: houses\.csv \(sha256 [0-9a-f]{12}…\) · 2500 rows × 6 columns · target price_eur · 4 features, raw · rows sampled with seed 42/,
    )
    expect(stdout).toMatch(/same work: sequential 4\/4, pool 4\/4, batched 4\/4 models; per-model test MSE agree \(max rel\. Δ 0\.0e\+0, tolerance 0\)/)
    const run = parseRunResult(JSON.parse(readFileSync(json, 'utf8')))
    expect(run.dataset).toMatchObject({
      name: 'houses.csv',
      rows: 2500,
      target: 'price_eur',
      features: ['area_m2', 'rooms', 'age_years', 'distance_km'],
      impute: 'none',
    })
    expect(run.config.data).toMatchObject({ target: 'price_eur', features: null })
  })

  it('--model mlp --preset smoke: standardised features, the file already cached (parse skipped)', async () => {
    const json = join(dir, 'mlp.json')
    await loadDataFile(houses, store) // a no-op when the trees test above has cached it
    const { code, stdout, stderr } = await bench(['--target', 'price_eur', '--model', 'mlp', '--preset', 'smoke', '--exclude', 'age_years', '--json', json])
    expect(stderr).toMatch(/already in the data cache \(parse skipped\)/)
    expect(code).toBe(0)
    expect(stdout).toMatch(/MLP 3→64→1/)
    expect(stdout).toMatch(/same work: sequential 4\/4, pool 4\/4, batched 4\/4 models/)
    expect(parseRunResult(JSON.parse(readFileSync(json, 'utf8'))).dataset).toMatchObject({ features: ['area_m2', 'rooms', 'distance_km'], standardised: true })
  })

  it.each([
    [['--model', 'gbdt'], /--data needs --target COLUMN/],
    [
      ['--target', 'price'],
      /trainpool bench: --target column "price" is not in houses\.csv; its numeric columns are "area_m2", "rooms", "age_years", "distance_km", "price_eur"/,
    ],
    // city (5 text values) is a classifier's target since issue 38: not a regressor's
    [
      ['--target', 'city', '--objective', 'regression', '--sizes', '100'],
      /trainpool bench: --objective regression needs a numeric target; city is text \(5 classes\)/,
    ],
    [['--target', 'price_eur', '--features', 'area_m2,city'], /trainpool bench: --features: feature column "city" of houses\.csv is not numeric: row 1/],
    [['--target', 'price_eur', '--sizes', '3000'], /trainpool bench: --sizes must be at most 2500: houses\.csv has 2500 rows \(got 3000\)/],
    [['--target', 'price_eur', '--impute', 'median'], /trainpool bench: --impute accepts none, mean \(got "median"\)/],
  ])('%j exits 2 with the flag named', async (args, message) => {
    const { code, stderr } = await bench(args)
    expect(stderr).toMatch(message)
    expect(code).toBe(2)
  })

  it("without --sizes the file sets the size: every row with a target, not generated data's 10000", async () => {
    const small = join(dir, 'small.csv')
    const rows = Array.from({ length: 40 }, (_, i) => `${i},${(i * 7) % 13},${i % 5 === 0 ? '' : 2 * i + 1}`)
    writeFileSync(small, ['x1,x2,y', ...rows].join('\n'))
    const json = join(dir, 'small.json')
    const quick = ['--model', 'gbdt', '--models', '1', '--workers', '1', '--strategies', 'sequential', '--repeats', '1', '--json', json]
    const cli = spawnCli('bench', ['--data', small, '--target', 'y', '--store', store, '--backend', 'cpu', ...quick])
    const { code } = await cli.exited
    expect(cli.out.stderr).not.toMatch(/--sizes/)
    expect(code).toBe(0)
    // 8 of the 40 rows have no target
    expect(parseRunResult(JSON.parse(readFileSync(json, 'utf8'))).config.sizes).toEqual([32])
  })

  it("sizes the user never gave follow the file: all its rows, or a preset's sizes cut to them; --sizes as typed", () => {
    expect(sizesForData({}, { sizes: [10000] }, 32)).toEqual([32])
    expect(sizesForData({ preset: 'quick' }, { sizes: [10, 1000, 5000] }, 800)).toEqual([10, 800])
    expect(sizesForData({ sizes: '3000' }, { sizes: [3000] }, 800)).toEqual([3000])
    expect(sizesForData({}, { sizes: [10000] }, 5_000_000)).toEqual([2_000_000])
    expect(sizesForData({}, { sizes: [10000] }, null)).toEqual([10000])
  })

  it('a file that is not there exits 2', async () => {
    const cli = spawnCli('bench', ['--data', join(dir, 'nope.csv'), '--target', 'y', '--store', store])
    const { code } = await cli.exited
    expect(cli.out.stderr).toMatch(/trainpool bench: --data: there is no file .*nope\.csv \(was it moved or deleted\?\)/)
    expect(code).toBe(2)
  })
})
